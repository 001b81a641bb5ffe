//! The cross-rank side of syclgraph: an MPI job's directory (one
//! `rank-NNNNN/` per rank, each with the files of one traced process and a
//! `meta.json`) loaded into an embedded SQLite database, one table per kind
//! of file with a `rank` column, and what is computed from it:
//! `syclgraph report` on a job directory, `syclgraph query`, and
//! `syclgraph export --parquet`.
//!
//! Modules, from the files up: [`meta_json`] (reading `meta.json`), [`job`]
//! (which rank directories a job has), [`columns`] (the type of every
//! column), [`load`] (the files into tables), [`sql`] (the report's SQL),
//! [`cross_rank`] (the report's tables and text), [`query`] (the user's own
//! SQL), [`export`] (the Parquet dataset); for the merged timeline of
//! chosen ranks, [`wire`] (the protobuf wire format), [`trace_rewrite`]
//! (one rank's packets with ids unique per rank) and [`merged_timeline`]
//! (which ranks, and the merged file).
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod columns;
pub mod cross_rank;
pub mod export;
pub mod job;
pub mod load;
pub mod merged_timeline;
pub mod meta_json;
pub mod query;
pub mod sql;
pub mod trace_rewrite;
pub use syclgraph_graph::perfetto::wire;
