//! The protobuf encoding of `trace.pftrace`: the whole-trace packets
//! (clock snapshot, track descriptors: prost messages, written once each)
//! and the hand-framed packets written for every slice on a track's own
//! sequence, in Perfetto's `Trace` wire format. What goes on which track
//! and sequence is decided in [`super`]; this module only turns it into
//! bytes. The field numbers are those of [`super::fields`];
//! `tests/scripts/check_pftrace.py` decodes the result with Perfetto's own
//! compiled definitions.

use super::fields::{
    annotation, clock_snapshot, defaults, event, interned, packet,
    sequence_flags::{INCREMENTAL_STATE_CLEARED, NEEDS_INCREMENTAL_STATE},
    TRACE_PACKET,
};
use super::out::Out;
use super::protos as pb;
use crate::varint::put_varint;

/// [`put_varint`] with the numbers of one to four bytes (deltas, and
/// instance numbers up to 2^28) written without its loop: a run's
/// instance numbers pass 2^14 early, and the loop cost ~36 instructions
/// a number there.
#[inline(always)]
fn put_short_varint(a: &mut [u8], n: usize, v: u64) -> usize {
    if v < 0x80 {
        a[n] = v as u8;
        n + 1
    } else if v < 0x4000 {
        a[n..n + 2].copy_from_slice(&[v as u8 | 0x80, (v >> 7) as u8]);
        n + 2
    } else if v < 1 << 21 {
        a[n..n + 3].copy_from_slice(&[v as u8 | 0x80, (v >> 7) as u8 | 0x80, (v >> 14) as u8]);
        n + 3
    } else if v < 1 << 28 {
        a[n..n + 4].copy_from_slice(&[
            v as u8 | 0x80,
            (v >> 7) as u8 | 0x80,
            (v >> 14) as u8 | 0x80,
            (v >> 21) as u8,
        ]);
        n + 4
    } else {
        put_varint(a, n, v)
    }
}

/// `BUILTIN_CLOCK_MONOTONIC`.
pub const CLOCK_MONOTONIC: u32 = pb::BuiltinClock::Monotonic as u32;
/// `BUILTIN_CLOCK_BOOTTIME`.
pub const CLOCK_BOOTTIME: u32 = pb::BuiltinClock::Boottime as u32;

/// The sequence of the whole-trace packets (clock snapshot, track
/// descriptors); each track's events are on a sequence of their own,
/// numbered from 2.
pub(super) const GLOBAL_SEQUENCE: u32 = 1;

/// The sequence-scoped clock (Perfetto reserves ids 64..127 for them) of
/// every track sequence: incremental, in ns, so a packet's timestamp is
/// the delta from the previous one on that clock.
pub(super) const INCREMENTAL_CLOCK: u32 = 64;

/// A packet with the fields every whole-trace packet has.
pub(super) fn global_packet(data: Option<pb::trace_packet::Data>) -> pb::TracePacket {
    pb::TracePacket {
        optional_trusted_packet_sequence_id: Some(
            pb::trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(
                GLOBAL_SEQUENCE,
            ),
        ),
        data,
        ..Default::default()
    }
}

/// A track's descriptor (on the whole-trace sequence).
pub(super) fn descriptor(uuid: u64, parent: Option<u64>, name: String) -> pb::TracePacket {
    global_packet(Some(pb::trace_packet::Data::TrackDescriptor(
        pb::TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: parent,
            process: None,
            static_or_dynamic_name: Some(pb::track_descriptor::StaticOrDynamicName::Name(name)),
        },
    )))
}

/// A protobuf writer over a byte slice with room enough for what is
/// written (see [`Cursor::append`]): plain stores with no capacity checks,
/// what makes a slice's packets cheap (a `Vec::push` per byte cost about
/// 300 instructions a packet).
pub(super) struct Cursor<'a> {
    out: &'a mut [u8],
    len: usize,
}

/// An embedded message being written: where its one-byte length
/// placeholder is. Close it with [`Cursor::close`] (inner messages first).
#[must_use]
pub(super) struct Open(usize);

