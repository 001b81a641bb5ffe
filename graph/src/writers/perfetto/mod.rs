//! `trace.pftrace`: a Perfetto trace (protobuf `TracePacket`s holding
//! `TrackEvent`s and `TrackDescriptor`s), streamed as instances complete
//! ([`TraceWriter`]). It opens in ui.perfetto.dev.
//!
//! What is in it:
//!
//! - a process track (the traced program, by pid), and under it
//! - one track per host thread (`host thread N`, N the `thread_id` of
//!   `kernels.csv`) with the XPTI task span (task_begin..task_end) of every
//!   submission made on it, named `submit <operation>` (a host task's span,
//!   which is its run, is named by its operation, `host task`), and the
//!   waits and barriers (`wait: <what>`, `barrier: <what>`);
//! - one track group per device (`device <label> <name>`, the device's
//!   identity as in `kernels.csv`'s `device_id`: two devices of one name
//!   are two groups), a sub-device's group (a GPU's tile) under its
//!   parent's, and in it
//! - one track per device queue (`queue <id> <device>`) with every timed
//!   device command as a slice from its device start to its device end,
//!   the very numbers of `kernels.csv`'s `start_ns`/`end_ns`, named by the
//!   kernel or operation. Commands of one queue that overlap in time (an
//!   out-of-order queue) go on extra tracks `queue <id> <device> #2`, ...
//!   so that no slice partly overlaps another on one track;
//! - args on the slices: `node`, `instance`, `kind`, `queue`, `bytes`,
//!   `global_size`, `local_size`, `source` (file:line), as known;
//! - flows: from each submission's task span to its device slice, and along
//!   every dependency edge between instances (the instance graph's edges)
//!   from the producer's slice to the consumer's (the device slice when
//!   timed, else the task span).
//!
//! Times are CLOCK_MONOTONIC ns: every packet says `timestamp_clock_id` 3
//! (`BUILTIN_CLOCK_MONOTONIC`), and the first packet is a clock snapshot
//! that makes it the trace's primary clock, so the UI shows the same
//! numbers as `kernels.csv`.
//!
//! **Dependency flows when an edge comes late.** A slice is written when its
//! instance completes, with the flows known by then. A dependency usually
//! arrives before both its ends complete (at the consumer's submission), and
//! then it is on the two slices themselves. When the producer's slice was
//! already written, the flow starts at a zero-length `dependency` marker
//! at the producer slice's start, on its track (inside it); likewise a
//! marker at the consumer slice's start when that was written first. An
//! edge to or from an instance that has no slice (untimed, no task span)
//! has no flow. The tables that remember written and waiting instances
//! keep the most recent [`RECENT`] entries twice over (two generations);
//! an edge naming an older instance gets no flow.
//!
//! Packets are encoded with prost; each is appended whole, so a file cut
//! at any [`TraceWriter::flush`] parses, and a size bound drops every slice
//! after it is reached (counted in [`TraceWriter::dropped`]).

use std::hash::Hash;
use std::io::{self, Write};

use rustc_hash::FxHashMap;

use crate::devices::DeviceTable;
use crate::instance::{Completed, Instance};
use crate::instance_graph::InstanceKey;
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::node::{Node, GLOBAL_SIZE_KEY, LOCAL_SIZE_KEY, QUEUE_ID_KEY};
use crate::per_node::PerNode;
use crate::record::{InstanceEdge, Record};
use crate::spans::span_kind_str;

use prost::Message;

mod encoding;
mod protos;

use encoding::{
    arg, descriptor, encode_end, encode_event, encode_slice_event, end_tail, packet, Fields, Fixed,
    PACKET_FIELD, STATE_CLEARED,
};
use protos as pb;

pub use encoding::{CLOCK_BOOTTIME, CLOCK_MONOTONIC};

use pb::debug_annotation::Value;
use pb::track_event::{NameField, Type};

/// Entries per generation of the tables of recently written instances and
/// of flows waiting for an end.
pub const RECENT: usize = 1 << 16;

/// Bytes buffered before they are handed to the writer.
const BUFFER_BYTES: usize = 64 * 1024;
/// Tracks per queue for commands that overlap in time.
const MAX_LANES: usize = 32;

/// The process track.
const PROCESS_TRACK: u64 = 1;
/// The I-th device's track group is `DEVICE_TRACKS + I` (a group holds no
/// slices: its uuid may be large).
const DEVICE_TRACKS: u64 = 1 << 40;
/// Host thread N's track is `2 + 2 N` and lane L of the I-th queue's
/// `3 + 2 (I * 32 + L)`: even and odd, small numbers, so the uuid every
/// event carries is a one- or two-byte varint.
fn thread_uuid(thread: u32) -> u64 {
    2 + 2 * u64::from(thread)
}

