//! The full pipeline over a record stream: the [`Run`] with its analyses
//! and the Perfetto trace, fed in the order the subscriber's collector
//! applies records: [`TraceWriter::observe`], then [`Run::apply`], then
//! [`TraceWriter::write`] for each instance it finalised. The subscriber
//! keeps only the model live and replays its journal of records through a
//! [`Replay`] at exit; the outputs are the same bytes as if the pipeline
//! had run live.

use std::fmt::Write as _;
use std::io::Write;

use crate::instance::Completed;
use crate::model::Limits;
use crate::perfetto::TraceWriter;
use crate::record::Record;
use crate::run::Run;

/// A run with its analyses and (optionally) its trace, fed record by record.
pub struct Replay<W: Write> {
    run: Run,
    trace: Option<TraceWriter<W>>,
    done: Vec<Completed>,
}

impl<W: Write> Replay<W> {
    /// An empty run with `limits`, writing slices to `trace` (`None`: no trace).
    pub fn new(limits: Limits, trace: Option<TraceWriter<W>>) -> Replay<W> {
        Replay {
            run: Run::with_limits(limits),
            trace,
            done: Vec::new(),
        }
    }

    /// Shows `record` to the trace, applies it to the run, and writes the
    /// slices of the instances it finalised.
    pub fn apply(&mut self, record: Record) {
        if let Some(trace) = &mut self.trace {
            trace.observe(&self.run, &record);
        }
        self.run.apply(record, &mut self.done);
        self.write_done();
    }

    /// Finalises every pending instance ([`Run::finish`]), writes their
    /// slices, and the trace's tracks of what was computed at the end: the
    /// critical path's kept steps (`critical_path.csv`'s rows) and the
    /// windows tracing was on (a window still open ends at `now_ns`).
    pub fn finish(&mut self, now_ns: u64) {
        self.run.finish(&mut self.done);
        self.write_done();
        let Some(trace) = &mut self.trace else {
            return;
        };
        let graph = &self.run;
        let path = graph.critical_path().report();
        trace.write_summary_track(0, "critical path", &path.steps, |_, s, label| {
            let name = graph.node(s.key.0).map_or("?", |n| n.operation.as_str());
            let _ = write!(label, "{name} #{} ({})", s.key.1, s.cause.as_str());
            (s.start_ns, s.end_ns)
        });
        trace.write_summary_track(1, "tracing on", graph.windows(), |i, w, label| {
            let _ = write!(label, "tracing on #{}", i + 1);
            (w.start_ns, w.end_ns.unwrap_or(now_ns))
        });
    }

    fn write_done(&mut self) {
        if let Some(trace) = &mut self.trace {
            for done in &self.done {
                trace.write(&self.run, done);
            }
        }
        self.done.clear();
    }

    /// The run: the task graph and its analyses.
    pub fn run(&self) -> &Run {
        &self.run
    }

    /// The run, finished or not (the replay ends).
    pub fn into_run(self) -> Run {
        self.run
    }

    /// The trace, to flush it or read its counts.
    pub fn trace_mut(&mut self) -> Option<&mut TraceWriter<W>> {
        self.trace.as_mut()
    }

    /// Takes the trace out (the replay writes no more slices).
    pub fn take_trace(&mut self) -> Option<TraceWriter<W>> {
        self.trace.take()
    }
}
