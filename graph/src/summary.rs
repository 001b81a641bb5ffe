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
pub const SUMMARY_COLUMNS: [&str; 10] = [
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
}

/// The summary groups, largest total device time first (then most
/// instances, then kind and name).
pub fn summary_rows(graph: &TaskGraph) -> Vec<SummaryRow> {
    struct Acc {
        count: u64,
        device: DurationStats,
        untimed: UntimedCounts,
        durations: DurationSamples,
    }
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
            });
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
    pub fn fields(&self) -> [String; 10] {
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
    let lines: Vec<SummaryLine> = summary_rows(graph).iter().map(SummaryRow::line).collect();
    let mut out = format_table(&lines);
    let stats = graph.stats();
    out.push_str(&untimed_line(&stats.untimed));
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

/// Reads `summary.csv` back (as [`write_summary_csv`] wrote it). The error
/// names the line and what is wrong with it. `device_share` is recomputed
/// from the `total_ns` column, as [`summary_rows`] computes it, so that
/// [`format_table`] prints the share the run printed.
pub fn read_summary_csv<R: io::Read>(r: R) -> Result<Vec<SummaryLine>, String> {
    let mut csv = csv::ReaderBuilder::new().has_headers(false).from_reader(r);
    let mut records = csv.records();
    let header = match records.next() {
        Some(Ok(h)) => h,
        Some(Err(e)) => return Err(e.to_string()),
        None => return Err("the file is empty".to_string()),
    };
    if header.iter().ne(SUMMARY_COLUMNS) {
        return Err(format!(
            "line 1 is not the summary.csv header ({})",
            SUMMARY_COLUMNS.join(",")
        ));
    }
    let mut lines = Vec::new();
    let mut totals = Vec::new();
    for (i, record) in records.enumerate() {
        let at = i + 2;
        let record = record.map_err(|e| format!("line {at}: {e}"))?;
        let field = |n: usize| record.get(n).unwrap_or("");
        if record.len() != SUMMARY_COLUMNS.len() {
            return Err(format!(
                "line {at}: {} fields, not {}",
                record.len(),
                SUMMARY_COLUMNS.len()
            ));
        }
        let number = |n: usize| -> Result<Option<u64>, String> {
            match field(n) {
                "" => Ok(None),
                v => v.parse().map(Some).map_err(|_| {
                    format!(
                        "line {at}: {} {v:?} is not a whole number",
                        SUMMARY_COLUMNS[n]
                    )
                }),
            }
        };
        let count = number(2)?.ok_or_else(|| format!("line {at}: count is empty"))?;
        let total = number(3)?.unwrap_or(0);
        let mean_ns = number(4)?;
        field(9)
            .parse::<f64>()
            .map_err(|_| format!("line {at}: device_share {:?} is not a number", field(9)))?;
        totals.push(total);
        lines.push(SummaryLine {
            kind: field(0).to_string(),
            name: field(1).to_string(),
            count,
            // total_ns is 0 when nothing was timed; the table shows `-` then.
            total_ns: mean_ns.map(|_| total),
            mean_ns,
            min_ns: number(5)?,
            max_ns: number(6)?,
            p50_ns: number(7)?,
            p95_ns: number(8)?,
            // Recomputed below from the exact totals: the column's 4
            // decimals, rounded again to the table's 1, could differ from
            // the table the run printed.
            device_share: 0.0,
        });
    }
    let all_ns: u128 = totals.iter().map(|&t| u128::from(t)).sum();
    if all_ns > 0 {
        for (line, total) in lines.iter_mut().zip(totals) {
            line.device_share = total as f64 / all_ns as f64;
        }
    }
    Ok(lines)
}

/// The aligned text table of the summary (header, one row per line, or
/// `no device commands recorded`), with human durations, names on one line
/// cut to 48 characters, and `-` where nothing was timed.
pub fn format_table(lines: &[SummaryLine]) -> String {
    let header = [
        "kind", "name", "count", "total", "mean", "min", "max", "p50", "p95", "share",
    ];
    let human = |v: Option<u64>| v.map(format_ns).unwrap_or_else(|| "-".to_string());
    let mut table: Vec<[String; 10]> = vec![header.map(str::to_string)];
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
