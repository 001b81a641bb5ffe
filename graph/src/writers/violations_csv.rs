//! `violations.csv` (see [`crate::analyses::violations`]): one row per
//! command that started on the device before one of its recorded
//! dependencies ended, longest overlap first; columns
//! [`VIOLATIONS_COLUMNS`]. Also the summary's `violations:` line. Written
//! at every run's end: only the header when there were none.

use std::io::{self, Write};

use crate::analyses::violations::Violation;
use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;
use crate::timing::format_ns;
use crate::writers::dot_ids::node_dot_id;

/// The violations file.
pub const VIOLATIONS_CSV: &str = "violations.csv";

/// The header of `violations.csv`: the dependency (`before_*`, which
/// should have ended first), the command that started too early
/// (`after_*`), by how much they overlapped, and what kind of dependency
/// it was (`dependency`: a data or event dependency; `queue_order`: an
/// in-order queue's order).
pub const VIOLATIONS_COLUMNS: [&str; 14] = [
    "overlap_ns",
    "dependency",
    "before_node",
    "before_instance",
    "before_kind",
    "before_name",
    "before_source",
    "before_end_ns",
    "after_node",
    "after_instance",
    "after_kind",
    "after_name",
    "after_source",
    "after_start_ns",
];

/// A command's node id, kind, name and source location (empty when the
/// node is unknown).
fn command_fields(graph: &TaskGraph, (node, instance): InstanceKey) -> [String; 5] {
    let described = graph.node(node);
    [
        node_dot_id(node),
        instance.to_string(),
        described.map_or_else(String::new, |n| n.kind.as_str().to_string()),
        described.map_or_else(String::new, |n| n.operation.clone()),
        described.and_then(|n| n.location()).unwrap_or_default(),
    ]
}

fn dependency_word(v: &Violation) -> &'static str {
    if v.queue_order {
        "queue_order"
    } else {
        "dependency"
    }
}

/// Write `violations.csv` for `violations` of `graph` to `w`.
pub fn write_violations_csv<W: Write>(
    w: W,
    graph: &TaskGraph,
    violations: &[Violation],
) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(VIOLATIONS_COLUMNS)?;
    for v in violations {
        let [bn, bi, bk, bname, bsrc] = command_fields(graph, v.source);
        let [an, ai, ak, aname, asrc] = command_fields(graph, v.target);
        csv.write_record([
            v.overlap_ns().to_string(),
            dependency_word(v).to_string(),
            bn,
            bi,
            bk,
            bname,
            bsrc,
            v.source_end_ns.to_string(),
            an,
            ai,
            ak,
            aname,
            asrc,
            v.target_start_ns.to_string(),
        ])?;
    }
    csv.flush()
}

/// The summary's line (`None` when there were none): how many, and the
/// longest overlap with both commands.
pub fn violations_line(graph: &TaskGraph, violations: &[Violation]) -> Option<String> {
    let worst = violations.first()?;
    let name = |(node, instance): InstanceKey| {
        let described = graph.node(node);
        let what = described.map_or_else(|| node_dot_id(node), |n| n.operation.clone());
        match described.and_then(|n| n.location()) {
            Some(at) => format!("{what} #{instance} ({at})"),
            None => format!("{what} #{instance}"),
        }
    };
    Some(format!(
        "violations: {} command(s) started on the device before a dependency ended; longest: {} started {} before {} ended (violations.csv)\n",
        violations.len(),
        name(worst.target),
        format_ns(worst.overlap_ns()),
        name(worst.source),
    ))
}
