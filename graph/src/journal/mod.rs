//! The journal: every [`Record`] the collector applies, as compact bytes in
//! a file, to be read back in order: by `syclgraph whatif` (`run.journal`),
//! by `syclgraph report` after a kill, and at exit when device timing was
//! off.
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

/// The journal of a run under way, in its output directory (renamed to
/// [`RUN_JOURNAL`] when the run ends; a killed run leaves it for
/// `syclgraph report` to convert).
pub const JOURNAL_FILE: &str = ".syclgraph-journal";

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
        TimingStatus::Behind => 8,
    }
}

mod read;
mod write;

pub use read::JournalReader;
pub use write::append_record;

#[cfg(test)]
mod tests;
