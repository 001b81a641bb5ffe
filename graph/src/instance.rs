//! One run of a node: [`Instance`], merged from the Submitted, TaskBegin,
//! TaskEnd, Signal and Device records that share a (node, instance) key.

use crate::record::{DeviceTimes, NodeId, TimingStatus};
use crate::regions::RegionRef;

/// Where an instance is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstanceStatus {
    /// Still waiting for records.
    Pending,
    /// Every record it needs arrived (see [`TaskGraph`](crate::TaskGraph)).
    Complete,
    /// Finalised without all its records: pushed out of the pending table by
    /// newer instances, or still pending at [`TaskGraph::finish`](crate::TaskGraph::finish).
    Flushed,
}

impl InstanceStatus {
    /// `pending`, `complete` or `flushed`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceStatus::Pending => "pending",
            InstanceStatus::Complete => "complete",
            InstanceStatus::Flushed => "flushed",
        }
    }
}

/// One submission of a node and what became of it. Each time field is the
/// first value received; later duplicates are counted in
/// [`Stats::duplicate_instance_records`](crate::Stats::duplicate_instance_records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The runtime's instance number.
    pub instance: u64,
    /// The submitting thread (from Submitted).
    pub thread: Option<u32>,
    /// The thread that enqueued it (from TaskBegin, else TaskEnd); for
    /// scheduler commands and host tasks it can differ from `thread`.
    pub task_thread: Option<u32>,
    /// node_create time, host ns.
    pub submit_ns: Option<u64>,
    /// task_begin time, host ns.
    pub begin_ns: Option<u64>,
    /// task_end time, host ns.
    pub end_ns: Option<u64>,
    /// The `ur_event_handle_t` from the signal (0: host task, no event).
    pub event: Option<u64>,
    /// Device times from the timestamp collector.
    pub device: Option<DeviceTimes>,
    /// Its queue, when it differs from the node's first queue.
    pub queue: Option<u64>,
    /// The region (ITT tasks open on its submitting thread) it was
    /// submitted in, if any ([`crate::regions`]).
    pub region: Option<RegionRef>,
    /// Where it is in its life.
    pub status: InstanceStatus,
}

impl Instance {
    /// A fresh pending instance.
    pub fn new(instance: u64) -> Instance {
        Instance {
            instance,
            thread: None,
            task_thread: None,
            submit_ns: None,
            begin_ns: None,
            end_ns: None,
            event: None,
            device: None,
            queue: None,
            region: None,
            status: InstanceStatus::Pending,
        }
    }

    /// How far the device could time it: the Device record's status; without
    /// one, `lost` when the signal gave an event (its times were never read)
    /// and `unavailable` when there was no event to read.
    pub fn timing(&self) -> TimingStatus {
        match (self.device, self.event) {
            (Some(d), _) => d.status,
            (None, Some(e)) if e != 0 => TimingStatus::Lost,
            (None, _) => TimingStatus::Unavailable,
        }
    }

    /// Device start and end (host ns) when timing is `ok`.
    pub fn device_span(&self) -> Option<(u64, u64)> {
        self.device
            .filter(|d| d.status == TimingStatus::Ok)
            .map(|d| (d.start_ns, d.end_ns))
    }

    /// Device end (host ns) when timing is `ok`, or `marker` (the moment a
    /// marker after the work completed).
    pub fn device_end(&self) -> Option<u64> {
        self.device
            .filter(|d| matches!(d.status, TimingStatus::Ok | TimingStatus::Marker))
            .map(|d| d.end_ns)
    }

    /// Device duration when timing is `ok`.
    pub fn device_ns(&self) -> Option<u64> {
        self.device_span().map(|(s, e)| e.saturating_sub(s))
    }

    /// task_begin..task_end on the host, when both are known and ordered.
    pub fn host_ns(&self) -> Option<u64> {
        match (self.begin_ns, self.end_ns) {
            (Some(b), Some(e)) if e >= b => Some(e - b),
            _ => None,
        }
    }
}

/// An instance that left the pending table (complete or flushed): what the
/// subscriber turns into a `kernels.csv` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completed {
    /// Its node.
    pub node: NodeId,
    /// The instance, as finalised.
    pub instance: Instance,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(status: TimingStatus, start_ns: u64, end_ns: u64) -> DeviceTimes {
        DeviceTimes {
            node: 0,
            instance: 1,
            status,
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn timing_falls_back_on_the_event() {
        let mut i = Instance::new(1);
        assert_eq!(i.timing(), TimingStatus::Unavailable);
        i.event = Some(0);
        assert_eq!(i.timing(), TimingStatus::Unavailable);
        i.event = Some(0xdead);
        assert_eq!(i.timing(), TimingStatus::Lost);
        i.device = Some(times(TimingStatus::NoProfiling, 0, 0));
        assert_eq!(i.timing(), TimingStatus::NoProfiling);
        assert_eq!(i.device_ns(), None);
        i.device = Some(times(TimingStatus::Ok, 100, 250));
        assert_eq!(i.device_ns(), Some(150));
    }

    #[test]
    fn host_duration_needs_both_ends() {
        let mut i = Instance::new(1);
        i.end_ns = Some(10);
        assert_eq!(i.host_ns(), None);
        i.begin_ns = Some(4);
        assert_eq!(i.host_ns(), Some(6));
        i.begin_ns = Some(11);
        assert_eq!(i.host_ns(), None);
    }
}
