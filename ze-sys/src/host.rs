//! Host clocks: the `clock_gettime` declaration (glibc, Linux x86_64/aarch64)
//! and a safe reader, so the bridge can relate the clock a Level Zero driver
//! uses for `zeDeviceGetGlobalTimestamps` (Intel's compute-runtime on Linux:
//! `CLOCK_MONOTONIC_RAW`) to `CLOCK_MONOTONIC`.

use std::ffi::c_int;

/// `clockid_t`.
pub type clockid_t = c_int;
/// `CLOCK_MONOTONIC` (Linux).
pub const CLOCK_MONOTONIC: clockid_t = 1;
/// `CLOCK_MONOTONIC_RAW` (Linux): not slewed by NTP.
pub const CLOCK_MONOTONIC_RAW: clockid_t = 4;

/// `struct timespec` on 64-bit Linux.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct timespec {
    /// Seconds.
    pub tv_sec: i64,
    /// Nanoseconds, `0..1_000_000_000`.
    pub tv_nsec: i64,
}

extern "C" {
    /// `int clock_gettime(clockid_t, struct timespec *)`.
    pub fn clock_gettime(clock: clockid_t, tp: *mut timespec) -> c_int;
    /// `int prctl(int option, ...)` (glibc), as [`tsc_allowed`] calls it.
    pub fn prctl(option: c_int, ...) -> c_int;
}

/// `PR_GET_TSC` (Linux).
pub const PR_GET_TSC: c_int = 25;
/// `PR_TSC_ENABLE` (Linux): `rdtsc` allowed in user mode.
pub const PR_TSC_ENABLE: c_int = 1;

/// Whether this process may execute `rdtsc` (false if it asked the kernel
/// to make it fault, `prctl(PR_SET_TSC, PR_TSC_SIGSEGV)`, or the kernel does
/// not say).
pub fn tsc_allowed() -> bool {
    let mut mode: c_int = 0;
    // SAFETY: PR_GET_TSC writes one int through its second argument, a valid
    // writable `c_int` here; it changes nothing.
    let rc = unsafe { prctl(PR_GET_TSC, &mut mode as *mut c_int) };
    rc == 0 && mode == PR_TSC_ENABLE
}

/// Reads `clock` in ns, or `None` if the kernel refused (unknown clock) or
/// the time is before the clock's epoch.
/// Always inlined: the subscriber reads the clock in its callbacks, where
/// a call of its own costs as much as the checks. Those are only the ones
/// a time can fail: the kernel keeps `tv_nsec` in `0..1_000_000_000`, and
/// a clock 2^64 ns (584 years) past its epoch is not a machine's uptime,
/// so the conversion does not check for overflow.
#[inline(always)]
pub fn now_ns(clock: clockid_t) -> Option<u64> {
    let mut ts = timespec::default();
    // SAFETY: `ts` is a valid, writable `timespec` of the layout the kernel
    // ABI expects on 64-bit Linux; `clock_gettime` writes only into it.
    let rc = unsafe { clock_gettime(clock, &mut ts) };
    if rc != 0 || ts.tv_sec < 0 {
        return None;
    }
    Some(
        (ts.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(ts.tv_nsec as u64),
    )
}

/// The CPU's time-stamp counter, as `rdtsc` reads it: not ordered with the
/// instructions around it (the read may happen a little before earlier or
/// after later ones complete; `lfence` around it costs ~12 ns here, as much
/// as the read). x86_64 only; whether the counter is a clock is for the
/// caller to know.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn tsc() -> u64 {
    // SAFETY: `rdtsc` reads no memory and has no effect but the counter's
    // value; user mode may execute it unless the kernel set CR4.TSD, which
    // Linux does only for a process that asked for it (prctl PR_SET_TSC).
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The CPU's time-stamp counter, read in program order: `lfence; rdtsc;
/// lfence`, so the read happens after every earlier instruction completed
/// and before any later one starts (loads included). x86_64 only; whether
/// the counter is a clock (constant and running in every state, the
/// kernel's clocksource) is for the caller to know.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn tsc_ordered() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: `lfence` (SSE2, part of x86_64's baseline) and `rdtsc` read no
    // memory and have no effect but ordering and the counter's value; user
    // mode may execute `rdtsc` unless the kernel set CR4.TSD, which Linux
    // does only for a process that asked for it (prctl PR_SET_TSC), never
    // for one that loads this library without doing so.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_layout() {
        assert_eq!(std::mem::size_of::<timespec>(), 16);
    }

    #[test]
    fn clocks_advance() {
        let a = now_ns(CLOCK_MONOTONIC).unwrap();
        let r = now_ns(CLOCK_MONOTONIC_RAW).unwrap();
        let b = now_ns(CLOCK_MONOTONIC).unwrap();
        assert!(b >= a && r > 0);
        assert!(now_ns(12345).is_none());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_advances() {
        let a = tsc_ordered();
        let b = tsc_ordered();
        let c = tsc();
        assert!(b > a && c > a);
        assert!(tsc_allowed());
    }
}
