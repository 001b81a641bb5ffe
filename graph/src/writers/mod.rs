//! The output files, one module per file (or per stream): they read the
//! model ([`TaskGraph`](crate::TaskGraph)) and the analyses and never
//! import each other; what two writers share (DOT ids and quoting, how a
//! node is drawn, CSV fields and numbers written by hand) lives in
//! [`dot_ids`], [`node_look`], [`csv_fields`] and [`decimal`].

pub mod critical_path_csv;
pub mod critical_path_text;
pub(crate) mod csv_fields;
pub(crate) mod decimal;
pub mod dot;
pub mod dot_ids;
pub mod idle_gaps_csv;
pub mod instances_dot;
pub mod kernels_csv;
pub(crate) mod kernels_row;
pub(crate) mod node_look;
pub mod perfetto;
pub mod regions_csv;
pub mod summary;
pub mod violations_csv;
pub mod what_if_csv;
pub mod what_if_text;