impl Cursor<'_> {
    /// Appends to `buf` what `f` writes, at most `max` bytes (more
    /// panics), in place; returns the bytes appended.
    #[inline(always)]
    pub(super) fn append(buf: &mut Out, max: usize, f: impl FnOnce(&mut Cursor)) -> usize {
        let mut c = Cursor {
            out: &mut buf.room(max)[..max],
            len: 0,
        };
        f(&mut c);
        let len = c.len;
        buf.commit(len);
        len
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.out[self.len] = b;
        self.len += 1;
    }

    /// Appends `value` as a protobuf varint.
    #[inline(always)]
    pub(super) fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    #[inline(always)]
    fn key(&mut self, field: u32, wire: u32) {
        self.varint(u64::from(field << 3 | wire));
    }

    /// Appends varint field `field` = `value`.
    #[inline(always)]
    pub(super) fn uint(&mut self, field: u32, value: u64) {
        self.key(field, 0);
        self.varint(value);
    }

    /// Appends raw bytes (fields encoded before).
    #[inline(always)]
    pub(super) fn raw(&mut self, bytes: &[u8]) {
        self.out[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Appends length-delimited field `field` = `bytes`.
    #[inline(always)]
    pub(super) fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, 2);
        self.varint(bytes.len() as u64);
        self.raw(bytes);
    }

    /// Appends fixed64 fields `field` = each of `values` (unpacked, as
    /// Perfetto's SDK writes `repeated fixed64 flow_ids`).
    #[inline(always)]
    pub(super) fn fixed64s(&mut self, field: u32, values: &[u64]) {
        for v in values {
            self.key(field, 1);
            self.raw(&v.to_le_bytes());
        }
    }

    /// Starts length-delimited field `field`, whose length is filled in by
    /// [`Cursor::close`]: one byte is kept for it (most messages are
    /// shorter than 128 bytes), so nothing is written twice.
    #[inline(always)]
    pub(super) fn open(&mut self, field: u32) -> Open {
        self.key(field, 2);
        self.byte(0);
        Open(self.len - 1)
    }

    /// Fills in the length of the message `o` opened; a length of 128
    /// bytes or more takes more than the byte kept for it, and the message
    /// is moved up (room for that is part of [`MESSAGE_SLACK`]).
    #[inline(always)]
    pub(super) fn close(&mut self, o: Open) {
        let len = self.len - o.0 - 1;
        if len < 0x80 {
            self.out[o.0] = len as u8;
        } else {
            self.widen(o.0, len);
        }
    }

    #[cold]
    fn widen(&mut self, at: usize, len: usize) {
        let mut varint = [0u8; 10];
        let n = put_varint(&mut varint, 0, len as u64);
        self.out.copy_within(at + 1..at + 1 + len, at + n);
        self.out[at..at + n].copy_from_slice(&varint[..n]);
        self.len += n - 1;
    }

    /// One `DebugAnnotation` (field 4 of `TrackEvent`) with an interned
    /// name and a number.
    #[inline(always)]
    pub(super) fn uint_arg(&mut self, name_iid: u64, value: u64) {
        let o = self.open(event::DEBUG_ANNOTATIONS);
        self.uint(annotation::NAME_IID, name_iid);
        self.uint(annotation::UINT_VALUE, value);
        self.close(o);
    }

    /// One `DebugAnnotation` with an interned name and a string.
    pub(super) fn string_arg(&mut self, name_iid: u64, value: &str) {
        let o = self.open(event::DEBUG_ANNOTATIONS);
        self.uint(annotation::NAME_IID, name_iid);
        self.bytes(annotation::STRING_VALUE, value.as_bytes());
        self.close(o);
    }

    /// An `InternedData` entry (`EventName` or `DebugAnnotationName`:
    /// both are `{iid = 1, name = 2}`) in field `field`.
    pub(super) fn interned_name(&mut self, field: u32, iid: u64, name: &str) {
        let o = self.open(field);
        self.uint(interned::IID, iid);
        self.bytes(interned::NAME, name.as_bytes());
        self.close(o);
    }
}

/// Bytes enough for a message's fields beyond its strings and nested
/// parts: keys, varints (10 bytes at most), and the widening of up to
/// three enclosing lengths.
pub(super) const MESSAGE_SLACK: usize = 32;

