//! `kernels.csv`: one row per device command instance (kinds kernel, memcpy,
//! memset, fill, copy), written as instances are finalised
//! ([`KernelRowWriter`]) or all at once from a graph ([`write_kernel_rows`]).
//!
//! Columns, in order: see [`KERNEL_COLUMNS`]. `node_id` is the graph.dot
//! node id (`n<id>`): unique per node within a run, so (`node_id`,
//! `instance`) names one instance of instances.dot. `start_ns`, `end_ns` and
//! `duration_ns` are empty unless `timing` is `ok`; `bytes` comes from the
//! metadata `memory_size` (or `size`); `global_size`/`local_size` from the
//! metadata of the same names when present. `device` and `device_id` are
//! the device the instance ran on ([`TaskGraph::instance_device`]: its
//! queue's): its name and its label (`0`, `0.1`, ...; see
//! [`crate::devices`]); without a known identity, the node's device name
//! and an empty `device_id`. `region` is the path of ITT tasks open on the
//! submitting thread when it was submitted, outermost first, joined by
//! [`crate::regions::PATH_SEPARATOR`] ([`TaskGraph::region_path`]); empty outside any
//! task. Empty means unknown.

use std::io::{self, Write};

use crate::devices::Device;
use crate::instance::{Completed, Instance};
use crate::model::TaskGraph;
use crate::node::{Node, GLOBAL_SIZE_KEY, LOCAL_SIZE_KEY, QUEUE_ID_KEY};
use crate::per_node::PerNode;
use crate::record::TimingStatus;
use crate::writers::csv_fields::{push_field, push_number};
use crate::writers::dot_ids::node_dot_id;
use crate::writers::kernels_row::{RowKey, RowTemplate, RowText, Times};

/// The header of `kernels.csv`.
pub const KERNEL_COLUMNS: [&str; 19] = [
    "name",
    "kind",
    "node_id",
    "instance",
    "queue_id",
    "device",
    "device_id",
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
    "region",
];

/// Buffered rows are handed to the underlying writer once they reach this
/// many bytes: below the 4 KiB from which glibc's `memcpy` (the underlying
/// writer's copy into its own buffer, the subscriber's `WholeRows`) turns
/// to `rep movsb`, one instruction per byte as callgrind counts it; in
/// vector moves the copy is ~12 instructions a row instead of ~150.
const BUFFER_BYTES: usize = 3 * 1024;
/// The row buffer's size: [`BUFFER_BYTES`] and room for a row after them
/// (a longer row grows it).
const BUFFER_ROOM: usize = BUFFER_BYTES + 4 * 1024;

/// The columns of a node's rows that are the same for all its instances,
/// escaped once: `text` holds, back to back, `name,kind,node_id,` (up to
/// `head`), the metadata queue id (up to `queue`), the node's device name
/// (up to `device`) and `,global_size,local_size,bytes,source_file,source_line,`
/// (the row's region follows); and the template its rows are written
/// from.
struct NodeText {
    /// The [`Node::revision`] the text was made from.
    revision: u64,
    text: Vec<u8>,
    head: usize,
    queue: usize,
    device: usize,
    /// The node's last row.
    row: RowTemplate,
}

impl NodeText {
    fn new(node: &Node) -> NodeText {
        let mut text = Vec::with_capacity(128);
        let mut num = itoa::Buffer::new();
        push_field(&mut text, &node.operation);
        text.push(b',');
        push_field(&mut text, node.kind.as_str());
        text.push(b',');
        push_field(&mut text, &node_dot_id(node.id));
        text.push(b',');
        let head = text.len();
        // The queue of the submission that defined the node (its metadata),
        // for instances without their own; `queue_ids` may list another
        // queue first when that queue's records reached the graph before
        // the definition.
        push_field(&mut text, node.metadata_value(QUEUE_ID_KEY).unwrap_or(""));
        let queue = text.len();
        push_field(&mut text, node.device.as_deref().unwrap_or(""));
        let device = text.len();
        for value in [
            node.metadata_value(GLOBAL_SIZE_KEY),
            node.metadata_value(LOCAL_SIZE_KEY),
            node.bytes(),
            node.source_file.as_deref(),
        ] {
            text.push(b',');
            push_field(&mut text, value.unwrap_or(""));
        }
        text.push(b',');
        push_number(&mut text, &mut num, node.source_line.map(u64::from));
        text.push(b',');
        NodeText {
            revision: node.revision(),
            text,
            head,
            queue,
            device,
            row: RowTemplate::default(),
        }
    }
}

