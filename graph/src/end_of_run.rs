//! Every file written from a finished run (its journal replayed through a
//! [`crate::replay::Replay`]): `graph.dot`, `summary.csv`,
//! `critical_path.csv`, `idle_gaps.csv`, `regions.csv`, `instances.dot`,
//! `windows.csv`, `violations.csv` and `summary.txt`, each atomically, and the summary text the subscriber
//! prints on stderr. The subscriber writes them at exit; `syclgraph report`
//! writes them from the journal a killed program left. One code path: both
//! call [`write_run_files`].

use std::io::{self, Write};
use std::path::Path;

use crate::analyses::violations::find_violations;
use crate::critical_path_text::critical_path_text;
use crate::output::{write_critical_files_into, AtomicBatch};
use crate::record::SpanKind;
use crate::regions_csv::{region_block, region_rows};
use crate::spans::span_kind_str;
use crate::timing::format_ns;
use crate::violations_csv::{violations_line, write_violations_csv, VIOLATIONS_CSV};
use crate::what_if_text::what_would_pay_text;
use crate::{dot, instances_dot, summary, windows, Run, TaskGraph};

/// The end-of-run summary as printed on stderr (table, host waits, critical
/// path, what would pay, losses, windows), written at exit for `syclgraph
/// report`.
pub const SUMMARY_TXT: &str = "summary.txt";

/// Every file [`write_run_files`] writes, each through a `.tmp` file.
pub const RUN_FILES: [&str; 9] = [
    crate::output::GRAPH_DOT,
    crate::output::SUMMARY_CSV,
    crate::critical_path_csv::CRITICAL_PATH_CSV,
    crate::regions_csv::REGIONS_CSV,
    crate::idle_gaps_csv::IDLE_GAPS_CSV,
    "instances.dot",
    "windows.csv",
    VIOLATIONS_CSV,
    SUMMARY_TXT,
];

/// What the summary says beyond what the replayed run knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunNotes {
    /// Lines before the table (each ending in `\n`), such as where the
    /// outputs came from.
    pub heading: String,
    /// Lines after the critical path (each ending in `\n`): what was lost
    /// or dropped, how device timing went.
    pub losses: String,
    /// Submissions made while tracing was stopped (counted, not recorded).
    pub while_stopped: u64,
    /// Edges with an end submitted while tracing was stopped.
    pub edges_while_stopped: u64,
    /// Starts/stops whose time was lost (too many at once).
    pub toggles_lost: u64,
}

/// Writes graph.dot (after a line saying which windows were recorded, a
/// window still open ending at `now_ns`) and summary.csv atomically, both
/// renamed into place once both are written. Never
/// inlined: `bench/tools/report.py` gives the collector's cost without
/// these rewrites by this function's inclusive cost.
#[inline(never)]
pub fn write_graph_files(dir: &Path, graph: &Run, now_ns: u64) -> io::Result<()> {
    let mut batch = AtomicBatch::default();
    let windows_line = windows::windows_line(graph.windows(), now_ns);
    write_graph_files_into(&mut batch, dir, graph, &windows_line)?;
    batch.commit()
}

/// [`write_graph_files`] into `batch` (its windows line given), for the
/// snapshots and the exit alike.
fn write_graph_files_into(
    batch: &mut AtomicBatch,
    dir: &Path,
    graph: &Run,
    windows_line: &str,
) -> io::Result<()> {
    batch.write(&dir.join(crate::output::GRAPH_DOT), |w| {
        writeln!(w, "// syclgraph {windows_line}")?;
        dot::write_dot(w, graph)
    })?;
    batch.write(&dir.join(crate::output::SUMMARY_CSV), |w| {
        summary::write_summary_csv(w, graph)
    })
}