/// The packet that starts a track's sequence `sequence` at `ts`: it clears
/// the sequence's incremental state, sets its defaults (the incremental
/// clock and the track `uuid`), interns the arg names `arg_names` (iid =
/// position + 1), and is a clock snapshot saying that the sequence's
/// incremental clock reads `ts` when CLOCK_MONOTONIC does.
pub(super) fn sequence_start(
    buf: &mut Out,
    sequence: u32,
    uuid: u64,
    ts: u64,
    arg_names: &[&str],
) -> usize {
    use clock_snapshot::{CLOCKS, CLOCK_ID, IS_INCREMENTAL, TIMESTAMP as CLOCK_TIMESTAMP};
    let max = 8 * MESSAGE_SLACK
        + arg_names
            .iter()
            .map(|n| n.len() + MESSAGE_SLACK)
            .sum::<usize>();
    Cursor::append(buf, max, |c| {
        let p = c.open(TRACE_PACKET);
        c.uint(packet::TRUSTED_PACKET_SEQUENCE_ID, u64::from(sequence));
        c.uint(packet::SEQUENCE_FLAGS, u64::from(INCREMENTAL_STATE_CLEARED));
        let d = c.open(packet::TRACE_PACKET_DEFAULTS);
        c.uint(defaults::TIMESTAMP_CLOCK_ID, u64::from(INCREMENTAL_CLOCK));
        let e = c.open(defaults::TRACK_EVENT_DEFAULTS);
        c.uint(event::TRACK_UUID, uuid);
        c.close(e);
        c.close(d);
        let i = c.open(packet::INTERNED_DATA);
        for (n, name) in arg_names.iter().enumerate() {
            c.interned_name(interned::DEBUG_ANNOTATION_NAMES, n as u64 + 1, name);
        }
        c.close(i);
        let s = c.open(packet::CLOCK_SNAPSHOT);
        let k = c.open(CLOCKS);
        c.uint(CLOCK_ID, u64::from(INCREMENTAL_CLOCK));
        c.uint(CLOCK_TIMESTAMP, ts);
        c.uint(IS_INCREMENTAL, 1);
        c.close(k);
        let k = c.open(CLOCKS);
        c.uint(CLOCK_ID, u64::from(CLOCK_MONOTONIC));
        c.uint(CLOCK_TIMESTAMP, ts);
        c.close(k);
        c.close(s);
        c.close(p);
    })
}

/// Appends one whole-trace packet (field 1 of `Trace`, length-delimited,
/// by prost); returns the bytes appended.
pub(super) fn push_message(buf: &mut Out, p: &pb::TracePacket) -> usize {
    let mut bytes = Vec::new();
    prost::encoding::message::encode(TRACE_PACKET, p, &mut bytes);
    buf.extend_from_slice(&bytes);
    bytes.len()
}

/// The most bytes [`slice_end`] writes.
pub(super) const SLICE_END_BYTES: usize = 24;

/// Writes at the start of `a` a slice end at `delta` ns after the
/// previous event on sequence `sequence` (below 128) of a track whose
/// defaults give its clock and track: the packet [`super`]'s `write_event`
/// writes for it, laid out by hand (a third of a track's packets are
/// these); returns its length.
#[inline(always)]
pub(super) fn slice_end(a: &mut [u8], sequence: u8, delta: u64) -> usize {
    use packet::{SEQUENCE_FLAGS, TIMESTAMP, TRACK_EVENT, TRUSTED_PACKET_SEQUENCE_ID as SEQUENCE};
    let key = |field: u32, wire: u32| (field << 3 | wire) as u8;
    let a = &mut a[..SLICE_END_BYTES];
    a[0] = key(TRACE_PACKET, 2);
    a[2] = key(TIMESTAMP, 0);
    let mut n = put_short_varint(a, 3, delta);
    a[n..n + 8].copy_from_slice(&[
        key(SEQUENCE, 0),
        sequence,
        key(SEQUENCE_FLAGS, 0),
        NEEDS_INCREMENTAL_STATE as u8,
        key(TRACK_EVENT, 2),
        2,
        key(event::TYPE, 0),
        pb::track_event::Type::SliceEnd as u8,
    ]);
    n += 8;
    a[1] = (n - 2) as u8;
    n
}

/// The bytes a [`Head`] holds at most.
const HEAD_BYTES: usize = 32;

/// The fixed part of a node's slice begins on a track whose first slice
/// of the node was written: the track event's type, interned name and
/// `node` arg, encoded once per node (see [`slice_begin`]), in an array
/// of fixed size (copied whole, with no `memcpy` call).
#[derive(Clone, Copy, Debug)]
pub(super) struct Head {
    bytes: [u8; HEAD_BYTES],
    len: usize,
}

