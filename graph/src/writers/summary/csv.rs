//! Writing `summary.csv`.

use std::io::{self, Write};

use crate::run::Run;
use crate::writers::summary::rows::{node_summary_rows, NODE_SUMMARY_COLUMNS};

/// Write `summary.csv` to `w`: [`NODE_SUMMARY_COLUMNS`], then
/// [`node_summary_rows`].
pub fn write_summary_csv<W: Write>(w: W, graph: &Run) -> io::Result<()> {
    let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
    csv.write_record(NODE_SUMMARY_COLUMNS)?;
    for row in node_summary_rows(graph) {
        csv.write_record(row.fields())?;
    }
    csv.flush()
}
