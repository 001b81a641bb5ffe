//! `summary.csv` and its text table for stderr.
//!
//! `summary.csv` has one row per device command *node* of graph.dot (its
//! `node_id`), largest total device time first; the stderr table groups
//! the same nodes per (kind, name) ([`summary_rows`]).
//!
//! `count` is every finalised instance; the time columns are over the
//! instances timed `ok` only (empty when none was): `mean_ns` is rounded to
//! the nearest ns, `p50_ns`/`p95_ns` are nearest-rank percentiles of the
//! durations, exact while the row has at most
//! [`EXACT_LIMIT`](crate::duration_samples::EXACT_LIMIT) (4,096) timed
//! instances and within 0.39% beyond (an HdrHistogram, see
//! [`DurationSamples`]), and `device_share` is the row's share of all timed
//! device time (0..1, 4 decimals). Untimed instances are counted by reason
//! on the table's `untimed:` line.
//!
//! Warm-up: `first_ns` is the device time of the node's instance 1 (for a
//! kernel, the submission that usually pays for JIT compilation), and the
//! `steady_*` columns are the same statistics over the other timed
//! instances, so that one slow first run distorts neither their p95 nor
//! their share.
//!
//! One module per idea: [`rows`] computes the rows, [`csv`] writes
//! `summary.csv`, [`read_back`] reads it back, [`table`] is the stderr text.

pub mod csv;
pub mod read_back;
pub mod rows;
pub mod table;

pub use csv::write_summary_csv;
pub use read_back::read_summary_csv;
pub use rows::{
    node_summary_rows, summary_rows, NodeSummaryRow, SummaryRow, NODE_SUMMARY_COLUMNS,
    SUMMARY_COLUMNS,
};
pub use table::{format_table, summary_table, untimed_line, SummaryLine};
