//! `kernels.csv`: one row per device command instance (kinds kernel, memcpy,
//! memset, fill, copy), written as instances are finalised
//! ([`KernelRowWriter`]) or all at once from a graph ([`write_kernel_rows`]).
//!
//! Columns, in order: see [`KERNEL_COLUMNS`]. `start_ns`, `end_ns` and
//! `duration_ns` are empty unless `timing` is `ok`; `bytes` comes from the
//! metadata `memory_size` (or `size`); `global_size`/`local_size` from the
//! metadata of the same names when present. Empty means unknown.

use std::io::{self, Write};

use crate::instance::{Completed, Instance};
use crate::model::TaskGraph;
use crate::node::{Node, GLOBAL_SIZE_KEY, LOCAL_SIZE_KEY, QUEUE_ID_KEY};

/// The header of `kernels.csv`.
pub const KERNEL_COLUMNS: [&str; 17] = [
    "name",
    "kind",
    "node_uid",
    "instance",
    "queue_id",
    "device",
    "thread_id",
    "submit_ns",
    "start_ns",
    "end_ns",
    "duration_ns",
    "timing",
    "global_size",
    "local_size",
    "bytes",
    "source_file",
    "source_line",
];

/// Streams `kernels.csv` rows to any writer: the header on creation, then one
/// row per finalised device command instance.
pub struct KernelRowWriter<W: Write> {
    csv: csv::Writer<W>,
    rows: u64,
}

impl<W: Write> KernelRowWriter<W> {
    /// Start a `kernels.csv` on `w` (writes the header).
    pub fn new(w: W) -> io::Result<KernelRowWriter<W>> {
        let mut csv = csv::WriterBuilder::new().has_headers(false).from_writer(w);
        csv.write_record(KERNEL_COLUMNS)?;
        Ok(KernelRowWriter { csv, rows: 0 })
    }

    /// Write the row of a finalised instance; `Ok(false)` when its node is not
    /// a device command (or unknown to `graph`) and nothing was written.
    pub fn write(&mut self, graph: &TaskGraph, done: &Completed) -> io::Result<bool> {
        match graph.node(done.node) {
            Some(node) => self.write_instance(node, &done.instance),
            None => Ok(false),
        }
    }

    /// Write the row of one instance of `node`; `Ok(false)` when `node` is
    /// not a device command and nothing was written. Writes field by field,
    /// without building the row's strings.
    pub fn write_instance(&mut self, node: &Node, instance: &Instance) -> io::Result<bool> {
        if !node.kind.is_device_command() {
            return Ok(false);
        }
        let span = instance.device_span();
        let queue = instance.queue;
        let w = &mut self.csv;
        let mut num = itoa::Buffer::new();
        let mut number = |w: &mut csv::Writer<W>, v: Option<u64>| match v {
            Some(v) => w.write_field(num.format(v)),
            None => w.write_field(""),
        };
        w.write_field(&node.operation)?;
        w.write_field(node.kind.as_str())?;
        number(w, node.uid)?;
        number(w, Some(instance.instance))?;
        match queue {
            Some(q) => number(w, Some(q))?,
            // The queue of the submission that defined the node (its
            // metadata); `queue_ids` may list another queue first when that
            // queue's records reached the graph before the definition.
            None => w.write_field(node.metadata_value(QUEUE_ID_KEY).unwrap_or(""))?,
        }
        w.write_field(node.device.as_deref().unwrap_or(""))?;
        number(w, instance.thread.map(u64::from))?;
        number(w, instance.submit_ns)?;
        number(w, span.map(|(s, _)| s))?;
        number(w, span.map(|(_, e)| e))?;
        number(w, instance.device_ns())?;
        w.write_field(instance.timing().as_str())?;
        w.write_field(node.metadata_value(GLOBAL_SIZE_KEY).unwrap_or(""))?;
        w.write_field(node.metadata_value(LOCAL_SIZE_KEY).unwrap_or(""))?;
        w.write_field(node.bytes().unwrap_or(""))?;
        w.write_field(node.source_file.as_deref().unwrap_or(""))?;
        number(w, node.source_line.map(u64::from))?;
        w.write_record(None::<&[u8]>)?;
        self.rows += 1;
        Ok(true)
    }

    /// The underlying writer (rows may still sit in the CSV buffer).
    pub fn get_ref(&self) -> &W {
        self.csv.get_ref()
    }

    /// Rows written so far (not counting the header).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flush buffered rows to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.csv.flush()
    }

    /// Flush and give the underlying writer back.
    pub fn into_inner(self) -> io::Result<W> {
        self.csv.into_inner().map_err(|e| e.into_error())
    }
}

/// Write a whole `kernels.csv` from a graph: the kept instances of every
/// device command (by node id, in finalisation order), then the instances
/// still pending. Instances dropped from memory are not there: in a
/// subscriber, rows are streamed with [`KernelRowWriter`] instead. Returns
/// the number of rows.
pub fn write_kernel_rows<W: Write>(w: W, graph: &TaskGraph) -> io::Result<u64> {
    let mut rows = KernelRowWriter::new(w)?;
    for node in graph.nodes() {
        for instance in &node.instances {
            rows.write_instance(node, instance)?;
        }
    }
    for (id, instance) in graph.pending() {
        if let Some(node) = graph.node(id) {
            rows.write_instance(node, instance)?;
        }
    }
    rows.flush()?;
    Ok(rows.rows())
}