/// The [`Head`] of a node's slices named `name_iid`.
pub(super) fn begin_head(name_iid: u64, node: u64) -> Head {
    let mut out = Out::with_room(3 * MESSAGE_SLACK);
    Cursor::append(&mut out, 3 * MESSAGE_SLACK, |c| {
        c.uint(event::TYPE, pb::track_event::Type::SliceBegin as u64);
        c.uint(event::NAME_IID, name_iid);
        c.uint_arg(super::ARG_NODE, node);
    });
    let mut head = Head {
        bytes: [0; HEAD_BYTES],
        len: out.len(),
    };
    // Type (2), name (11 at most) and the node arg (5 + 10 at most).
    head.bytes[..out.len()].copy_from_slice(out.as_slice());
    head
}

/// The most flows [`slice_begin`] lays out.
pub(super) const LAID_FLOWS: usize = 4;

/// The most bytes [`slice_begin`] writes (what it reads past its head
/// included).
pub(super) const SLICE_BEGIN_BYTES: usize = 128;

/// Writes at the start of `a` a slice begin at `delta` ns after the
/// previous event on sequence `sequence` (below 128), `head` then the
/// `instance` arg and the flows (at most [`LAID_FLOWS`] in all): the
/// packet [`super`]'s `write_event` writes for a node's slice when its
/// name is already interned, laid out by hand; returns its length.
#[inline(always)]
pub(super) fn slice_begin(
    a: &mut [u8],
    sequence: u8,
    delta: u64,
    head: &Head,
    instance: u64,
    (flows, ends): (&[u64], &[u64]),
) -> usize {
    use packet::{SEQUENCE_FLAGS, TIMESTAMP, TRACK_EVENT, TRUSTED_PACKET_SEQUENCE_ID as SEQUENCE};
    let key = |field: u32, wire: u32| (field << 3 | wire) as u8;
    let a = &mut a[..SLICE_BEGIN_BYTES];
    a[0] = key(TRACE_PACKET, 2);
    a[2] = key(TIMESTAMP, 0);
    let mut n = put_short_varint(a, 3, delta);
    a[n..n + 5].copy_from_slice(&[
        key(SEQUENCE, 0),
        sequence,
        key(SEQUENCE_FLAGS, 0),
        NEEDS_INCREMENTAL_STATE as u8,
        key(TRACK_EVENT, 2),
    ]);
    n += 6;
    let event = n;
    // The whole array (what is past its length is written over next).
    a[n..n + HEAD_BYTES].copy_from_slice(&head.bytes);
    n += head.len;
    // The `instance` arg: a DebugAnnotation {name_iid, uint_value}, its
    // length (the 0) set once the value is written. (One slice of bytes
    // rather than a byte at a time: one bounds check, not four.)
    a[n..n + 5].copy_from_slice(&[
        key(event::DEBUG_ANNOTATIONS, 2),
        0,
        key(annotation::NAME_IID, 0),
        super::ARG_INSTANCE as u8,
        key(annotation::UINT_VALUE, 0),
    ]);
    let arg = n + 2;
    n = put_short_varint(a, n + 5, instance);
    a[arg - 1] = (n - arg) as u8;
    for (field, ids) in [
        (event::FLOW_IDS, flows),
        (event::TERMINATING_FLOW_IDS, ends),
    ] {
        let k = field << 3 | 1;
        const _: () = assert!(event::FLOW_IDS >= 16 && event::TERMINATING_FLOW_IDS < 2048);
        let k = [(k as u8 & 0x7f) | 0x80, (k >> 7) as u8];
        for id in ids {
            // Key and id made whole first: one bounds check per id.
            let mut field = [0u8; 10];
            field[..2].copy_from_slice(&k);
            field[2..].copy_from_slice(&id.to_le_bytes());
            a[n..n + 10].copy_from_slice(&field);
            n += 10;
        }
    }
    a[event - 1] = (n - event) as u8;
    a[1] = (n - 2) as u8;
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_varints_are_the_loop_s_bytes() {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([0, u64::MAX, 300, 20_000, 2_097_151, 2_097_152]);
        for v in values {
            let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
            let n = put_short_varint(&mut a, 3, v);
            let m = put_varint(&mut b, 3, v);
            assert_eq!((n, a), (m, b), "{v}");
        }
    }
}
