//! `syclgraph diff --csv`: one row per node (and rank), columns
//! [`DIFF_COLUMNS`]: the rank (empty for two runs), the node's kind,
//! operation and location, its verdict, the median's change in percent,
//! the rank test's p-value (empty when there was no test), and rows, timed
//! instances, total, median and 95th percentile before and after (empty
//! on the side that lacks the node).

use std::io::{self, Write};

use crate::{Diff, Side};

/// The header of `syclgraph diff --csv`.
pub const DIFF_COLUMNS: [&str; 18] = [
    "rank",
    "kind",
    "name",
    "source_file",
    "source_line",
    "verdict",
    "change_pct",
    "p_value",
    "rows_before",
    "rows_after",
    "timed_before",
    "timed_after",
    "total_before_ns",
    "total_after_ns",
    "p50_before_ns",
    "p50_after_ns",
    "p95_before_ns",
    "p95_after_ns",
];

/// Writes the header and every node of every compared run.
pub fn write_diff_csv<W: Write>(w: W, d: &Diff) -> io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(DIFF_COLUMNS)?;
    let num = |v: Option<u64>| v.map_or_else(String::new, |v| v.to_string());
    for r in &d.runs {
        for n in &r.nodes {
            let side = |s: Option<Side>, f: fn(&Side) -> Option<u64>| num(s.as_ref().and_then(f));
            let (b, a) = (n.before, n.after);
            csv.write_record([
                num(r.rank),
                n.key.kind.clone(),
                n.key.operation.clone(),
                n.key.file.clone(),
                n.key.line.clone(),
                n.verdict.as_str().to_string(),
                n.change_pct.map_or_else(String::new, |c| format!("{c:.2}")),
                n.p_value.map_or_else(String::new, |p| format!("{p:.3e}")),
                side(b, |s| Some(s.rows)),
                side(a, |s| Some(s.rows)),
                side(b, |s| Some(s.timed)),
                side(a, |s| Some(s.timed)),
                side(b, |s| Some(s.total_ns)),
                side(a, |s| Some(s.total_ns)),
                side(b, |s| s.p50_ns),
                side(a, |s| s.p50_ns),
                side(b, |s| s.p95_ns),
                side(a, |s| s.p95_ns),
            ])?;
        }
    }
    csv.flush()
}