/// Writes `graph.dot`, `summary.csv`, `critical_path.csv`, `idle_gaps.csv`,
/// `regions.csv`, `instances.dot`, `windows.csv` and `summary.txt` of the
/// finished `graph`
/// into `dir`, each atomically (a window still open ends at `now_ns`), and
/// returns the text of `summary.txt`.
pub fn write_run_files(
    dir: &Path,
    graph: &Run,
    now_ns: u64,
    notes: &RunNotes,
) -> io::Result<String> {
    // One batch: every file is renamed into place once all are written
    // (see `AtomicBatch`).
    let mut batch = AtomicBatch::default();
    let windows_line = windows::windows_line(graph.windows(), now_ns);
    write_graph_files_into(&mut batch, dir, graph, &windows_line)?;
    write_critical_files_into(&mut batch, dir, graph)?;
    batch.write(&dir.join("instances.dot"), |w| {
        writeln!(w, "// syclgraph {windows_line}")?;
        instances_dot::write_instances_dot(w, graph)
    })?;
    batch.write(&dir.join("windows.csv"), |w| {
        windows::write_windows_csv(w, graph.windows(), now_ns)
    })?;
    let mut text = notes.heading.clone();
    text.push_str(&summary::summary_table(graph));
    text.push_str(&host_wait_lines(graph));
    let path = graph.critical_path().report();
    text.push_str(&region_block(&region_rows(graph, &path)));
    text.push_str(&critical_path_text(graph, &path));
    text.push_str(&what_would_pay_text(graph));
    let violations = find_violations(graph);
    batch.write(&dir.join(VIOLATIONS_CSV), |w| {
        write_violations_csv(w, graph, &violations)
    })?;
    if let Some(line) = violations_line(graph, &violations) {
        text.push_str(&line);
    }
    text.push_str(&notes.losses);
    text.push_str(&window_lines(graph, notes, now_ns));
    batch.write(&dir.join(SUMMARY_TXT), |w| w.write_all(text.as_bytes()))?;
    batch.commit()?;
    Ok(text)
}

/// Where the host blocked: the longest waits and barriers by total time.
fn host_wait_lines(graph: &TaskGraph) -> String {
    /// Rows shown; the rest are summed on one line.
    const SHOWN: usize = 8;
    let mut spans = graph.host_spans();
    if spans.is_empty() {
        return String::new();
    }
    spans.sort_by_key(|s| std::cmp::Reverse(s.total_ns));
    let mut lines = String::from(if spans.iter().any(|s| s.kind == SpanKind::Task) {
        "host waits and ITT tasks (count, total, longest):\n"
    } else {
        "host waits (count, total, longest):\n"
    });
    for span in spans.iter().take(SHOWN) {
        lines.push_str(&format!(
            "  {:<7} {:<48} {:>6} {:>9} {:>9}\n",
            span_kind_str(span.kind),
            span.label,
            span.count,
            format_ns(span.total_ns),
            format_ns(span.max_ns)
        ));
    }
    if spans.len() > SHOWN {
        let rest = &spans[SHOWN..];
        lines.push_str(&format!(
            "  … {} more, {} in all\n",
            rest.len(),
            format_ns(rest.iter().map(|s| s.total_ns).sum())
        ));
    }
    lines
}

/// Which windows were recorded, and what came while tracing was stopped.
fn window_lines(graph: &TaskGraph, notes: &RunNotes, now_ns: u64) -> String {
    let mut lines = format!("{}\n", windows::windows_line(graph.windows(), now_ns));
    if notes.while_stopped > 0 || graph.windows().len() != 1 {
        lines.push_str(&format!(
            "not recorded: {} command(s) submitted while tracing was stopped{}\n",
            notes.while_stopped,
            match notes.edges_while_stopped {
                0 => String::new(),
                n => format!(" ({n} edge(s) to them)"),
            }
        ));
    }
    if notes.toggles_lost > 0 {
        lines.push_str(&format!(
            "lost: {} start/stop times (too many at once); windows.csv misses them\n",
            notes.toggles_lost
        ));
    }
    lines
}