/// Streams `kernels.csv` rows to any writer: the header on creation, then one
/// row per finalised device command instance.
///
/// Rows are byte for byte what the csv crate writes with its defaults: a
/// field is quoted, with `"` doubled, when it holds a `,`, `"`, CR or LF.
/// The columns a node's instances share are escaped once per node and
/// [`Node::revision`]; a row shaped as its node's last one is that row
/// with its numbers patched in ([`crate::writers::kernels_row`]). Rows are
/// buffered and handed to the underlying writer whole, once about 3 KiB are
/// buffered, on [`flush`](KernelRowWriter::flush) and when the writer is
/// dropped.
pub struct KernelRowWriter<W: Write> {
    /// `None` once [`into_inner`](KernelRowWriter::into_inner) took it.
    inner: Option<W>,
    /// The rows buffered are `buf[..used]`; the rest is room written into
    /// in place (its length is kept, so a row is plain stores).
    buf: Vec<u8>,
    used: usize,
    rows: u64,
    nodes: PerNode<Option<NodeText>>,
    /// By device index: `name,label` escaped, and the lengths it was made
    /// from (a name that arrives later makes it again).
    devices: Vec<(usize, Vec<u8>)>,
    /// By region id: its path escaped, and the length it was made from.
    regions: Vec<(usize, Vec<u8>)>,
}

impl<W: Write> KernelRowWriter<W> {
    /// Start a `kernels.csv` on `w` (writes the header).
    pub fn new(w: W) -> io::Result<KernelRowWriter<W>> {
        let mut buf = Vec::with_capacity(BUFFER_ROOM);
        for (i, column) in KERNEL_COLUMNS.iter().enumerate() {
            if i > 0 {
                buf.push(b',');
            }
            push_field(&mut buf, column);
        }
        buf.push(b'\n');
        let used = buf.len();
        buf.resize(BUFFER_ROOM.max(used), 0);
        Ok(KernelRowWriter {
            inner: Some(w),
            buf,
            used,
            rows: 0,
            nodes: PerNode::default(),
            devices: Vec::new(),
            regions: Vec::new(),
        })
    }

    /// Write the row of a finalised instance; `Ok(false)` when its node is not
    /// a device command (or unknown to `graph`) and nothing was written.
    pub fn write(&mut self, graph: &TaskGraph, done: &Completed) -> io::Result<bool> {
        match graph.node(done.node) {
            Some(node) => {
                let device = graph.instance_device(node, &done.instance);
                let region = match done.instance.region {
                    Some(r) => graph.region_path(r.region),
                    None => std::borrow::Cow::Borrowed(""),
                };
                self.write_instance(node, &done.instance, device, &region)
            }
            None => Ok(false),
        }
    }

