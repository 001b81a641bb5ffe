//! The collector's side of the outputs. Everything is streamed during the
//! run: each record goes to the journal ([`crate::journal_file`]) and
//! through the full pipeline ([`Replay`]: the model, the critical path and
//! the idle gaps advanced as instances finish, the `kernels.csv` rows and
//! the `trace.pftrace` slices written as they finish), and `graph.dot` and
//! `summary.csv` are snapshotted. The exit has little left to do: the last
//! instances, the trace's tracks computed at the end (the critical path,
//! the windows, the regions), the small files written from the finished
//! run, and the journal kept as `run.journal`.
//!
//! With device timing off (`SYCLGRAPH_DEVICE_TIMING=0`) nothing is read
//! from the device during the run, so nothing needs the model then: the
//! collector only journals the records, and the replay at exit writes
//! every output (the same bytes). No snapshot is written during such a
//! run; a program killed by a signal leaves the journal (see
//! docs/guide/limitations.md).

use std::fs::File;
use std::io;
use std::path::PathBuf;

use syclgraph_graph::end_of_run::{write_graph_files, write_run_files, RunNotes};
use syclgraph_graph::kernels_csv::KernelRowWriter;
use syclgraph_graph::perfetto::{TraceWriter, CLOCK_MONOTONIC};
use syclgraph_graph::record::Record;
use syclgraph_graph::replay::Replay;
use syclgraph_graph::timing::format_ns;
use syclgraph_graph::{Limits, Run};

use crate::config::Config;
use crate::journal_file::Journal;
use crate::warn;
use crate::whole_rows::WholeRows;

/// Bytes of kernels.csv rows kept in memory before they are written early.
const MAX_PENDING_BYTES: usize = 4 << 20;

/// What the recorder could not record, for the summary.
#[derive(Clone, Debug, Default)]
pub struct Losses {
    /// Records dropped because the queue was full.
    pub queue_full: u64,
    /// Events after the exit drain started.
    pub after_finish: u64,
    /// Callbacks without an event.
    pub without_event: u64,
    /// Device events that could not be retained.
    pub not_retained: u64,
    /// Device events not kept while the collector was behind.
    pub behind: u64,
    /// Device events signalled before the timestamp source was ready.
    pub before_timing_ready: u64,
    /// How long the first device commands waited for the timestamp source.
    pub start_wait: std::time::Duration,
    /// `SYCLGRAPH_START_WAIT_MS`, when that wait reached it.
    pub start_wait_given_up: Option<u64>,
    /// Edges whose ends were not known.
    pub unknown_edge_end: u64,
    /// UR enqueues no XPTI node accompanied, by function.
    pub unseen_enqueues: crate::unseen_enqueues::UnseenCounts,
    /// Native commands the adapter refused.
    pub native_refused: crate::native_commands::RefusedCounts,
    /// Queues whose device profiling syclgraph turned on.
    pub queues_forced: u64,
    /// `Some(limit)` when syclgraph stopped following UR calls at the limit.
    pub ur_call_limit: Option<u64>,
    /// True when device timing was wanted but no source could be loaded.
    pub timing_unavailable: bool,
    /// What was seen of each device clock (the `host clock:` lines).
    pub host_clock: Vec<ze_bridge::ClockReport>,
    /// Why UR calls were followed on `ur.call.debug` for the whole run
    /// instead of through the adapter's dispatch table (`None`: hooks were
    /// used, or the runtime has no `ur.call.debug`).
    pub ur_calls_via_layer: Option<String>,
    /// True when device timing was off and the runtime therefore sent no UR
    /// call (syclgraph turns the UR tracing layer on only to time): what
    /// only UR calls show, `depends_on`-only dependencies, is missing.
    pub ur_calls_off_untimed: bool,
    /// Why the UR tracing layer syclgraph turned on stayed in the runtime's
    /// call chain after the hooks took over (`None`: it was taken out, or
    /// hooks were not used).
    pub tracing_layer_kept: Option<String>,
    /// Submissions made while tracing was stopped (counted, not recorded).
    pub while_stopped: u64,
    /// Edges with an end submitted while tracing was stopped.
    pub edges_while_stopped: u64,
    /// Starts/stops whose time was lost (too many at once).
    pub toggles_lost: u64,
    /// What could not be followed of SYCL graphs.
    pub sycl_graphs: crate::sycl_graphs::GraphLosses,
    /// The region `SYCLGRAPH_REGION` named, when no thread ever entered it.
    pub region_never_entered: Option<String>,
}