/// See [`thread_uuid`].
fn queue_uuid(index: u64, lane: usize) -> u64 {
    3 + 2 * (index * MAX_LANES as u64 + lane as u64)
}

/// Where a written instance's slice is: the track and its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Anchor {
    key: InstanceKey,
    track: u64,
    ts: u64,
}

/// A map that forgets its oldest entries: two generations of at most
/// [`RECENT`] entries; when the current one is full the older one is
/// dropped and the current one becomes the older.
#[derive(Debug)]
struct Recent<K, V> {
    current: FxHashMap<K, V>,
    older: FxHashMap<K, V>,
}

impl<K: Hash + Eq, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            current: FxHashMap::default(),
            older: FxHashMap::default(),
        }
    }
}

impl<K: Hash + Eq, V> Recent<K, V> {
    fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        if !self.older.is_empty() && !self.current.contains_key(k) {
            return self.older.get_mut(k);
        }
        self.current.get_mut(k)
    }

    /// The entry for `k` (moved into the current generation), made by
    /// `make` when absent.
    fn entry(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let older = if self.older.is_empty() {
            None
        } else {
            self.older.remove(&k)
        };
        let v = match older {
            Some(v) => v,
            None => {
                if self.current.len() >= RECENT && !self.current.contains_key(&k) {
                    self.older = std::mem::take(&mut self.current);
                }
                return self.current.entry(k).or_insert_with(make);
            }
        };
        if self.current.len() >= RECENT {
            self.older = std::mem::take(&mut self.current);
        }
        self.current.entry(k).or_insert(v)
    }

    fn insert(&mut self, k: K, v: V) {
        // Mostly an instance already waited for: set in place.
        if let Some(at) = self.current.get_mut(&k) {
            *at = v;
            return;
        }
        if !self.older.is_empty() {
            self.older.remove(&k);
        }
        if self.current.len() >= RECENT && !self.current.contains_key(&k) {
            self.older = std::mem::take(&mut self.current);
        }
        self.current.insert(k, v);
    }
}

/// Flow ids, the first two without an allocation (most instances have a
/// dependency or two).
#[derive(Debug, Default)]
struct Ids {
    first: [u64; 2],
    len: usize,
    more: Vec<u64>,
}

impl Ids {
    fn push(&mut self, id: u64) {
        if self.len < 2 {
            self.first[self.len] = id;
        } else {
            self.more.push(id);
        }
        self.len += 1;
    }

    /// Takes back `id`, the last one pushed.
    fn pop(&mut self, id: u64) {
        if self.len > 2 {
            self.more.pop();
        } else if self.len > 0 {
            debug_assert_eq!(self.first[self.len - 1], id);
        }
        self.len = self.len.saturating_sub(1);
    }

    fn contains(&self, id: u64) -> bool {
        self.first[..self.len.min(2)].contains(&id) || self.more.contains(&id)
    }

    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.first[..self.len.min(2)]
            .iter()
            .chain(&self.more)
            .copied()
    }
}

/// What the trace knows of a recent instance.
#[derive(Debug)]
enum Seen {
    /// Its slices are not written yet: the flows waiting for them.
    Waiting(Waiting),
    /// Written: where its slice is (`None`: it has none).
    Written(Option<Anchor>),
}

/// The flow ids waiting for one instance's slice.
#[derive(Debug, Default)]
struct Waiting {
    /// Flows that begin at it (it is the producer).
    out: Ids,
    /// Flows that end at it (it is the consumer).
    into: Ids,
}

/// What a node's slices share, encoded once per node and
/// [`Node::revision`]: the prost encoding of a `TrackEvent` holding only
/// the name and the shared args. A slice's `TrackEvent` is the encoding of
/// its own fields (type, track, flows, instance) followed by these bytes:
/// fields of one message may come in any order, and none is in both parts.
struct NodeEvents {
    revision: u64,
    /// The device slice's name and args.
    device: Vec<u8>,
    /// The task span's name and args.
    host: Vec<u8>,
    /// The queue its metadata names (`queue_id`), for instances that do
    /// not say theirs.
    queue: Option<u64>,
}

/// The tracks of one device queue.
#[derive(Debug)]
struct QueueTracks {
    index: u64,
    /// Its device's track group (the process track when not known).
    parent: u64,
    name: String,
    /// The latest end on each lane so far.
    lanes: Vec<u64>,
}

