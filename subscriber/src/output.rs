//! The collector's side of the outputs. Record first, analyse later:
//! during the run it keeps the task graph (the model alone), streams the
//! `kernels.csv` rows as instances complete, snapshots `graph.dot` and
//! `summary.csv`, and appends every record to the journal
//! ([`crate::journal_file`]). At exit it replays the journal through the
//! full pipeline ([`Replay`]: the analyses and the trace) and writes the
//! trace, the critical files, the graph files and the stderr summary.
//!
//! With device timing off (`SYCLGRAPH_DEVICE_TIMING=0`) nothing is read
//! from the device during the run, so nothing needs the model then: the
//! collector only journals the records, and the replay at exit also writes
//! the `kernels.csv` rows (the same bytes). No snapshot is written during
//! such a run; a program killed by a signal leaves the journal (see
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
use syclgraph_graph::{Completed, Limits, Run, TaskGraph};

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

/// The live model, the streamed `kernels.csv` and the journal.
pub struct Output {
    dir: PathBuf,
    quiet: bool,
    limits: Limits,
    /// True when the model is kept during the run (device timing on, or
    /// no journal to replay): rows streamed, snapshots. False: every
    /// output is written at exit from the journal.
    live: bool,
    /// The task graph, the model alone (its analyses stay empty: they are
    /// computed at exit from the journal); empty when not `live`.
    graph: Run,
    kernels: Option<KernelRowWriter<WholeRows>>,
    /// Every record applied, for the replay at exit.
    journal: Journal,
    /// `trace.pftrace`, started (clock snapshot, process name) at start and
    /// written at exit from the journal (`None`: off or failed).
    trace: Option<TraceWriter<WholeRows>>,
    /// `SYCLGRAPH_TRACE_MAX_MB`, for the summary.
    trace_max_mb: u64,
    completed: Vec<Completed>,
    /// Records applied since the last snapshot of graph.dot/summary.csv.
    changed: bool,
    /// Records journalled or rows written since the last flush.
    unflushed: bool,
}

