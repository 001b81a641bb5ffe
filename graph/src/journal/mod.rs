//! The journal: every [`Record`] the collector applies, as compact bytes in
//! a file, to be read back in order at exit ("record first, analyse later").
//!
//! Format: the file starts with [`JOURNAL_HEADER`] (a magic text and the
//! format version, 2). Then records follow each other with no framing: one
//! tag byte, then the record's fields. 0 and any tag above 36 are garbage.
//!
//! *The general layout* (tags 1 ..= 27, the variants in the order of
//! [`Record`]'s declaration, then 35 and 36 for the two declared after
//! them, `RegionBegin` and `RegionEnd`): the variant's fields in
//! declaration order.
//! Integers are LEB128 varints; `bool`, [`SpanKind`] and [`TimingStatus`]
//! one byte each (their declaration index); an `Option` one byte (0 none,
//! 1 some) then the value; a tuple its members in order; a string its
//! length in bytes then its UTF-8 bytes; a metadata list its length then
//! key, value, key, value, ... Timestamps after the first of a record
//! (`end_ns` after `begin_ns`, `device_start_ns` after `end_ns`, ...) are
//! written as the zig-zag difference from the one before them in the same
//! record, so a record stays independent of the others and
//! [`append_record`] is a free function; every `u64` still round-trips
//! (the difference wraps).
//!
//! *The fixed layouts* of the records every command reaches the collector
//! as (tags 28 ..= 34): fields at fixed offsets, little-endian, no varint
//! (a record is one copy of a constant length to write, and to read).
//! Integers are `u32` (node, thread, instances) or `u64` (the first
//! timestamp, the event); later timestamps the wrapping difference from
//! the one before them as an `i32`; a [`TimingStatus`] one byte. A record
//! takes its fixed layout when its instances fit 32 bits and each
//! difference an `i32` (about 2.1 s), the general one otherwise.
//!
//! | tag | record | fields after the tag | bytes |
//! | --- | --- | --- | ---: |
//! | 28 | `SubmissionAnnounced`, no `after` | node, instance | 9 |
//! | 29 | `SubmissionAnnounced` with `after` | node, instance, after's node, after's instance | 17 |
//! | 30 | `TimedTask` | node, instance, thread, submit_ns, begin_ns, end_ns, event, device_status, device_start_ns, device_end_ns | 46 |
//! | 31 ..= 34 | `SubmittedTask` | node, instance, thread, submit_ns, begin_ns, end_ns, then after's node and instance if tag - 31 has bit 0, then the event (`u64`) if it has bit 1 | 29 ..= 45 |
//!
//! [`JournalReader`] gives the records back in order and ends with `None`
//! exactly at a record boundary. A journal whose last record was cut short
//! (a killed process) gives one `Err` of kind
//! [`io::ErrorKind::UnexpectedEof`] and then `None`; bytes that are no
//! record give one `Err` of kind [`io::ErrorKind::InvalidData`] naming the
//! byte offset, then `None`.
//!
//! Cost of a tiny memcpy's pair of records (`SubmissionAnnounced` then
//! `TimedTask`, realistic values), from `graph/examples/journal_cost.rs`:
//! 63 bytes per pair (their fixed layouts, 17 + 46); under callgrind,
//! (Ir[40,000] - Ir[20,000]) / 20,000: 234 instructions per pair for the
//! appends, building the two records in the example included, and 489
//! for the read-back (the varint-only format 1 at af3cedd: 37.5 bytes,
//! 669 and 1,094):
//!
//! ```sh
//! cargo build --release -p syclgraph-graph --example journal_cost
//! JOURNAL_COST_MODE=append valgrind --tool=callgrind target/release/examples/journal_cost 20000
//! JOURNAL_COST_MODE=append valgrind --tool=callgrind target/release/examples/journal_cost 40000
//! valgrind --tool=callgrind target/release/examples/journal_cost 20000  # and 40000: append + read
//! ```

use std::io::{self, Read};

use crate::record::{
    DeviceTimes, EdgeInfo, InstanceEdge, Metadata, NodeInfo, Record, SpanKind, TimingStatus,
};
use crate::varint::{put_varint, MAX_VARINT_LEN};

/// Bytes every journal starts with (magic + format version).
pub const JOURNAL_HEADER: &[u8] = b"syclgraph journal 2\n";

/// The journal of a run that ended (it exited, or `syclgraph report`
/// converted what it left), kept in its output directory under this name
/// for `syclgraph whatif` and `syclgraph report` to replay.
pub const RUN_JOURNAL: &str = "run.journal";

/// The header's magic, before the format version.
const JOURNAL_MAGIC: &[u8] = b"syclgraph journal ";

/// The format version in [`JOURNAL_HEADER`]: 2 since the hot records' fixed
/// layouts (tags 28 ..= 34).
const JOURNAL_VERSION: u32 = 2;

/// The longest string a journal may hold; a longer length is garbage.
const MAX_STRING_LEN: u64 = 1 << 30;

/// The most bytes a record without strings takes (`TimedTask`: 82).
const FIXED_MAX: usize = 96;

