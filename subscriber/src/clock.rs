//! The one host clock every syclgraph time is on: CLOCK_MONOTONIC, in ns.

/// Now, on the host CLOCK_MONOTONIC timeline, in nanoseconds: the TSC
/// converted inline where it is the kernel's clocksource, once the collector
/// fitted it (`host_clock.rs`), else `clock_gettime` (the reader the
/// timestamp bridge converts device times with).
#[inline]
pub fn monotonic_ns() -> u64 {
    crate::host_clock::global().now_ns()
}
