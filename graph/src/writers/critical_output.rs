//! `critical_path.csv`, `idle_gaps.csv` and the stderr block of the
//! critical path (see [`crate::analyses::critical_path`] and [`crate::analyses::idle_gaps`]).
//!
//! `critical_path.csv`: one row per kept step of the critical path, in time
//! order, columns [`CRITICAL_PATH_COLUMNS`]. `step` counts from 1 at the
//! path's first step, folded steps included (a path longer than the step
//! limit starts at a higher number). `node` is the node id as `n<id>` (the
//! node of `graph.dot`), `instance` the instance number (the node
//! `i<id>_<instance>` of `instances.dot`); `gap_before_ns` and `gap_cause`
//! say how long and why the step waited after the step before.
//!
//! `idle_gaps.csv`: columns [`IDLE_GAPS_COLUMNS`]. Rows `total`: per device
//! and per queue and cause, the number of gaps and their idle time, over the
//! whole run (`cause` `busy` gives the time covered by commands, `late` in
//! `count` the commands that came too late to be placed). Rows `gap`: the
//! ten longest gaps per scope with the instances before and after.

use std::io::{self, Write};

use crate::analyses::critical_path::{GapCause, PathReport};
use crate::analyses::idle_gaps::{IdleCause, IdleGaps};
use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;
use crate::run::Run;
use crate::timing::format_ns;
use crate::writers::dot_ids::{node_dot_id, push_node_dot_id};

/// The critical path file.
pub const CRITICAL_PATH_CSV: &str = "critical_path.csv";
/// The idle gaps file.
pub const IDLE_GAPS_CSV: &str = "idle_gaps.csv";

/// The header of `critical_path.csv`.
pub const CRITICAL_PATH_COLUMNS: [&str; 12] = [
    "step",
    "kind",
    "name",
    "node",
    "instance",
    "source_file",
    "source_line",
    "start_ns",
    "end_ns",
    "duration_ns",
    "gap_before_ns",
    "gap_cause",
];

/// The header of `idle_gaps.csv`.
pub const IDLE_GAPS_COLUMNS: [&str; 13] = [
    "row",
    "scope",
    "resource",
    "cause",
    "count",
    "idle_ns",
    "start_ns",
    "end_ns",
    "before_node",
    "before_instance",
    "after_node",
    "after_instance",
    "rank",
];

/// Write `critical_path.csv` for `report` to `w`.
pub fn write_critical_path_csv<W: Write>(
    w: W,
    graph: &TaskGraph,
    report: &PathReport,
) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(CRITICAL_PATH_COLUMNS)?;
    // Field by field from borrowed text and itoa's stack buffers: the path
    // has up to 2 x 65,536 rows and is rewritten with every snapshot.
    let number = |csv: &mut csv::Writer<W>, n: u64| csv.write_field(itoa::Buffer::new().format(n));
    // The `node` column, in one String for every row.
    let mut key = String::new();
    for (i, s) in report.steps.iter().enumerate() {
        let node = graph.node(s.key.0);
        number(&mut csv, report.folded_steps + i as u64 + 1)?;
        csv.write_field(s.kind.as_str())?;
        csv.write_field(node.map_or("", |n| n.operation.as_str()))?;
        key.clear();
        push_node_dot_id(&mut key, s.key.0);
        csv.write_field(&key)?;
        number(&mut csv, s.key.1)?;
        csv.write_field(node.and_then(|n| n.source_file.as_deref()).unwrap_or(""))?;
        match node.and_then(|n| n.source_line) {
            Some(line) => number(&mut csv, u64::from(line))?,
            None => csv.write_field("")?,
        }
        number(&mut csv, s.start_ns)?;
        number(&mut csv, s.end_ns)?;
        number(&mut csv, s.duration_ns())?;
        number(&mut csv, s.gap_before_ns)?;
        csv.write_field(s.cause.as_str())?;
        csv.write_record(None::<&[u8]>)?;
    }
    csv.flush()
}

fn key_fields(key: Option<InstanceKey>) -> [String; 2] {
    match key {
        Some((n, i)) => [node_dot_id(n), i.to_string()],
        None => [String::new(), String::new()],
    }
}