/// One tag byte per variant of [`Record`], in declaration order.
mod tag {
    pub const STRING: u8 = 1;
    pub const NODE_DEFINED: u8 = 2;
    pub const NODE_METADATA: u8 = 3;
    pub const EDGE_DEFINED: u8 = 4;
    pub const EDGE_INSTANCE: u8 = 5;
    pub const SUBMITTED: u8 = 6;
    pub const TASK_BEGIN: u8 = 7;
    pub const TASK_END: u8 = 8;
    pub const TASK: u8 = 9;
    pub const SIGNALLED_TASK: u8 = 10;
    pub const SUBMITTED_AFTER: u8 = 11;
    pub const SUBMITTED_TASK: u8 = 12;
    pub const SUBMISSION_ANNOUNCED: u8 = 13;
    pub const TIMED_TASK: u8 = 14;
    pub const SIGNAL: u8 = 15;
    pub const SPAN_BEGIN: u8 = 16;
    pub const SPAN_END: u8 = 17;
    pub const TRACING: u8 = 18;
    pub const QUEUE_CREATED: u8 = 19;
    pub const DEVICE_DEFINED: u8 = 20;
    pub const QUEUE_DESTROYED: u8 = 21;
    pub const DEVICE: u8 = 22;
    pub const INSTANCE_EDGE: u8 = 23;
    pub const INSTANCE_QUEUE: u8 = 24;
    pub const GRAPH_MEMBER: u8 = 25;
    pub const GRAPH_EDGE: u8 = 26;
    pub const GRAPH_FINALIZED: u8 = 27;
    /// The hot records' fixed layouts ([`super::Hot`]).
    pub const ANNOUNCED_FIXED: u8 = 28;
    pub const ANNOUNCED_AFTER_FIXED: u8 = 29;
    pub const TIMED_TASK_FIXED: u8 = 30;
    /// 31 ..= 34: plus 1 with `after`, plus 2 with `event`.
    pub const SUBMITTED_TASK_FIXED: u8 = 31;
    pub const SUBMITTED_TASK_FIXED_LAST: u8 = 34;
    /// The general layout again, for the variants declared after the
    /// fixed layouts were made.
    pub const REGION_BEGIN: u8 = 35;
    pub const REGION_END: u8 = 36;
}

/// `v` zig-zag coded: small magnitudes of either sign become small numbers.
#[inline(always)]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// [`zigzag`] backwards.
#[inline(always)]
fn unzigzag(z: u64) -> i64 {
    (z >> 1) as i64 ^ -((z & 1) as i64)
}

fn span_kind_byte(kind: SpanKind) -> u8 {
    match kind {
        SpanKind::Wait => 0,
        SpanKind::Barrier => 1,
        SpanKind::Task => 2,
    }
}

fn status_byte(status: TimingStatus) -> u8 {
    match status {
        TimingStatus::Ok => 0,
        TimingStatus::NoProfiling => 1,
        TimingStatus::Invalid => 2,
        TimingStatus::Lost => 3,
        TimingStatus::Unavailable => 4,
        TimingStatus::NotReady => 5,
        TimingStatus::NotRetained => 6,
        TimingStatus::Marker => 7,
    }
}

/// A record's bytes laid out on the stack, then appended to the journal in
/// one copy (no capacity check per byte).
struct Fixed {
    a: [u8; FIXED_MAX],
    n: usize,
}

impl Fixed {
    #[inline(always)]
    fn new(tag: u8) -> Fixed {
        let mut a = [0; FIXED_MAX];
        a[0] = tag;
        Fixed { a, n: 1 }
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.a[self.n] = b;
        self.n += 1;
    }

    #[inline(always)]
    fn uint(&mut self, v: u64) {
        self.n = put_varint(&mut self.a, self.n, v);
    }

    /// `to` as the zig-zag difference from `from`, the timestamp before it.
    #[inline(always)]
    fn delta(&mut self, from: u64, to: u64) {
        self.uint(zigzag(to.wrapping_sub(from) as i64));
    }

    #[inline(always)]
    fn pair(&mut self, (node, instance): (u32, u64)) {
        self.uint(node.into());
        self.uint(instance);
    }

    #[inline(always)]
    fn opt_pair(&mut self, after: Option<(u32, u64)>) {
        match after {
            None => self.byte(0),
            Some(p) => {
                self.byte(1);
                self.pair(p);
            }
        }
    }

    #[inline(always)]
    fn opt_uint(&mut self, v: Option<u64>) {
        match v {
            None => self.byte(0),
            Some(v) => {
                self.byte(1);
                self.uint(v);
            }
        }
    }

    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        &self.a[..self.n]
    }
}

/// Appends `v` as a varint to `out`.
fn push_varint(out: &mut Vec<u8>, v: u64) {
    let mut a = [0; MAX_VARINT_LEN];
    let n = put_varint(&mut a, 0, v);
    out.extend_from_slice(&a[..n]);
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    push_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn push_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            push_str(out, s);
        }
    }
}

fn push_opt_u32(out: &mut Vec<u8>, v: Option<u32>) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            push_varint(out, v.into());
        }
    }
}

