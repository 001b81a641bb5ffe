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
//! - args on the slices: `node` and `instance` on every slice; the node's
//!   own `kind`, `queue`, `bytes`, `global_size`, `local_size`, `source`
//!   (file:line), as known, on its first slice on each track (they are the
//!   same on all its slices);
//! - flows: from each submission's task span to its device slice, and along
//!   every dependency edge between instances (the instance graph's edges)
//!   from the producer's slice to the consumer's (the device slice when
//!   timed, else the task span).
//!
//! Times are CLOCK_MONOTONIC ns, the very numbers of `kernels.csv`: the
//! first packet is a clock snapshot that makes CLOCK_MONOTONIC the
//! trace's primary clock.
//!
//! **Sequences and interning** (what a tool that rewrites or merges traces
//! must keep). Packet sequence 1 (`trusted_packet_sequence_id`) holds the
//! whole-trace packets: the clock snapshot and every `TrackDescriptor`,
//! with no incremental state. Each track that holds slices has a sequence
//! of its own, numbered 2, 3, ... in the order of their first slice, and
//! only that track's events are on it. Its first packet has
//! `SEQ_INCREMENTAL_STATE_CLEARED` and:
//! - `trace_packet_defaults`: `timestamp_clock_id` 64 and
//!   `track_event_defaults.track_uuid` (the track), so events carry
//!   neither;
//! - `interned_data.debug_annotation_names`: the arg names, iids 1..8
//!   (`ARG_NAMES`);
//! - a `clock_snapshot` of clock 64, sequence-scoped and `is_incremental`,
//!   and CLOCK_MONOTONIC, both at the track's first timestamp.
//!
//! Every later packet on it has `SEQ_NEEDS_INCREMENTAL_STATE`, a
//! `timestamp` that is the delta (ns) from the previous one on clock 64,
//! and a `TrackEvent` with `name_iid` (an `interned_data.event_names` entry
//! in the same packet the first time the name is used on the sequence:
//! iid 1 is `dependency`, a node's names take 2, 3, ... from one counter
//! for the whole trace) or a literal `name` (waits, barriers, the tracks
//! written at exit), and args by `name_iid`. An event earlier than the
//! previous delta (slices are written as instances complete, not in time
//! order) and every `dependency` marker says `timestamp_clock_id` 3 and
//! has its absolute time; it leaves clock 64 as it was. Nothing resets the
//! state later, so the file read from its start decodes at any cut (the
//! size bound, a flush before a signal). A merger that renumbers sequences
//! must keep each one's packets in order and rewrite the uuid in its
//! defaults with the track's.
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
//! Each packet is appended whole, so a file cut at any
//! [`TraceWriter::flush`] parses, and a size bound drops every slice after
//! it is reached (counted in [`TraceWriter::dropped`]). A tiny memcpy's
//! four packets and two flows take about 120 bytes (373 before this
//! layout, with every arg and name on every slice).

use std::io::{self, Write};
use std::num::ParseIntError;

use rustc_hash::FxHashMap;

use crate::devices::DeviceTable;
use crate::instance::{Completed, Instance};
use crate::instance_graph::InstanceKey;
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::node::{Node, GLOBAL_SIZE_KEY, LOCAL_SIZE_KEY, QUEUE_ID_KEY};
use crate::per_node::PerNode;
use crate::record::{InstanceEdge, Record, SpanKind};
use crate::spans::span_kind_str;

mod encoding;
pub mod fields;
mod out;
mod protos;
mod recent;
mod region_tracks;
mod trace_start;
pub mod wire;

use out::Out;
use recent::{Anchor, Recent, Seen, Waiting};
pub use trace_start::TraceStart;

use encoding::{
    begin_head, descriptor, global_packet, push_message, sequence_start, slice_begin, slice_end,
    Cursor, Head, LAID_FLOWS, MESSAGE_SLACK, SLICE_BEGIN_BYTES, SLICE_END_BYTES,
};
use fields::sequence_flags::{INCREMENTAL_STATE_CLEARED, NEEDS_INCREMENTAL_STATE};
use fields::{event, interned, packet, TRACE_PACKET};
use protos as pb;

pub use encoding::{CLOCK_BOOTTIME, CLOCK_MONOTONIC};

use pb::track_event::Type;

