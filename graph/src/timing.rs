//! Exact duration aggregates: count/total/min/max, untimed counts by reason,
//! nearest-rank percentiles, and a human-readable nanosecond formatter.

use crate::record::TimingStatus;

/// Count, total, minimum and maximum of a set of durations (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DurationStats {
    /// How many durations were added.
    pub count: u64,
    /// Their sum (saturating).
    pub total_ns: u64,
    /// The smallest (0 when `count` is 0).
    pub min_ns: u64,
    /// The largest.
    pub max_ns: u64,
}

impl DurationStats {
    /// Add one duration.
    pub fn add(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.total_ns = self.total_ns.saturating_add(ns);
        self.count += 1;
    }

    /// Fold another set into this one.
    pub fn merge(&mut self, other: &DurationStats) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
        self.count += other.count;
    }

    /// The mean, rounded to the nearest ns; `None` when empty.
    pub fn mean_ns(&self) -> Option<u64> {
        (self.count > 0).then(|| {
            let total = u128::from(self.total_ns);
            let n = u128::from(self.count);
            ((total + n / 2) / n) as u64
        })
    }
}

/// How many device commands could not be timed, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UntimedCounts {
    /// Queue without profiling.
    pub no_profiling: u64,
    /// Timestamps failed the sanity checks.
    pub invalid: u64,
    /// Event not read before teardown.
    pub lost: u64,
    /// No timestamp source, or no device event.
    pub unavailable: u64,
    /// Event signalled before the timestamp source was ready.
    pub not_ready: u64,
    /// Event that could not be retained.
    pub not_retained: u64,
    /// The event timed a marker after the work, not the work.
    pub marker: u64,
    /// Event not kept while the collector was behind.
    pub behind: u64,
}

impl UntimedCounts {
    /// Count one command with this status (`Ok` is not counted here).
    pub fn add(&mut self, status: TimingStatus) {
        match status {
            TimingStatus::Ok => {}
            TimingStatus::NoProfiling => self.no_profiling += 1,
            TimingStatus::Invalid => self.invalid += 1,
            TimingStatus::Lost => self.lost += 1,
            TimingStatus::Unavailable => self.unavailable += 1,
            TimingStatus::NotReady => self.not_ready += 1,
            TimingStatus::NotRetained => self.not_retained += 1,
            TimingStatus::Marker => self.marker += 1,
            TimingStatus::Behind => self.behind += 1,
        }
    }

    /// Fold another set of counts into this one.
    pub fn merge(&mut self, other: &UntimedCounts) {
        self.no_profiling += other.no_profiling;
        self.invalid += other.invalid;
        self.lost += other.lost;
        self.unavailable += other.unavailable;
        self.not_ready += other.not_ready;
        self.not_retained += other.not_retained;
        self.marker += other.marker;
        self.behind += other.behind;
    }

    /// All untimed commands.
    pub fn total(&self) -> u64 {
        self.no_profiling
            + self.invalid
            + self.lost
            + self.unavailable
            + self.not_ready
            + self.not_retained
            + self.marker
            + self.behind
    }

    /// The non-zero counts with their status, in `TimingStatus` order.
    pub fn nonzero(&self) -> Vec<(TimingStatus, u64)> {
        [
            (TimingStatus::NoProfiling, self.no_profiling),
            (TimingStatus::Invalid, self.invalid),
            (TimingStatus::Lost, self.lost),
            (TimingStatus::Unavailable, self.unavailable),
            (TimingStatus::NotReady, self.not_ready),
            (TimingStatus::NotRetained, self.not_retained),
            (TimingStatus::Marker, self.marker),
            (TimingStatus::Behind, self.behind),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }
}

/// Nearest-rank percentile of already sorted values: the smallest value with
/// at least `p` percent of the values at or below it (`p` in 0..=100).
/// `None` for an empty slice.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    percentile_index(sorted.len(), p).map(|i| sorted[i])
}

/// Where [`percentile`] reads in `n` sorted values; `None` when `n` is 0.
pub(crate) fn percentile_index(n: usize, p: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let rank = ((p.clamp(0.0, 100.0) / 100.0) * n as f64).ceil() as usize;
    Some(rank.clamp(1, n) - 1)
}

