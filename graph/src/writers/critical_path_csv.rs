//! `critical_path.csv`: one row per kept step of the critical path (see
//! [`crate::analyses::critical_path`]), in time order, columns
//! [`CRITICAL_PATH_COLUMNS`]. `step` counts from 1 at the path's first step,
//! folded steps included (a path longer than the step limit starts at a
//! higher number). `node` is the node id as `n<id>` (the node of
//! `graph.dot`), `instance` the instance number (the node `i<id>_<instance>`
//! of `instances.dot`); `gap_before_ns` and `gap_cause` say how long and why
//! the step waited after the step before.

use std::io::{self, Write};

use crate::analyses::critical_path::PathReport;
use crate::model::TaskGraph;
use crate::record::NodeId;
use crate::writers::csv_fields::{push_field, push_number};
use crate::writers::dot_ids::push_node_dot_id;

/// The critical path file.
pub const CRITICAL_PATH_CSV: &str = "critical_path.csv";

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

/// Rows are handed to the writer in blocks of about this many bytes.
const BLOCK_BYTES: usize = 64 * 1024;

/// Write `critical_path.csv` for `report` to `w`: byte for byte what the
/// csv crate writes with its defaults ([`crate::writers::csv_fields`]),
/// written by hand because the path has up to 2 x 65,536 rows and is
/// rewritten with every snapshot (the csv crate's per-field machinery cost
/// about twice the row).
pub fn write_critical_path_csv<W: Write>(
    mut w: W,
    graph: &TaskGraph,
    report: &PathReport,
) -> io::Result<()> {
    let mut out = Vec::with_capacity(BLOCK_BYTES + 1024);
    for (i, column) in CRITICAL_PATH_COLUMNS.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_field(&mut out, column);
    }
    out.push(b'\n');
    let mut num = itoa::Buffer::new();
    // The node's own columns, escaped once for a run of steps of one node.
    let mut node_text: Option<(NodeId, Vec<u8>, Vec<u8>)> = None;
    for (i, s) in report.steps.iter().enumerate() {
        if node_text.as_ref().is_none_or(|(id, _, _)| *id != s.key.0) {
            let node = graph.node(s.key.0);
            // `name,node,` and `source_file,source_line,`.
            let mut head = Vec::with_capacity(64);
            push_field(&mut head, node.map_or("", |n| n.operation.as_str()));
            head.push(b',');
            let mut key = String::new();
            push_node_dot_id(&mut key, s.key.0);
            push_field(&mut head, &key);
            head.push(b',');
            let mut source = Vec::with_capacity(64);
            push_field(
                &mut source,
                node.and_then(|n| n.source_file.as_deref()).unwrap_or(""),
            );
            source.push(b',');
            push_number(
                &mut source,
                &mut num,
                node.and_then(|n| n.source_line).map(u64::from),
            );
            source.push(b',');
            node_text = Some((s.key.0, head, source));
        }
        let Some((_, head, source)) = &node_text else {
            continue;
        };
        push_number(&mut out, &mut num, Some(report.folded_steps + i as u64 + 1));
        out.push(b',');
        push_field(&mut out, s.kind.as_str());
        out.push(b',');
        out.extend_from_slice(head);
        push_number(&mut out, &mut num, Some(s.key.1));
        out.push(b',');
        out.extend_from_slice(source);
        for n in [s.start_ns, s.end_ns, s.duration_ns(), s.gap_before_ns] {
            push_number(&mut out, &mut num, Some(n));
            out.push(b',');
        }
        push_field(&mut out, s.cause.as_str());
        out.push(b'\n');
        if out.len() >= BLOCK_BYTES {
            w.write_all(&out)?;
            out.clear();
        }
    }
    w.write_all(&out)?;
    w.flush()
}
