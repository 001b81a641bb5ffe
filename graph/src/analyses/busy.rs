//! What the critical path hands to the idle gaps: each timed device
//! command it takes on, with what it waited for (see [`Busy`]).
//! [`Analyses`](crate::analyses::Analyses) moves them from one to the
//! other, so neither analysis imports the other.

use crate::instance_graph::InstanceKey;

/// A timed device command as the critical path took it on: its span and
/// what it waited for last, which is what explains the idle gap before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Busy {
    /// Device start, host ns.
    pub start_ns: u64,
    /// Device end, host ns.
    pub end_ns: u64,
    /// The command.
    pub key: InstanceKey,
    /// When the host submitted it.
    pub submit_ns: u64,
    /// The end of the data dependency (not a host task) that ended last;
    /// when `device_busy`, the end of the command that held its device
    /// (later than any dependency).
    pub dependency: Option<u64>,
    /// It depends on a host task (whose end the runtime does not report:
    /// only that it ended before this command started).
    pub host_task: bool,
    /// The end of the host wait that ended last before the submission,
    /// if any ended after the command's previous step was ready.
    pub wait_end_ns: Option<u64>,
    /// It was ready but waited for its device, busy with another command
    /// until `dependency` (the critical path's `GapCause::Device`).
    pub device_busy: bool,
}