/// Write `idle_gaps.csv` for `idle` to `w`.
pub fn write_idle_gaps_csv<W: Write>(w: W, idle: &IdleGaps) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(IDLE_GAPS_COLUMNS)?;
    for (resource, sweep) in idle.sweeps() {
        let mut total = |cause: &str, count: u64, ns: u64| {
            csv.write_record([
                "total",
                resource.scope(),
                &resource.name(),
                cause,
                &count.to_string(),
                &ns.to_string(),
                "",
                "",
                "",
                "",
                "",
                "",
                "",
            ])
        };
        total("busy", sweep.commands, sweep.busy_ns)?;
        total("late", sweep.late, 0)?;
        for cause in IdleCause::ALL {
            total(
                cause.as_str(),
                sweep.gaps[cause.index()],
                sweep.idle_ns[cause.index()],
            )?;
        }
    }
    for scope in ["device", "queue"] {
        for (rank, gap) in idle.longest(scope).into_iter().enumerate() {
            let [bn, bi] = key_fields(gap.before);
            let [an, ai] = key_fields(Some(gap.after));
            csv.write_record([
                "gap",
                scope,
                &gap.resource.name(),
                gap.cause.as_str(),
                "1",
                &gap.idle_ns().to_string(),
                &gap.start_ns.to_string(),
                &gap.end_ns.to_string(),
                &bn,
                &bi,
                &an,
                &ai,
                &(rank + 1).to_string(),
            ])?;
        }
    }
    csv.flush()
}

/// `part` of `whole` as a percentage with one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_string();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The stderr block: span, critical path length, device busy share, idle
/// time by cause and the nodes with the most time on the critical path.
pub fn critical_path_text(graph: &Run, report: &PathReport) -> String {
    /// Nodes listed.
    const TOP: usize = 5;
    let Some(end) = report.end_ns else {
        return String::new();
    };
    let idle = graph.critical_path().idle_gaps();
    let span = report.span_ns();
    let mut out = String::new();
    out.push_str(&format!(
        "critical path: {} steps, {} of a {} span (first submission to last device end)\n",
        report.total_steps(),
        format_ns(report.length_ns()),
        format_ns(span)
    ));
    let on_path: u64 = report.node_ns.iter().map(|n| n.1).sum();
    let gaps: Vec<String> = GapCause::ALL
        .iter()
        .filter(|c| report.gap_ns[c.index()] > 0)
        .map(|c| format!("{} {}", c.as_str(), format_ns(report.gap_ns[c.index()])))
        .collect();
    out.push_str(&format!(
        "  on it: running {}, waiting {}\n",
        format_ns(on_path),
        if gaps.is_empty() {
            "0".to_string()
        } else {
            gaps.join(", ")
        }
    ));
    // Per device; per queue when no command named its device (USM only).
    let sweeps = idle.sweeps();
    let scope = if sweeps.iter().any(|(r, _)| r.scope() == "device") {
        "device"
    } else {
        "queue"
    };
    for (resource, sweep) in sweeps {
        if resource.scope() != scope {
            continue;
        }
        let from = report.first_ns.unwrap_or(0);
        let until = sweep.last_end_ns().unwrap_or(end).max(end);
        let causes: Vec<String> = IdleCause::ALL
            .iter()
            .filter(|c| sweep.idle_ns[c.index()] > 0)
            .map(|c| format!("{} {}", c.as_str(), format_ns(sweep.idle_ns[c.index()])))
            .collect();
        out.push_str(&format!(
            "  {} {}: busy {} of the span; idle between commands {}{}\n",
            scope,
            resource.name(),
            percent(sweep.busy_ns, until.saturating_sub(from)),
            format_ns(sweep.idle_total_ns()),
            if causes.is_empty() {
                String::new()
            } else {
                format!(" ({})", causes.join(", "))
            }
        ));
    }
    let length = report.length_ns();
    for &(node, ns) in report.node_ns.iter().take(TOP) {
        let name = graph.node(node).map_or_else(
            || format!("node {node}"),
            |n| match n.location() {
                Some(loc) => format!("{} ({loc})", n.operation),
                None => n.operation.clone(),
            },
        );
        out.push_str(&format!(
            "  {:>6} {:>9}  {} {}\n",
            percent(ns, length),
            format_ns(ns),
            node_dot_id(node),
            name
        ));
    }
    if let Some(gap) = idle.longest(scope).first() {
        out.push_str(&format!(
            "  longest {scope} gap: {} ({}) before {}#{}; idle_gaps.csv has the ten longest\n",
            format_ns(gap.idle_ns()),
            gap.cause.as_str(),
            node_dot_id(gap.after.0),
            gap.after.1
        ));
    }
    out
}
