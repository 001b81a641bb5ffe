//! Reading `summary.csv` back (for `syclgraph report` on an earlier run).

use std::io;

use crate::writers::summary::rows::{share, NODE_SUMMARY_COLUMNS};
use crate::writers::summary::table::SummaryLine;

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