/// Entries per generation of the tables of recently written instances and
/// of flows waiting for an end: 57,344, the most a table of 65,536 slots
/// holds (7/8 of them) before it doubles. At 65,536 entries each
/// generation took a table of 131,072 slots, half of them empty (11.7 MB
/// per generation instead of 5.8).
pub const RECENT: usize = (1 << 16) / 8 * 7;

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

/// The arg names every track's sequence interns at its start: the iid of
/// each is its position + 1.
const ARG_NAMES: [&str; 8] = [
    "node",
    "instance",
    "kind",
    "queue",
    "bytes",
    "global_size",
    "local_size",
    "source",
];
/// Interned arg name ids (see [`ARG_NAMES`]).
const ARG_NODE: u64 = 1;
const ARG_INSTANCE: u64 = 2;
const ARG_KIND: u64 = 3;
const ARG_QUEUE: u64 = 4;
const ARG_BYTES: u64 = 5;
const ARG_GLOBAL_SIZE: u64 = 6;
const ARG_LOCAL_SIZE: u64 = 7;
const ARG_SOURCE: u64 = 8;

/// The interned event name id of `dependency` markers; nodes' slice names
/// are 2, 3, ... (two per node and revision: task span, device slice).
const DEPENDENCY_IID: u64 = 1;

/// What a node's slices share, made once per node and [`Node::revision`]:
/// the names of its two kinds of slices (each an interned event name) and
/// its args.
struct NodeEvents {
    revision: u64,
    /// The device slice's name and its interned id.
    device: String,
    device_iid: u64,
    /// The task span's name and its interned id.
    host: String,
    host_iid: u64,
    /// The fixed part of its task spans' and device slices' begins once
    /// their names are interned on a track ([`begin_head`]).
    host_head: Head,
    device_head: Head,
    /// The `DebugAnnotation`s of the node's args but `node` and
    /// `instance` (`kind`, `queue`, `bytes`, ...), encoded: written on the
    /// node's first slice on each track (where its name is interned).
    args: Vec<u8>,
    /// The queue its metadata names (`queue_id`), for instances that do
    /// not say theirs.
    queue: Option<u64>,
    /// Where its last task span went: the thread and its track's index in
    /// `tracks` (for [`TraceWriter::write_laid`]).
    host_track: Option<(u32, usize)>,
    /// Where its last device slice went when on a queue's first lane: the
    /// queue, its index in `queues` and the lane's track's in `tracks`.
    device_track: Option<(u64, usize, usize)>,
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

/// A track that holds slices, and its packet sequence.
#[derive(Debug)]
struct Track {
    uuid: u64,
    sequence: u32,
    /// Whether its sequence's first packet ([`sequence_start`]) was written.
    started: bool,
    /// The sequence's incremental clock: the last timestamp written as a
    /// delta.
    clock: u64,
    /// By event name iid: whether it is interned on the sequence (bits).
    interned: Vec<u64>,
}

impl Track {
    /// Whether `iid` is not interned yet.
    fn is_new(&self, iid: u64) -> bool {
        let (word, bit) = ((iid / 64) as usize, 1u64 << (iid % 64));
        self.interned.get(word).is_none_or(|w| w & bit == 0)
    }

    /// Marks `iid` interned; whether it was not yet.
    fn intern(&mut self, iid: u64) -> bool {
        let (word, bit) = ((iid / 64) as usize, 1u64 << (iid % 64));
        if self.interned.len() <= word {
            self.interned.resize(word + 1, 0);
        }
        let new = self.interned[word] & bit == 0;
        self.interned[word] |= bit;
        new
    }
}

/// An event's name: interned on its sequence, or written out (host waits,
/// the tracks written at the end: names seldom repeated).
#[derive(Clone, Copy)]
enum Name<'a> {
    Interned(u64, &'a str),
    Literal(&'a str),
}

/// What one track event holds beyond its timestamp.
struct Event<'a> {
    kind: Type,
    name: Option<Name<'a>>,
    /// The `node` and `instance` args.
    node: Option<u64>,
    instance: Option<u64>,
    /// The type, name and node arg encoded ([`begin_head`]) when `name`
    /// is interned: what [`slice_begin`] lays out by hand.
    head: Option<&'a Head>,
    /// Encoded args written only when `name` is interned by this event:
    /// on a node's first slice on the track.
    first_args: &'a [u8],
    flows: &'a [u64],
    ends: &'a [u64],
    /// The timestamp in CLOCK_MONOTONIC, not as a delta on the track's
    /// clock (leaving that clock as it was).
    absolute: bool,
}

impl Event<'static> {
    /// A slice's end.
    fn end() -> Event<'static> {
        Event {
            kind: Type::SliceEnd,
            name: None,
            node: None,
            instance: None,
            head: None,
            first_args: &[],
            flows: &[],
            ends: &[],
            absolute: false,
        }
    }
}