fn push_metadata(out: &mut Vec<u8>, metadata: &Metadata) {
    push_varint(out, metadata.len() as u64);
    for (key, value) in metadata {
        push_str(out, key);
        push_str(out, value);
    }
}

/// A hot record's fixed layout: `N` bytes built on the stack at offsets
/// that are constants once inlined, appended with one copy of a constant
/// length (no varint loop, no capacity check per field).
struct Hot<const N: usize> {
    a: [u8; N],
    n: usize,
}

impl<const N: usize> Hot<N> {
    #[inline(always)]
    fn new(tag: u8) -> Hot<N> {
        let mut a = [0; N];
        a[0] = tag;
        Hot { a, n: 1 }
    }

    /// A layout's continuation, with no tag.
    #[inline(always)]
    fn untagged() -> Hot<N> {
        Hot { a: [0; N], n: 0 }
    }

    #[inline(always)]
    fn put<const W: usize>(&mut self, bytes: [u8; W]) {
        self.a[self.n..self.n + W].copy_from_slice(&bytes);
        self.n += W;
    }

    #[inline(always)]
    fn u32(&mut self, v: u32) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    fn u64(&mut self, v: u64) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    fn i32(&mut self, v: i32) {
        self.put(v.to_le_bytes());
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.put([b]);
    }

    #[inline(always)]
    fn append_to(&self, out: &mut Vec<u8>) {
        debug_assert_eq!(self.n, N, "a fixed layout filled exactly");
        out.extend_from_slice(&self.a);
    }
}

/// `to - from` when it fits an `i32` (a timestamp after `from` in a
/// fixed layout).
#[inline(always)]
fn short_delta(from: u64, to: u64) -> Option<i32> {
    i32::try_from(to.wrapping_sub(from) as i64).ok()
}

/// Appends one record's encoding to `out` (no allocation besides `out` growing).
///
/// The hot records take their fixed layout when their instances fit 32
/// bits and their timestamps are each within an `i32` of the one before;
/// every other record, and a hot one past those bounds, the general layout.
pub fn append_record(record: &Record, out: &mut Vec<u8>) {
    match *record {
        Record::SubmissionAnnounced {
            node,
            instance,
            after,
        } => match (u32::try_from(instance), after) {
            (Ok(instance), None) => {
                let mut h = Hot::<9>::new(tag::ANNOUNCED_FIXED);
                h.u32(node);
                h.u32(instance);
                return h.append_to(out);
            }
            (Ok(instance), Some((after_node, after_instance))) => {
                if let Ok(after_instance) = u32::try_from(after_instance) {
                    let mut h = Hot::<17>::new(tag::ANNOUNCED_AFTER_FIXED);
                    h.u32(node);
                    h.u32(instance);
                    h.u32(after_node);
                    h.u32(after_instance);
                    return h.append_to(out);
                }
            }
            (Err(_), _) => {}
        },
        Record::TimedTask {
            node,
            instance,
            thread,
            submit_ns,
            begin_ns,
            end_ns,
            event,
            device_status,
            device_start_ns,
            device_end_ns,
        } => {
            if let (Ok(instance), Some(begin), Some(end), Some(start), Some(device_end)) = (
                u32::try_from(instance),
                short_delta(submit_ns, begin_ns),
                short_delta(begin_ns, end_ns),
                short_delta(end_ns, device_start_ns),
                short_delta(device_start_ns, device_end_ns),
            ) {
                let mut h = Hot::<46>::new(tag::TIMED_TASK_FIXED);
                h.u32(node);
                h.u32(instance);
                h.u32(thread);
                h.u64(submit_ns);
                h.i32(begin);
                h.i32(end);
                h.u64(event);
                h.byte(status_byte(device_status));
                h.i32(start);
                h.i32(device_end);
                return h.append_to(out);
            }
        }
        Record::SubmittedTask {
            node,
            instance,
            thread,
            submit_ns,
            after,
            begin_ns,
            end_ns,
            event,
        } => {
            let after = match after {
                None => Some(None),
                Some((after_node, after_instance)) => u32::try_from(after_instance)
                    .ok()
                    .map(|after_instance| Some((after_node, after_instance))),
            };
            if let (Ok(instance), Some(after), Some(begin), Some(end)) = (
                u32::try_from(instance),
                after,
                short_delta(submit_ns, begin_ns),
                short_delta(begin_ns, end_ns),
            ) {
                // The tag says whether `after` and `event` follow.
                let tag = tag::SUBMITTED_TASK_FIXED
                    + u8::from(after.is_some())
                    + 2 * u8::from(event.is_some());
                let mut h = Hot::<29>::new(tag);
                h.u32(node);
                h.u32(instance);
                h.u32(thread);
                h.u64(submit_ns);
                h.i32(begin);
                h.i32(end);
                h.append_to(out);
                if let Some((after_node, after_instance)) = after {
                    let mut h = Hot::<8>::untagged();
                    h.u32(after_node);
                    h.u32(after_instance);
                    h.append_to(out);
                }
                if let Some(event) = event {
                    out.extend_from_slice(&event.to_le_bytes());
                }
                return;
            }
        }
        _ => {}
    }
    append_general(record, out);
}

