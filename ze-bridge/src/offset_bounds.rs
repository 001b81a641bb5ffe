//! Bounds on a device clock's offset to `CLOCK_MONOTONIC`, learnt from what
//! the host saw of the device's commands, and the offset chosen from them.
//!
//! A clock pair (`urDeviceGetGlobalTimestamps`) gives one offset, but how
//! late its host half is read after its device half is the adapter's
//! business: DPC++'s CUDA adapter records a `CUevent`, waits for it, reads
//! its time (`cuEventElapsedTime`) and only then `steady_clock`, so the
//! pair's offset is too large by that wait's tail and every end placed with
//! it lands after the host had already seen the command complete.
//!
//! The collector sees commands complete, and each sighting bounds the offset
//! `o` (host = device + `o`) of the clock that timed it:
//! - **upper**: a command seen complete at host time `t` (the clock read
//!   right after the query that said so) ended by then: `o ≤ t − end_dev`;
//! - **lower**: a command seen still running at host time `t` (a clock read
//!   before that query) had not ended: `o > t − end_dev`.
//!
//! The offset drifts: on the H200, CUDA's event clock gained 4.7–5.7 µs
//! per second on `CLOCK_MONOTONIC` (about 5 ppm), so one offset per second
//! placed ends up to 6.4 µs after the program had seen them complete.
//! The offset is therefore a line: the window's pair offset, moving at the
//! rate of the pairs of the last two seconds (the slope between the newest
//! pair and the oldest one kept, at least 200 ms apart). Bounds are kept
//! per window (the time between two clock pairs), measured against that
//! line. The offset used is the line, less the pair's lateness as measured
//! in the last window with enough sightings, then no more than the
//! window's tightest upper bound and no less than its tightest lower
//! bound, and for each command never more than its own upper bound: no end
//! is placed after the moment syclgraph saw it complete. The width of a
//! window's bounds (`upper − lower`) is how well the offset is known: the
//! summary's `host clock:` line.

/// Sightings a window needs before its bounds measure the pair's lateness.
pub const MIN_SIGHTINGS: u64 = 16;

/// A sighting further below the window's lower bound than this (ns) is
/// not a drifting clock (a few µs per second) but a runtime that reported
/// the command complete before it wrote its end time (seen on the OpenCL
/// CPU device under load, by tens of µs): it neither caps the command nor
/// bounds the offset.
pub const SIGHTING_BELOW_LOWER_MAX_NS: i64 = 10_000;

/// Pairs kept for the slope.
const HISTORY: usize = 8;
/// The slope is measured over at most this long (ns) ...
const SLOPE_SPAN_MAX_NS: u64 = 2_000_000_000;
/// ... and at least this long (ns): shorter, a pair's jitter is most of it.
const SLOPE_SPAN_MIN_NS: u64 = 200_000_000;
/// A slope beyond this (parts per billion) is taken as a bad pair, not a clock.
const SLOPE_MAX_PPB: i64 = 200_000;

/// What the host saw of one device clock (all offsets in ns,
/// `CLOCK_MONOTONIC − device`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OffsetBounds {
    /// The window's clock pair offset, when one was taken.
    pair: Option<i64>,
    /// `CLOCK_MONOTONIC` of the window's pair.
    pair_at: u64,
    /// The offset's drift in ns per second of host time (parts per billion).
    slope_ppb: i64,
    /// The last pairs (`CLOCK_MONOTONIC`, offset), oldest first; `len` used.
    history: [(u64, i64); HISTORY],
    history_len: usize,
    /// The tightest upper bound seen in the window.
    upper: Option<i64>,
    /// The tightest lower bound seen in the window.
    lower: Option<i64>,
    /// Completions seen in the window.
    sightings: u64,
    /// How much the pair's offset exceeded the upper bounds, measured in
    /// the last window with [`MIN_SIGHTINGS`] (0 when the pair was tighter).
    pair_lateness: Option<u64>,
    /// Completions seen in all.
    pub total_sightings: u64,
    /// Of them, the program's waits' (counted by the caller).
    pub from_waits: u64,
    /// Commands whose own sighting lowered the offset they were placed with.
    pub capped: u64,
    /// Sightings ignored: further below the lower bound than
    /// [`SIGHTING_BELOW_LOWER_MAX_NS`].
    pub misordered: u64,
    /// Windows closed with both bounds and [`MIN_SIGHTINGS`].
    pub windows: u64,
    /// The widest `upper − lower` of those windows.
    pub widest_ns: Option<u64>,
    /// The `upper − lower` of the last of them.
    pub last_width_ns: Option<u64>,
    /// The pair's lateness as last measured.
    pub lateness_ns: Option<u64>,
}