/// Appends to `buf` the packet of `e` at `ts` on `track`'s sequence (after
/// the sequence's first packet if not written yet); returns the bytes
/// appended.
fn write_event(buf: &mut Out, track: &mut Track, ts: u64, e: &Event) -> usize {
    if let (Some(Name::Interned(iid, _)), Some(instance), Some(head), Ok(sequence)) =
        (e.name, e.instance, e.head, u8::try_from(track.sequence))
    {
        if track.started
            && !e.absolute
            && ts >= track.clock
            && sequence < 0x80
            && e.flows.len() + e.ends.len() <= LAID_FLOWS
            && !track.is_new(iid)
        {
            let delta = ts - track.clock;
            track.clock = ts;
            let a = buf.room(SLICE_BEGIN_BYTES);
            let n = slice_begin(a, sequence, delta, head, instance, (e.flows, e.ends));
            buf.commit(n);
            return n;
        }
    }
    let mut n = 0;
    if !track.started {
        track.started = true;
        track.clock = ts;
        n += sequence_start(buf, track.sequence, track.uuid, ts, &ARG_NAMES);
    }
    let (name_len, intern) = match e.name {
        Some(Name::Interned(iid, name)) => (name.len(), track.intern(iid)),
        Some(Name::Literal(name)) => (name.len(), false),
        None => (0, false),
    };
    let max = 6 * MESSAGE_SLACK
        + if intern {
            name_len + e.first_args.len()
        } else {
            name_len
        }
        + 10 * (e.flows.len() + e.ends.len());
    let relative = !e.absolute && ts >= track.clock;
    let (stamp, clock) = if relative {
        (ts - track.clock, None)
    } else {
        // Earlier than the last delta (slices are written as instances
        // complete, not in time order): in the trace's own clock.
        (ts, Some(CLOCK_MONOTONIC))
    };
    if relative {
        track.clock = ts;
    }
    let sequence = track.sequence;
    n + Cursor::append(buf, max, |c| {
        let p = c.open(TRACE_PACKET);
        c.uint(packet::TIMESTAMP, stamp);
        if let Some(clock) = clock {
            c.uint(packet::TIMESTAMP_CLOCK_ID, u64::from(clock));
        }
        c.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(sequence));
        c.uint(packet::SEQUENCE_FLAGS, u64::from(NEEDS_INCREMENTAL_STATE));
        if let (true, Some(Name::Interned(iid, name))) = (intern, e.name) {
            let i = c.open(packet::INTERNED_DATA);
            c.interned_name(interned::EVENT_NAMES, iid, name);
            c.close(i);
        }
        let t = c.open(packet::TRACK_EVENT);
        c.uint(event::TYPE, e.kind as u64);
        match e.name {
            Some(Name::Interned(iid, _)) => c.uint(event::NAME_IID, iid),
            Some(Name::Literal(name)) => c.bytes(event::NAME, name.as_bytes()),
            None => {}
        }
        if let Some(node) = e.node {
            c.uint_arg(ARG_NODE, node);
        }
        if let Some(instance) = e.instance {
            c.uint_arg(ARG_INSTANCE, instance);
        }
        if intern {
            c.raw(e.first_args);
        }
        c.fixed64s(event::FLOW_IDS, e.flows);
        c.fixed64s(event::TERMINATING_FLOW_IDS, e.ends);
        c.close(t);
        c.close(p);
    })
}

/// Appends the end of the slice last begun on `track` at `ts`: by hand
/// ([`slice_end`]) when a delta on the track's clock (mostly), else as
/// [`write_event`] writes any event.
fn write_end(buf: &mut Out, track: &mut Track, ts: u64) -> usize {
    match u8::try_from(track.sequence) {
        Ok(sequence) if track.started && ts >= track.clock && sequence < 0x80 => {
            let delta = ts - track.clock;
            track.clock = ts;
            let n = slice_end(buf.room(SLICE_END_BYTES), sequence, delta);
            buf.commit(n);
            n
        }
        _ => write_event(buf, track, ts, &Event::end()),
    }
}

