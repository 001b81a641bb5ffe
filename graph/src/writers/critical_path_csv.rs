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
