//! The full pipeline over a record stream: the [`Run`] with its analyses
//! and the Perfetto trace, fed in the order the subscriber's collector
//! applies records: [`TraceWriter::observe`], then [`Run::apply`], then
//! [`TraceWriter::write`] for each instance it finalised, with the
//! `kernels.csv` rows of the same instances ([`Replay::with_rows`]). The
//! subscriber's collector runs one live during the run; with device timing
//! off it replays its journal of records through one at exit, and
//! `syclgraph report` replays a killed program's journal: the same bytes.
//! The rows are the same bytes as rows streamed from the model alone
//! ([`Run::apply_to_graph`]).

use std::fmt::Write as _;
use std::io::Write;

use crate::instance::Completed;
use crate::kernels_csv::KernelRowWriter;
use crate::model::Limits;
use crate::perfetto::TraceWriter;
use crate::record::Record;
use crate::run::Run;

/// A run with its analyses and (optionally) its trace and its
/// `kernels.csv` rows, fed record by record.
pub struct Replay<W: Write, R: Write = W> {
    run: Run,
    trace: Option<TraceWriter<W>>,
    rows: Option<KernelRowWriter<R>>,
    /// The first error writing `rows` (no more rows are written then).
    rows_error: Option<std::io::Error>,
    done: Vec<Completed>,
}

impl<W: Write> Replay<W> {
    /// An empty run with `limits`, writing slices to `trace` (`None`: no
    /// trace), and no rows.
    pub fn new(limits: Limits, trace: Option<TraceWriter<W>>) -> Replay<W> {
        Replay {
            run: Run::with_limits(limits),
            trace,
            rows: None,
            rows_error: None,
            done: Vec::new(),
        }
    }

    /// Collects up to `limit` instances for the what-if simulation
    /// ([`Run::set_schedule_limit`]). Call before the first record.
    pub fn keep_schedule(mut self, limit: usize) -> Replay<W> {
        self.run.set_schedule_limit(limit);
        self
    }

    /// Writes the row of each instance the replay finalises to `rows`, as
    /// they are finalised (the order the live model streams them). Call
    /// before the first record.
    pub fn with_rows<R: Write>(self, rows: KernelRowWriter<R>) -> Replay<W, R> {
        self.with_optional_rows(Some(rows))
    }

    /// [`Replay::with_rows`] when `rows` is some; no rows, of type `R`,
    /// when none.
    pub fn with_optional_rows<R: Write>(self, rows: Option<KernelRowWriter<R>>) -> Replay<W, R> {
        Replay {
            run: self.run,
            trace: self.trace,
            rows,
            rows_error: None,
            done: self.done,
        }
    }
}

