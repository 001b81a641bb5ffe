//! The one host clock every syclgraph time is on: CLOCK_MONOTONIC, in ns.

/// Now, on the host CLOCK_MONOTONIC timeline, in nanoseconds (the same reader
/// the timestamp bridge converts device times with).
#[inline]
pub fn monotonic_ns() -> u64 {
    ze_bridge::ur_source::monotonic_ns()
}
