//! The rows of the summary, computed from the run: one per device command
//! node (`summary.csv`) and one per (kind, name) group (the stderr table).

use std::collections::BTreeMap;

use crate::duration_samples::DurationSamples;
use crate::kind::NodeKind;
use crate::run::Run;
use crate::timing::{percentile, DurationStats, UntimedCounts};
use crate::writers::dot_ids::node_dot_id;

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
    /// durations; see [`crate::analyses::critical_path`]).
    pub critical_ns: u64,
    /// `critical_ns` over the critical path's length, 0..1.
    pub critical_share: f64,
}

/// The summary groups, largest total device time first (then most
/// instances, then kind and name).
pub fn summary_rows(graph: &Run) -> Vec<SummaryRow> {
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
    pub(super) fn timed(&self) -> Option<(u64, u64, u64)> {
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
pub(super) fn share(part: u64, of: u128) -> f64 {
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
    /// durations; see [`crate::analyses::critical_path`]).
    pub critical_ns: u64,
    /// `critical_ns` over the critical path's length, 0..1.
    pub critical_share: f64,
}

/// `summary.csv`'s rows: one per device command node with finalised
/// instances, largest total device time first (then most instances, then
/// node id).
pub fn node_summary_rows(graph: &Run) -> Vec<NodeSummaryRow> {
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
        // In 128 bits, as `mean_ns`: a total near u64::MAX must not overflow.
        let steady_mean = (self.steady_count > 0).then(|| {
            let (total, n) = (
                u128::from(self.steady_total_ns),
                u128::from(self.steady_count),
            );
            ((total + n / 2) / n) as u64
        });
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