    /// Write the row of one instance of `node`; `Ok(false)` when `node` is
    /// not a device command and nothing was written. `device` is the
    /// device it ran on ([`TaskGraph::instance_device`]), `region` the
    /// path of its region ([`TaskGraph::region_path`] of its
    /// [`Instance::region`]; empty for none). The node's shared columns
    /// come from the text cached for its id and [`Node::revision`].
    pub fn write_instance(
        &mut self,
        node: &Node,
        instance: &Instance,
        device: Option<&Device>,
        region: &str,
    ) -> io::Result<bool> {
        if !node.kind.is_device_command() {
            return Ok(false);
        }
        let slot = self.nodes.slot(node.id);
        let cached = match slot {
            Some(t) if t.revision == node.revision() => t,
            _ => slot.insert(NodeText::new(node)),
        };
        // The timing status, the device span (timed) and the end (timed,
        // or a marker's): Instance::timing, device_span and device_end in
        // one match.
        let (timing, span, end) = match instance.device {
            Some(d) => match d.status {
                TimingStatus::Ok => (d.status, Some((d.start_ns, d.end_ns)), Some(d.end_ns)),
                TimingStatus::Marker => (d.status, None, Some(d.end_ns)),
                _ => (d.status, None, None),
            },
            None => (instance.timing(), None, None),
        };
        debug_assert_eq!(
            (timing, span, end),
            (
                instance.timing(),
                instance.device_span(),
                instance.device_end()
            )
        );
        let times: Times = [instance.submit_ns, span.map(|(s, _)| s), end];
        let region_key = match instance.region {
            Some(r) if !region.is_empty() => Some((r.region, region.len())),
            _ => None,
        };
        let key = RowKey::new(
            &times,
            instance.queue,
            device.map(|d| (d.index, d.name.len() + d.label.len())),
            instance.thread,
            timing,
            region_key,
        );
        let patch = cached.row.fits(&key, instance.instance, &times);
        if !patch {
            let NodeText {
                text,
                head,
                queue,
                device: device_end,
                row,
                ..
            } = cached;
            let device_text: &[u8] = match device {
                Some(d) => {
                    if self.devices.len() <= d.index {
                        self.devices.resize(d.index + 1, (usize::MAX, Vec::new()));
                    }
                    let (made_from, text) = &mut self.devices[d.index];
                    if *made_from != d.name.len() + d.label.len() {
                        *made_from = d.name.len() + d.label.len();
                        text.clear();
                        push_field(text, &d.name);
                        text.push(b',');
                        push_field(text, &d.label);
                    }
                    text
                }
                // The node's device name (and an empty label).
                None => &text[*queue..*device_end],
            };
            let region_text: &[u8] = match region_key {
                Some((id, len)) => {
                    let id = id as usize;
                    if self.regions.len() <= id {
                        self.regions.resize(id + 1, (usize::MAX, Vec::new()));
                    }
                    let (made_from, text) = &mut self.regions[id];
                    if *made_from != len {
                        *made_from = len;
                        text.clear();
                        push_field(text, region);
                    }
                    text
                }
                None => b"",
            };
            let parts = RowText {
                lead: &text[..*head],
                queue: &text[*head..*queue],
                device: device_text,
                rest: &text[*device_end..],
                region: region_text,
            };
            row.build(key, instance.instance, &times, &parts);
        }
        let row = &cached.row;
        let max = row.room();
        if self.buf.len() - self.used < max {
            self.buf.resize(self.used + max, 0);
        }
        let n = row.put(
            &mut self.buf,
            self.used,
            instance.instance,
            &times,
            span.map(|(s, e)| e.saturating_sub(s)),
            patch,
        );
        self.used = n;
        self.rows += 1;
        if self.used >= BUFFER_BYTES {
            self.write_buffer()?;
        }
        Ok(true)
    }

    /// Hand the buffered rows to the underlying writer.
    fn write_buffer(&mut self) -> io::Result<()> {
        if let Some(w) = &mut self.inner {
            if self.used > 0 {
                // Kept on error, as the csv crate keeps its buffer.
                w.write_all(&self.buf[..self.used])?;
                self.used = 0;
                if self.buf.len() > BUFFER_ROOM {
                    // A long row grew it: back to its size.
                    self.buf.truncate(BUFFER_ROOM);
                    self.buf.shrink_to_fit();
                }
            }
        }
        Ok(())
    }

    /// The underlying writer (rows may still sit in the row buffer).
    pub fn get_ref(&self) -> &W {
        self.inner
            .as_ref()
            .expect("the writer is only taken by into_inner")
    }

    /// Rows written so far (not counting the header).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flush buffered rows to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buffer()?;
        match &mut self.inner {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }

    /// Flush and give the underlying writer back.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.inner.take().expect("the writer is only taken here"))
    }
}

impl<W: Write> Drop for KernelRowWriter<W> {
    /// Flushes what is buffered (errors are ignored), as the csv crate's
    /// writer does when dropped.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Write a whole `kernels.csv` from a graph: the kept instances of every
/// device command (by node id, in finalisation order), then the instances
/// still pending. Instances dropped from memory are not there: in a
/// subscriber, rows are streamed with [`KernelRowWriter`] instead. Returns
/// the number of rows.
pub fn write_kernel_rows<W: Write>(w: W, graph: &TaskGraph) -> io::Result<u64> {
    let mut rows = KernelRowWriter::new(w)?;
    let region = |i: &Instance| graph.region_path(i.region.map(|r| r.region).unwrap_or(0));
    for node in graph.nodes() {
        for instance in &node.instances {
            let device = graph.instance_device(node, instance);
            rows.write_instance(node, instance, device, &region(instance))?;
        }
    }
    for (id, instance) in graph.pending() {
        if let Some(node) = graph.node(id) {
            let device = graph.instance_device(node, instance);
            rows.write_instance(node, instance, device, &region(instance))?;
        }
    }
    rows.flush()?;
    Ok(rows.rows())
}