/// `ppb` parts per billion of `dt` ns (rounded towards 0).
fn drift(ppb: i64, dt: i128) -> i64 {
    (i128::from(ppb) * dt / 1_000_000_000).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl OffsetBounds {
    /// A new window starts with a new clock pair's `offset` and its own
    /// bounds (`before − device` and `after − device`: the pair's device
    /// time was read between the host clock reads `before` and `after`).
    /// The closing window's bounds measure the old pair's lateness and the
    /// offset's uncertainty.
    /// `at` is the pair's `CLOCK_MONOTONIC`; the slope is measured again
    /// from the pairs kept.
    pub fn new_window(
        &mut self,
        pair_offset: i64,
        pair_lower: Option<i64>,
        pair_upper: Option<i64>,
        at: u64,
    ) {
        if self.sightings >= MIN_SIGHTINGS {
            if let (Some(pair), Some(upper)) = (self.pair, self.upper) {
                let lateness = pair.saturating_sub(upper).max(0) as u64;
                self.pair_lateness = Some(lateness);
                self.lateness_ns = Some(lateness);
            }
            if let (Some(upper), Some(lower)) = (self.upper, self.lower) {
                let width = upper.saturating_sub(lower).max(0) as u64;
                self.windows += 1;
                self.last_width_ns = Some(width);
                self.widest_ns = Some(self.widest_ns.map_or(width, |w| w.max(width)));
            }
        }
        self.pair = Some(pair_offset);
        self.pair_at = at;
        self.upper = pair_upper;
        self.lower = pair_lower;
        self.sightings = 0;
        // Keep the pairs of the last SLOPE_SPAN_MAX_NS, oldest first.
        if self.history_len == HISTORY {
            self.history.copy_within(1.., 0);
            self.history_len -= 1;
        }
        self.history[self.history_len] = (at, pair_offset);
        self.history_len += 1;
        self.slope_ppb = self.history[..self.history_len]
            .iter()
            .find(|(t, _)| {
                let span = at.saturating_sub(*t);
                (SLOPE_SPAN_MIN_NS..=SLOPE_SPAN_MAX_NS).contains(&span)
            })
            .map_or(0, |&(t, offset)| {
                let span = i128::from(at - t);
                let ppb = (i128::from(pair_offset) - i128::from(offset)) * 1_000_000_000 / span;
                ppb.clamp(-i128::from(SLOPE_MAX_PPB), i128::from(SLOPE_MAX_PPB)) as i64
            });
    }

    /// The offset's drift since the window's pair, at host time `t`.
    fn trend(&self, t: u64) -> i64 {
        drift(self.slope_ppb, i128::from(t) - i128::from(self.pair_at))
    }

    /// The drift the offset is followed with, in parts per billion.
    pub fn slope_ppb(&self) -> i64 {
        self.slope_ppb
    }

    /// The offset to place a command with whose end is `end_dev` (device
    /// ns), seen complete at host `seen_ns`; records the sighting.
    /// `fallback` stands in for the pair when no window began yet.
    pub fn place(&mut self, end_dev: u64, seen_ns: u64, fallback: i64) -> i64 {
        let own = i64::try_from(i128::from(seen_ns) - i128::from(end_dev)).ok();
        let pair = self.pair.unwrap_or(fallback);
        // Bounds are kept against the line through the pair: `trend` moves
        // them to this command's time (its sighting stands for it).
        let trend = self.trend(seen_ns);
        let mut offset = pair.saturating_sub(self.pair_lateness.unwrap_or(0) as i64);
        if let Some(upper) = self.upper {
            offset = offset.min(upper);
        }
        if let Some(lower) = self.lower {
            offset = offset.max(lower);
        }
        offset = offset.saturating_add(trend);
        let Some(own) = own else {
            return offset;
        };
        if let Some(lower) = self.lower {
            if own.saturating_sub(trend) < lower.saturating_sub(SIGHTING_BELOW_LOWER_MAX_NS) {
                self.misordered += 1;
                return offset;
            }
        }
        if own < offset {
            offset = own;
            self.capped += 1;
        }
        let own_at_pair = own.saturating_sub(trend);
        self.upper = Some(self.upper.map_or(own_at_pair, |u| u.min(own_at_pair)));
        self.sightings += 1;
        self.total_sightings += 1;
        offset
    }

    /// The open window's `upper − lower`, once it has [`MIN_SIGHTINGS`].
    pub fn open_width_ns(&self) -> Option<u64> {
        if self.sightings < MIN_SIGHTINGS {
            return None;
        }
        let (upper, lower) = (self.upper?, self.lower?);
        Some(upper.saturating_sub(lower).max(0) as u64)
    }

    /// A command whose end is `end_dev` had not completed when the host
    /// clock read `before_ns`.
    pub fn still_running(&mut self, end_dev: u64, before_ns: u64) {
        let Ok(bound) = i64::try_from(i128::from(before_ns) - i128::from(end_dev)) else {
            return;
        };
        let bound = bound.saturating_sub(self.trend(before_ns));
        self.lower = Some(self.lower.map_or(bound, |l| l.max(bound)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device clock 1,000,000 ns behind the host; the pair reads 3 µs
    /// late; commands are seen 200–2,000 ns after their end.
    #[test]
    fn the_pairs_lateness_is_measured_and_taken_out() {
        const TRUE: i64 = 1_000_000;
        let mut b = OffsetBounds::default();
        b.new_window(TRUE + 3_000, Some(TRUE - 20_000), Some(TRUE + 9_000), 0);
        // First window: the offset comes down to the sightings.
        let mut placed = Vec::new();
        for i in 0..20u64 {
            let end_dev = 10_000_000 + i * 50_000;
            let late = 200 + (i * 397) % 1_800;
            let seen = (end_dev as i64 + TRUE) as u64 + late;
            placed.push(b.place(end_dev, seen, 0));
            // Never after the sighting.
            assert!(end_dev as i64 + *placed.last().unwrap() <= seen as i64);
        }
        assert_eq!(placed[0], TRUE + 200);
        assert!(placed.iter().all(|&o| o <= TRUE + 3_000));
        assert_eq!(*placed.last().unwrap(), TRUE + 200);
        assert_eq!(b.capped, 1);
        // A command seen running 100 ns before its end.
        b.still_running(11_000_000, (11_000_000 + TRUE - 100) as u64);
        assert_eq!(b.open_width_ns(), Some(300));
        b.new_window(TRUE + 3_100, None, None, 0);
        assert_eq!(b.lateness_ns, Some(2_800));
        assert_eq!(b.last_width_ns, Some(300));
        assert_eq!(b.windows, 1);
        // Next window: the new pair less the lateness, before any sighting.
        let o = b.place(20_000_000, (20_000_000 + TRUE) as u64 + 5_000, 0);
        assert_eq!(o, TRUE + 300);
        assert_eq!(b.total_sightings, 21);
    }

    /// A device clock that gains 5 µs a second (the H200's CUDA events),
    /// pairs every 250 ms that read 300 ± 100 ns late, one command a
    /// millisecond seen 30 µs after its end: once the slope is known the
    /// commands are placed within 1 µs of the truth, never after their
    /// sighting.
    #[test]
    fn a_drifting_clock_is_followed() {
        let truth = |t: u64| 50_000_000i64 - (t as i64) / 200_000;
        let mut b = OffsetBounds::default();
        let mut worst_late = i64::MIN;
        let mut worst_early = i64::MIN;
        for ms in 0..3_000u64 {
            let t = 1_000_000_000 + ms * 1_000_000;
            if ms % 250 == 0 {
                let jitter = ((ms / 250) as i64 * 37) % 200 - 100;
                let pair = truth(t) + 300 + jitter;
                b.new_window(pair, Some(truth(t) - 20_000), Some(truth(t) + 9_000), t);
            }
            let end_dev = (t as i64 - truth(t)) as u64;
            let placed = b.place(end_dev, t + 30_000, 0);
            assert!(end_dev as i64 + placed <= (t + 30_000) as i64);
            if ms >= 500 {
                worst_late = worst_late.max(placed - truth(t));
                worst_early = worst_early.max(truth(t) - placed);
            }
        }
        assert!(
            (-5_200..=-4_800).contains(&b.slope_ppb()),
            "{}",
            b.slope_ppb()
        );
        assert!(worst_late <= 1_000, "late by {worst_late} ns");
        assert!(worst_early <= 1_000, "early by {worst_early} ns");
    }

    #[test]
    fn a_window_without_enough_sightings_measures_nothing() {
        let mut b = OffsetBounds::default();
        b.new_window(500, Some(-10_000), None, 0);
        for i in 0..(MIN_SIGHTINGS - 1) {
            b.place(1_000 + i, 1_000 + i + 400, 0);
        }
        b.new_window(600, None, None, 0);
        assert_eq!(b.lateness_ns, None);
        assert_eq!(b.windows, 0);
        // Without a lateness, the pair's offset (capped by the sighting).
        assert_eq!(b.place(5_000, 5_000 + 10_000, 0), 600);
        assert_eq!(b.place(6_000, 6_000 + 100, 0), 100);
    }

    #[test]
    fn a_pair_tighter_than_the_sightings_has_no_lateness() {
        let mut b = OffsetBounds::default();
        // The OpenCL CPU device: device clock = CLOCK_MONOTONIC, the pair's
        // offset -150 ns, sightings 300 ns or more after the end.
        b.new_window(-150, Some(-400), Some(250), 0);
        for i in 0..MIN_SIGHTINGS {
            assert_eq!(b.place(1_000_000 * i, 1_000_000 * i + 300 + i, 0), -150);
        }
        b.new_window(-140, Some(-400), Some(240), 0);
        assert_eq!(b.lateness_ns, Some(0));
        assert_eq!(b.last_width_ns, Some(650));
        assert_eq!(b.open_width_ns(), None);
        assert_eq!(b.place(99_000_000, 99_000_500, 0), -140);
    }

    #[test]
    fn the_lower_bound_holds_the_offset_up_and_the_own_sighting_wins() {
        let mut b = OffsetBounds::default();
        b.new_window(10_000, None, None, 0);
        for i in 0..MIN_SIGHTINGS {
            b.place(i * 1_000, i * 1_000 + 1_000, 0);
        }
        // Lateness 9,000 measured; a new pair much less late would be
        // placed below the truth: the lower bound holds it.
        b.new_window(2_000, Some(800), None, 0);
        assert_eq!(b.lateness_ns, Some(9_000));
        assert_eq!(b.place(100_000, 100_000 + 50_000, 0), 800);
        // A sighting below the lower bound (a drifting clock): the end
        // stays no later than the sighting.
        assert_eq!(b.place(200_000, 200_000 + 500, 0), 500);
        // Far below it (the end written after the completion was seen):
        // ignored, the command placed with the bounds.
        assert_eq!(b.place(300_000, 300_000 - 42_000, 0), 800);
        assert_eq!(b.misordered, 1);
        // Before any window: the fallback pair.
        let mut fresh = OffsetBounds::default();
        assert_eq!(fresh.place(10, 10_000, 70), 70);
        // A sighting outside i64 is no sighting.
        assert_eq!(fresh.place(u64::MAX, 0, 70), 70);
        assert_eq!(fresh.total_sightings, 1);
        assert_eq!(fresh.place(u64::MAX - 1, 0, 70), 70);
    }
}