/// Streams `trace.pftrace`: feed it every [`Record`] before the graph
/// applies it ([`TraceWriter::observe`]) and every [`Completed`] instance
/// ([`TraceWriter::write`]), and [`TraceWriter::flush`] it when the other
/// streamed files are flushed. Packets are handed to the underlying writer
/// whole (about 64 KiB at a time, and on flush).
pub struct TraceWriter<W: Write> {
    inner: Option<W>,
    buf: Vec<u8>,
    /// Bytes made so far (written or buffered).
    bytes: u64,
    max_bytes: u64,
    /// Slices and markers left out once `max_bytes` was reached.
    dropped: u64,
    slices: u64,
    flows: u64,
    /// By thread number (small and dense, as node ids): whether its track
    /// was described.
    threads: PerNode<bool>,
    /// By device index: whether its track group was described.
    devices: Vec<bool>,
    queues: FxHashMap<u64, QueueTracks>,
    /// By node id.
    nodes: PerNode<Option<NodeEvents>>,
    /// Instances written or waited for, by key: one table, so that an
    /// edge looks each end up once.
    seen: Recent<InstanceKey, Seen>,
    /// The fields every slice packet shares, encoded once.
    fixed: Fixed,
    /// Reused for markers: the packet's own fields.
    head: pb::TracePacket,
    /// The flows the next slice begins and ends.
    next_flows: Vec<u64>,
    next_ends: Vec<u64>,
    /// Reused for every `dependency` marker.
    marker: pb::TrackEvent,
    /// By track uuid: what follows the timestamp in that track's slice-end
    /// packets, encoded once (see [`TraceWriter::push_end`]).
    end_tails: Vec<Vec<u8>>,
    /// Reused for a named slice's encoded name.
    name_tail: Vec<u8>,
}

/// Track uuids below this have their slice-end bytes prepared (the
/// thread and queue tracks' uuids are small numbers).
const PREPARED_TRACKS: u64 = 1 << 14;

/// The args a node's slices share (all but the instance).
fn node_args(node: &Node) -> Vec<pb::DebugAnnotation> {
    let mut args = vec![
        arg("node", Value::UintValue(u64::from(node.id))),
        arg("kind", Value::StringValue(node.kind.as_str().to_string())),
    ];
    let text = |key: &str, value: Option<&str>| {
        value.map(|v| match v.trim().parse::<u64>() {
            Ok(n) => arg(key, Value::UintValue(n)),
            Err(_) => arg(key, Value::StringValue(v.to_string())),
        })
    };
    args.extend(text("queue", node.metadata_value(QUEUE_ID_KEY)));
    args.extend(text("bytes", node.bytes()));
    args.extend(text("global_size", node.metadata_value(GLOBAL_SIZE_KEY)));
    args.extend(text("local_size", node.metadata_value(LOCAL_SIZE_KEY)));
    args.extend(
        node.location()
            .map(|l| arg("source", Value::StringValue(l))),
    );
    args
}

impl NodeEvents {
    fn new(node: &Node) -> NodeEvents {
        let args = node_args(node);
        let tail = |name: String| {
            pb::TrackEvent {
                name_field: Some(NameField::Name(name)),
                debug_annotations: args.clone(),
                ..Default::default()
            }
            .encode_to_vec()
        };
        let host_name = if node.kind == NodeKind::HostTask {
            node.operation.clone()
        } else {
            format!("submit {}", node.operation)
        };
        NodeEvents {
            revision: node.revision(),
            device: tail(node.operation.clone()),
            host: tail(host_name),
            queue: node
                .metadata_value(QUEUE_ID_KEY)
                .and_then(|q| q.trim().parse().ok()),
        }
    }
}

/// One word for an instance key.
fn key_word((node, instance): InstanceKey) -> u64 {
    (u64::from(node) << 40) ^ instance
}

/// A flow id for `key`'s submission → device slice arrow.
fn submit_flow(key: InstanceKey) -> u64 {
    mix(mix(key_word(key)) ^ 0x5eed)
}

/// A flow id for the dependency `from` → `to`.
fn edge_flow(from: InstanceKey, to: InstanceKey) -> u64 {
    mix(mix(key_word(from)).rotate_left(23) ^ key_word(to))
}

