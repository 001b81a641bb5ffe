//! The syclgraph task-graph model: records in, graph and reports out. No FFI.
//!
//! Three layers, each depending only on the ones before it:
//! - the **model** ([`TaskGraph`] and the types it is made of: [`record`],
//!   [`node`], [`edge`], [`instance`], ...): [`TaskGraph::apply`] turns
//!   [`Record`]s into nodes, edges and instances and hands back every
//!   instance it finalises as a [`Completed`];
//! - the **analyses** ([`analyses`]: the critical path and the idle gaps),
//!   fed from outside the model with the records they need and the
//!   completed instances; [`Run`] is the pipeline that feeds the graph and
//!   the analyses together;
//! - the **writers** ([`writers`], one module per output file) that read
//!   both, and [`output`], which writes the files atomically.
//!
//! The subscriber's background thread feeds [`Record`]s to [`Run::apply`],
//! streams the [`Completed`] instances it hands back through a
//! [`KernelRowWriter`] into `kernels.csv`, calls [`Run::finish`] at the end
//! (streaming what it flushes too), and writes `graph.dot`, `summary.csv`,
//! `critical_path.csv` and `idle_gaps.csv` with [`write_all`];
//! [`summary_table`] is the same summary for stderr.
//! [`TraceWriter`] streams the same records and instances into a Perfetto
//! trace (`trace.pftrace`).
//!
//! Beside the layers, two leaves for MPI jobs that the subscriber and the
//! `syclgraph` command share: [`ranks`] (a process's rank from its
//! launcher's environment, rank sets, rank directory names) and
//! [`rank_meta`] (a rank directory's `meta.json`, written with [`output`]).
//!
//! ```
//! use syclgraph_graph::{summary_table, write_all, KernelRowWriter, Record, Run};
//!
//! # fn main() -> std::io::Result<()> {
//! # let dir = tempfile::tempdir()?;
//! # let records: Vec<Record> = Vec::new();
//! let mut run = Run::new();
//! let mut rows = KernelRowWriter::new(std::fs::File::create(dir.path().join("kernels.csv"))?)?;
//! let mut done = Vec::new();
//! for record in records {
//!     run.apply(record, &mut done);
//!     for finished in done.drain(..) {
//!         rows.write(&run, &finished)?;
//!     }
//! }
//! run.finish(&mut done);
//! for finished in done.drain(..) {
//!     rows.write(&run, &finished)?;
//! }
//! rows.flush()?;
//! eprint!("{}", summary_table(&run));
//! write_all(dir.path(), &run)?;
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod analyses;
pub mod devices;
pub mod duration_samples;
pub mod edge;
pub mod end_of_run;
pub mod instance;
pub mod instance_graph;
pub mod journal;
pub mod kind;
mod last_hit;
pub mod model;
pub mod names;
pub mod node;
pub mod output;
mod pending;
mod per_node;
pub mod queues;
pub mod rank_meta;
pub mod ranks;
pub mod record;
pub mod regions;
pub mod replay;
pub mod run;
pub mod spans;
pub mod sycl_graphs;
pub mod timing;
mod varint;
pub mod windows;
pub mod writers;

pub use analyses::{critical_path, idle_gaps, violations, what_if};
pub use writers::{
    critical_path_csv, critical_path_text, dot, dot_ids, idle_gaps_csv, instances_dot, kernels_csv,
    perfetto, regions_csv, summary, violations_csv, what_if_csv, what_if_text,
};

pub use analyses::Analyses;
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
pub use run::Run;
pub use spans::HostSpan;
pub use summary::{
    format_table, node_summary_rows, read_summary_csv, summary_rows, summary_table, untimed_line,
    write_summary_csv, NodeSummaryRow, SummaryLine, SummaryRow,
};