/// Streams `trace.pftrace`: feed it every [`Record`] before the graph
/// applies it ([`TraceWriter::observe`]) and every [`Completed`] instance
/// ([`TraceWriter::write`]), and [`TraceWriter::flush`] it when the other
/// streamed files are flushed. Packets are handed to the underlying writer
/// whole (about 64 KiB at a time, and on flush).
pub struct TraceWriter<W: Write> {
    inner: Option<W>,
    buf: Out,
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
    /// Threads whose overlapped ITT tasks' track is described.
    overlapped_threads: rustc_hash::FxHashSet<u32>,
    /// By device index: whether its track group was described.
    devices: Vec<bool>,
    /// By queue id: its index in `queues`.
    queue_index: FxHashMap<u64, usize>,
    queues: Vec<QueueTracks>,
    /// By node id.
    /// By node id (boxed: taken out and put back per instance).
    nodes: PerNode<Option<Box<NodeEvents>>>,
    /// The next interned event name id for a node's names.
    next_iid: u64,
    /// Instances written or waited for, by key: one table, so that an
    /// edge looks each end up once.
    seen: Recent<InstanceKey, Seen>,
    /// The tracks that hold slices, in the order of their first slice
    /// (track `i`'s sequence is `i + 2`).
    tracks: Vec<Track>,
    /// By track uuid (the thread and queue tracks' small numbers): its
    /// index in `tracks` + 1.
    track_index: Vec<u32>,
    /// The flows the next slice begins and ends.
    next_flows: Vec<u64>,
    next_ends: Vec<u64>,
}

/// Track uuids below this are found by [`TraceWriter::track_index`]
/// directly (the thread and queue tracks' uuids are small numbers).
const SMALL_TRACKS: u64 = 1 << 14;

/// The args a node's slices share but `node` and `instance`, encoded.
fn node_args(node: &Node) -> Vec<u8> {
    fn text(key: u64, value: Option<&str>) -> Option<(u64, Result<u64, ParseIntError>, &str)> {
        value.map(|v| (key, v.trim().parse::<u64>(), v))
    }
    let values = [
        text(ARG_QUEUE, node.metadata_value(QUEUE_ID_KEY)),
        text(ARG_BYTES, node.bytes()),
        text(ARG_GLOBAL_SIZE, node.metadata_value(GLOBAL_SIZE_KEY)),
        text(ARG_LOCAL_SIZE, node.metadata_value(LOCAL_SIZE_KEY)),
    ];
    let source = node.location();
    let kind = node.kind.as_str();
    let max = 6 * MESSAGE_SLACK
        + kind.len()
        + source.as_ref().map_or(0, String::len)
        + values
            .iter()
            .flatten()
            .map(|(_, _, v)| v.len())
            .sum::<usize>();
    let mut buf = Out::default();
    Cursor::append(&mut buf, max, |c| {
        c.string_arg(ARG_KIND, kind);
        for (key, number, v) in values.into_iter().flatten() {
            match number {
                Ok(n) => c.uint_arg(key, n),
                Err(_) => c.string_arg(key, v),
            }
        }
        if let Some(l) = &source {
            c.string_arg(ARG_SOURCE, l);
        }
    });
    buf.as_slice().to_vec()
}

impl NodeEvents {
    /// `node`'s names and args; its names take the interned ids `iid` and
    /// `iid + 1`.
    fn new(node: &Node, iid: u64) -> NodeEvents {
        let args = node_args(node);
        let host = if node.kind == NodeKind::HostTask {
            node.operation.clone()
        } else {
            format!("submit {}", node.operation)
        };
        NodeEvents {
            revision: node.revision(),
            device: node.operation.clone(),
            device_iid: iid,
            host_head: begin_head(iid + 1, u64::from(node.id)),
            device_head: begin_head(iid, u64::from(node.id)),
            host,
            host_iid: iid + 1,
            args,
            queue: node
                .metadata_value(QUEUE_ID_KEY)
                .and_then(|q| q.trim().parse().ok()),
            host_track: None,
            device_track: None,
        }
    }
}

