//! The analyses of a run, apart from the model: the critical path
//! ([`critical_path`]), the device idle gaps ([`idle_gaps`]) and the
//! schedule the what-if simulation replays ([`what_if`]) and the ordering
//! violations ([`violations`]), siblings.
//! [`Analyses`] is fed from outside the [`TaskGraph`]: the records it
//! needs (host waits, dependencies between instances) as they arrive, and
//! every instance the graph finalises, with the graph that
//! finalised it (see [`Run`](crate::run::Run), which does both). The
//! critical path keeps each timed device command it takes on with what it
//! waited for ([`busy::Busy`]); `Analyses` moves those to the idle gaps.

pub mod busy;
mod chains;
pub mod critical_path;
pub mod idle_gaps;
mod key_slots;
mod start_order;
pub mod violations;
pub mod what_if;

use crate::instance::Completed;
use crate::model::TaskGraph;
use crate::record::{Record, SpanKind};

use critical_path::CriticalPath;
use idle_gaps::IdleGaps;
use what_if::Schedule;

/// The analyses of one run.
#[derive(Debug)]
pub struct Analyses {
    critical: CriticalPath,
    idle: IdleGaps,
    schedule: Schedule,
}

impl Analyses {
    /// Analyses keeping up to `max_steps` steps of the critical path (the
    /// graph's [`Limits::max_instances`](crate::model::Limits)).
    pub fn new(max_steps: usize) -> Analyses {
        Analyses {
            critical: CriticalPath::new(max_steps),
            idle: IdleGaps::new(),
            schedule: Schedule::default(),
        }
    }

    /// Collects up to `limit` instances for the what-if simulation
    /// (default [`what_if::EXIT_LIMIT`]); call before the first record.
    pub fn set_schedule_limit(&mut self, limit: usize) {
        self.schedule.set_limit(limit);
    }

    /// Sees a record before the graph applies it: host waits, and the
    /// dependencies between instances (data dependencies, and the order
    /// of an in-order queue that a submission names). Inlined into
    /// [`Run::apply`](crate::run::Run::apply): it runs for every record.
    #[inline]
    pub fn observe(&mut self, record: &Record) {
        match *record {
            Record::SpanBegin {
                kind: SpanKind::Wait,
                thread,
                ns,
                ..
            } => {
                self.idle.wait_begin(thread, ns);
                self.schedule.wait_begin(thread, ns);
            }
            Record::SpanEnd {
                kind: SpanKind::Wait,
                thread,
                ns,
            } => {
                self.idle.wait_end(thread, ns);
                self.schedule.wait_end(thread, ns);
            }
            Record::InstanceEdge(edge) => {
                self.critical.depends(edge);
                self.schedule.depends(edge);
            }
            _ => {
                if let Some(edge) = record.queue_order_edge() {
                    self.critical.depends(edge);
                    self.schedule.depends(edge);
                }
            }
        }
    }

    /// An instance `graph` finalised (handed out by
    /// [`TaskGraph::apply`] or [`TaskGraph::finish`]), seen after that
    /// call returned.
    pub fn finalised(&mut self, graph: &TaskGraph, done: &Completed) {
        let Some(node) = graph.node(done.node) else {
            return;
        };
        let instance = &done.instance;
        let device = graph.device_index(node, instance);
        if let Some(d) = device {
            self.idle.name_device(d, graph.devices().display(d));
        }
        let queue = instance.queue.or_else(|| node.queue_id());
        let key = (done.node, instance.instance);
        self.schedule
            .finalised(key, instance, node.kind, device, queue);
        self.critical
            .finalised(key, instance, node.kind, device, queue);
        self.take_busy();
    }

    /// Moves the device commands the critical path took on to the idle gaps.
    fn take_busy(&mut self) {
        let idle = &mut self.idle;
        self.critical
            .take_busy(|device, queue, busy| idle.add_command(device, queue, busy));
    }

    /// Completes the analyses once the records have stopped (after the
    /// instances [`TaskGraph::finish`] handed out).
    pub fn finish(&mut self) {
        self.critical.finish();
        self.take_busy();
        self.idle.finish();
    }

    /// The critical path (see [`critical_path`]).
    pub fn critical_path(&self) -> &CriticalPath {
        &self.critical
    }

    /// The idle gaps of the devices and queues (see [`idle_gaps`]).
    pub fn idle_gaps(&self) -> &IdleGaps {
        &self.idle
    }

    /// The schedule collected for the what-if simulation (see [`what_if`]).
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }
}
