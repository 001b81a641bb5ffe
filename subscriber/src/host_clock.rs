//! A cheaper `CLOCK_MONOTONIC` for the program's threads: the CPU's
//! time-stamp counter (TSC) converted inline, `ns = base_ns + ((tsc -
//! base_tsc) * mult) >> 32`, with parameters fitted against
//! `clock_gettime(CLOCK_MONOTONIC)` by the collector.
//!
//! Where the kernel's clocksource is `tsc` the vDSO's `clock_gettime` reads
//! the same counter and converts it with the kernel's parameters; doing that
//! here skips the call, its clock-id dispatch and its sequence retry (~32 ns
//! here against ~15 for the inline read). Every time stays on the
//! `CLOCK_MONOTONIC` timeline within the fit's error (measured and stated in
//! docs/runtime-interface.md, "Time").
//!
//! Publishing. The parameters are two 40-byte slots and a generation:
//! generation `g` (0: none yet, read `clock_gettime`) names slot `g & 1`. The
//! one writer fills the other slot and then bumps the generation; a reader
//! that finds the generation changed under it reads again (only a new
//! publication does that, at most one per refit, so it is lock-free: no
//! reader ever waits for the writer). No lock, no allocation on the read.
//!
//! Never backwards on one thread. Each slot holds a piecewise line: before
//! its `boundary` the previous slot's slope, from it its own, both through
//! `(boundary, ns)`, so a slot's function is non-decreasing in the counter
//! and agrees (to 1 ns, never below) with the previous slot's up to the
//! boundary. The writer picks the boundary a little in the future and first
//! stores it as the current slot's `valid_until` (a full fence), then checks
//! the counter is still before it; a reader clamps its counter to
//! `valid_until`, read after the counter (`lfence; rdtsc; lfence`). So no
//! reader converts a counter value past the boundary with the old slope, and
//! what any reader returned is at most what a later read returns.
//!
//! Fallback: not x86_64, the kernel's clocksource not `tsc`, or the CPU
//! without `constant_tsc` and `nonstop_tsc`: the generation stays 0 and every
//! read is `clock_gettime`, as before. Nothing is said about it (it is
//! normal); [`HostClock::source`] names the choice.

use std::sync::atomic::{fence, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// The fixed-point shift of a slot's `mult` (ns per tick, times 2^32).
const SHIFT: u32 = 32;
/// How far ahead of the writer's counter a new slot's boundary is. Readers
/// read the counter with a plain `rdtsc` (an `lfence` on either side would
/// cost as much as the read), so the counter may be sampled a little after
/// the `valid_until` load that follows it executed: at most the CPU's
/// out-of-order window, well under a microsecond (and on x86 a load whose
/// line is written before it retires is executed again). A reader that
/// loaded `valid_until` before the writer's store was visible read the
/// counter before that store plus this margin; the writer checks the counter
/// is still before the boundary after the store, so no reader converts a
/// counter past the boundary with the old slope.
const BOUNDARY_AHEAD_NS: u64 = 50_000;
/// The first fit after this long (the first pair is taken at the collector's
/// start; until then the program's threads read `clock_gettime`).
const FIRST_FIT_AFTER_NS: u64 = 10_000_000;
/// Refits at doubling intervals from [`FIRST_FIT_AFTER_NS`] up to this: the
/// slope is measured over the last interval, so its error, the pairs' jitter
/// over the interval, stays about the same in ns over the next one. Short,
/// so that a change of `CLOCK_MONOTONIC`'s rate (NTP changes its frequency
/// by up to 500 ppm) leaves at most ~25 µs between two refits; a refit
/// costs the collector 7 pairs of reads (about a microsecond).
const REFIT_EVERY_MAX_NS: u64 = 50_000_000;
/// A slope correction (the offset left at a refit, taken out over the next
/// interval) is at most this many parts per million of the slope.
const CORRECTION_MAX_PPM: u128 = 1000;
/// Pairs taken per fit; the one with the narrowest `clock_gettime` bracket
/// is kept.
const PAIR_TRIES: usize = 7;

/// Which clock a [`HostClock`] reads: fixed once the collector decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Not decided yet (the collector has not looked): `clock_gettime`.
    Undecided,
    /// The TSC, converted inline, once the first fit is published.
    Tsc,
    /// `clock_gettime(CLOCK_MONOTONIC)` (the TSC is not the kernel's
    /// clocksource, not constant, or not x86_64).
    ClockGettime,
}