/// The live pipeline (model, analyses, streamed `kernels.csv` and trace)
/// and the journal.
pub struct Output {
    dir: PathBuf,
    quiet: bool,
    limits: Limits,
    /// True when the pipeline runs during the run (device timing on, or
    /// no journal to replay). False: every output is written at exit from
    /// the journal.
    live: bool,
    /// The pipeline: the run (the model and its analyses) with its
    /// `kernels.csv` rows and `trace.pftrace` slices, fed every record as
    /// it is applied; when not `live`, an empty one whose writers the
    /// replay at exit takes (an empty one without writers once finished).
    pipeline: Replay<WholeRows, WholeRows>,
    /// Every record applied: for `syclgraph report` after a kill, for
    /// `syclgraph whatif` (kept as `run.journal`), and replayed at exit
    /// when not `live`.
    journal: Journal,
    /// `SYCLGRAPH_TRACE_MAX_MB`, for the summary.
    trace_max_mb: u64,
    /// Records applied since the last snapshot of graph.dot/summary.csv.
    changed: bool,
    /// Records journalled or rows written since the last flush.
    unflushed: bool,
}

impl Output {
    /// Starts `kernels.csv` and `trace.pftrace` in the output directory.
    pub fn new(config: &Config) -> Output {
        let kernels = File::create(config.output_dir.join("kernels.csv"))
            .and_then(|f| KernelRowWriter::new(WholeRows::new(f)));
        let kernels = match kernels {
            Ok(k) => Some(k),
            Err(e) => {
                warn(format_args!("cannot write kernels.csv: {e}"));
                None
            }
        };
        let limits = Limits {
            max_instances: config.max_instances,
            ..Limits::default()
        };
        let journal = Journal::create(&config.output_dir);
        let pipeline = Replay::new(limits, start_trace(config)).with_optional_rows(kernels);
        Output {
            // Without a journal the pipeline stays live whatever the mode.
            live: config.device_timing || !journal.is_open(),
            trace_max_mb: config.trace_max_mb,
            dir: config.output_dir.clone(),
            quiet: !config.prints_summary(),
            limits,
            pipeline,
            journal,
            changed: false,
            unflushed: false,
        }
    }

    /// The task graph so far.
    pub fn graph(&self) -> &Run {
        self.pipeline.run()
    }

    /// Journals one record and, when the pipeline is live, feeds it
    /// through (the model, the analyses, the rows and slices of the
    /// instances it completed).
    pub fn apply(&mut self, record: Record) {
        self.journal.append(&record);
        self.unflushed = true;
        if !self.live {
            return;
        }
        self.pipeline.apply(record);
        self.changed = true;
        bound_pending(&mut self.pipeline);
    }

    /// Whether the pipeline runs during the run (see [`Output::apply`]).
    pub fn live(&self) -> bool {
        self.live
    }

    /// Pushes the journal, the streamed rows and the trace's whole packets
    /// to their files, so a killed program leaves them.
    pub fn flush_rows(&mut self) {
        if !self.unflushed {
            return;
        }
        self.unflushed = false;
        self.journal.flush();
        flush_pipeline(&mut self.pipeline);
    }

    /// Pushes the journal's buffered records to its file: before the exit
    /// lets the runtime's teardown go on, so that a program dying in it
    /// leaves every record for its conversion.
    pub fn flush_journal(&mut self) {
        self.journal.flush();
    }

    /// Whether records were applied since the last snapshot.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// Rewrites graph.dot and summary.csv (atomically) if anything
    /// changed, and says whether it did, so a program killed by a signal
    /// leaves a recent, complete graph. Their size grows with code
    /// locations, not submissions; instances.dot (up to
    /// `SYCLGRAPH_MAX_INSTANCES` nodes) and the critical files are written
    /// at the end only. Never inlined: `bench/tools/report.py` tells this
    /// work, paced on the clock and not on commands, by its name.
    #[inline(never)]
    pub fn snapshot(&mut self) -> bool {
        if !self.changed {
            return false;
        }
        self.changed = false;
        if let Err(e) = write_graph_files(&self.dir, self.graph(), crate::clock::monotonic_ns()) {
            warn(format_args!("snapshot of graph.dot: {e}"));
        }
        true
    }