/// Appends `record` in the general layout (kept out of line: the hot
/// records' fixed layouts stay a small function).
#[inline(never)]
fn append_general(record: &Record, out: &mut Vec<u8>) {
    let f = match *record {
        Record::String { id, ref text } => {
            out.push(tag::STRING);
            push_varint(out, id.into());
            push_str(out, text);
            return;
        }
        Record::NodeDefined(ref info) => {
            out.push(tag::NODE_DEFINED);
            push_varint(out, info.id.into());
            push_varint(out, info.uid);
            push_str(out, &info.kind_hint);
            push_str(out, &info.name);
            push_opt_str(out, info.source_file.as_deref());
            push_opt_u32(out, info.source_line);
            push_opt_u32(out, info.source_column);
            push_metadata(out, &info.metadata);
            return;
        }
        Record::NodeMetadata { node, ref metadata } => {
            out.push(tag::NODE_METADATA);
            push_varint(out, node.into());
            push_metadata(out, metadata);
            return;
        }
        Record::EdgeDefined(ref info) => {
            out.push(tag::EDGE_DEFINED);
            push_varint(out, info.id.into());
            push_varint(out, info.uid);
            push_varint(out, info.source.into());
            push_varint(out, info.target.into());
            push_metadata(out, &info.metadata);
            return;
        }
        Record::EdgeInstance { edge, instance } => {
            let mut f = Fixed::new(tag::EDGE_INSTANCE);
            f.pair((edge, instance));
            f
        }
        Record::Submitted {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::SUBMITTED, node, instance, thread, ns),
        Record::TaskBegin {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::TASK_BEGIN, node, instance, thread, ns),
        Record::TaskEnd {
            node,
            instance,
            thread,
            ns,
        } => node_thread_ns(tag::TASK_END, node, instance, thread, ns),
        Record::Task {
            node,
            instance,
            thread,
            begin_ns,
            end_ns,
        } => {
            let mut f = node_thread_ns(tag::TASK, node, instance, thread, begin_ns);
            f.delta(begin_ns, end_ns);
            f
        }
        Record::SignalledTask {
            node,
            instance,
            thread,
            begin_ns,
            end_ns,
            event,
        } => {
            let mut f = node_thread_ns(tag::SIGNALLED_TASK, node, instance, thread, begin_ns);
            f.delta(begin_ns, end_ns);
            f.uint(event);
            f
        }
        Record::SubmittedAfter {
            node,
            instance,
            thread,
            ns,
            after,
        } => {
            let mut f = node_thread_ns(tag::SUBMITTED_AFTER, node, instance, thread, ns);
            f.pair(after);
            f
        }
        Record::SubmittedTask {
            node,
            instance,
            thread,
            submit_ns,
            after,
            begin_ns,
            end_ns,
            event,
        } => {
            let mut f = node_thread_ns(tag::SUBMITTED_TASK, node, instance, thread, submit_ns);
            f.opt_pair(after);
            f.delta(submit_ns, begin_ns);
            f.delta(begin_ns, end_ns);
            f.opt_uint(event);
            f
        }
        Record::SubmissionAnnounced {
            node,
            instance,
            after,
        } => {
            let mut f = Fixed::new(tag::SUBMISSION_ANNOUNCED);
            f.pair((node, instance));
            f.opt_pair(after);
            f
        }
        Record::TimedTask {
            node,
            instance,
            thread,
            submit_ns,
            begin_ns,
            end_ns,
            event,
            device_status,
            device_start_ns,
            device_end_ns,
        } => {
            let mut f = node_thread_ns(tag::TIMED_TASK, node, instance, thread, submit_ns);
            f.delta(submit_ns, begin_ns);
            f.delta(begin_ns, end_ns);
            f.uint(event);
            f.byte(status_byte(device_status));
            f.delta(end_ns, device_start_ns);
            f.delta(device_start_ns, device_end_ns);
            f
        }
        Record::Signal {
            node,
            instance,
            event,
        } => {
            let mut f = Fixed::new(tag::SIGNAL);
            f.pair((node, instance));
            f.uint(event);
            f
        }
        Record::SpanBegin {
            kind,
            label,
            thread,
            ns,
        } => {
            let mut f = Fixed::new(tag::SPAN_BEGIN);
            f.byte(span_kind_byte(kind));
            f.uint(label.into());
            f.uint(thread.into());
            f.uint(ns);
            f
        }
        Record::SpanEnd { kind, thread, ns } => {
            let mut f = Fixed::new(tag::SPAN_END);
            f.byte(span_kind_byte(kind));
            f.uint(thread.into());
            f.uint(ns);
            f
        }
        Record::Tracing { on, ns } => {
            let mut f = Fixed::new(tag::TRACING);
            f.byte(on.into());
            f.uint(ns);
            f
        }
        Record::QueueCreated {
            queue_id,
            device,
            device_handle,
            ns,
        } => {
            let mut f = Fixed::new(tag::QUEUE_CREATED);
            f.uint(queue_id);
            f.uint(device.into());
            f.uint(device_handle);
            f.uint(ns);
            f
        }
        Record::DeviceDefined { device, parent } => {
            let mut f = Fixed::new(tag::DEVICE_DEFINED);
            f.uint(device);
            f.uint(parent);
            f
        }
        Record::QueueDestroyed { queue_id, ns } => {
            let mut f = Fixed::new(tag::QUEUE_DESTROYED);
            f.uint(queue_id);
            f.uint(ns);
            f
        }
        Record::Device(DeviceTimes {
            node,
            instance,
            status,
            start_ns,
            end_ns,
        }) => {
            let mut f = Fixed::new(tag::DEVICE);
            f.pair((node, instance));
            f.byte(status_byte(status));
            f.uint(start_ns);
            f.delta(start_ns, end_ns);
            f
        }
        Record::InstanceEdge(InstanceEdge {
            source,
            source_instance,
            target,
            target_instance,
            queue_order,
        }) => {
            let mut f = Fixed::new(tag::INSTANCE_EDGE);
            f.pair((source, source_instance));
            f.pair((target, target_instance));
            f.byte(queue_order.into());
            f
        }
        Record::InstanceQueue {
            node,
            instance,
            queue_id,
        } => {
            let mut f = Fixed::new(tag::INSTANCE_QUEUE);
            f.pair((node, instance));
            f.uint(queue_id);
            f
        }
        Record::GraphMember { graph, node } => {
            let mut f = Fixed::new(tag::GRAPH_MEMBER);
            f.uint(graph.into());
            f.uint(node.into());
            f
        }
        Record::GraphEdge {
            graph,
            source,
            target,
        } => {
            let mut f = Fixed::new(tag::GRAPH_EDGE);
            f.uint(graph.into());
            f.uint(source.into());
            f.uint(target.into());
            f
        }
        Record::GraphFinalized {
            graph,
            node,
            thread,
            begin_ns,
            end_ns,
        } => {
            let mut f = Fixed::new(tag::GRAPH_FINALIZED);
            f.uint(graph.into());
            f.uint(node.into());
            f.uint(thread.into());
            f.uint(begin_ns);
            f.delta(begin_ns, end_ns);
            f
        }
        Record::RegionBegin {
            thread,
            label,
            ns,
            id,
            shown,
        } => {
            let mut f = Fixed::new(tag::REGION_BEGIN);
            f.uint(thread.into());
            f.uint(label.into());
            f.uint(ns);
            f.uint(id);
            f.byte(shown.into());
            f
        }
        Record::RegionEnd { thread, ns, id } => {
            let mut f = Fixed::new(tag::REGION_END);
            f.uint(thread.into());
            f.uint(ns);
            f.uint(id);
            f
        }
    };
    out.extend_from_slice(f.bytes());
}

