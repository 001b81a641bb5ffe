//! The summary as the aligned text table printed on stderr, from the run
//! or from lines read back from `summary.csv`, with the lines under it
//! (untimed commands, warm-up, SYCL graphs, dropped instances).

use crate::model::TaskGraph;
use crate::run::Run;
use crate::sycl_graphs::INSIDE_REPLAY_UNTIMED;
use crate::timing::{format_ns, UntimedCounts};
use crate::writers::summary::rows::{summary_rows, SummaryRow};

/// Longest name shown in the text table.
const TABLE_NAME_MAX: usize = 48;

/// `warm-up: ...`: how much of the timed device time went to the first
/// instances of commands submitted more than once; `None` when none was.
fn warm_up_line(graph: &TaskGraph) -> Option<String> {
    let mut first = 0u128;
    let mut all = 0u128;
    for node in graph.nodes() {
        if !node.kind.is_device_command() {
            continue;
        }
        all += u128::from(node.times.device.total_ns);
        if node.times.finalised > 1 {
            first += u128::from(node.times.first_device_ns.unwrap_or(0));
        }
    }
    if first == 0 {
        return None;
    }
    let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
    Some(format!(
        "warm-up: the first instances of repeated commands took {} of {} device time \
         (summary.csv: first_ns; steady_* columns leave them out)\n",
        format_ns(clamp(first)),
        format_ns(clamp(all)),
    ))
}

/// The summary as an aligned text table for stderr, with human durations
/// (names on one line, cut to 48 characters),
/// then an `untimed:` line counting untimed device commands by reason, a
/// `warm-up:` line (the first instances' device time) and a
/// `dropped:` line when instances were dropped from memory or flushed early.
pub fn summary_table(graph: &Run) -> String {
    let lines: Vec<SummaryLine> = summary_rows(graph).iter().map(SummaryRow::line).collect();
    let mut out = format_table(&lines);
    let stats = graph.stats();
    out.push_str(&untimed_line(&stats.untimed));
    if let Some(line) = warm_up_line(graph) {
        out.push_str(&line);
    }
    out.push_str(&sycl_graph_lines(graph));
    let mut dropped = Vec::new();
    if stats.instances_dropped > 0 {
        dropped.push(format!(
            "{} instances not kept in memory (limit {})",
            stats.instances_dropped,
            graph.limits().max_instances
        ));
    }
    if stats.pending_evicted > 0 {
        dropped.push(format!(
            "{} instances flushed early from a full pending table (limit {})",
            stats.pending_evicted,
            graph.limits().max_pending
        ));
    }
    if !dropped.is_empty() {
        out.push_str(&format!("dropped: {}\n", dropped.join(", ")));
    }
    out
}

/// One line of the summary as `summary.csv` holds it: what the text table
/// shows, whether it comes from the graph ([`SummaryRow::line`]) or from the
/// file of an earlier run ([`read_summary_csv`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryLine {
    /// The graph.dot node (`n3`) when the line is one node's (read back
    /// from `summary.csv`); `None` for a (kind, name) group.
    pub node_id: Option<String>,
    /// The kind, as written (`kernel`, `memcpy`, ...).
    pub kind: String,
    /// The operation.
    pub name: String,
    /// Finalised instances, timed or not.
    pub count: u64,
    /// Sum of the timed durations; `None` when none was timed.
    pub total_ns: Option<u64>,
    /// Mean timed duration.
    pub mean_ns: Option<u64>,
    /// Shortest timed duration.
    pub min_ns: Option<u64>,
    /// Longest timed duration.
    pub max_ns: Option<u64>,
    /// Median timed duration.
    pub p50_ns: Option<u64>,
    /// 95th percentile timed duration.
    pub p95_ns: Option<u64>,
    /// Share of all timed device time, 0..1.
    pub device_share: f64,
}

