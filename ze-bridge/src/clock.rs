//! Pure conversions from Level Zero device ticks to host nanoseconds.
//!
//! Nothing here calls Level Zero: [`crate::level_zero`] gathers the inputs
//! (device properties, a host/device timestamp pair, an event's kernel
//! timestamps) and this module turns them into a [`Readout`].
//!
//! # Units
//!
//! `ze_device_properties_t::timerResolution` changed meaning in API 1.2: with
//! `stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2` it is the timer
//! frequency in cycles per second, with the older
//! `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES` it is nanoseconds per cycle.
//! [`TimerResolution`] keeps the unit with the number. The bridge asks with
//! the 1.2 stype and gets cycles per second, as Intel's unitrace does
//! (`GetDeviceTimerFrequency` in pti-gpu asks with `_1_2`), because an integer
//! ns-per-cycle loses the fraction (a 19.2 MHz timer ticks every 52.083 ns).
//!
//! # Formulas
//!
//! With `f` the frequency in Hz (or `p` ns per cycle), all divisions exact
//! integer arithmetic in 128 bits, rounding down (towards −∞):
//!
//! - `ns(t) = ⌊t · 10⁹ / f⌋` (or `t · p`).
//! - Kernel timestamps keep `kernelTimestampValidBits = k` bits:
//!   `s = start mod 2ᵏ`, `e = end mod 2ᵏ`, and the duration in ticks is
//!   `(e − s) mod 2ᵏ`, which undoes one wrap of the counter between start and
//!   end. `duration_ns = ns((e − s) mod 2ᵏ)`.
//! - A pair `(H, D)` from `zeDeviceGetGlobalTimestamps` (host ns on
//!   `CLOCK_MONOTONIC`, see [`ClockSync`]; device ticks with
//!   `timestampValidBits = g` bits) anchors the device clock. Both counters
//!   are compared on their `c = min(k, g)` common low bits:
//!   `δ = (s − D) mod 2ᶜ`, taken as signed in `[−2ᶜ⁻¹, 2ᶜ⁻¹)`, so a kernel up to
//!   half a wrap period before or after the pair is placed correctly.
//!   `start_ns = H + ns(δ)` (signed `ns`, rounding down).
//! - `end_ns = start_ns + duration_ns`: the start and the *duration* are
//!   converted, never the end on its own, so `end_ns − start_ns` is exactly
//!   the device's duration whatever the rounding of the start.
//!
//! # Sanity checks ([`Untimed::Invalid`])
//!
//! - a timer resolution of 0, or 0 valid kernel timestamp bits;
//! - start and end both 0 (a timestamp the device never wrote);
//! - with 64 valid bits, `end < start` (no wrap is possible);
//! - a duration above [`MAX_DURATION_NS`] (one hour);
//! - a start more than [`MAX_SYNC_DISTANCE_NS`] (one hour) away from the sync
//!   pair, or a start/end outside `0..=u64::MAX` ns.

use crate::{Readout, Untimed};

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Durations above this (one hour) are taken as garbage.
pub const MAX_DURATION_NS: u64 = 3600 * NS_PER_SEC;

/// Starts further than this (one hour) from the sync pair are taken as garbage.
pub const MAX_SYNC_DISTANCE_NS: u64 = 3600 * NS_PER_SEC;

/// The device timer's resolution, with its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimerResolution {
    /// Frequency (`stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2`).
    CyclesPerSecond(u64),
    /// Period (`stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`).
    NanosPerCycle(u64),
}

impl TimerResolution {
    /// Interprets `timerResolution` as returned for a query made with `stype`.
    pub fn from_properties(stype: ze_sys::ze_structure_type_t, timer_resolution: u64) -> Self {
        if stype == ze_sys::ze_structure_type_t::DEVICE_PROPERTIES_1_2 {
            TimerResolution::CyclesPerSecond(timer_resolution)
        } else {
            TimerResolution::NanosPerCycle(timer_resolution)
        }
    }

    fn is_zero(self) -> bool {
        matches!(
            self,
            TimerResolution::CyclesPerSecond(0) | TimerResolution::NanosPerCycle(0)
        )
    }

    /// `ticks` in ns, rounded down (towards −∞). `None` for a zero resolution.
    pub fn ticks_to_ns(self, ticks: i128) -> Option<i128> {
        match self {
            TimerResolution::CyclesPerSecond(0) | TimerResolution::NanosPerCycle(0) => None,
            // |ticks| < 2^65 and 10^9 < 2^30: the product fits in i128.
            TimerResolution::CyclesPerSecond(hz) => {
                Some((ticks * i128::from(NS_PER_SEC)).div_euclid(i128::from(hz)))
            }
            TimerResolution::NanosPerCycle(p) => Some(ticks * i128::from(p)),
        }
    }
}