    /// Completes every instance and the analyses (when not live, after the
    /// journal's replay through a new pipeline, which writes the rows and
    /// the slices); writes the trace's end tracks and flushes
    /// `kernels.csv` and `trace.pftrace`, then `graph.dot`,
    /// `summary.csv`, `critical_path.csv`, `idle_gaps.csv`,
    /// `instances.dot`, `windows.csv` and `summary.txt` atomically
    /// ([`write_run_files`]); keeps the journal as `run.journal` and prints
    /// the summary (with the critical path block) on stderr.
    pub fn finish(&mut self, losses: &Losses) -> io::Result<()> {
        let (graph, trace_dropped) = self.finish_pipeline()?;
        let now = crate::clock::monotonic_ns();
        let mut notes = RunNotes {
            while_stopped: losses.while_stopped,
            edges_while_stopped: losses.edges_while_stopped,
            toggles_lost: losses.toggles_lost,
            ..RunNotes::default()
        };
        if trace_dropped > 0 {
            notes.losses.push_str(&format!(
                "dropped: {trace_dropped} trace.pftrace slices (the file reached SYCLGRAPH_TRACE_MAX_MB={} MiB)\n",
                self.trace_max_mb
            ));
        }
        notes.losses.push_str(&loss_lines(losses));
        if let Some(name) = &losses.region_never_entered {
            let line = format!(
                "SYCLGRAPH_REGION={name:?}: no ITT task of that name began on any thread; nothing was recorded"
            );
            if self.quiet {
                warn(format_args!("{line}"));
            }
            notes.losses.push_str(&line);
            notes.losses.push('\n');
        }
        if self.journal.lost() > 0 {
            notes.losses.push_str(&format!(
                "lost: {} records not journalled (the disk was full?): {} miss them\n",
                self.journal.lost(),
                if self.live {
                    "syclgraph report and syclgraph whatif"
                } else {
                    "kernels.csv and every file written at exit"
                }
            ));
        }
        if !self.live {
            notes.losses.push_str(UNTIMED_AT_EXIT_LINE);
        }
        // The same text in summary.txt, for `syclgraph report` (quiet or not).
        let text = write_run_files(&self.dir, &graph, now, &notes)?;
        // Only now: a program killed before this line leaves the journal
        // for `syclgraph report` to convert. A finished run's stays, as
        // run.journal, for `syclgraph whatif` (a rename).
        self.journal.keep();
        if !self.quiet {
            eprint!("syclgraph: outputs in {}\n{text}", self.dir.display());
        }
        Ok(())
    }
}

impl Output {
    /// The finished run and the trace's dropped slices: the live pipeline
    /// finished, or (not live) the journal replayed through it first.
    fn finish_pipeline(&mut self) -> io::Result<(Run, u64)> {
        let finished = Replay::new(self.limits, None).with_optional_rows(None);
        let mut pipeline = std::mem::replace(&mut self.pipeline, finished);
        if !self.live {
            self.journal.replay(|record| {
                pipeline.apply(record);
                bound_pending(&mut pipeline);
            });
        }
        pipeline.finish(crate::clock::monotonic_ns());
        match pipeline.take_rows() {
            Ok(Some(mut rows)) => rows.flush()?,
            Ok(None) => {}
            Err(e) => warn(format_args!("kernels.csv: {e}; no more rows are written")),
        }
        let trace_dropped = match pipeline.take_trace() {
            Some(mut trace) => {
                trace.flush()?;
                trace.dropped()
            }
            None => 0,
        };
        Ok((pipeline.into_run(), trace_dropped))
    }
}

/// Bounds the memory of the pipeline's writers: the rows and the trace
/// reach their files whenever more than [`MAX_PENDING_BYTES`] wait.
fn bound_pending(pipeline: &mut Replay<WholeRows, WholeRows>) {
    if pipeline
        .rows_mut()
        .is_some_and(|rows| rows.get_ref().pending() > MAX_PENDING_BYTES)
        || pipeline
            .trace_mut()
            .is_some_and(|t| t.pending() + t.get_ref().pending() > MAX_PENDING_BYTES)
    {
        flush_pipeline(pipeline);
    }
}

