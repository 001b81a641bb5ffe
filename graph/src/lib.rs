//! The syclgraph task-graph model: records in, graph and reports out. No FFI.
//!
//! The subscriber's background thread feeds [`Record`]s to
//! [`TaskGraph::apply`], streams the [`Completed`] instances it hands back
//! into `kernels.csv`, calls [`TaskGraph::finish`] at the end, and writes
//! `graph.dot` and `summary.csv`.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod edge;
pub mod instance;
pub mod kind;
pub mod model;
pub mod names;
pub mod node;
mod pending;
pub mod queues;
pub mod record;
pub mod spans;
pub mod timing;

pub use edge::{Edge, EdgeKind};
pub use instance::{Completed, Instance, InstanceStatus};
pub use kind::{classify, Classification, NodeKind};
pub use model::{Limits, Stats, TaskGraph};
pub use node::{Node, NodeTimes};
pub use queues::Queue;
pub use record::Record;
pub use spans::HostSpan;