impl Source {
    /// The name reported where syclgraph names its configuration.
    pub fn name(self) -> &'static str {
        match self {
            Source::Undecided | Source::ClockGettime => "clock_gettime",
            Source::Tsc => "tsc",
        }
    }
}

/// One published conversion. All fields are read by the program's threads
/// and written only by the writer, into the slot readers are not using.
#[derive(Default)]
#[repr(C)]
struct Slot {
    /// The counter value the two pieces meet at.
    boundary: AtomicU64,
    /// ns at `boundary`.
    ns: AtomicU64,
    /// ns per tick times 2^32 from `boundary` on.
    mult: AtomicU64,
    /// ns per tick times 2^32 before `boundary` (the previous slot's).
    prev_mult: AtomicU64,
    /// Counter values from here on are converted as this value: set by the
    /// writer before it publishes the next slot; `u64::MAX` meanwhile.
    valid_until: AtomicU64,
}

/// A slot's values, as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Line {
    boundary: u64,
    ns: u64,
    mult: u64,
    prev_mult: u64,
}

impl Line {
    /// The line's ns at counter value `tsc`: non-decreasing in `tsc`, never
    /// wrapping (128-bit products, saturated at the ends).
    #[inline(always)]
    fn at(&self, tsc: u64) -> u64 {
        if tsc >= self.boundary {
            self.ns
                .saturating_add(scale(tsc - self.boundary, self.mult))
        } else {
            self.ns
                .saturating_sub(scale(self.boundary - tsc, self.prev_mult))
        }
    }
}

/// `ticks * mult >> 32`, saturated.
#[inline(always)]
fn scale(ticks: u64, mult: u64) -> u64 {
    let ns = (ticks as u128 * mult as u128) >> SHIFT;
    if ns > u64::MAX as u128 {
        u64::MAX
    } else {
        ns as u64
    }
}

/// One (counter, `CLOCK_MONOTONIC`) pair.
#[derive(Clone, Copy, Debug)]
struct Pair {
    tsc: u64,
    /// The middle of the `clock_gettime` reads around the counter read.
    ns: u64,
    /// The width of those reads (the pair's uncertainty, twice over).
    width: u64,
}

/// The writer's state (the collector's, behind a lock readers never take).
#[derive(Default)]
struct Fitting {
    /// The pair of the last fit (the slope is measured from it).
    last: Option<Pair>,
    /// When (`CLOCK_MONOTONIC` ns) the next fit is due.
    due_ns: u64,
    /// The interval after the next fit.
    interval_ns: u64,
    /// The largest offset a fit found against `clock_gettime` before it
    /// corrected it (ns, absolute), the first fit's bias excluded.
    worst_offset_ns: u64,
}

/// A host clock on the `CLOCK_MONOTONIC` timeline: the TSC where it is a
/// clock, `clock_gettime` elsewhere. One lives in a static for the process
/// ([`global`]); tests make their own.
#[repr(C, align(64))]
pub struct HostClock {
    generation: AtomicU64,
    slots: [Slot; 2],
    source: AtomicU8,
    fitting: Mutex<Fitting>,
}

const UNDECIDED: u8 = 0;
const TSC: u8 = 1;
const GETTIME: u8 = 2;

static GLOBAL: HostClock = HostClock::new();

/// The process's host clock (the one [`crate::clock::monotonic_ns`] reads).
pub fn global() -> &'static HostClock {
    &GLOBAL
}

/// `clock_gettime(CLOCK_MONOTONIC)` in ns (0 if it failed, which it cannot).
#[inline]
pub fn gettime_ns() -> u64 {
    ze_sys::host::now_ns(ze_sys::host::CLOCK_MONOTONIC).unwrap_or(0)
}

/// The counter as readers read it: unordered (see [`BOUNDARY_AHEAD_NS`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    ze_sys::host::tsc()
}

