//! The few messages of Perfetto's trace proto (`perfetto.protos`) that
//! `trace.pftrace` uses, as prost types.
//!
//! Taken from the prost-build output of Perfetto's protos bundled with the
//! `micromegas-perfetto` crate (0.33.0, `src/perfetto.protos.rs`, Apache-2.0,
//! generated from `protos/perfetto/trace/**.proto`) and cut down to the
//! fields written here: the names, types and field numbers are the
//! generated ones, unchanged. A message that leaves a field out encodes
//! exactly as the full message with that field unset. Depending on that
//! crate itself would pull in datafusion and tokio; generating the types
//! at build time would need a protoc binary. The test
//! `tests/scripts/check_pftrace.py` parses every trace with the
//! `perfetto_trace_pb2` module of the `perfetto` Python package, Perfetto's
//! own compiled definitions, so a wrong number would be caught there.

/// `perfetto.protos.TracePacket` (trace_packet.proto).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct TracePacket {
    /// The timestamp, in the clock of `timestamp_clock_id`.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: ::core::option::Option<u64>,
    /// The clock `timestamp` is in (a `BuiltinClock`).
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: ::core::option::Option<u32>,
    /// `SequenceFlags` bits.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: ::core::option::Option<u32>,
    /// The writer's sequence.
    #[prost(oneof = "trace_packet::OptionalTrustedPacketSequenceId", tags = "10")]
    pub optional_trusted_packet_sequence_id:
        ::core::option::Option<trace_packet::OptionalTrustedPacketSequenceId>,
    /// What the packet holds.
    #[prost(oneof = "trace_packet::Data", tags = "6, 11, 60")]
    pub data: ::core::option::Option<trace_packet::Data>,
}

/// Nested types of [`TracePacket`].
pub mod trace_packet {
    /// The packet's payload (cut down to the three kinds written).
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Data {
        /// A clock snapshot.
        #[prost(message, tag = "6")]
        ClockSnapshot(super::ClockSnapshot),
        /// A track event.
        #[prost(message, tag = "11")]
        TrackEvent(super::TrackEvent),
        /// A track descriptor.
        #[prost(message, tag = "60")]
        TrackDescriptor(super::TrackDescriptor),
    }
    /// The sequence id.
    #[derive(Clone, Copy, PartialEq, ::prost::Oneof)]
    pub enum OptionalTrustedPacketSequenceId {
        /// The sequence id.
        #[prost(uint32, tag = "10")]
        TrustedPacketSequenceId(u32),
    }
}

/// `perfetto.protos.ClockSnapshot` (clock_snapshot.proto).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ClockSnapshot {
    /// The clocks read at the same moment.
    #[prost(message, repeated, tag = "1")]
    pub clocks: ::prost::alloc::vec::Vec<clock_snapshot::Clock>,
    /// The clock the trace's time is shown in (a `BuiltinClock`).
    #[prost(enumeration = "BuiltinClock", optional, tag = "2")]
    pub primary_trace_clock: ::core::option::Option<i32>,
}

/// Nested types of [`ClockSnapshot`].
pub mod clock_snapshot {
    /// One clock's reading.
    #[derive(Clone, PartialEq, ::prost::Message)]
    pub struct Clock {
        /// A `BuiltinClock`.
        #[prost(uint32, optional, tag = "1")]
        pub clock_id: ::core::option::Option<u32>,
        /// Its value, ns.
        #[prost(uint64, optional, tag = "2")]
        pub timestamp: ::core::option::Option<u64>,
    }
}

/// `perfetto.protos.BuiltinClock` (builtin_clock.proto), the two used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
#[repr(i32)]
pub enum BuiltinClock {
    /// Not set.
    Unknown = 0,
    /// CLOCK_MONOTONIC.
    Monotonic = 3,
    /// CLOCK_BOOTTIME.
    Boottime = 6,
}

/// `perfetto.protos.TrackEvent` (track_event.proto).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct TrackEvent {
    /// A `track_event::Type`.
    #[prost(enumeration = "track_event::Type", optional, tag = "9")]
    pub r#type: ::core::option::Option<i32>,
    /// The track.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: ::core::option::Option<u64>,
    /// Flows this event begins or continues.
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: ::prost::alloc::vec::Vec<u64>,
    /// Flows this event ends.
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: ::prost::alloc::vec::Vec<u64>,
    /// The args.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: ::prost::alloc::vec::Vec<DebugAnnotation>,
    /// The categories.
    #[prost(string, repeated, tag = "22")]
    pub categories: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
    /// The event's name.
    #[prost(oneof = "track_event::NameField", tags = "23")]
    pub name_field: ::core::option::Option<track_event::NameField>,
}

/// Nested types of [`TrackEvent`].
pub mod track_event {
    /// `TrackEvent.Type`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
    #[repr(i32)]
    pub enum Type {
        /// Not set.
        Unspecified = 0,
        /// A slice begins.
        SliceBegin = 1,
        /// The innermost open slice ends.
        SliceEnd = 2,
        /// A zero-length slice.
        Instant = 3,
    }
    /// The event's name (the non-interned variant).
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum NameField {
        /// The name.
        #[prost(string, tag = "23")]
        Name(::prost::alloc::string::String),
    }
}

/// `perfetto.protos.DebugAnnotation` (debug_annotation.proto): one arg.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct DebugAnnotation {
    /// Its name.
    #[prost(oneof = "debug_annotation::NameField", tags = "10")]
    pub name_field: ::core::option::Option<debug_annotation::NameField>,
    /// Its value.
    #[prost(oneof = "debug_annotation::Value", tags = "3, 6")]
    pub value: ::core::option::Option<debug_annotation::Value>,
}

/// Nested types of [`DebugAnnotation`].
pub mod debug_annotation {
    /// The name (the non-interned variant).
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum NameField {
        /// The name.
        #[prost(string, tag = "10")]
        Name(::prost::alloc::string::String),
    }
    /// The value (the two kinds written).
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Value {
        /// A number.
        #[prost(uint64, tag = "3")]
        UintValue(u64),
        /// A string.
        #[prost(string, tag = "6")]
        StringValue(::prost::alloc::string::String),
    }
}

/// `perfetto.protos.TrackDescriptor` (track_descriptor.proto).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct TrackDescriptor {
    /// The track's id.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: ::core::option::Option<u64>,
    /// The track it is shown under.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: ::core::option::Option<u64>,
    /// A process track.
    #[prost(message, optional, tag = "3")]
    pub process: ::core::option::Option<ProcessDescriptor>,
    /// The track's name.
    #[prost(oneof = "track_descriptor::StaticOrDynamicName", tags = "2")]
    pub static_or_dynamic_name: ::core::option::Option<track_descriptor::StaticOrDynamicName>,
}

/// Nested types of [`TrackDescriptor`].
pub mod track_descriptor {
    /// The name.
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum StaticOrDynamicName {
        /// The name.
        #[prost(string, tag = "2")]
        Name(::prost::alloc::string::String),
    }
}

/// `perfetto.protos.ProcessDescriptor` (process_descriptor.proto).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ProcessDescriptor {
    /// The pid.
    #[prost(int32, optional, tag = "1")]
    pub pid: ::core::option::Option<i32>,
    /// Its name.
    #[prost(string, optional, tag = "6")]
    pub process_name: ::core::option::Option<::prost::alloc::string::String>,
}
