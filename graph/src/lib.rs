//! The syclgraph task-graph model: records in, graph and reports out. No FFI.
//!
//! The subscriber's background thread feeds [`Record`]s to
//! [`TaskGraph::apply`], streams the [`Completed`] instances it hands back
//! through a [`KernelRowWriter`] into `kernels.csv`, calls
//! [`TaskGraph::finish`] at the end (streaming what it flushes too), and
//! writes `graph.dot` and `summary.csv` with [`write_all`];
//! [`summary_table`] is the same summary for stderr.
//! [`TraceWriter`] streams the same records and instances into a Perfetto
//! trace (`trace.pftrace`).
//!
//! ```
//! use syclgraph_graph::{summary_table, write_all, KernelRowWriter, Record, TaskGraph};
//!
//! # fn main() -> std::io::Result<()> {
//! # let dir = tempfile::tempdir()?;
//! # let records: Vec<Record> = Vec::new();
//! let mut graph = TaskGraph::new();
//! let mut rows = KernelRowWriter::new(std::fs::File::create(dir.path().join("kernels.csv"))?)?;
//! let mut done = Vec::new();
//! for record in records {
//!     graph.apply(record, &mut done);
//!     for finished in done.drain(..) {
//!         rows.write(&graph, &finished)?;
//!     }
//! }
//! graph.finish(&mut done);
//! for finished in done.drain(..) {
//!     rows.write(&graph, &finished)?;
//! }
//! rows.flush()?;
//! eprint!("{}", summary_table(&graph));
//! write_all(dir.path(), &graph)?;
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod chains;
pub mod critical_output;
pub mod critical_path;
pub mod devices;
pub mod dot;
pub mod duration_samples;
pub mod edge;
pub mod idle_gaps;
pub mod instance;
pub mod instance_graph;
pub mod instances_dot;
pub mod kernels_csv;
pub mod kind;
pub mod model;
pub mod names;
pub mod node;
pub mod output;
mod pending;
mod per_node;
pub mod perfetto;
mod perfetto_protos;
pub mod queues;
pub mod record;
pub mod spans;
mod start_order;
pub mod summary;
pub mod sycl_graphs;
pub mod timing;
pub mod windows;

pub use critical_path::{CriticalPath, GapCause, PathReport, Step};
pub use dot::{render_dot, to_dot, write_dot};
pub use duration_samples::DurationSamples;
pub use edge::{Edge, EdgeKind};
pub use idle_gaps::{IdleCause, IdleGaps};
pub use instance::{Completed, Instance, InstanceStatus};
pub use kernels_csv::{write_kernel_rows, KernelRowWriter, KERNEL_COLUMNS};
pub use kind::{classify, Classification, NodeKind};
pub use model::{Limits, Stats, TaskGraph};
pub use node::{Node, NodeTimes};
pub use output::{write_all, write_atomically, write_kernels_csv};
pub use perfetto::TraceWriter;
pub use queues::Queue;
pub use record::Record;
pub use spans::HostSpan;
pub use summary::{
    format_table, node_summary_rows, read_summary_csv, summary_rows, summary_table, untimed_line,
    write_summary_csv, NodeSummaryRow, SummaryLine, SummaryRow,
};
