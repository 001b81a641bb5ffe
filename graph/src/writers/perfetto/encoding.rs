//! The protobuf encoding of `trace.pftrace`: the packets every part of the
//! trace is made of (track descriptors, debug annotations) and the
//! hand-framed track events written for every slice, in Perfetto's
//! `Trace` wire format. What goes on which track is decided in
//! [`super`]; this module only turns it into bytes.

use prost::Message;

use super::protos as pb;
use pb::debug_annotation::{NameField as ArgName, Value};
use pb::track_event::Type;

/// `BUILTIN_CLOCK_MONOTONIC`.
pub const CLOCK_MONOTONIC: u32 = pb::BuiltinClock::Monotonic as u32;
/// `BUILTIN_CLOCK_BOOTTIME`.
pub const CLOCK_BOOTTIME: u32 = pb::BuiltinClock::Boottime as u32;

/// The one packet sequence this writer makes.
pub(super) const SEQUENCE: u32 = 1;

/// `Trace.packet`'s field number: the file is a `Trace` message.
pub(super) const PACKET_FIELD: u32 = 1;

/// `TracePacket.timestamp`'s field number.
pub(super) const TIMESTAMP: u32 = 8;

/// `SEQ_INCREMENTAL_STATE_CLEARED`.
pub(super) const STATE_CLEARED: u32 = 1;

/// A packet with the fields every packet of this writer has.
pub(super) fn packet(data: Option<pb::trace_packet::Data>) -> pb::TracePacket {
    pb::TracePacket {
        timestamp: None,
        timestamp_clock_id: None,
        sequence_flags: None,
        optional_trusted_packet_sequence_id: Some(
            pb::trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(SEQUENCE),
        ),
        data,
    }
}

pub(super) fn descriptor(uuid: u64, parent: Option<u64>, name: String) -> pb::TracePacket {
    packet(Some(pb::trace_packet::Data::TrackDescriptor(
        pb::TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: parent,
            process: None,
            static_or_dynamic_name: Some(pb::track_descriptor::StaticOrDynamicName::Name(name)),
        },
    )))
}

pub(super) fn arg(name: &str, value: Value) -> pb::DebugAnnotation {
    pb::DebugAnnotation {
        name_field: Some(ArgName::Name(name.to_string())),
        value: Some(value),
    }
}

/// Appends to `buf` a packet at `ts` (`head`: the packet's own fields)
/// whose event is `event` followed by `tail` (a node's encoded name and
/// args); returns the bytes appended. prost encodes every part; the two
/// enclosing length-delimited fields (`Trace.packet`,
/// `TracePacket.track_event`) are framed with prost's own key and varint
/// encoders.
pub(super) fn encode_event(
    buf: &mut Vec<u8>,
    head: &mut pb::TracePacket,
    ts: u64,
    event: &pb::TrackEvent,
    tail: &[u8],
) -> usize {
    use prost::encoding::{encode_key, encode_varint, encoded_len_varint, key_len, WireType};
    /// `TracePacket.track_event`.
    const TRACK_EVENT_FIELD: u32 = 11;
    head.timestamp = Some(ts);
    let event_len = event.encoded_len() + tail.len();
    let packet_len = head.encoded_len()
        + key_len(TRACK_EVENT_FIELD)
        + encoded_len_varint(event_len as u64)
        + event_len;
    let before = buf.len();
    buf.reserve(packet_len + 16);
    encode_key(PACKET_FIELD, WireType::LengthDelimited, buf);
    encode_varint(packet_len as u64, buf);
    head.encode(buf).expect("a Vec grows as needed");
    encode_key(TRACK_EVENT_FIELD, WireType::LengthDelimited, buf);
    encode_varint(event_len as u64, buf);
    event.encode(buf).expect("a Vec grows as needed");
    buf.extend_from_slice(tail);
    buf.len() - before
}

/// The per-slice fields of a track event: its type and track, the flows
/// it begins and ends, and the `instance` arg.
pub(super) struct Fields<'a> {
    pub(super) kind: Type,
    pub(super) track: u64,
    pub(super) flows: &'a [u64],
    pub(super) ends: &'a [u64],
    pub(super) instance: Option<u64>,
}

impl Fields<'static> {
    /// A slice's end on `track` (no flows, no args).
    pub(super) fn slice_end(track: u64) -> Fields<'static> {
        Fields {
            kind: Type::SliceEnd,
            track,
            flows: &[],
            ends: &[],
            instance: None,
        }
    }
}

/// The prost encodings made once per writer that [`encode_slice_event`]
/// puts around the per-slice fields.
pub(super) struct Fixed {
    /// `TracePacket` fields 58 (`timestamp_clock_id`: CLOCK_MONOTONIC) and
    /// 10 (`trusted_packet_sequence_id`).
    pub(super) packet: Vec<u8>,
    /// `DebugAnnotation` field 10 (`name`: `instance`).
    pub(super) instance_name: Vec<u8>,
}

impl Fixed {
    pub(super) fn new() -> Fixed {
        let mut packet = packet(None);
        packet.timestamp_clock_id = Some(CLOCK_MONOTONIC);
        Fixed {
            packet: packet.encode_to_vec(),
            instance_name: pb::DebugAnnotation {
                name_field: Some(ArgName::Name("instance".to_string())),
                value: None,
            }
            .encode_to_vec(),
        }
    }
}

