//! One rank's `trace.pftrace` packets rewritten for a trace that holds
//! several ranks: the ids that Perfetto reads as global are made unique
//! per rank, the rank's process is named after the rank, and every other
//! field is passed through byte for byte.
//!
//! Rewritten, wherever the trace proto (`perfetto.protos`) has them:
//!
//! - `TracePacket.trusted_packet_sequence_id`: each rank's sequences get
//!   ids no other rank has. Interned data, incremental state, sequence
//!   clocks and `TracePacketDefaults` are per sequence, so they stay valid.
//! - Track uuids: `TrackDescriptor.uuid` and `.parent_uuid`,
//!   `TrackEvent.track_uuid`, `.extra_counter_track_uuids`,
//!   `.extra_double_counter_track_uuids`, and the same three in
//!   `TrackEventDefaults`.
//! - pids and tids: `ProcessDescriptor.pid`, `ThreadDescriptor.pid` and
//!   `.tid`, in a track descriptor or a packet of their own.
//! - Flow ids: `TrackEvent.flow_ids`, `.terminating_flow_ids` and their
//!   older varint forms.
//!
//! An id keeps its value when no rank written before has used it (a single
//! host's pids and tids are unique while the job runs); otherwise the rank
//! gets a fresh one, the same wherever the id appears in that rank's
//! trace. Zero, which Perfetto reads as "none", stays zero. Flow ids are
//! not remembered (a trace has millions): rank `i`'s are XORed with a
//! constant of its own, a one-to-one change within the rank; two ranks'
//! flows can then collide only by chance, as likely as two hashed flow ids
//! of one trace colliding (syclgraph's are 64-bit hashes).
//!
//! Not rewritten: ids of legacy (`TrackEvent.legacy_event`) events, which
//! syclgraph does not write.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use syclgraph_graph::perfetto::fields::{
    defaults::TRACK_EVENT_DEFAULTS, event, packet, process, thread, track,
};

use crate::wire::{
    self, fields, put_len_field, put_value, put_varint_field, Field, Value, WireError,
};

/// The ids of one kind given out in the merged trace so far.
struct IdSpace<T> {
    used: HashSet<T>,
    next: T,
}

impl<T: Copy + Eq + Hash + From<u8> + std::ops::Add<Output = T>> IdSpace<T> {
    fn new() -> Self {
        IdSpace {
            used: HashSet::new(),
            next: T::from(1),
        }
    }

    /// `wanted` when no one has it yet, else the next free id.
    fn claim(&mut self, wanted: T) -> T {
        if self.used.insert(wanted) {
            return wanted;
        }
        while !self.used.insert(self.next) {
            self.next = self.next + T::from(1);
        }
        self.next
    }
}

/// The ids given out to every rank of one merged trace.
pub struct MergedIds {
    sequences: IdSpace<u32>,
    uuids: IdSpace<u64>,
    /// pids and tids: one space, as a kernel has.
    pids: IdSpace<i64>,
}

impl Default for MergedIds {
    fn default() -> Self {
        MergedIds {
            sequences: IdSpace::new(),
            uuids: IdSpace::new(),
            pids: IdSpace::new(),
        }
    }
}

/// How one rank's process is shown in the merged trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankLabel {
    /// The rank.
    pub rank: u64,
    /// Its host, from `meta.json`.
    pub host: Option<String>,
    /// A `ProcessDescriptor.process_labels` entry added to the rank's
    /// process (the clock note when the ranks span hosts).
    pub note: Option<String>,
}

impl RankLabel {
    /// `rank 3 (host, pid 1234)`: the process's name; `pid` is the rank's
    /// own, from its trace.
    pub fn process_name(&self, pid: Option<i64>) -> String {
        let mut parts = Vec::new();
        if let Some(host) = &self.host {
            parts.push(host.clone());
        }
        if let Some(pid) = pid {
            parts.push(format!("pid {pid}"));
        }
        if parts.is_empty() {
            format!("rank {}", self.rank)
        } else {
            format!("rank {} ({})", self.rank, parts.join(", "))
        }
    }
}

/// Rewrites the packets of one rank's trace.
pub struct RankRewriter {
    label: RankLabel,
    flow_salt: u64,
    sequences: HashMap<u32, u32>,
    uuids: HashMap<u64, u64>,
    pids: HashMap<i64, i64>,
}