/// splitmix64's finaliser: distinct inputs give distinct outputs.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace on `w`: a clock snapshot (`clocks`: (BuiltinClock id,
    /// ns) pairs read at one moment; CLOCK_MONOTONIC is made the trace's
    /// clock) and the process track. `max_bytes` bounds the file (`u64::MAX`:
    /// no bound).
    pub fn new(
        w: W,
        pid: u32,
        process_name: &str,
        clocks: &[(u32, u64)],
        max_bytes: u64,
    ) -> io::Result<TraceWriter<W>> {
        let mut t = TraceWriter {
            inner: Some(w),
            buf: Vec::with_capacity(2 * BUFFER_BYTES),
            bytes: 0,
            max_bytes,
            dropped: 0,
            slices: 0,
            flows: 0,
            threads: PerNode::default(),
            devices: Vec::new(),
            queues: FxHashMap::default(),
            nodes: PerNode::default(),
            seen: Recent::default(),
            head: {
                let mut p = packet(None);
                p.timestamp_clock_id = Some(CLOCK_MONOTONIC);
                p
            },
            fixed: Fixed::new(),
            next_flows: Vec::new(),
            next_ends: Vec::new(),
            end_tails: Vec::new(),
            name_tail: Vec::new(),
            marker: pb::TrackEvent {
                r#type: Some(Type::Instant as i32),
                name_field: Some(NameField::Name("dependency".to_string())),
                debug_annotations: vec![
                    arg("node", Value::UintValue(0)),
                    arg("instance", Value::UintValue(0)),
                ],
                ..Default::default()
            },
        };
        let mut snapshot = packet(Some(pb::trace_packet::Data::ClockSnapshot(
            pb::ClockSnapshot {
                clocks: clocks
                    .iter()
                    .map(|&(id, ns)| pb::clock_snapshot::Clock {
                        clock_id: Some(id),
                        timestamp: Some(ns),
                    })
                    .collect(),
                primary_trace_clock: Some(pb::BuiltinClock::Monotonic as i32),
            },
        )));
        snapshot.sequence_flags = Some(STATE_CLEARED);
        t.push(&snapshot);
        let process = packet(Some(pb::trace_packet::Data::TrackDescriptor(
            pb::TrackDescriptor {
                uuid: Some(PROCESS_TRACK),
                parent_uuid: None,
                process: Some(pb::ProcessDescriptor {
                    pid: Some(pid as i32),
                    process_name: Some(process_name.to_string()),
                }),
                static_or_dynamic_name: Some(pb::track_descriptor::StaticOrDynamicName::Name(
                    format!("{process_name} (pid {pid})"),
                )),
            },
        )));
        t.push(&process);
        t.write_buffer()?;
        Ok(t)
    }

    /// Appends one packet (field 1 of `Trace`, length-delimited, by prost).
    fn push(&mut self, p: &pb::TracePacket) {
        let before = self.buf.len();
        prost::encoding::message::encode(PACKET_FIELD, p, &mut self.buf);
        self.bytes += (self.buf.len() - before) as u64;
    }

    /// Room for about `n` more bytes under the bound for `slices` more
    /// slices (or markers); counts them as dropped if not.
    fn room(&mut self, n: u64, slices: u64) -> bool {
        if self.bytes.saturating_add(n) <= self.max_bytes {
            true
        } else {
            self.dropped += slices;
            false
        }
    }

    /// Sees a record before the graph applies it: waits and barriers become
    /// slices on their thread's track as they end (paired by the graph,
    /// which still holds the span open); instance edges become flows.
    pub fn observe(&mut self, graph: &TaskGraph, record: &Record) {
        match *record {
            Record::SpanEnd { kind, thread, ns } => {
                // Seen before the graph applies it: the span it closes is
                // still open there.
                let Some((label, begin)) = graph.open_span(kind, thread) else {
                    return;
                };
                if ns < begin || !self.room(256, 1) {
                    return;
                }
                let name = format!(
                    "{}: {}",
                    span_kind_str(kind),
                    graph.string(label).unwrap_or("?")
                );
                let track = self.thread_track(thread);
                self.named_slice(track, &name, begin, ns);
            }
            Record::InstanceEdge(edge) => self.edge(edge),
            // A submission on an in-order queue: the queue's order from
            // the previous one, as the instance graph takes it.
            _ => {
                if let Some(edge) = record.queue_order_edge() {
                    self.edge(edge);
                }
            }
        }
    }

    /// Writes a track of its own under the process, `name`, with one slice
    /// per item of `items`, in time order: what syclgraph computed rather
    /// than saw (the critical path's steps, the windows tracing was on),
    /// written once, at the end. `slice` writes the label of an item (and
    /// its position in `items`) into the String it is given (empty) and
    /// returns its start and end ns. A slice
    /// that would begin before the one before it ended is moved to begin at
    /// that end. `index` tells such tracks apart.
    pub fn write_summary_track<T>(
        &mut self,
        index: u64,
        name: &str,
        items: &[T],
        mut slice: impl FnMut(usize, &T, &mut String) -> (u64, u64),
    ) {
        if items.is_empty() || !self.room(64 * items.len() as u64 + 64, items.len() as u64) {
            return;
        }
        // Far from the thread and queue tracks' small numbers.
        let track = u64::MAX - index;
        let d = descriptor(track, Some(PROCESS_TRACK), name.to_string());
        self.push(&d);
        let mut last_end = 0;
        let mut label = String::new();
        for (i, item) in items.iter().enumerate() {
            label.clear();
            let (start, end) = slice(i, item, &mut label);
            let begin = start.max(last_end);
            let end = end.max(begin);
            self.named_slice(track, &label, begin, end);
            last_end = end;
        }
    }

    /// An instance's slice on `track` from `begin` to `end`: its node's
    /// pre-encoded fields `tail`, the instance, and the flows gathered in
    /// `next_flows`/`next_ends`.
    fn instance_slice(
        &mut self,
        key: InstanceKey,
        track: u64,
        begin: u64,
        end: u64,
        tail: &[u8],
    ) -> Anchor {
        self.bytes += encode_slice_event(
            &mut self.buf,
            &self.fixed,
            begin,
            &Fields {
                kind: Type::SliceBegin,
                track,
                flows: &self.next_flows,
                ends: &self.next_ends,
                instance: Some(key.1),
            },
            tail,
        ) as u64;
        self.push_end(track, end);
        self.slices += 1;
        Anchor {
            key,
            track,
            ts: begin,
        }
    }

    /// A slice `name` on `track` from `begin` to `end`, with no args or
    /// flows (host spans, the tracks written at the end): the slice packet
    /// of [`encode_slice_event`] with the name (`TrackEvent.name`, encoded
    /// by prost) as its tail.
    fn named_slice(&mut self, track: u64, name: &str, begin: u64, end: u64) {
        /// `TrackEvent.name`.
        const NAME: u32 = 23;
        let mut tail = std::mem::take(&mut self.name_tail);
        tail.clear();
        // prost's `string::encode`, which takes a `&String`, field by field.
        prost::encoding::encode_key(NAME, prost::encoding::WireType::LengthDelimited, &mut tail);
        prost::encoding::encode_varint(name.len() as u64, &mut tail);
        tail.extend_from_slice(name.as_bytes());
        let f = Fields {
            kind: Type::SliceBegin,
            track,
            flows: &[],
            ends: &[],
            instance: None,
        };
        self.bytes += encode_slice_event(&mut self.buf, &self.fixed, begin, &f, &tail) as u64;
        self.name_tail = tail;
        self.push_end(track, end);
        self.slices += 1;
    }

    /// A slice end at `ns` on `track`. Only its timestamp changes from one
    /// end to the next on a track: the rest of the packet (the shared
    /// fields, the track event's type and track) is encoded by
    /// [`encode_slice_event`] once per track, and each end is the packet's
    /// key and length, the timestamp, and those bytes (both written by
    /// prost's encoders, as there).
    fn push_end(&mut self, track: u64, ns: u64) {
        let end = Fields::slice_end(track);
        if track >= PREPARED_TRACKS {
            self.bytes += encode_slice_event(&mut self.buf, &self.fixed, ns, &end, &[]) as u64;
            return;
        }
        let at = track as usize;
        if self.end_tails.len() <= at {
            self.end_tails.resize_with(at + 1, Vec::new);
        }
        if self.end_tails[at].is_empty() {
            self.end_tails[at] = end_tail(&self.fixed, &end);
        }
        self.bytes += encode_end(&mut self.buf, ns, &self.end_tails[at]) as u64;
    }

    /// A zero-length `dependency` marker at `at` that begins (`out`) or
    /// ends a flow.
    fn marker(&mut self, at: Anchor, flow: u64, out: bool) {
        if !self.room(64, 1) {
            return;
        }
        let e = &mut self.marker;
        e.track_uuid = Some(at.track);
        e.debug_annotations[0].value = Some(Value::UintValue(u64::from(at.key.0)));
        e.debug_annotations[1].value = Some(Value::UintValue(at.key.1));
        e.flow_ids.clear();
        e.terminating_flow_ids.clear();
        if out {
            e.flow_ids.push(flow);
        } else {
            e.terminating_flow_ids.push(flow);
        }
        self.bytes += encode_event(&mut self.buf, &mut self.head, at.ts, &self.marker, &[]) as u64;
    }

    /// A dependency between two instances: a flow from the producer's
    /// slice to the consumer's.
    fn edge(&mut self, edge: InstanceEdge) {
        let from = (edge.source, edge.source_instance);
        let to = (edge.target, edge.target_instance);
        if from == to {
            return;
        }
        let id = edge_flow(from, to);
        // The producer's end first: with no slice there is no flow, and a
        // slice not written yet waits for the flow (taken back below if
        // the consumer's end ends it).
        // (`get_mut`, then `insert` when absent: cheaper than `entry` when
        // present, as the producer mostly is.)
        let source = match self.seen.get_mut(&from) {
            Some(Seen::Written(None)) => return,
            Some(Seen::Written(Some(at))) => Some(*at),
            Some(Seen::Waiting(w)) => {
                w.out.push(id);
                None
            }
            None => {
                let mut w = Waiting::default();
                w.out.push(id);
                self.seen.insert(from, Seen::Waiting(w));
                None
            }
        };
        // `None`: no flow; `Some(None)`: the consumer's slice waits for it;
        // `Some(Some(at))`: its slice was written, a marker ends it there.
        let target = match self.seen.entry(to, || Seen::Waiting(Waiting::default())) {
            Seen::Written(None) => None,
            Seen::Written(Some(at)) => Some(Some(*at)),
            // The same pair again (queue order and data): one flow.
            Seen::Waiting(w) if w.into.contains(id) => None,
            Seen::Waiting(w) => {
                w.into.push(id);
                Some(None)
            }
        };
        let Some(target) = target else {
            if source.is_none() {
                if let Some(Seen::Waiting(w)) = self.seen.get_mut(&from) {
                    w.out.pop(id);
                }
            }
            return;
        };
        self.flows += 1;
        if let Some(at) = target {
            self.marker(at, id, false);
        }
        if let Some(at) = source {
            self.marker(at, id, true);
        }
    }

    fn thread_track(&mut self, thread: u32) -> u64 {
        let uuid = thread_uuid(thread);
        if !std::mem::replace(self.threads.slot(thread), true) {
            let d = descriptor(uuid, Some(PROCESS_TRACK), format!("host thread {thread}"));
            self.push(&d);
        }
        uuid
    }

    /// The track group of the device at `index` (described with its
    /// parents' the first time).
    fn device_group(&mut self, devices: &DeviceTable, index: usize) -> u64 {
        let uuid = DEVICE_TRACKS + index as u64;
        if self.devices.get(index).copied().unwrap_or(false) {
            return uuid;
        }
        if self.devices.len() <= index {
            self.devices.resize(index + 1, false);
        }
        self.devices[index] = true;
        let Some(device) = devices.get(index) else {
            return uuid;
        };
        let parent = match device.parent {
            Some(p) => self.device_group(devices, p),
            None => PROCESS_TRACK,
        };
        let d = descriptor(uuid, Some(parent), format!("device {}", device.display()));
        self.push(&d);
        uuid
    }

    /// The track of a device slice [start, end] of `instance` of `node` on
    /// `queue`, in the group of its device (the first time: its queue's
    /// device): the first lane whose slices all ended by `start`.
    fn queue_track(
        &mut self,
        queue: u64,
        (graph, node, instance): (&TaskGraph, &Node, &Instance),
        start: u64,
        end: u64,
    ) -> u64 {
        if !self.queues.contains_key(&queue) {
            let devices = graph.devices();
            let device = graph.device_index(node, instance);
            let parent = match device {
                Some(d) => self.device_group(devices, d),
                None => PROCESS_TRACK,
            };
            let device_name = device
                .map(|d| devices.display(d))
                .filter(|n| !n.is_empty())
                .or(node.device.as_deref());
            let tracks = QueueTracks {
                index: self.queues.len() as u64,
                parent,
                name: match (queue, device_name) {
                    (u64::MAX, Some(d)) => format!("queue ? {d}"),
                    (u64::MAX, None) => "queue ?".to_string(),
                    (q, Some(d)) => format!("queue {q} {d}"),
                    (q, None) => format!("queue {q}"),
                },
                lanes: Vec::new(),
            };
            self.queues.insert(queue, tracks);
        }
        let Some(q) = self.queues.get_mut(&queue) else {
            return PROCESS_TRACK;
        };
        let lane = match q.lanes.iter().position(|&last| last <= start) {
            Some(l) => l,
            None if q.lanes.len() < MAX_LANES => q.lanes.len(),
            // More overlapping commands than lanes: the last lane.
            None => MAX_LANES - 1,
        };
        let uuid = queue_uuid(q.index, lane);
        if lane == q.lanes.len() {
            q.lanes.push(end);
            let name = if lane == 0 {
                q.name.clone()
            } else {
                format!("{} #{}", q.name, lane + 1)
            };
            let d = descriptor(uuid, Some(q.parent), name);
            self.push(&d);
        } else {
            q.lanes[lane] = q.lanes[lane].max(end);
        }
        uuid
    }

    /// Empties the flow lists for the next slice.
    fn begin_event(&mut self) {
        self.next_flows.clear();
        self.next_ends.clear();
    }

    /// Writes the slices of a finalised instance: its task span on its
    /// thread's track and, when timed, its device slice on its queue's
    /// track, with their flows.
    pub fn write(&mut self, graph: &TaskGraph, done: &Completed) {
        let key = (done.node, done.instance.instance);
        let Some(node) = graph.node(done.node) else {
            return;
        };
        let i = &done.instance;
        let host = match (i.begin_ns, i.end_ns, i.task_thread.or(i.thread)) {
            (Some(b), Some(e), Some(t)) if e >= b => Some((b, e, t)),
            _ => None,
        };
        let device = i.device_span().filter(|(s, e)| e >= s);
        let waiting = match self.seen.get_mut(&key) {
            Some(Seen::Waiting(w)) => std::mem::take(w),
            _ => Waiting::default(),
        };
        if host.is_none() && device.is_none() {
            self.seen.insert(key, Seen::Written(None));
            return;
        }
        if !self.room(
            1024,
            u64::from(host.is_some()) + u64::from(device.is_some()),
        ) {
            self.seen.insert(key, Seen::Written(None));
            return;
        }
        // Taken out while its slices are written, put back after.
        let events = match self.nodes.slot(done.node).take() {
            Some(e) if e.revision == node.revision() => e,
            _ => NodeEvents::new(node),
        };
        let submit = submit_flow(key);
        let mut anchor = None;
        if let Some((begin, end, thread)) = host {
            let track = self.thread_track(thread);
            self.begin_event();
            if device.is_some() {
                self.next_flows.push(submit);
            } else {
                self.next_flows.extend(waiting.out.iter());
                self.next_ends.extend(waiting.into.iter());
            }
            anchor = Some(self.instance_slice(key, track, begin, end, &events.host));
        }
        if let Some((start, end)) = device {
            let queue = i.queue.or(events.queue).unwrap_or(u64::MAX);
            let track = self.queue_track(queue, (graph, node, i), start, end);
            self.begin_event();
            self.next_flows.extend(waiting.out.iter());
            self.next_ends.extend(waiting.into.iter());
            if host.is_some() {
                self.next_ends.push(submit);
                self.flows += 1;
            }
            anchor = Some(self.instance_slice(key, track, start, end, &events.device));
        }
        *self.nodes.slot(done.node) = Some(events);
        self.seen.insert(key, Seen::Written(anchor));
        if self.buf.len() >= BUFFER_BYTES {
            // An error shows at the next flush, which reports it.
            let _ = self.write_buffer();
        }
    }

    fn write_buffer(&mut self) -> io::Result<()> {
        if let Some(w) = &mut self.inner {
            if !self.buf.is_empty() {
                let r = w.write_all(&self.buf);
                self.buf.clear();
                r?;
            }
        }
        Ok(())
    }

    /// Hands every buffered packet to the writer and flushes it.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_buffer()?;
        match &mut self.inner {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        self.inner.as_ref().expect("never taken")
    }

    /// Bytes buffered, not yet handed to the writer.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Slices and dependency markers left out because the size bound was
    /// reached.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Slices written.
    pub fn slices(&self) -> u64 {
        self.slices
    }

    /// Flows written (submission → device, and dependencies).
    pub fn flows(&self) -> u64 {
        self.flows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{DeviceTimes, NodeInfo, TimingStatus};
    use pb::debug_annotation::NameField as ArgName;

    /// `perfetto.protos.Trace`: the file.
    #[derive(Clone, PartialEq, ::prost::Message)]
    struct Trace {
        #[prost(message, repeated, tag = "1")]
        packet: Vec<pb::TracePacket>,
    }

    fn graph_with_kernel() -> TaskGraph {
        let mut g = TaskGraph::new();
        let mut done = Vec::new();
        g.apply(
            Record::NodeDefined(Box::new(NodeInfo {
                id: 0,
                uid: 7,
                kind_hint: "command_group_node".into(),
                name: "saxpy".into(),
                source_file: Some("a.cpp".into()),
                source_line: Some(3),
                source_column: None,
                metadata: vec![
                    ("kernel_name".into(), "saxpy".into()),
                    ("queue_id".into(), "1".into()),
                ],
            })),
            &mut done,
        );
        g
    }

    fn kernel(instance: u64, start: u64) -> Completed {
        let mut i = crate::Instance::new(instance);
        i.thread = Some(1);
        i.begin_ns = Some(start - 50);
        i.end_ns = Some(start - 40);
        i.device = Some(DeviceTimes {
            node: 0,
            instance,
            status: TimingStatus::Ok,
            start_ns: start,
            end_ns: start + 10,
        });
        Completed {
            node: 0,
            instance: i,
        }
    }

    fn events(bytes: &[u8]) -> Vec<pb::TrackEvent> {
        let trace = <Trace as prost::Message>::decode(bytes).expect("the file parses");
        trace
            .packet
            .into_iter()
            .filter_map(|p| match p.data {
                Some(pb::trace_packet::Data::TrackEvent(e)) => Some(e),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn slices_and_flows_of_a_dependency_known_before_and_after() {
        let g = graph_with_kernel();
        let mut t =
            TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], u64::MAX).unwrap();
        let edge = |a: u64, b: u64| {
            Record::InstanceEdge(InstanceEdge {
                source: 0,
                source_instance: a,
                target: 0,
                target_instance: b,
                queue_order: true,
            })
        };
        // 1 -> 2 known before both complete (twice: queue order and data
        // give the same pair); 1 -> 3 after 1 was written.
        t.observe(&g, &edge(1, 2));
        t.observe(&g, &edge(1, 2));
        t.write(&g, &kernel(1, 1000));
        t.observe(&g, &edge(1, 3));
        t.observe(&g, &edge(1, 3));
        t.write(&g, &kernel(2, 2000));
        t.write(&g, &kernel(3, 3000));
        t.flush().unwrap();
        let ev = events(t.get_ref());
        let begins: Vec<_> = ev
            .iter()
            .filter(|e| e.r#type == Some(Type::SliceBegin as i32))
            .collect();
        assert_eq!(begins.len(), 6); // a task span and a device slice each
        let markers: Vec<_> = ev
            .iter()
            .filter(|e| e.r#type == Some(Type::Instant as i32))
            .collect();
        assert_eq!(markers.len(), 1, "one marker for the late edge, once");
        let d1 = edge_flow((0, 1), (0, 2));
        let d2 = edge_flow((0, 1), (0, 3));
        assert_eq!(begins[1].flow_ids, vec![d1], "the pair's flow once");
        assert_eq!(
            begins[3]
                .terminating_flow_ids
                .iter()
                .filter(|&&f| f == d1)
                .count(),
            1
        );
        assert_eq!(markers[0].flow_ids, vec![d2]);
        assert_eq!(
            markers[0].name_field,
            Some(NameField::Name("dependency".into()))
        );
        let args: Vec<_> = markers[0]
            .debug_annotations
            .iter()
            .map(|a| (a.name_field.clone(), a.value.clone()))
            .collect();
        for (name, value) in [("node", 0), ("instance", 1)] {
            assert!(
                args.contains(&(
                    Some(ArgName::Name(name.into())),
                    Some(Value::UintValue(value))
                )),
                "{args:?}"
            );
        }
        assert!(begins[5].terminating_flow_ids.contains(&d2));
        // submission -> device
        assert_eq!(begins[0].flow_ids, vec![submit_flow((0, 1))]);
        assert!(begins[1]
            .terminating_flow_ids
            .contains(&submit_flow((0, 1))));
        assert_eq!(t.dropped(), 0);
    }

    #[test]
    fn no_flow_to_an_instance_written_without_a_slice() {
        let g = graph_with_kernel();
        let mut t =
            TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], u64::MAX).unwrap();
        // 2 completes with no times at all: it has no slice.
        let untimed = Completed {
            node: 0,
            instance: crate::Instance::new(2),
        };
        t.write(&g, &untimed);
        t.observe(
            &g,
            &Record::InstanceEdge(InstanceEdge {
                source: 0,
                source_instance: 1,
                target: 0,
                target_instance: 2,
                queue_order: false,
            }),
        );
        t.write(&g, &kernel(1, 1000));
        t.flush().unwrap();
        let ev = events(t.get_ref());
        assert!(ev.iter().all(|e| e.flow_ids.len() <= 1), "{ev:?}");
        assert!(!ev
            .iter()
            .any(|e| e.flow_ids.contains(&edge_flow((0, 1), (0, 2)))));
        assert_eq!(t.flows(), 1, "the submission's flow only");
    }

    #[test]
    fn a_prepared_slice_end_is_the_packet_encoded_whole() {
        let fixed = Fixed::new();
        for track in [2, 3, 129, 200, 16_383, 1 << 20] {
            let end = Fields::slice_end(track);
            let tail = end_tail(&fixed, &end);
            for ts in [0, 1, 127, 128, 1 << 40, 1_700_000_000_123_456_789, u64::MAX] {
                let (mut whole, mut prepared) = (Vec::new(), Vec::new());
                let n = encode_slice_event(&mut whole, &fixed, ts, &end, &[]);
                assert_eq!(encode_end(&mut prepared, ts, &tail), n);
                assert_eq!(prepared, whole, "track {track}, ts {ts}");
            }
        }
    }

    #[test]
    fn the_size_bound_cuts_between_whole_packets_and_counts() {
        let g = graph_with_kernel();
        let mut t = TraceWriter::new(Vec::new(), 1, "p", &[(CLOCK_MONOTONIC, 5)], 4096).unwrap();
        for i in 1..=200 {
            t.write(&g, &kernel(i, 1000 * i + 100));
        }
        t.flush().unwrap();
        assert!(t.get_ref().len() <= 4096, "{}", t.get_ref().len());
        assert!(t.dropped() > 100, "{}", t.dropped());
        let written = events(t.get_ref()).len() as u64 / 2;
        assert_eq!(written, t.slices());
        assert!(written > 4, "{written}");
    }
}