impl Output {
    /// Starts `kernels.csv` in the output directory.
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
        Output {
            // Without a journal the model stays live whatever the mode.
            live: config.device_timing || !journal.is_open(),
            trace: start_trace(config),
            trace_max_mb: config.trace_max_mb,
            dir: config.output_dir.clone(),
            quiet: !config.prints_summary(),
            limits,
            graph: Run::with_limits(limits),
            journal,
            kernels,
            completed: Vec::new(),
            changed: false,
            unflushed: false,
        }
    }

    /// The task graph so far.
    pub fn graph(&self) -> &TaskGraph {
        &self.graph
    }

    /// Journals one record and, when the model is live, applies it to the
    /// model and streams the rows of the instances it completed.
    pub fn apply(&mut self, record: Record) {
        self.journal.append(&record);
        self.unflushed = true;
        if !self.live {
            return;
        }
        self.graph.apply_to_graph(record, &mut self.completed);
        self.changed = true;
        self.write_completed();
    }

    /// Whether the model is kept during the run (see [`Output::apply`]).
    pub fn live(&self) -> bool {
        self.live
    }

    /// Pushes streamed rows and the journal to their files, so a killed
    /// program leaves them.
    pub fn flush_rows(&mut self) {
        if !self.unflushed {
            return;
        }
        self.unflushed = false;
        self.journal.flush();
        if let Some(kernels) = &mut self.kernels {
            if let Err(e) = kernels.flush() {
                warn(format_args!("kernels.csv: {e}; no more rows are written"));
                self.kernels = None;
            }
        }
    }

    /// Whether records were applied since the last snapshot.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// Rewrites graph.dot and summary.csv (atomically) if anything
    /// changed, and says whether it did, so a program killed by a signal
    /// leaves a recent, complete graph. They come from the model alone: no
    /// node or edge is marked critical and summary.csv's `critical_ns` and
    /// `critical_share` are 0 until the files written at exit. Their size
    /// grows with code locations, not submissions; instances.dot (up to
    /// `SYCLGRAPH_MAX_INSTANCES` nodes) and the critical files are written
    /// at the end only.
    pub fn snapshot(&mut self) -> bool {
        if !self.changed {
            return false;
        }
        self.changed = false;
        if let Err(e) = write_graph_files(&self.dir, &self.graph, crate::clock::monotonic_ns()) {
            warn(format_args!("snapshot of graph.dot: {e}"));
        }
        true
    }

    fn write_completed(&mut self) {
        if self.completed.is_empty() {
            return;
        }
        if let Some(kernels) = &mut self.kernels {
            // Read in place (an instance is a few hundred bytes to move).
            for done in &self.completed {
                self.unflushed = true;
                if let Err(e) = kernels.write(&self.graph, done) {
                    warn(format_args!("kernels.csv: {e}; no more rows are written"));
                    self.kernels = None;
                    break;
                }
            }
            // Bound the memory between two timed flushes.
            if self
                .kernels
                .as_ref()
                .is_some_and(|k| k.get_ref().pending() > MAX_PENDING_BYTES)
            {
                self.unflushed = true;
                self.flush_rows();
            }
        }
        self.completed.clear();
    }

    /// Completes every instance and flushes `kernels.csv`; drops the live
    /// model and replays the journal through the full pipeline (writing
    /// the `kernels.csv` rows when the model was not live); writes
    /// `trace.pftrace`, then `graph.dot`, `summary.csv`,
    /// `critical_path.csv`, `idle_gaps.csv`, `instances.dot`,
    /// `windows.csv` and `summary.txt` atomically
    /// ([`write_run_files`]); keeps the journal as `run.journal` and prints
    /// the summary (with the critical path block) on stderr.
    pub fn finish(&mut self, losses: &Losses) -> io::Result<()> {
        self.graph.finish_graph(&mut self.completed);
        self.write_completed();
        if self.live {
            if let Some(mut kernels) = self.kernels.take() {
                kernels.flush()?;
            }
        }
        // The live model's memory is free before the replay builds its own.
        drop(std::mem::take(&mut self.graph));
        let (graph, trace_dropped) = self.replay()?;
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
                    "trace.pftrace, critical_path.csv, idle_gaps.csv and the graph files written at exit"
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
    /// Replays the journal through the full pipeline (the analyses and the
    /// trace, fed as the collector fed them), writes the trace, and returns
    /// the finished run and the trace's dropped slices.
    fn replay(&mut self) -> io::Result<(Run, u64)> {
        let mut replay = Replay::new(self.limits, self.trace.take());
        if !self.live {
            if let Some(rows) = self.kernels.take() {
                replay = replay.with_rows(rows);
            }
        }
        self.journal.replay(|record| {
            replay.apply(record);
            if let Some(rows) = replay.rows_mut() {
                if rows.get_ref().pending() > MAX_PENDING_BYTES {
                    if let Err(e) = rows.flush() {
                        warn(format_args!("kernels.csv: {e}; no more rows are written"));
                        let _ = replay.take_rows();
                    }
                }
            }
            if let Some(trace) = replay.trace_mut() {
                // Bound the memory: the trace reaches its file as it grows.
                if trace.pending() + trace.get_ref().pending() > MAX_PENDING_BYTES {
                    if let Err(e) = trace.flush() {
                        warn(format_args!(
                            "trace.pftrace: {e}; no more slices are written"
                        ));
                        replay.take_trace();
                    }
                }
            }
        });
        replay.finish(crate::clock::monotonic_ns());
        match replay.take_rows() {
            Ok(Some(mut rows)) => rows.flush()?,
            Ok(None) => {}
            Err(e) => warn(format_args!("kernels.csv: {e}; no more rows are written")),
        }
        let trace_dropped = match replay.take_trace() {
            Some(mut trace) => {
                trace.flush()?;
                trace.dropped()
            }
            None => 0,
        };
        Ok((replay.into_run(), trace_dropped))
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

/// One device clock's `host clock:` line: how well its offset to
/// `CLOCK_MONOTONIC` is known from the completions syclgraph saw.
fn host_clock_line(n: usize, r: &ze_bridge::ClockReport) -> String {
    let mut line = format!("host clock: {} device {n}: ", r.backend);
    match (r.last_width_ns, r.widest_ns) {
        (Some(last), Some(widest)) => line.push_str(&format!(
            "offset known within {} (widest {} over {} window(s)) from {} completions seen",
            format_ns(last),
            format_ns(widest),
            r.windows,
            r.sightings
        )),
        _ => line.push_str(&format!(
            "{} completions seen, too few to bound the offset",
            r.sightings
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
    line.push('\n');
    line
}