/// The tag, node, instance, thread and first timestamp the per-instance
/// records start with.
#[inline(always)]
fn node_thread_ns(tag: u8, node: u32, instance: u64, thread: u32, ns: u64) -> Fixed {
    let mut f = Fixed::new(tag);
    f.pair((node, instance));
    f.uint(thread.into());
    f.uint(ns);
    f
}

/// Why a record could not be decoded from the bytes at hand.
enum Fail {
    /// The bytes end inside the record.
    Short,
    /// Byte `at` (from the record's start) cannot be there.
    Invalid {
        /// Offset of the offending byte from the start of the record.
        at: usize,
        /// What is wrong with it.
        what: &'static str,
    },
}

/// A fixed layout's bytes, read in order ([`Hot`] backwards).
struct Fields<const N: usize> {
    a: [u8; N],
    /// Bytes read.
    n: usize,
    /// Offset of `a[0]` in the decoder's slice.
    at: usize,
}

impl<const N: usize> Fields<N> {
    #[inline(always)]
    fn take<const W: usize>(&mut self) -> [u8; W] {
        let mut b = [0; W];
        b.copy_from_slice(&self.a[self.n..self.n + W]);
        self.n += W;
        b
    }

    #[inline(always)]
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    #[inline(always)]
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }

    /// A timestamp written as its `i32` difference from `from`.
    #[inline(always)]
    fn delta(&mut self, from: u64) -> u64 {
        from.wrapping_add(i32::from_le_bytes(self.take()) as u64)
    }

    /// The next byte and its offset in the decoder's slice.
    #[inline(always)]
    fn byte(&mut self) -> (usize, u8) {
        let at = self.at + self.n;
        let [b] = self.take();
        (at, b)
    }
}

/// Reads one record's fields from a slice.
struct Decoder<'a> {
    s: &'a [u8],
    p: usize,
}

