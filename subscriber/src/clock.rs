//! The one host clock every syclgraph time is on: CLOCK_MONOTONIC, in ns.

/// Now, on the host CLOCK_MONOTONIC timeline, in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