/// Mask of the low `bits` bits; `None` for 0 bits, all bits from 64 up.
pub fn valid_mask(bits: u32) -> Option<u64> {
    match bits {
        0 => None,
        1..=63 => Some((1u64 << bits) - 1),
        _ => Some(u64::MAX),
    }
}

/// What the conversion needs to know about a device's timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceClock {
    /// `timerResolution`, with its unit.
    pub resolution: TimerResolution,
    /// `kernelTimestampValidBits`: bits of `zeEventQueryKernelTimestamp` values.
    pub kernel_valid_bits: u32,
    /// `timestampValidBits`: bits of the `zeDeviceGetGlobalTimestamps` device value
    /// (0, unreported, is read as 64).
    pub timestamp_valid_bits: u32,
}

/// A host/device timestamp pair taken at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockSync {
    /// Host time in ns on `CLOCK_MONOTONIC` (already moved there from the
    /// driver's clock; see [`shift_host_ns`]).
    pub host_ns: u64,
    /// Device time in ticks, as `zeDeviceGetGlobalTimestamps` returned it.
    pub device_ticks: u64,
}

/// Moves a host timestamp between clocks by a signed offset (for example
/// `CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW`). `None` if the result leaves `u64`.
pub fn shift_host_ns(host_ns: u64, offset_ns: i64) -> Option<u64> {
    u64::try_from(i128::from(host_ns) + i128::from(offset_ns)).ok()
}

impl DeviceClock {
    /// Duration in device ticks from kernel `start` to `end`, undoing a wrap of
    /// the `kernel_valid_bits`-bit counter. `None` when it cannot be one.
    pub fn duration_ticks(&self, start: u64, end: u64) -> Option<u64> {
        let mask = valid_mask(self.kernel_valid_bits)?;
        let (s, e) = (start & mask, end & mask);
        if mask == u64::MAX && e < s {
            return None;
        }
        Some(e.wrapping_sub(s) & mask)
    }

    /// Kernel `start`/`end` ticks on the host `CLOCK_MONOTONIC` timeline, in ns.
    ///
    /// Returns [`Readout::Times`] or [`Readout::Untimed`]`(`[`Untimed::Invalid`]`)`;
    /// the formulas and checks are in the module documentation.
    pub fn to_host(&self, sync: ClockSync, start: u64, end: u64) -> Readout {
        self.convert(sync, start, end)
            .map(|(start_ns, end_ns)| Readout::Times { start_ns, end_ns })
            .unwrap_or(Readout::Untimed(Untimed::Invalid))
    }