/// The counter as the writer reads it: after every earlier instruction
/// (the `valid_until` store) completed.
#[cfg(target_arch = "x86_64")]
fn read_tsc_ordered() -> u64 {
    ze_sys::host::tsc_ordered()
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn read_tsc() -> u64 {
    0
}

#[cfg(not(target_arch = "x86_64"))]
fn read_tsc_ordered() -> u64 {
    0
}

#[cfg(target_arch = "x86_64")]
fn tsc_allowed() -> bool {
    ze_sys::host::tsc_allowed()
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc_allowed() -> bool {
    false
}

impl HostClock {
    /// A clock that reads `clock_gettime` until [`HostClock::maintain`]
    /// decided and fitted.
    pub const fn new() -> HostClock {
        const fn slot() -> Slot {
            Slot {
                boundary: AtomicU64::new(0),
                ns: AtomicU64::new(0),
                mult: AtomicU64::new(0),
                prev_mult: AtomicU64::new(0),
                valid_until: AtomicU64::new(u64::MAX),
            }
        }
        HostClock {
            generation: AtomicU64::new(0),
            slots: [slot(), slot()],
            source: AtomicU8::new(UNDECIDED),
            fitting: Mutex::new(Fitting {
                last: None,
                due_ns: 0,
                interval_ns: FIRST_FIT_AFTER_NS,
                worst_offset_ns: 0,
            }),
        }
    }

    /// Now, on the `CLOCK_MONOTONIC` timeline, in ns. No lock, no
    /// allocation, no system call once fitted.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        match self.read_with(read_tsc) {
            Some(ns) => ns,
            None => gettime_ns(),
        }
    }

    /// The published conversion of the counter `tsc()` reads (called once
    /// per try, between the slot's loads and the checks), or `None` before
    /// the first fit.
    #[inline(always)]
    fn read_with(&self, tsc: impl Fn() -> u64) -> Option<u64> {
        loop {
            let generation = self.generation.load(Ordering::Acquire);
            if generation == 0 {
                return None;
            }
            let slot = &self.slots[(generation & 1) as usize];
            let line = Line {
                boundary: slot.boundary.load(Ordering::Relaxed),
                ns: slot.ns.load(Ordering::Relaxed),
                mult: slot.mult.load(Ordering::Relaxed),
                prev_mult: slot.prev_mult.load(Ordering::Relaxed),
            };
            let now = tsc();
            let valid_until = slot.valid_until.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.generation.load(Ordering::Relaxed) == generation {
                return Some(line.at(now.min(valid_until)));
            }
        }
    }

    /// Which clock the reads use now.
    pub fn source(&self) -> Source {
        match self.source.load(Ordering::Relaxed) {
            TSC if self.generation.load(Ordering::Relaxed) != 0 => Source::Tsc,
            GETTIME => Source::ClockGettime,
            _ => Source::Undecided,
        }
    }

    /// The largest offset against `clock_gettime` a refit found (and then
    /// took out over the next interval), in ns: the fit's error as measured.
    pub fn worst_offset_ns(&self) -> u64 {
        self.fitting.lock().map_or(0, |f| f.worst_offset_ns)
    }

    /// The collector's hook, called every pass: decides once whether the TSC
    /// is a clock here, then fits and refits when due. Cheap when nothing is
    /// due (one `clock_gettime`); never waits for a reader.
    pub fn maintain(&self) {
        if self.source.load(Ordering::Relaxed) == UNDECIDED {
            let usable = cfg!(target_arch = "x86_64") && tsc_is_a_clock();
            self.source
                .store(if usable { TSC } else { GETTIME }, Ordering::Relaxed);
        }
        if self.source.load(Ordering::Relaxed) != TSC {
            return;
        }
        self.refit_if_due(REFIT_EVERY_MAX_NS);
    }

    /// Fits when due, with refit intervals capped at `max_interval_ns`.
    fn refit_if_due(&self, max_interval_ns: u64) {
        let Ok(mut fitting) = self.fitting.try_lock() else {
            return;
        };
        if gettime_ns() < fitting.due_ns {
            return;
        }
        let pair = take_pair();
        let Some(last) = fitting.last else {
            fitting.last = Some(pair);
            fitting.due_ns = pair.ns + fitting.interval_ns;
            return;
        };
        let (ticks, ns) = (
            pair.tsc.saturating_sub(last.tsc),
            pair.ns.saturating_sub(last.ns),
        );
        if ticks == 0 || ns == 0 {
            return;
        }
        // The slope over the last interval, ns per tick times 2^32.
        let rate = ((ns as u128) << SHIFT) / ticks as u128;
        let Ok(rate) = u64::try_from(rate) else {
            return;
        };
        let generation = self.generation.load(Ordering::Relaxed);
        let published = if generation == 0 {
            // First fit: through the pair, raised by the pair's width so a
            // converted time is never before a `clock_gettime` a thread
            // read before it (the next refits take the raise out).
            let line = |boundary: u64| Line {
                boundary,
                ns: pair.ns + pair.width + scale(boundary.saturating_sub(pair.tsc), rate),
                mult: rate,
                prev_mult: rate,
            };
            self.publish(rate, line, read_tsc_ordered);
            true
        } else {
            let current = self.current_line();
            let offset = current.at(pair.tsc) as i128 - pair.ns as i128;
            fitting.worst_offset_ns = fitting
                .worst_offset_ns
                .max(offset.unsigned_abs().min(u64::MAX as u128) as u64);
            // Take the offset out over the next interval: the slope less
            // offset/interval of itself, within CORRECTION_MAX_PPM.
            let interval = fitting.interval_ns.max(1) as i128;
            let limit = (rate as u128 * CORRECTION_MAX_PPM / 1_000_000) as i128;
            let correction = (offset * rate as i128 / interval).clamp(-limit, limit);
            let mult = (rate as i128 - correction).max(1) as u64;
            let line = |boundary: u64| Line {
                boundary,
                ns: current.at(boundary),
                mult,
                prev_mult: current.mult,
            };
            self.publish_after(current, line, read_tsc_ordered)
        };
        if published {
            fitting.last = Some(pair);
            fitting.interval_ns = (fitting.interval_ns * 2).min(max_interval_ns);
            fitting.due_ns = pair.ns + fitting.interval_ns;
        }
    }

    /// The slot readers use now (the writer's view).
    fn current_line(&self) -> Line {
        let slot = &self.slots[(self.generation.load(Ordering::Relaxed) & 1) as usize];
        Line {
            boundary: slot.boundary.load(Ordering::Relaxed),
            ns: slot.ns.load(Ordering::Relaxed),
            mult: slot.mult.load(Ordering::Relaxed),
            prev_mult: slot.prev_mult.load(Ordering::Relaxed),
        }
    }

    /// Publishes the first line (of slope `mult`), its boundary a little
    /// ahead of now.
    fn publish(&self, mult: u64, line: impl Fn(u64) -> Line, tsc: impl Fn() -> u64) {
        let boundary = tsc().saturating_add(ticks_for(BOUNDARY_AHEAD_NS, mult));
        self.store_next(line(boundary));
    }

    /// Publishes the next line after `current` (the published one): first
    /// ends the current slot at a boundary ahead of now (and checks now is
    /// still before it), then publishes the next slot from that boundary.
    /// Returns false (nothing changed) if the current slot's boundary is not
    /// yet behind the counter.
    fn publish_after(
        &self,
        current: Line,
        line: impl Fn(u64) -> Line,
        tsc: impl Fn() -> u64,
    ) -> bool {
        let slot = &self.slots[(self.generation.load(Ordering::Relaxed) & 1) as usize];
        let ahead = ticks_for(BOUNDARY_AHEAD_NS, current.mult);
        let mut now = tsc();
        if now < current.boundary {
            return false;
        }
        let boundary = loop {
            let boundary = now.saturating_add(ahead);
            // SeqCst: a full fence (a locked exchange on x86_64), so the
            // store is visible to every reader before the counter is read
            // again below.
            slot.valid_until.store(boundary, Ordering::SeqCst);
            now = tsc();
            if now < boundary {
                break boundary;
            }
            // Held up past the boundary: readers may have clamped at it;
            // move it on (it only grows, so what they returned stays behind).
        };
        self.store_next(line(boundary));
        true
    }

    /// Fills the unused slot and makes it the used one.
    fn store_next(&self, line: Line) {
        let next = self.generation.load(Ordering::Relaxed) + 1;
        let slot = &self.slots[(next & 1) as usize];
        // Readers still in this slot's previous generation must see the
        // generation move once they see any of the stores below.
        fence(Ordering::Release);
        slot.boundary.store(line.boundary, Ordering::Relaxed);
        slot.ns.store(line.ns, Ordering::Relaxed);
        slot.mult.store(line.mult, Ordering::Relaxed);
        slot.prev_mult.store(line.prev_mult, Ordering::Relaxed);
        slot.valid_until.store(u64::MAX, Ordering::Relaxed);
        self.generation.store(next, Ordering::Release);
    }
}

