//! A run as the collector builds it: the task graph (the model) and the
//! analyses fed from outside it, in one pipeline. [`Run::apply`] shows each
//! record to the analyses, applies it to the graph, then hands every
//! instance the graph finalised to the analyses; the writers read both.

use std::ops::Deref;

use crate::analyses::critical_path::CriticalPath;
use crate::analyses::idle_gaps::IdleGaps;
use crate::analyses::what_if::Schedule;
use crate::analyses::Analyses;
use crate::instance::Completed;
use crate::model::{Limits, TaskGraph};
use crate::record::Record;

/// The task graph of a run and its analyses. It reads as its
/// [`TaskGraph`] (through `Deref`); records go in through [`Run::apply`].
#[derive(Debug)]
pub struct Run {
    graph: TaskGraph,
    analyses: Analyses,
}

impl Default for Run {
    fn default() -> Run {
        Run::new()
    }
}

impl Deref for Run {
    type Target = TaskGraph;

    fn deref(&self) -> &TaskGraph {
        &self.graph
    }
}

impl Run {
    /// An empty run with the default [`Limits`].
    pub fn new() -> Run {
        Run::with_limits(Limits::default())
    }

    /// An empty run with these limits.
    pub fn with_limits(limits: Limits) -> Run {
        Run {
            graph: TaskGraph::with_limits(limits),
            analyses: Analyses::new(limits.max_instances),
        }
    }

    /// Collects up to `limit` instances for the what-if simulation (see
    /// [`Analyses::set_schedule_limit`]); call before the first record.
    pub fn set_schedule_limit(&mut self, limit: usize) {
        self.analyses.set_schedule_limit(limit);
    }

    /// Applies one record to the analyses and the graph; the instances it
    /// finalised are appended to `done` (see [`TaskGraph::apply`]) after
    /// the analyses saw them.
    pub fn apply(&mut self, record: Record, done: &mut Vec<Completed>) {
        self.analyses.observe(&record);
        let from = done.len();
        self.graph.apply(record, done);
        for finished in &done[from..] {
            self.analyses.finalised(&self.graph, finished);
        }
    }

    /// Applies one record to the graph only, leaving the analyses as they
    /// are (empty): the subscriber's live model, whose analyses are
    /// computed at exit from a [`crate::replay::Replay`] of the same records.
    pub fn apply_to_graph(&mut self, record: Record, done: &mut Vec<Completed>) {
        self.graph.apply(record, done);
    }

    /// Applies records in order and returns every instance they finalised.
    pub fn apply_all(&mut self, records: impl IntoIterator<Item = Record>) -> Vec<Completed> {
        let mut done = Vec::new();
        for r in records {
            self.apply(r, &mut done);
        }
        done
    }

    /// Flushes every pending instance into `done` and completes the
    /// analyses: call once the records have stopped (see
    /// [`TaskGraph::finish`]).
    pub fn finish(&mut self, done: &mut Vec<Completed>) {
        let from = done.len();
        self.graph.finish(done);
        for finished in &done[from..] {
            self.analyses.finalised(&self.graph, finished);
        }
        self.analyses.finish();
    }

    /// Flushes every pending instance into `done`, the graph only (see
    /// [`Run::apply_to_graph`]).
    pub fn finish_graph(&mut self, done: &mut Vec<Completed>) {
        self.graph.finish(done);
    }

    /// The task graph.
    pub fn graph(&self) -> &TaskGraph {
        &self.graph
    }

    /// The analyses.
    pub fn analyses(&self) -> &Analyses {
        &self.analyses
    }

    /// The critical path (see [`Analyses`]).
    pub fn critical_path(&self) -> &CriticalPath {
        self.analyses.critical_path()
    }

    /// The idle gaps of the devices and queues (see [`Analyses`]).
    pub fn idle_gaps(&self) -> &IdleGaps {
        self.analyses.idle_gaps()
    }

    /// The schedule collected for the what-if simulation (see [`Analyses`]).
    pub fn schedule(&self) -> &Schedule {
        self.analyses.schedule()
    }
}
