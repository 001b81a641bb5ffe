//! `summary.csv` and its text table for stderr: device commands aggregated
//! per (kind, name), largest total device time first.
//!
//! `count` is every finalised instance of the group; the time columns are
//! over the instances timed `ok` only (empty when none was): `mean_ns` is
//! rounded to the nearest ns, `p50_ns`/`p95_ns` are nearest-rank percentiles
//! of the durations, exact while the group has at most
//! [`EXACT_LIMIT`](crate::duration_samples::EXACT_LIMIT) (4,096) timed
//! instances and within 0.39% beyond (an HdrHistogram, see
//! [`DurationSamples`]), and `device_share` is the group's share of all
//! timed device time (0..1, 4 decimals). Untimed instances are counted by
//! reason on the table's `untimed:` line.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::duration_samples::DurationSamples;
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::timing::{format_ns, DurationStats, UntimedCounts};

/// The header of `summary.csv`.
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
            let device_share = if all_ns == 0 {
                0.0
            } else {
                acc.device.total_ns as f64 / all_ns as f64
            };
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
                critical_share: if path.length_ns() == 0 {
                    0.0
                } else {
                    acc.critical_ns as f64 / path.length_ns() as f64
                },
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

/// Write `summary.csv` to `w`.
pub fn write_summary_csv<W: Write>(w: W, graph: &TaskGraph) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(SUMMARY_COLUMNS)?;
    for row in summary_rows(graph) {
        csv.write_record(row.fields())?;
    }
    csv.flush()
}

/// The summary as an aligned text table for stderr, with human durations
/// (names on one line, cut to 48 characters),
/// then an `untimed:` line counting untimed device commands by reason and a
/// `dropped:` line when instances were dropped from memory or flushed early.
pub fn summary_table(graph: &TaskGraph) -> String {
    let rows = summary_rows(graph);
    let header = [
        "kind", "name", "count", "total", "mean", "min", "max", "p50", "p95", "share",
    ];
    let human = |v: Option<u64>| v.map(format_ns).unwrap_or_else(|| "-".to_string());
    let mut table: Vec<[String; 10]> = vec![header.map(str::to_string)];
    for r in &rows {
        let t = r.timed();
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
            r.kind.as_str().to_string(),
            name,
            r.count.to_string(),
            human((r.device.count > 0).then_some(r.device.total_ns)),
            human(t.map(|t| t.0)),
            human(t.map(|t| t.1)),
            human(t.map(|t| t.2)),
            human(r.p50_ns),
            human(r.p95_ns),
            format!("{:.1}%", r.device_share * 100.0),
        ]);
    }
    let mut widths = [0usize; 10];
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
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
            if i < 2 {
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
    if rows.is_empty() {
        out.push_str("no device commands recorded\n");
    }
    let stats = graph.stats();
    let untimed = stats.untimed.nonzero();
    if !untimed.is_empty() {
        let parts: Vec<String> = untimed
            .iter()
            .map(|(status, n)| format!("{n} {}", status.as_str()))
            .collect();
        out.push_str(&format!("untimed: {}\n", parts.join(", ")));
    }
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