/// The nearest-rank percentiles `low` and `high` (`low <= high`) of
/// unsorted values, as [`percentile`] gives them on the sorted values, in
/// linear time; `values` is reordered.
pub(crate) fn two_percentiles(
    values: &mut [u64],
    low: f64,
    high: f64,
) -> (Option<u64>, Option<u64>) {
    let (Some(lo), Some(hi)) = (
        percentile_index(values.len(), low),
        percentile_index(values.len(), high),
    ) else {
        return (None, None);
    };
    let (below, &mut high_value, _) = values.select_nth_unstable(hi);
    let low_value = if lo < hi {
        *below.select_nth_unstable(lo).1
    } else {
        high_value
    };
    (Some(low_value), Some(high_value))
}

/// `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`: three significant digits.
pub fn format_ns(ns: u64) -> String {
    let ns_f = ns as f64;
    let (value, unit) = if ns < 1_000 {
        return format!("{ns} ns");
    } else if ns < 1_000_000 {
        (ns_f / 1e3, "µs")
    } else if ns < 1_000_000_000 {
        (ns_f / 1e6, "ms")
    } else {
        (ns_f / 1e9, "s")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// A duration as [`format_ns`] writes it (`17.5 ms`, `624 µs`, `3 ns`)
/// read back to ns, as precisely as it was written (three significant
/// digits); `None` for any other text.
pub fn parse_formatted_ns(text: &str) -> Option<u64> {
    let (value, unit) = text.trim().split_once(' ')?;
    let scale = match unit {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let value: f64 = value.parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| (value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatted_durations_read_back_to_three_digits() {
        for ns in [
            0,
            7,
            999,
            1_000,
            17_456,
            624_000,
            17_549_999,
            2_830_000_000,
            12_345_678_901,
        ] {
            let back = parse_formatted_ns(&format_ns(ns)).unwrap();
            assert!(
                back.abs_diff(ns) * 200 <= ns.max(1),
                "{ns}: {}",
                format_ns(ns)
            );
        }
        assert_eq!(parse_formatted_ns("1.5 ms"), Some(1_500_000));
        assert_eq!(parse_formatted_ns("1.5 min"), None);
        assert_eq!(parse_formatted_ns("x ms"), None);
    }

    #[test]
    fn stats_track_min_max_total_mean() {
        let mut s = DurationStats::default();
        assert_eq!(s.mean_ns(), None);
        for d in [30, 10, 20] {
            s.add(d);
        }
        assert_eq!((s.count, s.total_ns, s.min_ns, s.max_ns), (3, 60, 10, 30));
        assert_eq!(s.mean_ns(), Some(20));
        s.add(1);
        assert_eq!(s.mean_ns(), Some(15)); // 61 / 4 = 15.25
        let mut other = DurationStats::default();
        other.add(0);
        s.merge(&other);
        assert_eq!((s.count, s.min_ns), (5, 0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v = [10, 20, 30, 40];
        assert_eq!(percentile(&v, 50.0), Some(20));
        assert_eq!(percentile(&v, 95.0), Some(40));
        assert_eq!(percentile(&v, 0.0), Some(10));
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(percentile(&v, 95.0), Some(19));
        assert_eq!(percentile(&v, 50.0), Some(10));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[7], 95.0), Some(7));
    }

    #[test]
    fn two_percentiles_equal_the_sorted_ones() {
        let mut seed = 12345u64;
        for n in 0..200 {
            let mut v: Vec<u64> = (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 33) % 50
                })
                .collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let want = (percentile(&sorted, 50.0), percentile(&sorted, 95.0));
            assert_eq!(two_percentiles(&mut v, 50.0, 95.0), want, "n = {n}");
        }
    }

    #[test]
    fn untimed_counts_by_reason() {
        let mut u = UntimedCounts::default();
        u.add(TimingStatus::Ok);
        u.add(TimingStatus::Lost);
        u.add(TimingStatus::NoProfiling);
        u.add(TimingStatus::NoProfiling);
        assert_eq!(u.total(), 3);
        assert_eq!(
            u.nonzero(),
            vec![(TimingStatus::NoProfiling, 2), (TimingStatus::Lost, 1)]
        );
    }

    #[test]
    fn human_durations() {
        assert_eq!(format_ns(850), "850 ns");
        assert_eq!(format_ns(12_345), "12.3 µs");
        assert_eq!(format_ns(4_560_000), "4.56 ms");
        assert_eq!(format_ns(1_230_000_000), "1.23 s");
        assert_eq!(format_ns(250_000), "250 µs");
    }
}