impl Default for HostClock {
    fn default() -> Self {
        HostClock::new()
    }
}

/// Counter ticks in `ns` at `mult` (at least 1).
fn ticks_for(ns: u64, mult: u64) -> u64 {
    (((ns as u128) << SHIFT) / mult.max(1) as u128).clamp(1, u64::MAX as u128) as u64
}

/// The narrowest of [`PAIR_TRIES`] brackets `clock_gettime`, counter,
/// `clock_gettime`.
fn take_pair() -> Pair {
    let mut best: Option<Pair> = None;
    for _ in 0..PAIR_TRIES {
        let before = gettime_ns();
        let tsc = read_tsc_ordered();
        let after = gettime_ns();
        let width = after.saturating_sub(before);
        if best.is_none_or(|b| width < b.width) {
            best = Some(Pair {
                tsc,
                ns: before + width / 2,
                width,
            });
        }
    }
    best.expect("PAIR_TRIES > 0")
}

/// Whether the TSC is a clock here: the kernel keeps time with it (so it is
/// synchronised across CPUs and `CLOCK_MONOTONIC` is derived from it), the
/// CPU says it ticks at one rate in every state, and the program did not ask
/// for `rdtsc` to fault (`PR_SET_TSC`; asked later, after this decision, it
/// would: no program is known to).
fn tsc_is_a_clock() -> bool {
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    let Ok(source) = source else {
        return false;
    };
    source.trim() == "tsc" && cpu_flags_ok(&first_flags_line()) && tsc_allowed()
}