/// A 64-bit mix (splitmix64's finalizer): the per-rank flow constant.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl RankRewriter {
    /// The rewriter of the `index`-th rank written into the merged trace
    /// (0 for the first: its flow ids stay as they are).
    pub fn new(index: u64, label: RankLabel) -> RankRewriter {
        RankRewriter {
            label,
            flow_salt: if index == 0 { 0 } else { mix(index) },
            sequences: HashMap::new(),
            uuids: HashMap::new(),
            pids: HashMap::new(),
        }
    }

    fn sequence(&mut self, ids: &mut MergedIds, old: u64) -> u64 {
        let Ok(old) = u32::try_from(old) else {
            return old;
        };
        if old == 0 {
            return 0;
        }
        u64::from(
            *self
                .sequences
                .entry(old)
                .or_insert_with(|| ids.sequences.claim(old)),
        )
    }

    fn uuid(&mut self, ids: &mut MergedIds, old: u64) -> u64 {
        if old == 0 {
            return 0;
        }
        *self
            .uuids
            .entry(old)
            .or_insert_with(|| ids.uuids.claim(old))
    }

    fn pid(&mut self, ids: &mut MergedIds, old: i64) -> i64 {
        if old == 0 {
            return 0;
        }
        *self.pids.entry(old).or_insert_with(|| ids.pids.claim(old))
    }

    /// `old` as the rank's `id` is in the merged trace.
    fn map(&mut self, ids: &mut MergedIds, id: Id, old: u64) -> u64 {
        match id {
            Id::Sequence => self.sequence(ids, old),
            Id::Uuid => self.uuid(ids, old),
            Id::Flow => old ^ self.flow_salt,
            // An int32 on the wire: negative ones are sign-extended.
            Id::Pid => self.pid(ids, old as i64 as i32 as i64) as u64,
            Id::Tid => self.pid(ids, old as i64) as u64,
        }
    }

    /// Appends to `out` the packet `packet` (a `TracePacket`'s bytes,
    /// without its `Trace.packet` key and length) rewritten.
    pub fn rewrite_packet(
        &mut self,
        ids: &mut MergedIds,
        packet: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        self.rewrite(ids, Message::Packet, packet, out)
    }

    /// Appends `message`, a `kind`, rewritten: its ids mapped, the
    /// messages inside it that hold ids rewritten in turn, a process named
    /// after the rank, every other field as it was.
    fn rewrite(
        &mut self,
        ids: &mut MergedIds,
        kind: Message,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), WireError> {
        let process = kind.process_pid(message)?;
        for field in fields(message) {
            let field = field?;
            if let (Some(child), Value::Len(inner)) = (kind.child(field.number), field.value) {
                let mut body = Vec::with_capacity(inner.len() + 16);
                self.rewrite(ids, child, inner, &mut body)?;
                put_len_field(out, field.number, &body);
            } else if let Some(id) = kind.id(field.number) {
                let fixed = matches!(field.number, event::FLOW_IDS | event::TERMINATING_FLOW_IDS);
                map_ids(out, field, fixed, |v| self.map(ids, id, v))?;
            } else if process.is_none() || !kind.is_name(field.number) {
                out.extend_from_slice(field.raw);
            }
        }
        if let Some(pid) = process {
            let name = self.label.process_name(pid);
            if kind == Message::Process {
                put_len_field(out, process::PROCESS_NAME, name.as_bytes());
                if let Some(note) = &self.label.note {
                    put_len_field(out, process::PROCESS_LABELS, note.as_bytes());
                }
            } else {
                put_len_field(out, track::NAME, name.as_bytes());
            }
        }
        Ok(())
    }
}

/// The messages that hold ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Message {
    Packet,
    /// `TrackEvent`, and `TrackEventDefaults` (the same field numbers).
    TrackEvent,
    PacketDefaults,
    TrackDescriptor,
    Process,
    Thread,
}

/// The kinds of id rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Id {
    Sequence,
    Uuid,
    Flow,
    Pid,
    Tid,
}

impl Message {
    /// The message field `number` of a `self` holds, when it holds ids.
    fn child(self, number: u32) -> Option<Message> {
        use Message::*;
        match (self, number) {
            (Packet, packet::TRACK_EVENT) | (PacketDefaults, TRACK_EVENT_DEFAULTS) => {
                Some(TrackEvent)
            }
            (Packet, packet::TRACE_PACKET_DEFAULTS) => Some(PacketDefaults),
            (Packet, packet::TRACK_DESCRIPTOR) => Some(TrackDescriptor),
            (Packet, packet::PROCESS_DESCRIPTOR) | (TrackDescriptor, track::PROCESS) => {
                Some(Process)
            }
            (Packet, packet::THREAD_DESCRIPTOR) | (TrackDescriptor, track::THREAD) => Some(Thread),
            _ => None,
        }
    }