/// Flushes the pipeline's rows and trace; a writer that fails is dropped
/// with a warning (no more rows or slices).
fn flush_pipeline(pipeline: &mut Replay<WholeRows, WholeRows>) {
    if let Some(rows) = pipeline.rows_mut() {
        if let Err(e) = rows.flush() {
            warn(format_args!("kernels.csv: {e}; no more rows are written"));
            let _ = pipeline.take_rows();
        }
    }
    if pipeline.rows_failed() {
        if let Err(e) = pipeline.take_rows() {
            warn(format_args!("kernels.csv: {e}; no more rows are written"));
        }
    }
    if let Some(trace) = pipeline.trace_mut() {
        if let Err(e) = trace.flush() {
            warn(format_args!(
                "trace.pftrace: {e}; no more slices are written"
            ));
            pipeline.take_trace();
        }
    }
}

/// The summary's line for a run without device timing: what was written
/// when.
pub const UNTIMED_AT_EXIT_LINE: &str = "device timing off: kernels.csv, graph.dot and summary.csv were written at exit from the journal, none during the run\n";

/// Starts `trace.pftrace` unless `SYCLGRAPH_TRACE_MAX_MB` is 0.
fn start_trace(config: &Config) -> Option<TraceWriter<WholeRows>> {
    if config.trace_max_mb == 0 {
        return None;
    }
    let name = std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "program".to_string());
    let clocks = [(CLOCK_MONOTONIC, crate::clock::monotonic_ns())];
    let max_bytes = config.trace_max_mb.saturating_mul(1 << 20);
    let trace = File::create(config.output_dir.join("trace.pftrace")).and_then(|f| {
        let mut t = TraceWriter::new(
            WholeRows::new(f),
            std::process::id(),
            &name,
            &clocks,
            max_bytes,
        )?;
        t.flush()?;
        Ok(t)
    });
    match trace {
        Ok(t) => Some(t),
        Err(e) => {
            warn(format_args!("cannot write trace.pftrace: {e}"));
            None
        }
    }
}

/// The summary's line when device timing was off and no UR call was seen.
const UR_CALLS_OFF_UNTIMED: &str = "UR calls: not followed (SYCLGRAPH_DEVICE_TIMING=0 leaves the UR tracing layer off): dependencies given only by depends_on are missing or start at a virtual_node, and SYCL graphs are not followed (recorded commands are rows, replays are not); UR_ENABLE_LAYERS=UR_LAYER_TRACING brings both back\n";