impl Decoder<'_> {
    fn invalid<T>(&self, at: usize, what: &'static str) -> Result<T, Fail> {
        Err(Fail::Invalid { at, what })
    }

    #[inline(always)]
    fn byte(&mut self) -> Result<u8, Fail> {
        let b = *self.s.get(self.p).ok_or(Fail::Short)?;
        self.p += 1;
        Ok(b)
    }

    #[inline(always)]
    fn uint(&mut self) -> Result<u64, Fail> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let at = self.p;
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return self.invalid(at, "a varint longer than 64 bits");
            }
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
        }
    }

    #[inline(always)]
    fn u32(&mut self) -> Result<u32, Fail> {
        let at = self.p;
        let v = self.uint()?;
        u32::try_from(v).or_else(|_| self.invalid(at, "a 32-bit number above 2^32"))
    }

    /// A timestamp written as the difference from `from`.
    #[inline(always)]
    fn delta(&mut self, from: u64) -> Result<u64, Fail> {
        Ok(from.wrapping_add(unzigzag(self.uint()?) as u64))
    }

    /// A `0`/`1` flag (a `bool` or an `Option`'s presence).
    #[inline(always)]
    fn flag(&mut self) -> Result<bool, Fail> {
        let at = self.p;
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => self.invalid(at, "a flag byte other than 0 or 1"),
        }
    }

    #[inline(always)]
    fn pair(&mut self) -> Result<(u32, u64), Fail> {
        Ok((self.u32()?, self.uint()?))
    }

    #[inline(always)]
    fn opt_pair(&mut self) -> Result<Option<(u32, u64)>, Fail> {
        Ok(if self.flag()? {
            Some(self.pair()?)
        } else {
            None
        })
    }

    fn opt_u32(&mut self) -> Result<Option<u32>, Fail> {
        Ok(if self.flag()? {
            Some(self.u32()?)
        } else {
            None
        })
    }

    fn status(&mut self) -> Result<TimingStatus, Fail> {
        let at = self.p;
        let b = self.byte()?;
        self.status_at(at, b)
    }

    /// The timing status byte `b`, read at `at`.
    #[inline(always)]
    fn status_at(&self, at: usize, b: u8) -> Result<TimingStatus, Fail> {
        match TimingStatus::ALL.get(usize::from(b)) {
            Some(&s) if status_byte(s) == b => Ok(s),
            _ => self.invalid(at, "an unknown timing status"),
        }
    }

    /// The next `N` bytes: a fixed layout's fields after its tag.
    #[inline(always)]
    fn fixed<const N: usize>(&mut self) -> Result<Fields<N>, Fail> {
        let at = self.p;
        let a = self
            .s
            .get(at..)
            .and_then(|rest| rest.first_chunk::<N>())
            .ok_or(Fail::Short)?;
        self.p += N;
        Ok(Fields { a: *a, n: 0, at })
    }

    fn span_kind(&mut self) -> Result<SpanKind, Fail> {
        let at = self.p;
        match self.byte()? {
            0 => Ok(SpanKind::Wait),
            1 => Ok(SpanKind::Barrier),
            2 => Ok(SpanKind::Task),
            _ => self.invalid(at, "an unknown span kind"),
        }
    }

    fn string(&mut self) -> Result<String, Fail> {
        let at = self.p;
        let len = self.uint()?;
        if len > MAX_STRING_LEN {
            return self.invalid(at, "a string length above 1 GiB");
        }
        let start = self.p;
        let end = start + len as usize;
        let bytes = self.s.get(start..end).ok_or(Fail::Short)?;
        let text = std::str::from_utf8(bytes)
            .or_else(|_| self.invalid(start, "a string that is not UTF-8"))?;
        self.p = end;
        Ok(text.to_owned())
    }

    fn opt_string(&mut self) -> Result<Option<String>, Fail> {
        Ok(if self.flag()? {
            Some(self.string()?)
        } else {
            None
        })
    }

    fn metadata(&mut self) -> Result<Metadata, Fail> {
        let len = self.uint()?;
        // Every pair takes at least two bytes: a longer count is cut short.
        if len > (self.s.len() - self.p) as u64 / 2 {
            return Err(Fail::Short);
        }
        let mut metadata = Vec::with_capacity(len as usize);
        for _ in 0..len {
            metadata.push((self.string()?, self.string()?));
        }
        Ok(metadata)
    }

    /// The next record (its tag at the current position).
    fn record(&mut self) -> Result<Record, Fail> {
        let at = self.p;
        let record = match self.byte()? {
            tag::STRING => Record::String {
                id: self.u32()?,
                text: self.string()?.into_boxed_str(),
            },
            tag::NODE_DEFINED => Record::NodeDefined(Box::new(NodeInfo {
                id: self.u32()?,
                uid: self.uint()?,
                kind_hint: self.string()?,
                name: self.string()?,
                source_file: self.opt_string()?,
                source_line: self.opt_u32()?,
                source_column: self.opt_u32()?,
                metadata: self.metadata()?,
            })),
            tag::NODE_METADATA => Record::NodeMetadata {
                node: self.u32()?,
                metadata: Box::new(self.metadata()?),
            },
            tag::EDGE_DEFINED => Record::EdgeDefined(Box::new(EdgeInfo {
                id: self.u32()?,
                uid: self.uint()?,
                source: self.u32()?,
                target: self.u32()?,
                metadata: self.metadata()?,
            })),
            tag::EDGE_INSTANCE => {
                let (edge, instance) = self.pair()?;
                Record::EdgeInstance { edge, instance }
            }
            tag::SUBMITTED => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK_BEGIN => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::TaskBegin {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK_END => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::TaskEnd {
                    node,
                    instance,
                    thread,
                    ns,
                }
            }
            tag::TASK => {
                let (node, instance, thread, begin_ns) = self.node_thread_ns()?;
                Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                }
            }
            tag::SIGNALLED_TASK => {
                let (node, instance, thread, begin_ns) = self.node_thread_ns()?;
                Record::SignalledTask {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                    event: self.uint()?,
                }
            }
            tag::SUBMITTED_AFTER => {
                let (node, instance, thread, ns) = self.node_thread_ns()?;
                Record::SubmittedAfter {
                    node,
                    instance,
                    thread,
                    ns,
                    after: self.pair()?,
                }
            }
            tag::SUBMITTED_TASK => {
                let (node, instance, thread, submit_ns) = self.node_thread_ns()?;
                let after = self.opt_pair()?;
                let begin_ns = self.delta(submit_ns)?;
                let end_ns = self.delta(begin_ns)?;
                let event = if self.flag()? {
                    Some(self.uint()?)
                } else {
                    None
                };
                Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    after,
                    begin_ns,
                    end_ns,
                    event,
                }
            }
            tag::SUBMISSION_ANNOUNCED => {
                let (node, instance) = self.pair()?;
                Record::SubmissionAnnounced {
                    node,
                    instance,
                    after: self.opt_pair()?,
                }
            }
            tag::TIMED_TASK => {
                let (node, instance, thread, submit_ns) = self.node_thread_ns()?;
                let begin_ns = self.delta(submit_ns)?;
                let end_ns = self.delta(begin_ns)?;
                let event = self.uint()?;
                let device_status = self.status()?;
                let device_start_ns = self.delta(end_ns)?;
                let device_end_ns = self.delta(device_start_ns)?;
                Record::TimedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    begin_ns,
                    end_ns,
                    event,
                    device_status,
                    device_start_ns,
                    device_end_ns,
                }
            }
            tag::SIGNAL => {
                let (node, instance) = self.pair()?;
                Record::Signal {
                    node,
                    instance,
                    event: self.uint()?,
                }
            }
            tag::SPAN_BEGIN => Record::SpanBegin {
                kind: self.span_kind()?,
                label: self.u32()?,
                thread: self.u32()?,
                ns: self.uint()?,
            },
            tag::SPAN_END => Record::SpanEnd {
                kind: self.span_kind()?,
                thread: self.u32()?,
                ns: self.uint()?,
            },
            tag::TRACING => Record::Tracing {
                on: self.flag()?,
                ns: self.uint()?,
            },
            tag::QUEUE_CREATED => Record::QueueCreated {
                queue_id: self.uint()?,
                device: self.u32()?,
                device_handle: self.uint()?,
                ns: self.uint()?,
            },
            tag::DEVICE_DEFINED => Record::DeviceDefined {
                device: self.uint()?,
                parent: self.uint()?,
            },
            tag::QUEUE_DESTROYED => Record::QueueDestroyed {
                queue_id: self.uint()?,
                ns: self.uint()?,
            },
            tag::DEVICE => {
                let (node, instance) = self.pair()?;
                let status = self.status()?;
                let start_ns = self.uint()?;
                Record::Device(DeviceTimes {
                    node,
                    instance,
                    status,
                    start_ns,
                    end_ns: self.delta(start_ns)?,
                })
            }
            tag::INSTANCE_EDGE => {
                let (source, source_instance) = self.pair()?;
                let (target, target_instance) = self.pair()?;
                Record::InstanceEdge(InstanceEdge {
                    source,
                    source_instance,
                    target,
                    target_instance,
                    queue_order: self.flag()?,
                })
            }
            tag::INSTANCE_QUEUE => {
                let (node, instance) = self.pair()?;
                Record::InstanceQueue {
                    node,
                    instance,
                    queue_id: self.uint()?,
                }
            }
            tag::GRAPH_MEMBER => Record::GraphMember {
                graph: self.u32()?,
                node: self.u32()?,
            },
            tag::GRAPH_EDGE => Record::GraphEdge {
                graph: self.u32()?,
                source: self.u32()?,
                target: self.u32()?,
            },
            tag::GRAPH_FINALIZED => {
                let graph = self.u32()?;
                let node = self.u32()?;
                let thread = self.u32()?;
                let begin_ns = self.uint()?;
                Record::GraphFinalized {
                    graph,
                    node,
                    thread,
                    begin_ns,
                    end_ns: self.delta(begin_ns)?,
                }
            }
            tag::ANNOUNCED_FIXED => {
                let mut f = self.fixed::<8>()?;
                Record::SubmissionAnnounced {
                    node: f.u32(),
                    instance: f.u32().into(),
                    after: None,
                }
            }
            tag::ANNOUNCED_AFTER_FIXED => {
                let mut f = self.fixed::<16>()?;
                Record::SubmissionAnnounced {
                    node: f.u32(),
                    instance: f.u32().into(),
                    after: Some((f.u32(), f.u32().into())),
                }
            }
            tag::TIMED_TASK_FIXED => {
                let mut f = self.fixed::<45>()?;
                let (node, instance, thread) = (f.u32(), f.u32().into(), f.u32());
                let submit_ns = f.u64();
                let begin_ns = f.delta(submit_ns);
                let end_ns = f.delta(begin_ns);
                let event = f.u64();
                let (status_at, status) = f.byte();
                let device_status = self.status_at(status_at, status)?;
                let device_start_ns = f.delta(end_ns);
                Record::TimedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    begin_ns,
                    end_ns,
                    event,
                    device_status,
                    device_start_ns,
                    device_end_ns: f.delta(device_start_ns),
                }
            }
            t @ tag::SUBMITTED_TASK_FIXED..=tag::SUBMITTED_TASK_FIXED_LAST => {
                let mut f = self.fixed::<28>()?;
                let (node, instance, thread) = (f.u32(), f.u32().into(), f.u32());
                let submit_ns = f.u64();
                let begin_ns = f.delta(submit_ns);
                let end_ns = f.delta(begin_ns);
                let parts = t - tag::SUBMITTED_TASK_FIXED;
                let after = if parts & 1 != 0 {
                    let mut f = self.fixed::<8>()?;
                    Some((f.u32(), f.u32().into()))
                } else {
                    None
                };
                let event = if parts & 2 != 0 {
                    Some(self.fixed::<8>()?.u64())
                } else {
                    None
                };
                Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    after,
                    begin_ns,
                    end_ns,
                    event,
                }
            }
            tag::REGION_BEGIN => Record::RegionBegin {
                thread: self.u32()?,
                label: self.u32()?,
                ns: self.uint()?,
                id: self.uint()?,
                shown: self.flag()?,
            },
            tag::REGION_END => Record::RegionEnd {
                thread: self.u32()?,
                ns: self.uint()?,
                id: self.uint()?,
            },
            _ => return self.invalid(at, "an unknown record tag"),
        };
        Ok(record)
    }

    /// What [`node_thread_ns`] wrote.
    #[inline(always)]
    fn node_thread_ns(&mut self) -> Result<(u32, u64, u32, u64), Fail> {
        let (node, instance) = self.pair()?;
        Ok((node, instance, self.u32()?, self.uint()?))
    }
}