impl SummaryRow {
    /// The row as the table shows it.
    pub fn line(&self) -> SummaryLine {
        let t = self.timed();
        SummaryLine {
            node_id: None,
            kind: self.kind.as_str().to_string(),
            name: self.name.clone(),
            count: self.count,
            total_ns: (self.device.count > 0).then_some(self.device.total_ns),
            mean_ns: t.map(|t| t.0),
            min_ns: t.map(|t| t.1),
            max_ns: t.map(|t| t.2),
            p50_ns: self.p50_ns,
            p95_ns: self.p95_ns,
            device_share: self.device_share,
        }
    }
}

/// The aligned text table of the summary (header, one row per line, or
/// `no device commands recorded`), with human durations, names on one line
/// cut to 48 characters, and `-` where nothing was timed.
pub fn format_table(lines: &[SummaryLine]) -> String {
    let by_node = lines.iter().any(|l| l.node_id.is_some());
    let header = [
        "kind", "name", "count", "total", "mean", "min", "max", "p50", "p95", "share", "node",
    ];
    let human = |v: Option<u64>| v.map(format_ns).unwrap_or_else(|| "-".to_string());
    let mut table: Vec<[String; 11]> = vec![header.map(str::to_string)];
    for r in lines {
        let one_line: String = r
            .name
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let name = if one_line.chars().count() > TABLE_NAME_MAX {
            let mut s: String = one_line.chars().take(TABLE_NAME_MAX - 1).collect();
            s.push('…');
            s
        } else {
            one_line
        };
        table.push([
            r.kind.clone(),
            name,
            r.count.to_string(),
            human(r.total_ns),
            human(r.mean_ns),
            human(r.min_ns),
            human(r.max_ns),
            human(r.p50_ns),
            human(r.p95_ns),
            format!("{:.1}%", r.device_share * 100.0),
            r.node_id.clone().unwrap_or_default(),
        ]);
    }
    let columns = if by_node { 11 } else { 10 };
    let table: Vec<&[String]> = table.iter().map(|row| &row[..columns]).collect();
    let mut widths = [0usize; 11];
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &table {
        let mut line = String::new();
        for (i, (cell, &w)) in row.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            if i < 2 || i == 10 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if lines.is_empty() {
        out.push_str("no device commands recorded\n");
    }
    out
}

/// The `untimed: 10 no_profiling, 14 unavailable` line (with its newline),
/// or nothing when every device command was timed.
pub fn untimed_line(untimed: &UntimedCounts) -> String {
    let untimed = untimed.nonzero();
    if untimed.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = untimed
        .iter()
        .map(|(status, n)| format!("{n} {}", status.as_str()))
        .collect();
    format!("untimed: {}\n", parts.join(", "))
}

/// The stderr lines about SYCL graphs (none without any): per graph, its
/// commands and edges, where it was recorded, what finalising it cost and
/// how often it was replayed; then what is known inside a replay.
fn sycl_graph_lines(graph: &TaskGraph) -> String {
    let graphs = graph.sycl_graphs();
    if graphs.is_empty() {
        return String::new();
    }
    let mut out = String::from("sycl graphs (commands, edges, finalised in, replays):\n");
    for g in graphs.iter() {
        let located = g
            .members
            .iter()
            .filter_map(|id| graph.node(*id))
            .find_map(|n| n.location());
        let replays = g
            .node
            .and_then(|id| graph.node(id))
            .map_or(0, |n| n.times.finalised);
        let finalised = g.finalize_ns().map_or("-".to_string(), format_ns);
        out.push_str(&format!(
            "  graph {:<4} {:>3} {:>3} {:>10} {:>7}  {}\n",
            g.number,
            g.members.len(),
            g.edges.len(),
            finalised,
            replays,
            located.unwrap_or_default()
        ));
    }
    out.push_str(&format!(
        "  inside a replay: {} (each replay is timed as a whole)\n",
        INSIDE_REPLAY_UNTIMED
    ));
    let markers: u64 = graphs
        .iter()
        .filter_map(|g| g.node.and_then(|id| graph.node(id)))
        .map(|n| n.times.untimed.marker)
        .sum();
    if markers > 0 {
        out.push_str(&format!(
            "  {markers} replay(s) timing=marker: this backend timed a marker after each replay's work, not the work (no device time)\n"
        ));
    }
    out
}