/// One line per kind of loss the graph itself does not know about.
fn loss_lines(losses: &Losses) -> String {
    let mut lines = String::new();
    let mut line = |count: u64, what: &str| {
        if count > 0 {
            lines.push_str(&format!("lost: {count} {what}\n"));
        }
    };
    line(
        losses.queue_full,
        "records (the queue to the collector was full)",
    );
    line(losses.after_finish, "events after the exit drain started");
    line(losses.without_event, "callbacks without an event");
    line(
        losses.not_retained,
        "device events that could not be retained (timing=not_retained)",
    );
    line(
        losses.behind,
        "device events not kept while the collector was behind (timing=behind): a quarter of SYCLGRAPH_QUEUE_CAPACITY was queued, and each event kept until read holds the runtime's memory",
    );
    line(
        losses.before_timing_ready,
        "device events signalled before the timestamp source was ready (timing=not_ready)",
    );
    line(losses.unknown_edge_end, "edges whose ends were not seen");
    line(
        losses.sycl_graphs.finalised_unseen,
        "SYCL graph(s) finalised before syclgraph followed UR calls (their replays are rows, their commands unknown)",
    );
    line(
        losses.sycl_graphs.finalised_while_stopped,
        "SYCL graph(s) finalised while recording was stopped (their replays are rows, their commands unknown)",
    );
    line(
        losses.sycl_graphs.unfollowed_appends,
        "commands appended to SYCL graphs through UR calls syclgraph does not follow (members without their edges)",
    );
    line(
        losses.sycl_graphs.child_appends,
        "commands appended to the child command buffers of native commands (not drawn)",
    );
    line(
        losses.sycl_graphs.recorded_dropped,
        "commands recorded into SYCL graphs, forgotten past 4096 per thread (their appended commands are nodes of their own)",
    );
    if let Some(unseen) = losses.unseen_enqueues.summary_line() {
        lines.push_str(&unseen);
    }
    if let Some(refused) = losses.native_refused.summary_line() {
        lines.push_str(&refused);
    }
    if let Some(limit) = losses.start_wait_given_up {
        lines.push_str(&format!(
            "start-up: stopped waiting for the timestamp source after {limit} ms (SYCLGRAPH_START_WAIT_MS)\n"
        ));
    } else if !losses.start_wait.is_zero() {
        lines.push_str(&format!(
            "start-up: the first device command waited {} for the timestamp source\n",
            format_ns(losses.start_wait.as_nanos().min(u64::MAX as u128) as u64)
        ));
    }
    if losses.queues_forced > 0 {
        lines.push_str(&format!(
            "device profiling: turned on for {} queue(s) made without it (--no-force-profiling or SYCLGRAPH_FORCE_PROFILING=0 turns this off)\n",
            losses.queues_forced
        ));
    }
    if let Some(limit) = losses.ur_call_limit {
        lines.push_str(&format!(
            "UR calls: followed the first {limit} only (SYCLGRAPH_MAX_UR_CALLS bounds the runtime's memory); later direct-path USM commands are untimed, later depends_on-only edges are missing, queues made later are not forced to profile\n"
        ));
    }
    if losses.ur_calls_off_untimed {
        lines.push_str(UR_CALLS_OFF_UNTIMED);
    }
    if let Some(why) = &losses.ur_calls_via_layer {
        lines.push_str(&format!(
            "UR calls: followed on ur.call.debug all along ({why}), which costs more per command\n"
        ));
    }
    if let Some(why) = &losses.tracing_layer_kept {
        lines.push_str(&format!(
            "UR tracing layer: stayed in the runtime's call chain ({why}), which costs a little per UR call\n"
        ));
    }
    if losses.timing_unavailable {
        lines.push_str("device timing: unavailable in this process\n");
    }
    for (n, report) in losses.host_clock.iter().enumerate() {
        lines.push_str(&host_clock_line(n + 1, report));
    }
    lines
}

/// `" (N by the program's waits)"`, when any were.
fn waits_part(r: &ze_bridge::ClockReport) -> String {
    if r.from_waits == 0 {
        String::new()
    } else {
        format!(" ({} at the program's waits)", r.from_waits)
    }
}

/// One device clock's `host clock:` line: how well its offset to
/// `CLOCK_MONOTONIC` is known from the completions syclgraph saw.
fn host_clock_line(n: usize, r: &ze_bridge::ClockReport) -> String {
    let mut line = format!("host clock: {} device {n}: ", r.backend);
    match (r.last_width_ns, r.widest_ns) {
        (Some(last), Some(widest)) => line.push_str(&format!(
            "offset known within {} (widest {} over {} window(s)) from {} completions seen{}",
            format_ns(last),
            format_ns(widest),
            r.windows,
            r.sightings,
            waits_part(r)
        )),
        _ => line.push_str(&format!(
            "{} completions seen{}, too few to bound the offset",
            r.sightings,
            waits_part(r)
        )),
    }
    if r.drift_ppb.unsigned_abs() >= 100 {
        line.push_str(&format!(
            "; the device clock drifted {:+.1} µs/s, followed",
            r.drift_ppb as f64 / 1000.0
        ));
    }
    if let Some(late) = r.pair_lateness_ns.filter(|&l| l > 0) {
        line.push_str(&format!(
            "; the runtime's clock pair read {} late, taken out",
            format_ns(late)
        ));
    }
    if r.capped > 0 {
        line.push_str(&format!(
            "; {} end(s) moved back to when syclgraph saw them complete",
            r.capped
        ));
    }
    if r.misordered > 0 {
        line.push_str(&format!(
            "; {} completion(s) seen before their end time, not used",
            r.misordered
        ));
    }
    line.push('\n');
    line
}
