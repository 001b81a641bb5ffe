//! The field numbers of Perfetto's trace protos that syclgraph writes
//! (`trace.pftrace`) or rewrites (the cross-rank merged trace): one list
//! for both, taken from Perfetto's `protos/perfetto/trace/trace.proto`,
//! `trace_packet.proto`, `track_event/track_event.proto`,
//! `track_event/track_descriptor.proto`, `track_event/debug_annotation.proto`,
//! `track_event/process_descriptor.proto`, `track_event/thread_descriptor.proto`,
//! `interned_data/interned_data.proto`, `trace_packet_defaults.proto` and
//! `clock_snapshot.proto`. `tests/scripts/check_pftrace.py` decodes the
//! traces with Perfetto's own compiled definitions, which checks them.

/// `Trace.packet`: every packet of a trace file is this field.
pub const TRACE_PACKET: u32 = 1;

/// `TracePacket` fields.
pub mod packet {
    /// `clock_snapshot`.
    pub const CLOCK_SNAPSHOT: u32 = 6;
    /// `timestamp`.
    pub const TIMESTAMP: u32 = 8;
    /// `trusted_packet_sequence_id`.
    pub const TRUSTED_PACKET_SEQUENCE_ID: u32 = 10;
    /// `track_event`.
    pub const TRACK_EVENT: u32 = 11;
    /// `interned_data`.
    pub const INTERNED_DATA: u32 = 12;
    /// `sequence_flags`.
    pub const SEQUENCE_FLAGS: u32 = 13;
    /// `process_descriptor`.
    pub const PROCESS_DESCRIPTOR: u32 = 43;
    /// `thread_descriptor`.
    pub const THREAD_DESCRIPTOR: u32 = 44;
    /// `timestamp_clock_id`.
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
    /// `trace_packet_defaults`.
    pub const TRACE_PACKET_DEFAULTS: u32 = 59;
    /// `track_descriptor`.
    pub const TRACK_DESCRIPTOR: u32 = 60;
}

/// `TracePacket.sequence_flags` values.
pub mod sequence_flags {
    /// `SEQ_INCREMENTAL_STATE_CLEARED`.
    pub const INCREMENTAL_STATE_CLEARED: u32 = 1;
    /// `SEQ_NEEDS_INCREMENTAL_STATE`.
    pub const NEEDS_INCREMENTAL_STATE: u32 = 2;
}

/// `TrackEvent` fields (`TrackEventDefaults` shares the track uuid ones).
pub mod event {
    /// `debug_annotations`.
    pub const DEBUG_ANNOTATIONS: u32 = 4;
    /// `type`.
    pub const TYPE: u32 = 9;
    /// `name_iid`.
    pub const NAME_IID: u32 = 10;
    /// `track_uuid`.
    pub const TRACK_UUID: u32 = 11;
    /// `name`.
    pub const NAME: u32 = 23;
    /// `extra_counter_track_uuids`.
    pub const EXTRA_COUNTER_TRACK_UUIDS: u32 = 31;
    /// `flow_ids_old` (varint).
    pub const FLOW_IDS_OLD: u32 = 36;
    /// `terminating_flow_ids_old` (varint).
    pub const TERMINATING_FLOW_IDS_OLD: u32 = 42;
    /// `extra_double_counter_track_uuids`.
    pub const EXTRA_DOUBLE_COUNTER_TRACK_UUIDS: u32 = 45;
    /// `flow_ids` (fixed64).
    pub const FLOW_IDS: u32 = 47;
    /// `terminating_flow_ids` (fixed64).
    pub const TERMINATING_FLOW_IDS: u32 = 48;
}

/// `TracePacketDefaults` fields.
pub mod defaults {
    /// `track_event_defaults` (a `TrackEventDefaults`, whose `track_uuid`
    /// is [`super::event::TRACK_UUID`]).
    pub const TRACK_EVENT_DEFAULTS: u32 = 11;
    /// `timestamp_clock_id`.
    pub const TIMESTAMP_CLOCK_ID: u32 = 58;
}

/// `DebugAnnotation` fields.
pub mod annotation {
    /// `name_iid`.
    pub const NAME_IID: u32 = 1;
    /// `uint_value`.
    pub const UINT_VALUE: u32 = 3;
    /// `string_value`.
    pub const STRING_VALUE: u32 = 6;
}

/// `InternedData` fields, and those of the entries they hold.
pub mod interned {
    /// `event_names` (of `EventName`).
    pub const EVENT_NAMES: u32 = 2;
    /// `debug_annotation_names` (of `DebugAnnotationName`).
    pub const DEBUG_ANNOTATION_NAMES: u32 = 3;
    /// `EventName.iid` and `DebugAnnotationName.iid`.
    pub const IID: u32 = 1;
    /// `EventName.name` and `DebugAnnotationName.name`.
    pub const NAME: u32 = 2;
}

/// `ClockSnapshot` fields and those of its `Clock`s.
pub mod clock_snapshot {
    /// `ClockSnapshot.clocks`.
    pub const CLOCKS: u32 = 1;
    /// `Clock.clock_id`.
    pub const CLOCK_ID: u32 = 1;
    /// `Clock.timestamp`.
    pub const TIMESTAMP: u32 = 2;
    /// `Clock.is_incremental`.
    pub const IS_INCREMENTAL: u32 = 3;
}

/// `TrackDescriptor` fields.
pub mod track {
    /// `uuid`.
    pub const UUID: u32 = 1;
    /// `name`.
    pub const NAME: u32 = 2;
    /// `process`.
    pub const PROCESS: u32 = 3;
    /// `thread`.
    pub const THREAD: u32 = 4;
    /// `parent_uuid`.
    pub const PARENT_UUID: u32 = 5;
    /// `static_name`.
    pub const STATIC_NAME: u32 = 10;
    /// `atrace_name`.
    pub const ATRACE_NAME: u32 = 13;
}

/// `ProcessDescriptor` fields.
pub mod process {
    /// `pid`.
    pub const PID: u32 = 1;
    /// `process_name`.
    pub const PROCESS_NAME: u32 = 6;
    /// `process_labels`.
    pub const PROCESS_LABELS: u32 = 8;
}

/// `ThreadDescriptor` fields.
pub mod thread {
    /// `pid`.
    pub const PID: u32 = 1;
    /// `tid`.
    pub const TID: u32 = 2;
}