    fn convert(&self, sync: ClockSync, start: u64, end: u64) -> Option<(u64, u64)> {
        if self.resolution.is_zero() || (start == 0 && end == 0) {
            return None;
        }
        let duration_ticks = self.duration_ticks(start, end)?;
        let duration_ns =
            u64::try_from(self.resolution.ticks_to_ns(i128::from(duration_ticks))?).ok()?;
        if duration_ns > MAX_DURATION_NS {
            return None;
        }

        let timestamp_bits = match self.timestamp_valid_bits {
            0 => 64,
            bits => bits,
        };
        let common_bits = self.kernel_valid_bits.min(timestamp_bits).min(64);
        let common_mask = valid_mask(common_bits)?;
        let delta = start.wrapping_sub(sync.device_ticks) & common_mask;
        let delta = if common_bits >= 64 {
            i128::from(delta as i64)
        } else if delta >> (common_bits - 1) != 0 {
            i128::from(delta) - (1i128 << common_bits)
        } else {
            i128::from(delta)
        };
        let offset_ns = self.resolution.ticks_to_ns(delta)?;
        if offset_ns.unsigned_abs() > u128::from(MAX_SYNC_DISTANCE_NS) {
            return None;
        }
        let start_ns = u64::try_from(i128::from(sync.host_ns) + offset_ns).ok()?;
        let end_ns = start_ns.checked_add(duration_ns)?;
        Some((start_ns, end_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ze_sys::ze_structure_type_t;

    const HZ_12_5M: TimerResolution = TimerResolution::CyclesPerSecond(12_500_000); // 80 ns
    const HZ_19_2M: TimerResolution = TimerResolution::CyclesPerSecond(19_200_000); // 52.083.. ns

    fn clock(resolution: TimerResolution, kernel_bits: u32, ts_bits: u32) -> DeviceClock {
        DeviceClock {
            resolution,
            kernel_valid_bits: kernel_bits,
            timestamp_valid_bits: ts_bits,
        }
    }

    fn times(start_ns: u64, end_ns: u64) -> Readout {
        Readout::Times { start_ns, end_ns }
    }

    const INVALID: Readout = Readout::Untimed(Untimed::Invalid);

    #[test]
    fn resolution_unit_follows_stype() {
        assert_eq!(
            TimerResolution::from_properties(
                ze_structure_type_t::DEVICE_PROPERTIES_1_2,
                19_200_000
            ),
            TimerResolution::CyclesPerSecond(19_200_000)
        );
        assert_eq!(
            TimerResolution::from_properties(ze_structure_type_t::DEVICE_PROPERTIES, 52),
            TimerResolution::NanosPerCycle(52)
        );
    }

    #[test]
    fn ticks_to_ns_rounds_down() {
        assert_eq!(HZ_12_5M.ticks_to_ns(1), Some(80));
        assert_eq!(HZ_12_5M.ticks_to_ns(-1), Some(-80));
        // 3 ticks at 19.2 MHz = 156.25 ns.
        assert_eq!(HZ_19_2M.ticks_to_ns(3), Some(156));
        assert_eq!(HZ_19_2M.ticks_to_ns(-3), Some(-157));
        assert_eq!(TimerResolution::NanosPerCycle(52).ticks_to_ns(3), Some(156));
        assert_eq!(TimerResolution::CyclesPerSecond(0).ticks_to_ns(3), None);
        // No overflow at the extremes: 2^64 - 1 ticks at 1 Hz.
        assert_eq!(
            TimerResolution::CyclesPerSecond(1).ticks_to_ns(i128::from(u64::MAX)),
            Some(i128::from(u64::MAX) * 1_000_000_000)
        );
    }

    #[test]
    fn masks() {
        assert_eq!(valid_mask(0), None);
        assert_eq!(valid_mask(1), Some(1));
        assert_eq!(valid_mask(32), Some(0xffff_ffff));
        assert_eq!(valid_mask(64), Some(u64::MAX));
        assert_eq!(valid_mask(99), Some(u64::MAX));
    }

    #[test]
    fn plain_conversion() {
        let c = clock(HZ_12_5M, 32, 36);
        let sync = ClockSync {
            host_ns: 5_000_000_000,
            device_ticks: 1_000,
        };
        // start 250 ticks after the pair: 20_000 ns; 100 ticks long: 8_000 ns.
        assert_eq!(
            c.to_host(sync, 1_250, 1_350),
            times(5_000_020_000, 5_000_028_000)
        );
        // a kernel before the pair
        assert_eq!(
            c.to_host(sync, 900, 950),
            times(4_999_992_000, 4_999_996_000)
        );
    }

    #[test]
    fn duration_is_exactly_the_devices() {
        let c = clock(HZ_19_2M, 32, 36);
        let sync = ClockSync {
            host_ns: 1_000_000,
            device_ticks: 0,
        };
        // 1 tick = 52.083 ns. Start 11 ticks = 572.92 -> 572 ns; duration
        // 11 ticks -> 572 ns; end 572 + 572 = 1144. Converting the end alone
        // (22 ticks = 1145.83 -> 1145) would stretch the kernel by 1 ns.
        assert_eq!(c.to_host(sync, 11, 22), times(1_000_572, 1_001_144));
    }

    #[test]
    fn wrap_between_start_and_end() {
        let c = clock(HZ_12_5M, 32, 36);
        let sync = ClockSync {
            host_ns: 10_000_000_000,
            device_ticks: 0xffff_ff00,
        };
        // start 0x10 ticks before the wrap, end 0x20 after it: 0x30 ticks long.
        assert_eq!(c.duration_ticks(0xffff_fff0, 0x20), Some(0x30));
        // start = pair + 0xf0 ticks = 240 ticks = 19_200 ns; 48 ticks = 3_840 ns.
        assert_eq!(
            c.to_host(sync, 0xffff_fff0, 0x20),
            times(10_000_019_200, 10_000_023_040)
        );
    }

    #[test]
    fn kernel_bits_below_global_bits() {
        // The pair's device value has bits above the kernel's 32: only the
        // common low bits are compared.
        let c = clock(HZ_12_5M, 32, 36);
        let sync = ClockSync {
            host_ns: 1_000_000_000,
            device_ticks: 0x7_0000_0100,
        };
        // start 0x200 has no upper bits: 0x100 ticks after the pair = 20_480 ns.
        assert_eq!(
            c.to_host(sync, 0x200, 0x210),
            times(1_000_020_480, 1_000_021_760)
        );
        // The pair just after a low-32-bit wrap, the kernel just before it.
        let sync = ClockSync {
            host_ns: 1_000_000_000,
            device_ticks: 0x8_0000_0010,
        };
        assert_eq!(
            c.to_host(sync, 0xffff_fff0, 0xffff_fff8),
            times(999_997_440, 999_998_080)
        );
    }

    #[test]
    fn raw_bits_above_the_valid_ones_are_ignored() {
        let c = clock(HZ_12_5M, 32, 32);
        let sync = ClockSync {
            host_ns: 1_000_000_000,
            device_ticks: 0,
        };
        assert_eq!(
            c.to_host(sync, 0xabcd_0000_0010, 0x1234_0000_0020),
            times(1_000_001_280, 1_000_002_560)
        );
    }

    #[test]
    fn ns_per_cycle_resolution() {
        let c = clock(TimerResolution::NanosPerCycle(83), 64, 64);
        let sync = ClockSync {
            host_ns: 2_000,
            device_ticks: 10,
        };
        assert_eq!(c.to_host(sync, 20, 30), times(2_830, 3_660));
        assert_eq!(c.to_host(sync, 5, 6), times(1_585, 1_668));
    }

    #[test]
    fn sixty_four_bit_counters() {
        let c = clock(HZ_12_5M, 64, 64);
        let sync = ClockSync {
            host_ns: 1_000_000_000,
            device_ticks: u64::MAX - 9,
        };
        // 64-bit end before start is not a wrap: invalid.
        assert_eq!(c.duration_ticks(10, 5), None);
        assert_eq!(c.to_host(sync, 10, 5), INVALID);
        // A start past u64::MAX relative to the pair still compares signed.
        assert_eq!(c.to_host(sync, 5, 6), times(1_000_001_200, 1_000_001_280));
    }

    #[test]
    fn sanity_checks() {
        let c = clock(HZ_12_5M, 32, 36);
        let sync = ClockSync {
            host_ns: 1_000_000_000_000,
            device_ticks: 0,
        };
        // never written
        assert_eq!(c.to_host(sync, 0, 0), INVALID);
        // zero resolution, zero valid bits
        assert_eq!(
            clock(TimerResolution::CyclesPerSecond(0), 32, 36).to_host(sync, 1, 2),
            INVALID
        );
        assert_eq!(clock(HZ_12_5M, 0, 36).to_host(sync, 1, 2), INVALID);
        // A 32-bit wrap at 12.5 MHz lasts 343.6 s, under the one-hour limit;
        // at 1 kHz 2^32 - 1 ticks are ~50 days: absurd.
        let slow = clock(TimerResolution::CyclesPerSecond(1_000), 32, 36);
        assert_eq!(slow.to_host(sync, 2, 1), INVALID);
        // Exactly one hour is accepted, one tick more is not.
        let ms = clock(TimerResolution::CyclesPerSecond(1_000), 64, 64);
        let sync_ms = ClockSync {
            host_ns: 0,
            device_ticks: 1,
        };
        assert_eq!(ms.to_host(sync_ms, 1, 3_600_001), times(0, MAX_DURATION_NS));
        assert_eq!(ms.to_host(sync_ms, 1, 3_600_002), INVALID);
        // Start far from the pair.
        assert_eq!(ms.to_host(sync_ms, 3_600_002, 3_600_003), INVALID);
        assert_eq!(
            ms.to_host(sync_ms, 3_600_001, 3_600_002),
            times(MAX_SYNC_DISTANCE_NS, MAX_SYNC_DISTANCE_NS + 1_000_000)
        );
        // Start before host time 0.
        assert_eq!(
            ms.to_host(
                ClockSync {
                    host_ns: 500,
                    device_ticks: 10
                },
                9,
                10
            ),
            INVALID
        );
    }

    #[test]
    fn host_shift() {
        assert_eq!(shift_host_ns(1_000, -1_000), Some(0));
        assert_eq!(shift_host_ns(1_000, -1_001), None);
        assert_eq!(shift_host_ns(u64::MAX, 1), None);
        assert_eq!(shift_host_ns(7, 3), Some(10));
    }
}