    /// The id field `number` of a `self` is.
    fn id(self, number: u32) -> Option<Id> {
        use Message::*;
        match (self, number) {
            (Packet, packet::TRUSTED_PACKET_SEQUENCE_ID) => Some(Id::Sequence),
            (
                TrackEvent,
                event::TRACK_UUID
                | event::EXTRA_COUNTER_TRACK_UUIDS
                | event::EXTRA_DOUBLE_COUNTER_TRACK_UUIDS,
            )
            | (TrackDescriptor, track::UUID | track::PARENT_UUID) => Some(Id::Uuid),
            (
                TrackEvent,
                event::FLOW_IDS
                | event::TERMINATING_FLOW_IDS
                | event::FLOW_IDS_OLD
                | event::TERMINATING_FLOW_IDS_OLD,
            ) => Some(Id::Flow),
            (Process, process::PID) | (Thread, thread::PID) => Some(Id::Pid),
            (Thread, thread::TID) => Some(Id::Tid),
            _ => None,
        }
    }

    /// True for the name fields a process track or descriptor gets anew.
    fn is_name(self, number: u32) -> bool {
        match self {
            Message::TrackDescriptor => {
                matches!(
                    number,
                    track::NAME | track::STATIC_NAME | track::ATRACE_NAME
                )
            }
            Message::Process => number == process::PROCESS_NAME,
            _ => false,
        }
    }

    /// For a process descriptor, or a track descriptor of a process: the
    /// rank's own pid (`Some(None)` when it has none); else `None`.
    fn process_pid(self, message: &[u8]) -> Result<Option<Option<i64>>, WireError> {
        match self {
            Message::Process => pid_of(message).map(Some),
            Message::TrackDescriptor => {
                let mut found = None;
                for field in fields(message) {
                    let field = field?;
                    if let (track::PROCESS, Value::Len(p)) = (field.number, field.value) {
                        found = Some(pid_of(p)?);
                    }
                }
                Ok(found)
            }
            _ => Ok(None),
        }
    }
}

/// The pid a `ProcessDescriptor` gives, as the rank had it.
fn pid_of(message: &[u8]) -> Result<Option<i64>, WireError> {
    let mut pid = None;
    for field in fields(message) {
        let field = field?;
        if let (process::PID, Value::Varint(v)) = (field.number, field.value) {
            pid = Some(v as i64 as i32 as i64);
        }
    }
    Ok(pid)
}