/// Reads records back in order from a reader positioned at the header.
///
/// Buffers on its own: give it the file, not a `BufReader`.
pub struct JournalReader<R: Read> {
    inner: R,
    /// Bytes read and not yet decoded are `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Offset in the journal of `buf[0]`.
    offset: u64,
    /// `inner` gave its last byte.
    eof: bool,
    /// An error or the end was reported: nothing more comes.
    done: bool,
}

impl<R: Read> JournalReader<R> {
    /// Reads and checks the header: `InvalidData` if `r` does not start with
    /// [`JOURNAL_HEADER`], `UnexpectedEof` if it ends before the header does.
    pub fn new(r: R) -> io::Result<JournalReader<R>> {
        let mut reader = JournalReader {
            inner: r,
            buf: vec![0; 64 * 1024],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            done: false,
        };
        while reader.end < JOURNAL_HEADER.len() && !reader.eof {
            reader.fill()?;
        }
        let have = reader.end.min(JOURNAL_HEADER.len());
        if reader.buf[..have] != JOURNAL_HEADER[..have] {
            let magic = JOURNAL_MAGIC.len();
            let what = if have > magic && reader.buf[..magic] == *JOURNAL_MAGIC {
                // Another format version: its records would be misread.
                let line = &reader.buf[magic..have];
                let version = line.split(|&b| b == b'\n').next().unwrap_or(line);
                format!(
                    "syclgraph journal: written by another syclgraph (format {}; this one reads format {})",
                    String::from_utf8_lossy(version),
                    JOURNAL_VERSION
                )
            } else {
                "syclgraph journal: not a journal of this syclgraph (header differs)".to_owned()
            };
            return Err(io::Error::new(io::ErrorKind::InvalidData, what));
        }
        if have < JOURNAL_HEADER.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("syclgraph journal: cut short inside its header ({have} bytes)"),
            ));
        }
        reader.start = have;
        Ok(reader)
    }

    /// Moves the undecoded bytes to the front, grows the buffer if a record
    /// fills it, and reads once more.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.offset += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The journal's offset of `buf[i]`.
    fn offset_of(&self, i: usize) -> u64 {
        self.offset + i as u64
    }
}

impl<R: Read> Iterator for JournalReader<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        if self.done {
            return None;
        }
        loop {
            let mut decoder = Decoder {
                s: &self.buf[self.start..self.end],
                p: 0,
            };
            match decoder.record() {
                Ok(record) => {
                    self.start += decoder.p;
                    return Some(Ok(record));
                }
                Err(Fail::Invalid { at, what }) => {
                    self.done = true;
                    let offset = self.offset_of(self.start + at);
                    let record_offset = self.offset_of(self.start);
                    return Some(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "syclgraph journal: invalid data at byte offset {offset}: {what} \
                             (in the record from byte offset {record_offset})"
                        ),
                    )));
                }
                Err(Fail::Short) if self.eof => {
                    self.done = true;
                    if self.start == self.end {
                        return None;
                    }
                    let record_offset = self.offset_of(self.start);
                    let left = self.end - self.start;
                    return Some(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "syclgraph journal: the last record, from byte offset \
                             {record_offset}, was cut short after {left} bytes"
                        ),
                    )));
                }
                Err(Fail::Short) => {
                    if let Err(e) = self.fill() {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
