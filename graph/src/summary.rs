//! `summary.csv` and its text table for stderr.
//!
//! `summary.csv` has one row per device command *node* of graph.dot (its
//! `node_id`), largest total device time first; the stderr table groups
//! the same nodes per (kind, name) ([`summary_rows`]).
//!
//! `count` is every finalised instance; the time columns are over the
//! instances timed `ok` only (empty when none was): `mean_ns` is rounded to
//! the nearest ns, `p50_ns`/`p95_ns` are nearest-rank percentiles of the
//! durations, exact while the row has at most
//! [`EXACT_LIMIT`](crate::duration_samples::EXACT_LIMIT) (4,096) timed
//! instances and within 0.39% beyond (an HdrHistogram, see
//! [`DurationSamples`]), and `device_share` is the row's share of all timed
//! device time (0..1, 4 decimals). Untimed instances are counted by reason
//! on the table's `untimed:` line.
//!
//! Warm-up: `first_ns` is the device time of the node's instance 1 (for a
//! kernel, the submission that usually pays for JIT compilation), and the
//! `steady_*` columns are the same statistics over the other timed
//! instances, so that one slow first run distorts neither their p95 nor
//! their share.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::dot::node_dot_id;
use crate::duration_samples::DurationSamples;
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::sycl_graphs::INSIDE_REPLAY_UNTIMED;
use crate::timing::{format_ns, percentile, DurationStats, UntimedCounts};

/// The columns of a (kind, name) group ([`SummaryRow::fields`]), as the
/// stderr table shows them; `summary.csv` itself has one row per node
/// ([`NODE_SUMMARY_COLUMNS`]).
pub const SUMMARY_COLUMNS: [&str; 12] = [
    "kind",
    "name",
    "count",
    "total_ns",
    "mean_ns",
    "min_ns",
    "max_ns",
    "p50_ns",
    "p95_ns",
    "device_share",
    "critical_ns",
    "critical_share",
];

/// The header of `summary.csv`: one row per device command node.
pub const NODE_SUMMARY_COLUMNS: [&str; 21] = [
    "node_id",
    "kind",
    "name",
    "source_file",
    "source_line",
    "count",
    "total_ns",
    "mean_ns",
    "min_ns",
    "max_ns",
    "p50_ns",
    "p95_ns",
    "device_share",
    "first_ns",
    "steady_count",
    "steady_total_ns",
    "steady_mean_ns",
    "steady_p95_ns",
    "steady_share",
    "critical_ns",
    "critical_share",
];

/// Longest name shown in the text table.
const TABLE_NAME_MAX: usize = 48;

/// One (kind, name) group of device commands.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    /// The kind.
    pub kind: NodeKind,
    /// The operation (demangled kernel name, `memcpy`, ...).
    pub name: String,
    /// Finalised instances.
    pub count: u64,
    /// Device times of the instances timed `ok`.
    pub device: DurationStats,
    /// Median device time.
    pub p50_ns: Option<u64>,
    /// 95th percentile device time.
    pub p95_ns: Option<u64>,
    /// Share of all timed device time, 0..1.
    pub device_share: f64,
    /// Untimed instances by reason.
    pub untimed: UntimedCounts,
    /// Time of the group's instances on the critical path (their steps'
    /// durations; see [`crate::critical_path`]).
    pub critical_ns: u64,
    /// `critical_ns` over the critical path's length, 0..1.
    pub critical_share: f64,
}

