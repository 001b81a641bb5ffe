//! The syclgraph task-graph model: records in, graph and reports out. No FFI.
#![warn(missing_docs)]

pub mod record;