/// Appends to `buf` the packet of a slice's begin or end at `ts`: a
/// `TracePacket` whose `TrackEvent` has `fields`, then `tail` (a node's
/// name and args, encoded once per node); returns the bytes appended.
///
/// This runs for every slice, so it writes the fields with prost's field
/// encoders (`prost::encoding`, what the generated `encode_raw` calls)
/// rather than through a generated message: the generated
/// `TrackEvent::encode` walked every field of the message three times
/// (length, length again, write), about 900 instructions a packet. The
/// `prost::encoding` is public but left out of prost's documentation
/// (it is what generated code calls), so a prost upgrade may change it;
/// the version is pinned in Cargo.lock. The
/// field numbers are those of the types in `protos.rs`;
/// `tests/scripts/check_pftrace.py` decodes the result with Perfetto's own
/// definitions.
pub(super) fn encode_slice_event(
    buf: &mut Vec<u8>,
    fixed: &Fixed,
    ts: u64,
    f: &Fields,
    tail: &[u8],
) -> usize {
    use prost::encoding::{encoded_len_varint, fixed64, int32, key_len, uint64, WireType};
    /// `TracePacket.track_event`.
    const TRACK_EVENT: u32 = 11;
    /// `TrackEvent.type`, `.track_uuid`, `.flow_ids`,
    /// `.terminating_flow_ids`, `.debug_annotations`.
    const TYPE: u32 = 9;
    const TRACK_UUID: u32 = 11;
    const FLOW_IDS: u32 = 47;
    const TERMINATING_FLOW_IDS: u32 = 48;
    const DEBUG_ANNOTATIONS: u32 = 4;
    /// `DebugAnnotation.uint_value`.
    const UINT_VALUE: u32 = 3;
    let kind = f.kind as i32;
    let arg_len = f
        .instance
        .map(|v| fixed.instance_name.len() + uint64::encoded_len(UINT_VALUE, &v));
    let event_len = int32::encoded_len(TYPE, &kind)
        + uint64::encoded_len(TRACK_UUID, &f.track)
        + fixed64::encoded_len_repeated(FLOW_IDS, f.flows)
        + fixed64::encoded_len_repeated(TERMINATING_FLOW_IDS, f.ends)
        + arg_len.map_or(0, |n| {
            key_len(DEBUG_ANNOTATIONS) + encoded_len_varint(n as u64) + n
        })
        + tail.len();
    let packet_len = uint64::encoded_len(TIMESTAMP, &ts)
        + fixed.packet.len()
        + key_len(TRACK_EVENT)
        + encoded_len_varint(event_len as u64)
        + event_len;
    let before = buf.len();
    buf.reserve(packet_len + 16);
    put_key(PACKET_FIELD, WireType::LengthDelimited, buf);
    put_varint(packet_len as u64, buf);
    put_key(TIMESTAMP, WireType::Varint, buf);
    put_varint(ts, buf);
    buf.extend_from_slice(&fixed.packet);
    put_key(TRACK_EVENT, WireType::LengthDelimited, buf);
    put_varint(event_len as u64, buf);
    put_key(TYPE, WireType::Varint, buf);
    // int32 as protobuf encodes it: sign-extended to 64 bits.
    put_varint(i64::from(kind) as u64, buf);
    put_key(TRACK_UUID, WireType::Varint, buf);
    put_varint(f.track, buf);
    fixed64::encode_repeated(FLOW_IDS, f.flows, buf);
    fixed64::encode_repeated(TERMINATING_FLOW_IDS, f.ends, buf);
    if let (Some(v), Some(n)) = (f.instance, arg_len) {
        put_key(DEBUG_ANNOTATIONS, WireType::LengthDelimited, buf);
        put_varint(n as u64, buf);
        buf.extend_from_slice(&fixed.instance_name);
        put_key(UINT_VALUE, WireType::Varint, buf);
        put_varint(v, buf);
    }
    buf.extend_from_slice(tail);
    buf.len() - before
}

/// What follows the timestamp in a slice packet with fields `f` and no
/// tail: [`encode_slice_event`]'s bytes for it less the packet's key,
/// length and timestamp.
pub(super) fn end_tail(fixed: &Fixed, f: &Fields) -> Vec<u8> {
    use prost::encoding::{encoded_len_varint, key_len, uint64};
    let mut whole = Vec::new();
    let ts = 0;
    encode_slice_event(&mut whole, fixed, ts, f, &[]);
    let mut rest = &whole[key_len(PACKET_FIELD)..];
    let packet_len = prost::encoding::decode_varint(&mut rest).expect("just encoded");
    let head = key_len(PACKET_FIELD)
        + encoded_len_varint(packet_len)
        + uint64::encoded_len(TIMESTAMP, &ts);
    whole.split_off(head)
}

/// Appends a slice packet at `ts` whose other bytes are `tail` (from
/// [`end_tail`]); returns the bytes appended.
pub(super) fn encode_end(buf: &mut Vec<u8>, ts: u64, tail: &[u8]) -> usize {
    use prost::encoding::{uint64, WireType};
    let before = buf.len();
    let packet_len = uint64::encoded_len(TIMESTAMP, &ts) + tail.len();
    put_key(PACKET_FIELD, WireType::LengthDelimited, buf);
    put_varint(packet_len as u64, buf);
    put_key(TIMESTAMP, WireType::Varint, buf);
    put_varint(ts, buf);
    buf.extend_from_slice(tail);
    buf.len() - before
}

/// Appends `value` as a protobuf varint (the bytes prost's
/// `encode_varint` writes). Always inlined: the two per-slice encoders
/// above write up to ten varints a packet, and whether the compiler
/// inlined prost's out of line copy changed with how the crate's modules
/// were split (+420 instructions per instance in `instance_cost`).
#[inline(always)]
fn put_varint(mut value: u64, buf: &mut Vec<u8>) {
    while value >= 0x80 {
        buf.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

/// Appends the key of field `field` with wire type `wire` (as prost's
/// `encode_key`).
#[inline(always)]
fn put_key(field: u32, wire: prost::encoding::WireType, buf: &mut Vec<u8>) {
    put_varint(u64::from(field << 3 | wire as u32), buf);
}