impl<W: Write, R: Write> Replay<W, R> {
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
    /// critical path's kept steps (`critical_path.csv`'s rows), the
    /// windows tracing was on (a window still open ends at `now_ns`) and
    /// the regions' device projections.
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
        trace.write_region_tracks(graph);
    }

    fn write_done(&mut self) {
        if let Some(trace) = &mut self.trace {
            for done in &self.done {
                trace.write(&self.run, done);
            }
        }
        if let Some(rows) = &mut self.rows {
            for done in &self.done {
                if let Err(e) = rows.write(&self.run, done) {
                    self.rows_error = Some(e);
                    self.rows = None;
                    break;
                }
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

    /// The rows' writer, to flush it as it grows.
    pub fn rows_mut(&mut self) -> Option<&mut KernelRowWriter<R>> {
        self.rows.as_mut()
    }

    /// Whether writing the rows failed (see [`Replay::take_rows`]).
    pub fn rows_failed(&self) -> bool {
        self.rows_error.is_some()
    }

    /// Takes the rows' writer out (the replay writes no more rows), or the
    /// error that stopped it.
    pub fn take_rows(&mut self) -> std::io::Result<Option<KernelRowWriter<R>>> {
        match self.rows_error.take() {
            Some(e) => Err(e),
            None => Ok(self.rows.take()),
        }
    }
}

/// How a journal read back by [`replay_journal`] ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalEnd {
    /// At a record boundary: every byte was a whole record.
    Clean,
    /// The last record was cut short (the process died while writing it):
    /// the reader's message, which names its byte offset.
    CutShort(String),
    /// Bytes that are no record (the reader's message, naming their byte
    /// offset): what follows them is not read.
    Invalid(String),
}

/// A journal replayed through a [`Replay`] (not finished yet).
pub struct ReplayedJournal<W: Write, R: Write = W> {
    /// The replay, fed every record that read back.
    pub replay: Replay<W, R>,
    /// Records read back.
    pub records: u64,
    /// How the journal ended.
    pub end: JournalEnd,
    /// The latest host time its records carry ([`Record::latest_ns`]); 0
    /// when none does.
    pub latest_ns: u64,
}

/// Feeds every record of the journal `r` (read from its first byte) to
/// `replay` (a new [`Replay`], with its trace and rows if wanted), in
/// order. Records before a cut or before bytes that are no record are
/// replayed; the end says which. `Err` only when `r` does not start with a
/// journal's header or cannot be read.
pub fn replay_journal<J: std::io::Read, W: Write, R: Write>(
    r: J,
    replay: Replay<W, R>,
) -> std::io::Result<ReplayedJournal<W, R>> {
    let mut replayed = ReplayedJournal {
        replay,
        records: 0,
        end: JournalEnd::Clean,
        latest_ns: 0,
    };
    for record in crate::journal::JournalReader::new(r)? {
        match record {
            Ok(record) => {
                if let Some(ns) = record.latest_ns() {
                    replayed.latest_ns = replayed.latest_ns.max(ns);
                }
                replayed.replay.apply(record);
                replayed.records += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                replayed.end = JournalEnd::CutShort(e.to_string());
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                replayed.end = JournalEnd::Invalid(e.to_string());
            }
            Err(e) => return Err(e),
        }
    }
    Ok(replayed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{append_record, JOURNAL_HEADER};

    fn journal(records: &[Record]) -> Vec<u8> {
        let mut bytes = JOURNAL_HEADER.to_vec();
        for r in records {
            append_record(r, &mut bytes);
        }
        bytes
    }

    fn records() -> Vec<Record> {
        vec![
            Record::Tracing { on: true, ns: 100 },
            Record::Submitted {
                node: 0,
                instance: 0,
                thread: 1,
                ns: 250,
            },
            Record::Tracing { on: false, ns: 900 },
        ]
    }

    fn replay(bytes: &[u8]) -> std::io::Result<ReplayedJournal<Vec<u8>>> {
        replay_journal(bytes, Replay::<Vec<u8>>::new(Limits::default(), None))
    }

    #[test]
    fn a_whole_journal_replays_every_record_and_ends_clean() {
        let r = replay(&journal(&records())).unwrap();
        assert_eq!((r.records, r.end, r.latest_ns), (3, JournalEnd::Clean, 900));
        assert_eq!(r.replay.run().windows().len(), 1);
    }

    #[test]
    fn a_cut_journal_replays_what_precedes_the_cut() {
        let whole = journal(&records());
        let two = journal(&records()[..2]).len();
        let r = replay(&whole[..whole.len() - 1]).unwrap();
        assert_eq!((r.records, r.latest_ns), (2, 250));
        match r.end {
            JournalEnd::CutShort(why) => {
                assert!(why.contains(&format!("byte offset {two}")), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn garbage_after_records_ends_there_and_no_header_is_an_error() {
        let mut bytes = journal(&records()[..1]);
        let at = bytes.len();
        bytes.extend_from_slice(&[0xff; 8]);
        let r = replay(&bytes).unwrap();
        assert_eq!(r.records, 1);
        match r.end {
            JournalEnd::Invalid(why) => {
                assert!(why.contains(&format!("byte offset {at}")), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(replay(b"garbage, not a journal").is_err());
        assert!(replay(b"").is_err());
    }
}