/// Appends `field`, an id or a repeated id field (one value, or packed:
/// fixed64 ones when `fixed`, else varints), with every id mapped by
/// `map`; its wire type is kept.
fn map_ids(
    out: &mut Vec<u8>,
    field: Field<'_>,
    fixed: bool,
    mut map: impl FnMut(u64) -> u64,
) -> Result<(), WireError> {
    match field.value {
        Value::Varint(v) => put_varint_field(out, field.number, map(v)),
        Value::Fixed64(v) => put_value(out, field.number, Value::Fixed64(map(v))),
        Value::Len(packed) => {
            let mut body = Vec::with_capacity(packed.len() + 8);
            if fixed {
                if packed.len() % 8 != 0 {
                    return Err(WireError("packed fixed64 ids are cut"));
                }
                for chunk in packed.chunks_exact(8) {
                    let v = u64::from_le_bytes(chunk.try_into().unwrap());
                    body.extend_from_slice(&map(v).to_le_bytes());
                }
            } else {
                let mut pos = 0;
                while pos < packed.len() {
                    let v = wire::read_varint(packed, &mut pos)?;
                    wire::put_varint(&mut body, map(v));
                }
            }
            put_len_field(out, field.number, &body);
        }
        Value::Fixed32(_) => out.extend_from_slice(field.raw),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{put_fixed64_field, put_key, put_varint};

    fn msg(build: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut m = Vec::new();
        build(&mut m);
        m
    }

    /// A rank's trace in miniature: the process track, a thread track, a
    /// child track, defaults, and an event with flows (one packed).
    fn packets(pid: u64) -> Vec<Vec<u8>> {
        let process = msg(|m| {
            put_varint_field(m, process::PID, pid);
            put_len_field(m, process::PROCESS_NAME, b"app");
            put_len_field(m, 2, b"./app --size 4"); // cmdline: passed through
        });
        let thread = msg(|m| {
            put_varint_field(m, thread::PID, pid);
            put_varint_field(m, thread::TID, pid + 1);
        });
        let with_seq = |body: &dyn Fn(&mut Vec<u8>)| {
            msg(|m| {
                put_varint_field(m, packet::TRUSTED_PACKET_SEQUENCE_ID, 1);
                body(m);
            })
        };
        vec![
            with_seq(&|m| {
                put_len_field(
                    m,
                    packet::TRACK_DESCRIPTOR,
                    &msg(|d| {
                        put_varint_field(d, track::UUID, 1);
                        put_len_field(d, track::NAME, b"app (pid)");
                        put_len_field(d, track::PROCESS, &process);
                    }),
                )
            }),
            with_seq(&|m| {
                put_len_field(
                    m,
                    packet::TRACK_DESCRIPTOR,
                    &msg(|d| {
                        put_varint_field(d, track::UUID, 3);
                        put_varint_field(d, track::PARENT_UUID, 1);
                        put_len_field(d, track::THREAD, &thread);
                    }),
                )
            }),
            with_seq(&|m| {
                put_len_field(
                    m,
                    packet::TRACE_PACKET_DEFAULTS,
                    &msg(|d| {
                        put_varint_field(d, 58, 3);
                        put_len_field(
                            d,
                            TRACK_EVENT_DEFAULTS,
                            &msg(|t| put_varint_field(t, event::TRACK_UUID, 3)),
                        );
                    }),
                )
            }),
            with_seq(&|m| {
                put_varint_field(m, 8, 123_456); // timestamp
                put_len_field(
                    m,
                    packet::TRACK_EVENT,
                    &msg(|e| {
                        put_varint_field(e, 9, 1);
                        put_varint_field(e, event::TRACK_UUID, 3);
                        put_fixed64_field(e, event::FLOW_IDS, 0xdead);
                        let mut packed = Vec::new();
                        packed.extend_from_slice(&7u64.to_le_bytes());
                        packed.extend_from_slice(&8u64.to_le_bytes());
                        put_len_field(e, event::TERMINATING_FLOW_IDS, &packed);
                        put_varint_field(e, 10, 5); // name_iid
                    }),
                )
            }),
        ]
    }

    /// Every field of `packet` flattened: (path of field numbers, value).
    fn flat(packet: &[u8]) -> Vec<(Vec<u32>, String)> {
        fn go(buf: &[u8], path: &[u32], out: &mut Vec<(Vec<u32>, String)>) {
            for f in fields(buf) {
                let f = f.unwrap();
                let mut p = path.to_vec();
                p.push(f.number);
                // The messages these tests look inside.
                let nested: [&[u32]; 6] = [&[11], &[60], &[59], &[59, 11], &[60, 3], &[60, 4]];
                match f.value {
                    Value::Len(m) if nested.contains(&p.as_slice()) => go(m, &p, out),
                    Value::Len(m) => out.push((p, String::from_utf8_lossy(m).into_owned())),
                    Value::Varint(v) | Value::Fixed64(v) => out.push((p, v.to_string())),
                    Value::Fixed32(v) => out.push((p, v.to_string())),
                }
            }
        }
        let mut out = Vec::new();
        go(packet, &[], &mut out);
        out
    }

    fn rewrite(r: &mut RankRewriter, ids: &mut MergedIds, packets: &[Vec<u8>]) -> Vec<Vec<u8>> {
        packets
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                r.rewrite_packet(ids, p, &mut out).unwrap();
                out
            })
            .collect()
    }

    fn label(rank: u64) -> RankLabel {
        RankLabel {
            rank,
            host: Some("h".into()),
            note: None,
        }
    }

    fn values(packets: &[Vec<u8>], path: &[u32]) -> Vec<String> {
        packets
            .iter()
            .flat_map(|p| flat(p))
            .filter(|(p, _)| p == path)
            .map(|(_, v)| v)
            .collect()
    }

    #[test]
    fn two_ranks_with_the_same_ids_get_disjoint_ones_each_consistent() {
        let mut ids = MergedIds::default();
        let first = rewrite(&mut RankRewriter::new(0, label(0)), &mut ids, &packets(100));
        let second = rewrite(&mut RankRewriter::new(1, label(5)), &mut ids, &packets(100));
        // The first rank keeps its ids; its process is named after the rank.
        assert_eq!(values(&first, &[10]), ["1"; 4]);
        assert_eq!(values(&first, &[60, 1]), ["1", "3"]);
        assert_eq!(values(&first, &[60, 2]), ["rank 0 (h, pid 100)"]);
        assert_eq!(values(&first, &[60, 3, 6]), ["rank 0 (h, pid 100)"]);
        assert_eq!(values(&first, &[60, 3, 2]), ["./app --size 4"]);
        assert_eq!(values(&first, &[11, 47]), ["57005"]);
        // The second: new sequence, uuids, pid and tid, used consistently.
        let seq = values(&second, &[10]);
        assert!(seq.iter().all(|s| *s == seq[0]) && seq[0] != "1", "{seq:?}");
        let uuids = values(&second, &[60, 1]);
        assert!(!uuids.contains(&"1".to_string()) && !uuids.contains(&"3".to_string()));
        assert_eq!(values(&second, &[60, 5]), [uuids[0].clone()], "parent");
        assert_eq!(
            values(&second, &[11, 11]),
            [uuids[1].clone()],
            "event track"
        );
        assert_eq!(
            values(&second, &[59, 11, 11]),
            [uuids[1].clone()],
            "defaults"
        );
        let pid = values(&second, &[60, 3, 1]);
        assert_ne!(pid, ["100"]);
        assert_eq!(values(&second, &[60, 4, 1]), pid, "the thread's pid");
        assert_ne!(values(&second, &[60, 4, 2]), ["101"]);
        assert_eq!(
            values(&second, &[60, 2]),
            ["rank 5 (h, pid 100)"],
            "the rank's own pid"
        );
        assert_ne!(values(&second, &[11, 47]), ["57005"]);
        // Everything else as it was: timestamp, type, name iid, clock.
        assert_eq!(values(&second, &[8]), ["123456"]);
        assert_eq!(values(&second, &[11, 9]), ["1"]);
        assert_eq!(values(&second, &[11, 10]), ["5"]);
        assert_eq!(values(&second, &[59, 58]), ["3"]);
    }

    #[test]
    fn packed_flow_ids_are_rewritten_in_place_and_unknown_fields_pass_through() {
        let mut ids = MergedIds::default();
        let mut r = RankRewriter::new(2, label(2));
        let mut packed = Vec::new();
        let mut event = Vec::new();
        packed.extend_from_slice(&7u64.to_le_bytes());
        packed.extend_from_slice(&8u64.to_le_bytes());
        put_len_field(&mut event, event::TERMINATING_FLOW_IDS, &packed);
        put_key(&mut event, 999, crate::wire::FIXED32);
        event.extend_from_slice(&[1, 2, 3, 4]);
        let mut packet = Vec::new();
        put_len_field(&mut packet, packet::TRACK_EVENT, &event);
        put_len_field(&mut packet, 12, b"\x12\x03abc"); // interned data, as is
        let mut out = Vec::new();
        r.rewrite_packet(&mut ids, &packet, &mut out).unwrap();
        let got: Vec<Field> = fields(&out).map(Result::unwrap).collect();
        assert_eq!(got[1].raw, &packet[packet.len() - 7..]);
        let Value::Len(ev) = got[0].value else {
            panic!()
        };
        let ev: Vec<Field> = fields(ev).map(Result::unwrap).collect();
        let Value::Len(flows) = ev[0].value else {
            panic!()
        };
        let salt = mix(2);
        let mut want = Vec::new();
        want.extend_from_slice(&(7 ^ salt).to_le_bytes());
        want.extend_from_slice(&(8 ^ salt).to_le_bytes());
        assert_eq!(flows, &want[..]);
        let mut unknown = Vec::new();
        put_varint(&mut unknown, (999 << 3) | 5);
        unknown.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(ev[1].raw, &unknown[..], "an unknown field, byte for byte");
    }

    #[test]
    fn any_bytes_are_rewritten_or_refused_never_a_panic() {
        let mut ids = MergedIds::default();
        let mut r = RankRewriter::new(1, label(1));
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // Real packets with bytes changed, and plain noise.
        let base: Vec<u8> = packets(7).concat();
        for round in 0..20_000 {
            let mut bytes = if round % 2 == 0 {
                base.clone()
            } else {
                (0..next() % 64).map(|_| next() as u8).collect()
            };
            for _ in 0..(next() % 4) {
                if !bytes.is_empty() {
                    let i = (next() as usize) % bytes.len();
                    bytes[i] = next() as u8;
                }
            }
            let cut = (next() as usize) % (bytes.len() + 1);
            let mut out = Vec::new();
            let _ = r.rewrite_packet(&mut ids, &bytes[..cut], &mut out);
        }
    }

    #[test]
    fn a_broken_packet_is_an_error() {
        let mut ids = MergedIds::default();
        let mut r = RankRewriter::new(0, label(0));
        let mut out = Vec::new();
        assert!(r
            .rewrite_packet(&mut ids, &[0x5a, 0x09, 0x08], &mut out)
            .is_err());
    }
}