/// The first `flags` line of `/proc/cpuinfo` (empty if none).
fn first_flags_line() -> String {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open("/proc/cpuinfo") else {
        return String::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default()
}

/// Whether a `/proc/cpuinfo` flags line names `constant_tsc` and
/// `nonstop_tsc`.
fn cpu_flags_ok(flags: &str) -> bool {
    let flags = flags.split_once(':').map_or("", |(_, f)| f);
    let has = |name: &str| flags.split_whitespace().any(|f| f == name);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// 1 ns per tick exactly.
    const ONE: u64 = 1 << SHIFT;

    fn clock_with(line: Line) -> HostClock {
        let clock = HostClock::new();
        clock.store_next(line);
        clock
    }

    fn at(clock: &HostClock, tsc: u64) -> u64 {
        clock.read_with(|| tsc).unwrap()
    }

    #[test]
    fn converts_known_pairs() {
        // 2.5 GHz: 0.4 ns per tick.
        let mult = (ONE as u128 * 2 / 5) as u64;
        let clock = clock_with(Line {
            boundary: 1_000_000,
            ns: 5_000_000_000,
            mult,
            prev_mult: mult,
        });
        assert_eq!(at(&clock, 1_000_000), 5_000_000_000);
        // 2.5e9 ticks later: one second, to within the fixed point's 1 ns.
        let s = at(&clock, 1_000_000 + 2_500_000_000);
        assert!((5_999_999_999..=6_000_000_000).contains(&s), "{s}");
        // Before the boundary, the previous slope.
        let before = at(&clock, 0);
        assert!(
            (4_999_600_000..=4_999_600_001).contains(&before),
            "{before}"
        );
        // 2 GHz: exact in the fixed point.
        let clock = clock_with(Line {
            boundary: 10,
            ns: 1_000,
            mult: ONE / 2,
            prev_mult: ONE / 4,
        });
        assert_eq!(at(&clock, 2_010), 2_000);
        assert_eq!(at(&clock, 2), 998);
        assert_eq!(clock.generation.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn large_values_do_not_wrap() {
        let clock = clock_with(Line {
            boundary: 1 << 63,
            ns: u64::MAX - 10,
            mult: 3 * ONE,
            prev_mult: 3 * ONE,
        });
        assert_eq!(at(&clock, u64::MAX), u64::MAX);
        assert_eq!(at(&clock, (1 << 63) + 3), u64::MAX - 1);
        let clock = clock_with(Line {
            boundary: 1 << 63,
            ns: 1 << 40,
            mult: 3 * ONE,
            prev_mult: 3 * ONE,
        });
        assert_eq!(at(&clock, 0), 0);
        // 2^62 ticks at 0.25 ns: no overflow in the product.
        let quarter = ONE / 4;
        assert_eq!(scale(1 << 62, quarter), 1 << 60);
        assert_eq!(scale(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(ticks_for(1000, ONE), 1000);
        assert_eq!(ticks_for(1000, 0), 1000u64 << SHIFT);
    }

    /// Every reader position around a slope change, both ways: what the old
    /// slot returns for any counter at most what the new one returns for the
    /// same or a later counter, and each slot non-decreasing.
    #[test]
    fn a_new_slope_never_goes_backwards() {
        for (old, new) in [
            (ONE, ONE - ONE / 1000),
            (ONE, ONE + ONE / 1000),
            (ONE / 3, ONE / 3 + 7),
        ] {
            let clock = clock_with(Line {
                boundary: 1_000,
                ns: 77_777,
                mult: old,
                prev_mult: old,
            });
            let before: Vec<u64> = (0..400_000).map(|t| at(&clock, t)).collect();
            let current = clock.current_line();
            let now = Cell::new(9_000u64);
            let published = clock.publish_after(
                current,
                |boundary| Line {
                    boundary,
                    ns: current.at(boundary),
                    mult: new,
                    prev_mult: current.mult,
                },
                || now.get(),
            );
            assert!(published);
            let boundary = clock.current_line().boundary;
            assert_eq!(boundary, 9_000 + ticks_for(BOUNDARY_AHEAD_NS, old));
            let after: Vec<u64> = (0..400_000).map(|t| at(&clock, t)).collect();
            for t in 1_000..400_000usize {
                assert!(after[t] >= after[t - 1], "new slot at {t}");
                assert!(before[t] >= before[t - 1], "old slot at {t}");
            }
            for t in 1_000..400_000usize {
                // The old slot as a reader saw it once the boundary was
                // set: clamped there.
                let old_seen = before[t.min(boundary as usize)];
                assert!(after[t] >= old_seen, "{t}: {} < {old_seen}", after[t]);
                if (t as u64) < boundary {
                    assert!(after[t] - before[t] <= 1, "{t}");
                }
            }
        }
    }

    #[test]
    fn a_held_up_writer_moves_the_boundary_on() {
        let clock = clock_with(Line {
            boundary: 0,
            ns: 0,
            mult: ONE,
            prev_mult: ONE,
        });
        let current = clock.current_line();
        let reads = Cell::new(0u64);
        // The first check finds the counter past the boundary.
        let tsc = || {
            reads.set(reads.get() + 1);
            match reads.get() {
                1 => 100,
                2 => 100_000,
                _ => 100_001,
            }
        };
        let line = |boundary| Line {
            boundary,
            ns: current.at(boundary),
            mult: 2 * ONE,
            prev_mult: ONE,
        };
        assert!(clock.publish_after(current, line, tsc));
        let boundary = 100_000 + BOUNDARY_AHEAD_NS;
        assert_eq!(clock.current_line().boundary, boundary);
        assert_eq!(at(&clock, 100_000), 100_000);
        // The old slot now ends at that boundary.
        assert_eq!(clock.slots[1].valid_until.load(Ordering::Relaxed), boundary);
        // A writer before the current boundary changes nothing.
        let current = clock.current_line();
        assert!(!clock.publish_after(current, line, || 5));
        assert_eq!(clock.generation.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn unfitted_and_fallback_read_clock_gettime() {
        let clock = HostClock::new();
        assert_eq!(clock.source(), Source::Undecided);
        assert_eq!(clock.read_with(|| 5), None);
        let a = gettime_ns();
        let b = clock.now_ns();
        let c = gettime_ns();
        assert!(a <= b && b <= c);
        clock.source.store(GETTIME, Ordering::Relaxed);
        clock.maintain();
        assert_eq!(clock.generation.load(Ordering::Relaxed), 0);
        assert_eq!(clock.source(), Source::ClockGettime);
        assert_eq!(clock.source().name(), "clock_gettime");
    }

    #[test]
    fn cpu_flags() {
        assert!(cpu_flags_ok(
            "flags\t\t: fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid"
        ));
        assert!(!cpu_flags_ok("flags\t\t: fpu tsc constant_tsc rep_good"));
        assert!(!cpu_flags_ok(
            "flags\t\t: fpu tsc nonstop_tsc_x constant_tsc"
        ));
        assert!(!cpu_flags_ok(""));
    }

    /// The real clock against `clock_gettime`: several threads read both
    /// interleaved while a writer refits every few ms; the converted counter
    /// stays within BOUND of the bracket and never goes backwards on a
    /// thread.
    #[test]
    fn stays_near_clock_gettime_and_monotonic_on_every_thread() {
        const BOUND: u64 = 1_000;
        let clock = HostClock::new();
        clock.maintain();
        if clock.source.load(Ordering::Relaxed) != TSC {
            // Not a TSC machine: every read is clock_gettime.
            assert_eq!(clock.source(), Source::ClockGettime);
            return;
        }
        /// Stops the readers however the writer's loop ends (a panic in it
        /// must not leave the scope waiting for them).
        struct Stop<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        let (worst, generations) = std::thread::scope(|s| {
            let readers: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let mut last = 0u64;
                        let mut worst = 0u64;
                        let mut reads = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            let before = gettime_ns();
                            let now = clock.now_ns();
                            let after = gettime_ns();
                            assert!(now >= last, "backwards: {now} < {last}");
                            last = now;
                            if clock.generation.load(Ordering::Relaxed) >= 2 {
                                // Past the first fit's raise: within BOUND.
                                let off = if now < before {
                                    before - now
                                } else {
                                    now.saturating_sub(after)
                                };
                                worst = worst.max(off);
                            }
                            reads += 1;
                        }
                        assert!(reads > 1000);
                        worst
                    })
                })
                .collect();
            let stopping = Stop(&stop);
            let start = gettime_ns();
            while gettime_ns() - start < 400_000_000 {
                clock.refit_if_due(8_000_000);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            drop(stopping);
            let worst = readers.into_iter().map(|r| r.join().unwrap()).max();
            (worst.unwrap(), clock.generation.load(Ordering::Relaxed))
        });
        assert_eq!(clock.source(), Source::Tsc);
        assert!(generations > 20, "{generations} fits");
        eprintln!(
            "host clock: worst reader offset {worst} ns, worst refit offset {} ns, {generations} fits",
            clock.worst_offset_ns()
        );
        assert!(worst <= BOUND, "{worst} ns off clock_gettime");
    }

    /// ns per read of each clock (run with --ignored --nocapture, release).
    #[test]
    #[ignore]
    fn read_cost() {
        let clock = HostClock::new();
        clock.maintain();
        let start = gettime_ns();
        while clock.source() == Source::Undecided && gettime_ns() - start < 100_000_000 {
            clock.maintain();
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        const N: u64 = 20_000_000;
        for round in 0..3 {
            let t = std::time::Instant::now();
            let mut x = 0u64;
            for _ in 0..N {
                x = x.wrapping_add(std::hint::black_box(&clock).now_ns());
            }
            let fast = t.elapsed().as_nanos() as f64 / N as f64;
            let t = std::time::Instant::now();
            for _ in 0..N {
                x = x.wrapping_add(gettime_ns());
            }
            let slow = t.elapsed().as_nanos() as f64 / N as f64;
            std::hint::black_box(x);
            eprintln!(
                "round {round}: {:?} {fast:.1} ns per read, clock_gettime {slow:.1} ns",
                clock.source()
            );
        }
    }
}