/// The summary groups, largest total device time first (then most
/// instances, then kind and name).
pub fn summary_rows(graph: &TaskGraph) -> Vec<SummaryRow> {
    struct Acc {
        count: u64,
        device: DurationStats,
        untimed: UntimedCounts,
        durations: DurationSamples,
        critical_ns: u64,
    }
    let path = graph.critical_path().report();
    let mut groups: BTreeMap<(NodeKind, &str), Acc> = BTreeMap::new();
    for node in graph.nodes() {
        if !node.kind.is_device_command() || node.times.finalised == 0 {
            continue;
        }
        let acc = groups
            .entry((node.kind, node.operation.as_str()))
            .or_insert_with(|| Acc {
                count: 0,
                device: DurationStats::default(),
                untimed: UntimedCounts::default(),
                durations: DurationSamples::new(),
                critical_ns: 0,
            });
        acc.critical_ns += path.node_time(node.id);
        acc.count += node.times.finalised;
        acc.device.merge(&node.times.device);
        acc.untimed.merge(&node.times.untimed);
        acc.durations.merge(node.times.durations());
    }
    let all_ns: u128 = groups.values().map(|a| u128::from(a.device.total_ns)).sum();
    let mut rows: Vec<SummaryRow> = groups
        .into_iter()
        .map(|((kind, name), acc)| {
            let (p50_ns, p95_ns) = acc.durations.into_two_percentiles(50.0, 95.0);
            let device_share = share(acc.device.total_ns, all_ns);
            SummaryRow {
                kind,
                name: name.to_string(),
                count: acc.count,
                device: acc.device,
                p50_ns,
                p95_ns,
                device_share,
                untimed: acc.untimed,
                critical_ns: acc.critical_ns,
                critical_share: share(acc.critical_ns, u128::from(path.length_ns())),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.device
            .total_ns
            .cmp(&a.device.total_ns)
            .then_with(|| b.count.cmp(&a.count))
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

impl SummaryRow {
    /// The statistic columns (min, max, mean) when something was timed.
    fn timed(&self) -> Option<(u64, u64, u64)> {
        let d = &self.device;
        d.mean_ns().map(|mean| (mean, d.min_ns, d.max_ns))
    }

    /// The CSV fields, in [`SUMMARY_COLUMNS`] order.
    pub fn fields(&self) -> [String; 12] {
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let t = self.timed();
        [
            self.kind.as_str().to_string(),
            self.name.clone(),
            self.count.to_string(),
            self.device.total_ns.to_string(),
            opt(t.map(|t| t.0)),
            opt(t.map(|t| t.1)),
            opt(t.map(|t| t.2)),
            opt(self.p50_ns),
            opt(self.p95_ns),
            format!("{:.4}", self.device_share),
            self.critical_ns.to_string(),
            format!("{:.4}", self.critical_share),
        ]
    }
}

/// `part` as a share of `of`, 0..1 (0 when `of` is 0).
fn share(part: u64, of: u128) -> f64 {
    if of == 0 {
        0.0
    } else {
        part as f64 / of as f64
    }
}

/// One device command node of graph.dot, as a row of `summary.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSummaryRow {
    /// The node's graph.dot id, `n<id>`.
    pub node_id: String,
    /// The kind.
    pub kind: NodeKind,
    /// The operation (demangled kernel name, `memcpy`, ...).
    pub name: String,
    /// Source file, when known.
    pub source_file: Option<String>,
    /// Source line, when known.
    pub source_line: Option<u32>,
    /// Finalised instances.
    pub count: u64,
    /// Device times of the instances timed `ok`.
    pub device: DurationStats,
    /// Median device time.
    pub p50_ns: Option<u64>,
    /// 95th percentile device time.
    pub p95_ns: Option<u64>,
    /// Share of all timed device time, 0..1.
    pub device_share: f64,
    /// Device time of instance 1, when it was timed.
    pub first_ns: Option<u64>,
    /// Timed instances other than instance 1.
    pub steady_count: u64,
    /// Their total device time.
    pub steady_total_ns: u64,
    /// Their 95th percentile.
    pub steady_p95_ns: Option<u64>,
    /// Their share of all timed device time outside first instances, 0..1.
    pub steady_share: f64,
    /// Time of the node's instances on the critical path (their steps'
    /// durations; see [`crate::critical_path`]).
    pub critical_ns: u64,
    /// `critical_ns` over the critical path's length, 0..1.
    pub critical_share: f64,
}

/// `summary.csv`'s rows: one per device command node with finalised
/// instances, largest total device time first (then most instances, then
/// node id).
pub fn node_summary_rows(graph: &TaskGraph) -> Vec<NodeSummaryRow> {
    let path = graph.critical_path().report();
    let mut rows: Vec<(u32, NodeSummaryRow)> = Vec::new();
    for node in graph.nodes() {
        if !node.kind.is_device_command() || node.times.finalised == 0 {
            continue;
        }
        let t = &node.times;
        let (p50_ns, p95_ns) = t.durations().two_percentiles(50.0, 95.0);
        let first = t.first_device_ns;
        let steady_count = t.device.count - u64::from(first.is_some());
        let steady_total_ns = t.device.total_ns - first.unwrap_or(0);
        // Past the exact limit one value moves the percentile by less than
        // the histogram's precision: the row's own p95 stands for it.
        let steady_p95_ns = match (first, t.durations().exact_values()) {
            (Some(first), Some(values)) => {
                let mut rest = values.to_vec();
                if let Some(at) = rest.iter().position(|&v| v == first) {
                    rest.swap_remove(at);
                }
                rest.sort_unstable();
                percentile(&rest, 95.0)
            }
            _ => p95_ns,
        };
        rows.push((
            node.id,
            NodeSummaryRow {
                node_id: node_dot_id(node.id),
                kind: node.kind,
                name: node.operation.clone(),
                source_file: node.source_file.clone(),
                source_line: node.source_line,
                count: t.finalised,
                device: t.device,
                p50_ns,
                p95_ns,
                device_share: 0.0,
                first_ns: first,
                steady_count,
                steady_total_ns,
                steady_p95_ns,
                steady_share: 0.0,
                critical_ns: path.node_time(node.id),
                critical_share: share(path.node_time(node.id), u128::from(path.length_ns())),
            },
        ));
    }
    let all: u128 = rows
        .iter()
        .map(|(_, r)| u128::from(r.device.total_ns))
        .sum();
    let steady: u128 = rows
        .iter()
        .map(|(_, r)| u128::from(r.steady_total_ns))
        .sum();
    for (_, r) in &mut rows {
        r.device_share = share(r.device.total_ns, all);
        r.steady_share = share(r.steady_total_ns, steady);
    }
    rows.sort_by(|(a_id, a), (b_id, b)| {
        b.device
            .total_ns
            .cmp(&a.device.total_ns)
            .then_with(|| b.count.cmp(&a.count))
            .then_with(|| a_id.cmp(b_id))
    });
    rows.into_iter().map(|(_, r)| r).collect()
}

impl NodeSummaryRow {
    /// The CSV fields, in [`NODE_SUMMARY_COLUMNS`] order.
    pub fn fields(&self) -> [String; 21] {
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let d = &self.device;
        let timed = d.mean_ns().map(|mean| (mean, d.min_ns, d.max_ns));
        let steady_mean = (self.steady_count > 0)
            .then(|| (self.steady_total_ns + self.steady_count / 2) / self.steady_count);
        [
            self.node_id.clone(),
            self.kind.as_str().to_string(),
            self.name.clone(),
            self.source_file.clone().unwrap_or_default(),
            opt(self.source_line.map(u64::from)),
            self.count.to_string(),
            d.total_ns.to_string(),
            opt(timed.map(|t| t.0)),
            opt(timed.map(|t| t.1)),
            opt(timed.map(|t| t.2)),
            opt(self.p50_ns),
            opt(self.p95_ns),
            format!("{:.4}", self.device_share),
            opt(self.first_ns),
            self.steady_count.to_string(),
            self.steady_total_ns.to_string(),
            opt(steady_mean),
            opt(self.steady_p95_ns),
            format!("{:.4}", self.steady_share),
            self.critical_ns.to_string(),
            format!("{:.4}", self.critical_share),
        ]
    }
}

/// Write `summary.csv` to `w`: [`NODE_SUMMARY_COLUMNS`], then
/// [`node_summary_rows`].
pub fn write_summary_csv<W: Write>(w: W, graph: &TaskGraph) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(NODE_SUMMARY_COLUMNS)?;
    for row in node_summary_rows(graph) {
        csv.write_record(row.fields())?;
    }
    csv.flush()
}

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
pub fn summary_table(graph: &TaskGraph) -> String {
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

/// Reads `summary.csv` back (as [`write_summary_csv`] wrote it: one line
/// per node, columns found by name, so columns added later are passed over).
/// The error names the line and what is wrong with it. `device_share` is
/// recomputed from the `total_ns` column, as the writer computes it, so
/// that [`format_table`] prints the share the run computed.
pub fn read_summary_csv<R: io::Read>(r: R) -> Result<Vec<SummaryLine>, String> {
    const NEEDED: [&str; 11] = [
        "node_id",
        "kind",
        "name",
        "count",
        "total_ns",
        "mean_ns",
        "min_ns",
        "max_ns",
        "p50_ns",
        "p95_ns",
        "device_share",
    ];
    let mut csv = csv::ReaderBuilder::new().has_headers(false).from_reader(r);
    let mut records = csv.records();
    let header = match records.next() {
        Some(Ok(h)) => h,
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("the file is empty".to_string()),
    };
    let mut at_column = [0usize; NEEDED.len()];
    for (slot, name) in at_column.iter_mut().zip(NEEDED) {
        *slot = header.iter().position(|h| h == name).ok_or_else(|| {
            format!(
                "line 1 is not the summary.csv header (no {name} column; wanted {})",
                NODE_SUMMARY_COLUMNS.join(",")
            )
        })?;
    }
    let mut lines = Vec::new();
    let mut totals = Vec::new();
    for (i, record) in records.enumerate() {
        let at = i + 2;
        let record = record.map_err(|e| format!("line {at}: {e}"))?;
        if record.len() != header.len() {
            return Err(format!(
                "line {at}: {} fields, not {}",
                record.len(),
                header.len()
            ));
        }
        let field = |n: usize| record.get(at_column[n]).unwrap_or("");
        let number = |n: usize| -> Result<Option<u64>, String> {
            match field(n) {
                "" => Ok(None),
                v => v
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("line {at}: {} {v:?} is not a whole number", NEEDED[n])),
            }
        };
        let count = number(3)?.ok_or_else(|| format!("line {at}: count is empty"))?;
        let total = number(4)?.unwrap_or(0);
        let mean_ns = number(5)?;
        field(10)
            .parse::<f64>()
            .map_err(|_| format!("line {at}: device_share {:?} is not a number", field(10)))?;
        totals.push(total);
        lines.push(SummaryLine {
            node_id: Some(field(0).to_string()),
            kind: field(1).to_string(),
            name: field(2).to_string(),
            count,
            // total_ns is 0 when nothing was timed; the table shows `-` then.
            total_ns: mean_ns.map(|_| total),
            mean_ns,
            min_ns: number(6)?,
            max_ns: number(7)?,
            p50_ns: number(8)?,
            p95_ns: number(9)?,
            // Recomputed below from the exact totals: the column's 4
            // decimals, rounded again to the table's 1, could differ.
            device_share: 0.0,
        });
    }
    let all_ns: u128 = totals.iter().map(|&t| u128::from(t)).sum();
    for (line, total) in lines.iter_mut().zip(totals) {
        line.device_share = share(total, all_ns);
    }
    Ok(lines)
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
    out
}
