//! The start of a trace as [`TraceWriter::new`](super::TraceWriter::new)
//! writes it (the clock snapshot and the process), read back.

use super::fields::TRACE_PACKET;
use super::protos as pb;

/// What [`TraceWriter::new`] wrote at the start of a trace: the process
/// and the clock snapshot. A program killed by a signal leaves a
/// `trace.pftrace` holding only these; `syclgraph report` reads them back
/// to write the trace of its leftover journal with the same start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceStart {
    /// The traced process's pid.
    pub pid: u32,
    /// Its name.
    pub process_name: String,
    /// The clock snapshot: (builtin clock id, ns).
    pub clocks: Vec<(u32, u64)>,
}

impl TraceStart {
    /// Reads the start of a trace [`TraceWriter::new`] wrote from its first
    /// bytes; `None` if they are not such a start.
    pub fn read(bytes: &[u8]) -> Option<TraceStart> {
        use prost::Message;
        let mut rest = bytes;
        let mut clocks = None;
        // The clock snapshot, then the process's track descriptor.
        for _ in 0..2 {
            let key = prost::encoding::decode_varint(&mut rest).ok()?;
            if key != u64::from(TRACE_PACKET << 3 | 2) {
                return None;
            }
            let len = usize::try_from(prost::encoding::decode_varint(&mut rest).ok()?).ok()?;
            let packet = pb::TracePacket::decode(rest.get(..len)?).ok()?;
            rest = &rest[len..];
            match packet.data? {
                pb::trace_packet::Data::ClockSnapshot(snapshot) => {
                    clocks = Some(
                        snapshot
                            .clocks
                            .iter()
                            .map(|c| Some((c.clock_id?, c.timestamp?)))
                            .collect::<Option<Vec<_>>>()?,
                    );
                }
                pb::trace_packet::Data::TrackDescriptor(track) => {
                    let process = track.process?;
                    return Some(TraceStart {
                        pid: u32::try_from(process.pid?).ok()?,
                        process_name: process.process_name?,
                        clocks: clocks?,
                    });
                }
                pb::trace_packet::Data::TrackEvent(_) => return None,
            }
        }
        None
    }
}