/// One word for an instance key.
fn key_word((node, instance): InstanceKey) -> u64 {
    (u64::from(node) << 40) ^ instance
}

/// A flow id for `key`'s submission → device slice arrow.
#[inline(always)]
fn submit_flow(key: InstanceKey) -> u64 {
    mix(mix(key_word(key)) ^ 0x5eed)
}

/// A flow id for the dependency `from` → `to`.
fn edge_flow(from: InstanceKey, to: InstanceKey) -> u64 {
    mix(mix(key_word(from)).rotate_left(23) ^ key_word(to))
}

/// splitmix64's finaliser: distinct inputs give distinct outputs.
#[inline]
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
            buf: Out::with_room(2 * BUFFER_BYTES),
            bytes: 0,
            max_bytes,
            dropped: 0,
            slices: 0,
            flows: 0,
            threads: PerNode::default(),
            overlapped_threads: Default::default(),
            devices: Vec::new(),
            queue_index: FxHashMap::default(),
            queues: Vec::new(),
            nodes: PerNode::default(),
            next_iid: DEPENDENCY_IID + 1,
            seen: Recent::default(),
            tracks: Vec::new(),
            track_index: Vec::new(),
            next_flows: Vec::new(),
            next_ends: Vec::new(),
        };
        let mut snapshot = global_packet(Some(pb::trace_packet::Data::ClockSnapshot(
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
        snapshot.sequence_flags = Some(INCREMENTAL_STATE_CLEARED);
        t.push(&snapshot);
        let process = global_packet(Some(pb::trace_packet::Data::TrackDescriptor(
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

    /// Appends one whole-trace packet.
    fn push(&mut self, p: &pb::TracePacket) {
        self.bytes += push_message(&mut self.buf, p) as u64;
    }

    /// The index in `tracks` of the track `uuid` (made the first time:
    /// its sequence is started by its first event).
    fn track_index(&mut self, uuid: u64) -> usize {
        if uuid < SMALL_TRACKS {
            if let Some(&i) = self.track_index.get(uuid as usize) {
                if i > 0 {
                    return i as usize - 1;
                }
            }
        } else if let Some(i) = self.tracks.iter().position(|t| t.uuid == uuid) {
            return i;
        }
        let i = self.tracks.len();
        self.tracks.push(Track {
            uuid,
            sequence: i as u32 + 2,
            started: false,
            clock: 0,
            interned: Vec::new(),
        });
        if uuid < SMALL_TRACKS {
            if self.track_index.len() <= uuid as usize {
                self.track_index.resize(uuid as usize + 1, 0);
            }
            self.track_index[uuid as usize] = i as u32 + 1;
        }
        i
    }

    /// Appends `e` at `ts` on track `uuid`.
    fn event(&mut self, uuid: u64, ts: u64, e: &Event) {
        let i = self.track_index(uuid);
        self.bytes += write_event(&mut self.buf, &mut self.tracks[i], ts, e) as u64;
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
            Record::SpanEnd { kind, thread, ns } => self.span_end(graph, kind, thread, ns),
            Record::RegionEnd { thread, ns, id } => self.region_end(graph, thread, ns, id),
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

    /// A wait or barrier that ends at `ns` on `thread` (kept out of
    /// [`TraceWriter::observe`], which mostly sees submissions).
    #[cold]
    #[inline(never)]
    fn span_end(&mut self, graph: &TaskGraph, kind: SpanKind, thread: u32, ns: u64) {
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

    /// An ITT task `id` that ends at `ns` on `thread`, begun while tracing
    /// was on.
    #[cold]
    #[inline(never)]
    fn region_end(&mut self, graph: &TaskGraph, thread: u32, ns: u64, id: u64) {
        let Some(entry) = graph.closing_region(thread, id).filter(|e| e.shown) else {
            return;
        };
        if ns < entry.begin_ns || !self.room(256, 1) {
            return;
        }
        let label = graph.string(entry.label).unwrap_or("?");
        let name = format!("task: {label}");
        // An overlapped task may end inside a task begun after it:
        // on its own track, not to overlap the nested ones.
        let track = if id == 0 {
            self.thread_track(thread)
        } else {
            self.overlapped_track(thread)
        };
        self.named_slice(track, &name, entry.begin_ns, ns);
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

    /// An instance's slice on `track` from `begin` to `end`, named `name`
    /// (the node's args `args` with it on the node's first slice on the
    /// track), with the flows gathered in `next_flows`/`next_ends`.
    fn instance_slice(
        &mut self,
        key: InstanceKey,
        track: u64,
        (begin, end): (u64, u64),
        (name, head, args): (Name, &Head, &[u8]),
    ) -> Anchor {
        let i = self.track_index(track);
        let t = &mut self.tracks[i];
        self.bytes += write_event(
            &mut self.buf,
            t,
            begin,
            &Event {
                kind: Type::SliceBegin,
                name: Some(name),
                node: Some(u64::from(key.0)),
                instance: Some(key.1),
                head: Some(head),
                first_args: args,
                flows: &self.next_flows,
                ends: &self.next_ends,
                absolute: false,
            },
        ) as u64;
        self.bytes += write_end(&mut self.buf, t, end) as u64;
        self.slices += 1;
        Anchor {
            key,
            track,
            ts: begin,
        }
    }

    /// A slice `name` on `track` from `begin` to `end`, with no args or
    /// flows (host waits, the tracks written at the end).
    fn named_slice(&mut self, track: u64, name: &str, begin: u64, end: u64) {
        let e = Event {
            kind: Type::SliceBegin,
            name: Some(Name::Literal(name)),
            ..Event::end()
        };
        self.event(track, begin, &e);
        let i = self.track_index(track);
        self.bytes += write_end(&mut self.buf, &mut self.tracks[i], end) as u64;
        self.slices += 1;
    }

    /// A zero-length `dependency` marker at `at` that begins (`out`) or
    /// ends a flow.
    fn marker(&mut self, at: Anchor, flow: u64, out: bool) {
        if !self.room(64, 1) {
            return;
        }
        let flow = [flow];
        let (flows, ends): (&[u64], &[u64]) = if out { (&flow, &[]) } else { (&[], &flow) };
        let e = Event {
            kind: Type::Instant,
            name: Some(Name::Interned(DEPENDENCY_IID, "dependency")),
            node: Some(u64::from(at.key.0)),
            instance: Some(at.key.1),
            head: None,
            first_args: &[],
            flows,
            ends,
            absolute: true,
        };
        self.event(at.track, at.ts, &e);
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
    /// device): the first lane whose slices all ended by `start`. With it,
    /// the queue's index in `queues` and the lane.
    fn queue_track(
        &mut self,
        queue: u64,
        (graph, node, instance): (&TaskGraph, &Node, &Instance),
        start: u64,
        end: u64,
    ) -> (u64, usize, usize) {
        let qi = match self.queue_index.get(&queue) {
            Some(&qi) => qi,
            None => {
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
                let qi = self.queues.len();
                self.queues.push(QueueTracks {
                    index: qi as u64,
                    parent,
                    name: match (queue, device_name) {
                        (u64::MAX, Some(d)) => format!("queue ? {d}"),
                        (u64::MAX, None) => "queue ?".to_string(),
                        (q, Some(d)) => format!("queue {q} {d}"),
                        (q, None) => format!("queue {q}"),
                    },
                    lanes: Vec::new(),
                });
                self.queue_index.insert(queue, qi);
                qi
            }
        };
        let q = &mut self.queues[qi];
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
        (uuid, qi, lane)
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
        if let (Some(h), Some(d)) = (host, device) {
            if self.write_laid(key, node, i, h, d) {
                if self.buf.len() >= BUFFER_BYTES {
                    // An error shows at the next flush, which reports it.
                    let _ = self.write_buffer();
                }
                return;
            }
        }
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
        let mut events = match self.nodes.slot(done.node).take() {
            Some(e) if e.revision == node.revision() => e,
            _ => {
                self.next_iid += 2;
                Box::new(NodeEvents::new(node, self.next_iid - 2))
            }
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
            let name = Name::Interned(events.host_iid, &events.host);
            let parts = (name, &events.host_head, &events.args[..]);
            anchor = Some(self.instance_slice(key, track, (begin, end), parts));
            events.host_track = Some((thread, self.track_index(track)));
        }
        if let Some((start, end)) = device {
            let queue = i.queue.or(events.queue).unwrap_or(u64::MAX);
            let (track, qi, lane) = self.queue_track(queue, (graph, node, i), start, end);
            self.begin_event();
            self.next_flows.extend(waiting.out.iter());
            self.next_ends.extend(waiting.into.iter());
            if host.is_some() {
                self.next_ends.push(submit);
                self.flows += 1;
            }
            let name = Name::Interned(events.device_iid, &events.device);
            let parts = (name, &events.device_head, &events.args[..]);
            anchor = Some(self.instance_slice(key, track, (start, end), parts));
            events.device_track = (lane == 0).then(|| (queue, qi, self.track_index(track)));
        }
        *self.nodes.slot(done.node) = Some(events);
        self.seen.insert(key, Seen::Written(anchor));
        if self.buf.len() >= BUFFER_BYTES {
            // An error shows at the next flush, which reports it.
            let _ = self.write_buffer();
        }
    }

    /// [`TraceWriter::write`]'s shortcut for an instance with a task span
    /// and a device slice whose node's last instance went to the same
    /// thread and queue lane 0 (both tracks started, the names interned
    /// there), times not earlier than either track's clock and at most
    /// [`LAID_FLOWS`] flows a slice: its four packets laid out by hand in
    /// one go. Whether it wrote them (else nothing was done).
    fn write_laid(
        &mut self,
        key: InstanceKey,
        node: &Node,
        i: &Instance,
        (begin, end, thread): (u64, u64, u32),
        (start, stop): (u64, u64),
    ) -> bool {
        let Some(Some(events)) = self.nodes.get(key.0) else {
            return false;
        };
        let (Some((t, ti)), Some((q, qi, di))) = (events.host_track, events.device_track) else {
            return false;
        };
        if events.revision != node.revision()
            || t != thread
            || q != i.queue.or(events.queue).unwrap_or(u64::MAX)
            || self.bytes.saturating_add(1024) > self.max_bytes
        {
            return false;
        }
        let queue = &mut self.queues[qi];
        let Some(lane) = queue.lanes.first_mut().filter(|last| **last <= start) else {
            return false;
        };
        let Ok([h, d]) = self.tracks.get_disjoint_mut([ti, di]) else {
            return false;
        };
        let (Ok(hs), Ok(ds)) = (u8::try_from(h.sequence), u8::try_from(d.sequence)) else {
            return false;
        };
        if !(h.started && d.started && hs < 0x80 && ds < 0x80)
            || begin < h.clock
            || start < d.clock
            || h.is_new(events.host_iid)
            || d.is_new(events.device_iid)
        {
            return false;
        }
        // The flows waiting for it, when few enough to lay out.
        let slot = self.seen.get_mut(&key);
        let (out, into) = match &slot {
            Some(Seen::Waiting(w)) => match (w.out.inline(), w.into.inline()) {
                (Some(o), Some(n)) if o.len() + n.len() < LAID_FLOWS => (o, n),
                _ => return false,
            },
            _ => (&[][..], &[][..]),
        };
        let submit = submit_flow(key);
        // The ends: those waiting (two at most), then the submission's.
        let ends = match *into {
            [] => [submit; 3],
            [a] => [a, submit, 0],
            [a, b, ..] => [a, b, submit],
        };
        *lane = (*lane).max(stop);
        let uuid = queue_uuid(queue.index, 0);
        let a = self.buf.room(2 * (SLICE_BEGIN_BYTES + SLICE_END_BYTES));
        let mut n = slice_begin(
            a,
            hs,
            begin - h.clock,
            &events.host_head,
            key.1,
            (&[submit], &[]),
        );
        n += slice_end(&mut a[n..], hs, end - begin);
        h.clock = end;
        n += slice_begin(
            &mut a[n..],
            ds,
            start - d.clock,
            &events.device_head,
            key.1,
            (out, &ends[..into.len() + 1]),
        );
        n += slice_end(&mut a[n..], ds, stop - start);
        d.clock = stop;
        self.buf.commit(n);
        self.bytes += n as u64;
        self.slices += 2;
        self.flows += 1;
        let written = Seen::Written(Some(Anchor {
            key,
            track: uuid,
            ts: start,
        }));
        match slot {
            Some(s) => *s = written,
            None => self.seen.insert(key, written),
        }
        true
    }

    fn write_buffer(&mut self) -> io::Result<()> {
        if let Some(w) = &mut self.inner {
            if !self.buf.is_empty() {
                let r = w.write_all(self.buf.as_slice());
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
mod tests;
