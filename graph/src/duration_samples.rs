//! A node's (or a summary group's) `ok` device durations, kept for the
//! p50/p95 of `summary.csv` in bounded memory: [`DurationSamples`].
//!
//! Up to [`EXACT_LIMIT`] durations are kept as they are, and the percentiles
//! are the exact nearest-rank ones ([`timing::percentile`]). Past that
//! the values move to an [HdrHistogram](hdrhistogram) with
//! [`SIGNIFICANT_DIGITS`] significant digits, and a percentile is the middle
//! of the histogram bucket that holds the nearest-rank value, clamped to the
//! exact minimum and maximum: within [`RELATIVE_ERROR`] (1/256, 0.39%) of
//! the exact answer, and exact below 256 ns (those buckets are 1 ns wide).
//!
//! Why HdrHistogram (the `hdrhistogram` crate) and not DDSketch
//! (`sketches-ddsketch`), measured with callgrind and 1M values per sketch:
//!
//! - **Per add** (it sits on the collector's path, one per timed device
//!   command): a histogram record is integer arithmetic (a leading-zero
//!   count, shifts, one counter increment), about 60 instructions with no
//!   allocation once the histogram covers the node's longest duration
//!   (about 80 for [`DurationSamples::add`], against 8 for the push while
//!   exact). DDSketch takes a float logarithm and a floor per add, about
//!   150.
//! - **Memory:** the histogram's counters run from 0 to the longest
//!   duration, 1 KiB per power of two of it: 21 KiB for durations up to
//!   100 ms, 28 KiB up to 10 s, 56 KiB at most for any `u64`. At 0.1%
//!   (3 digits) it would take 144 KiB for 1 µs..100 ms, too much per node;
//!   DDSketch at 0.1% takes 45 KiB for 1 µs..100 ms and collapses its
//!   lowest buckets past 64 KiB for 100 ns..10 s. Two digits read as the
//!   bucket's middle give 0.39%, within the 1% asked of the summary.
//! - **Merge:** both crates merge; the histogram's counts are integers, so
//!   0 ns needs no special case (DDSketch keeps values near 0 apart) and the
//!   nearest rank is found by walking the counts, as for the exact values.

use std::borrow::Cow;

use hdrhistogram::Histogram;

use crate::timing;

/// How many durations are kept exactly before they move to the histogram.
/// At 8 bytes each that is 32 KiB, about what the histogram itself takes
/// for durations up to tens of seconds (21 KiB to 100 ms, 28 KiB to 10 s),
/// so a node's percentile data stays near 32 KiB either way; and it keeps
/// the percentiles of short runs and of tests exact.
pub const EXACT_LIMIT: usize = 4096;

/// The histogram's significant decimal digits: 256 buckets per power of two
/// (128 above 256 ns), each at most 1/128 of its values wide.
pub const SIGNIFICANT_DIGITS: u8 = 2;

/// The largest relative error of a percentile read from the histogram:
/// half a bucket, 1/256 (0.39%).
pub const RELATIVE_ERROR: f64 = 1.0 / 256.0;

/// Durations (ns) for nearest-rank percentiles: exact up to [`EXACT_LIMIT`]
/// values, an HdrHistogram within [`RELATIVE_ERROR`] past it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DurationSamples {
    repr: Repr,
}

/// What [`DurationSamples`] holds.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    /// Every value, in arrival (or merge) order.
    Exact(Vec<u64>),
    /// Past [`EXACT_LIMIT`] (boxed: most nodes never get here).
    Sketch(Box<Sketch>),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Exact(Vec::new())
    }
}

/// The histogram with the exact extremes, which bound its estimates.
#[derive(Clone, Debug)]
struct Sketch {
    histogram: Histogram<u64>,
    min: u64,
    max: u64,
    /// Counts not in `histogram` yet, by its counter index less `base`
    /// ([`STAGED`] of them around the values seen first): an add there is
    /// an increment, where a histogram record is some 60 instructions.
    /// Every read sees them added ([`Sketch::flushed`]).
    staged: [u16; STAGED],
    base: usize,
    /// How many values `staged` holds (below `u16::MAX`, so no counter
    /// overflows).
    staged_n: u16,
}

/// The histogram counters [`Sketch`] stages values for: at two digits,
/// a span of values of two to one (1 µs to 2 µs, say).
const STAGED: usize = 256;

/// The histogram's counter index for `ns` (at [`SIGNIFICANT_DIGITS`],
/// lowest value 1: 256 sub-buckets, their upper half per power of two
/// past the first), as `hdrhistogram` computes it.
#[inline(always)]
fn counter_index(ns: u64) -> usize {
    let bucket = 56 - (ns | 255).leading_zeros() as usize;
    ((bucket + 1) << 7) + (ns >> bucket) as usize - 128
}

/// The lowest value of the counter `index` ([`counter_index`]'s inverse).
fn counter_value(index: usize) -> u64 {
    if index < 256 {
        return index as u64;
    }
    let bucket = (index >> 7) - 1;
    (((index & 127) + 128) as u64) << bucket
}

impl PartialEq for Sketch {
    fn eq(&self, other: &Sketch) -> bool {
        self.min == other.min && self.max == other.max && *self.flushed() == *other.flushed()
    }
}

impl Eq for Sketch {}

impl Sketch {
    /// An empty auto-resizing histogram sized for values up to `max`.
    fn sized_for(max: u64) -> Sketch {
        let mut histogram = Histogram::new_with_max(max.max(2), SIGNIFICANT_DIGITS)
            .expect("1..=max (max >= 2) at 2 digits is a valid histogram");
        histogram.auto(true);
        Sketch {
            histogram,
            min: u64::MAX,
            max: 0,
            staged: [0; STAGED],
            base: 0,
            staged_n: 0,
        }
    }

    /// A histogram of `values`, sized for them and for values up to `max`.
    fn of(values: &[u64], max: u64) -> Sketch {
        let top = values.iter().copied().max().unwrap_or(0).max(max);
        let mut sketch = Sketch::sized_for(top);
        sketch.add_all(values);
        sketch
    }

    /// Adds every one of `values`.
    fn add_all(&mut self, values: &[u64]) {
        for &ns in values {
            self.add(ns);
        }
    }

    #[inline]
    fn add(&mut self, ns: u64) {
        if ns > self.max {
            return self.add_above_max(ns);
        }
        self.min = self.min.min(ns);
        // The counters cover every value up to the largest: no resize.
        let index = counter_index(ns);
        match self.staged.get_mut(index.wrapping_sub(self.base)) {
            Some(count) => {
                *count += 1;
                self.staged_n += 1;
                if self.staged_n == u16::MAX {
                    self.flush();
                }
            }
            None => self.add_outside(ns, index),
        }
    }

    /// A value outside the staged counters: they move to it when they
    /// hold none, else it goes to the histogram.
    #[inline(never)]
    fn add_outside(&mut self, ns: u64, index: usize) {
        if self.staged_n > 0 {
            self.histogram.saturating_record(ns);
            return;
        }
        self.base = index.saturating_sub(STAGED / 2);
        self.staged[index - self.base] = 1;
        self.staged_n = 1;
    }

    /// Moves the staged counts into the histogram.
    #[cold]
    fn flush(&mut self) {
        if self.staged_n > 0 {
            Sketch::add_staged(&mut self.histogram, &self.staged, self.base);
            self.staged = [0; STAGED];
            self.staged_n = 0;
        }
    }

    /// Adds counts staged from counter `base` on to `histogram`.
    fn add_staged(histogram: &mut Histogram<u64>, staged: &[u16; STAGED], base: usize) {
        for (i, &count) in staged.iter().enumerate() {
            if count > 0 {
                // Past the counters' top (a value past 2^62 ns), at the top,
                // as a record of the value itself would be.
                histogram.saturating_record_n(counter_value(base + i), u64::from(count));
            }
        }
    }

    /// The histogram with the staged counts in it.
    fn flushed(&self) -> Cow<'_, Histogram<u64>> {
        if self.staged_n == 0 {
            return Cow::Borrowed(&self.histogram);
        }
        let mut histogram = self.histogram.clone();
        Sketch::add_staged(&mut histogram, &self.staged, self.base);
        Cow::Owned(histogram)
    }

    /// A new largest value, which may resize the counters.
    #[inline(never)]
    fn add_above_max(&mut self, ns: u64) {
        self.max = ns;
        self.min = self.min.min(ns);
        let bins = self.histogram.distinct_values();
        if self.histogram.record(ns).is_err() {
            // Only a resize the platform cannot hold fails (past 2^62 ns):
            // count it at the top.
            self.histogram.saturating_record(ns);
        }
        if self.histogram.distinct_values() != bins {
            self.trim();
        }
    }

    fn merge(&mut self, other: &Sketch) {
        let theirs = other.flushed();
        if theirs.is_empty() {
            return;
        }
        self.flush();
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let bins = self.histogram.distinct_values();
        if self.histogram.add(&*theirs).is_err() {
            for v in theirs.iter_recorded() {
                self.histogram
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        if self.histogram.distinct_values() != bins {
            self.trim();
        }
    }

    /// After a resize: a copy whose counters take no more than their length
    /// (a growing `Vec` may have reserved up to twice as much). At most once
    /// per doubling of the longest duration.
    #[cold]
    fn trim(&mut self) {
        self.histogram = self.histogram.clone();
    }

    /// The estimate for a value in the bucket that `bucket_value` is in.
    fn estimate(&self, bucket_value: u64) -> u64 {
        self.histogram
            .median_equivalent(bucket_value)
            .clamp(self.min, self.max)
    }

    fn two_percentiles(&self, low: f64, high: f64) -> (Option<u64>, Option<u64>) {
        let histogram = self.flushed();
        let n = usize::try_from(histogram.len()).unwrap_or(usize::MAX);
        let (Some(lo), Some(hi)) = (
            timing::percentile_index(n, low),
            timing::percentile_index(n, high),
        ) else {
            return (None, None);
        };
        let (lo, hi) = (lo as u64, hi as u64);
        let (mut low_value, mut high_value) = (None, None);
        let mut seen = 0u64;
        for v in histogram.iter_recorded() {
            seen += v.count_at_value();
            if low_value.is_none() && seen > lo {
                low_value = Some(self.estimate(v.value_iterated_to()));
            }
            if high_value.is_none() && seen > hi {
                high_value = Some(self.estimate(v.value_iterated_to()));
            }
            if low_value.is_some() && high_value.is_some() {
                break;
            }
        }
        (low_value, high_value)
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Sketch>()
            + self.histogram.distinct_values() * std::mem::size_of::<u64>()
    }
}

impl DurationSamples {
    /// No durations yet.
    pub fn new() -> DurationSamples {
        DurationSamples::default()
    }

    /// Add one duration (ns). A push while exact; past [`EXACT_LIMIT`] the
    /// values move to the histogram once, then each add is a counter
    /// increment (the counters grow only when a duration doubles the
    /// longest one so far).
    #[inline]
    pub fn add(&mut self, ns: u64) {
        match &mut self.repr {
            Repr::Exact(values) if values.len() < EXACT_LIMIT => values.push(ns),
            Repr::Exact(_) => self.sketch(ns).add(ns),
            Repr::Sketch(sketch) => sketch.add(ns),
        }
    }

    /// Add every duration of `other`. The result is exact when both are and
    /// together they hold at most [`EXACT_LIMIT`] values (then `other`'s
    /// values follow `self`'s); otherwise it is a histogram.
    pub fn merge(&mut self, other: &DurationSamples) {
        match (&mut self.repr, &other.repr) {
            (Repr::Exact(mine), Repr::Exact(theirs))
                if mine.len() + theirs.len() <= EXACT_LIMIT =>
            {
                mine.extend_from_slice(theirs)
            }
            (_, Repr::Exact(theirs)) => {
                let top = theirs.iter().copied().max().unwrap_or(0);
                self.sketch(top).add_all(theirs);
            }
            (Repr::Exact(mine), Repr::Sketch(theirs)) => {
                let mut sketch = Sketch::clone(theirs);
                sketch.add_all(mine);
                self.repr = Repr::Sketch(Box::new(sketch));
            }
            (Repr::Sketch(mine), Repr::Sketch(theirs)) => mine.merge(theirs),
        }
    }

    /// The nearest-rank percentiles `low` and `high` (0..=100; `None` when
    /// empty). While exact, those of the values ([`timing::percentile`] on
    /// them sorted); past [`EXACT_LIMIT`], within [`RELATIVE_ERROR`] of them
    /// (and never outside the smallest and largest value).
    pub fn two_percentiles(&self, low: f64, high: f64) -> (Option<u64>, Option<u64>) {
        match &self.repr {
            Repr::Exact(values) => timing::two_percentiles(&mut values.clone(), low, high),
            Repr::Sketch(sketch) => sketch.two_percentiles(low, high),
        }
    }

    /// [`two_percentiles`](DurationSamples::two_percentiles) without a copy
    /// of the exact values (they are reordered in place).
    pub fn into_two_percentiles(self, low: f64, high: f64) -> (Option<u64>, Option<u64>) {
        match self.repr {
            Repr::Exact(mut values) => timing::two_percentiles(&mut values, low, high),
            Repr::Sketch(sketch) => sketch.two_percentiles(low, high),
        }
    }

    /// How many durations were added (merged ones included).
    pub fn len(&self) -> u64 {
        match &self.repr {
            Repr::Exact(values) => values.len() as u64,
            Repr::Sketch(sketch) => sketch.histogram.len() + u64::from(sketch.staged_n),
        }
    }

    /// Whether no duration was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every value is kept (percentiles exact).
    pub fn is_exact(&self) -> bool {
        matches!(self.repr, Repr::Exact(_))
    }

    /// The values, in arrival order, while exact.
    pub fn exact_values(&self) -> Option<&[u64]> {
        match &self.repr {
            Repr::Exact(values) => Some(values),
            Repr::Sketch(_) => None,
        }
    }

    /// Bytes held on the heap: the values' capacity while exact, the
    /// histogram and its counters past [`EXACT_LIMIT`].
    pub fn heap_bytes(&self) -> usize {
        match &self.repr {
            Repr::Exact(values) => values.capacity() * std::mem::size_of::<u64>(),
            Repr::Sketch(sketch) => sketch.heap_bytes(),
        }
    }

    /// The histogram, made from the exact values (sized for them and for
    /// values up to `max`) if there is none yet.
    #[cold]
    fn sketch(&mut self, max: u64) -> &mut Sketch {
        if let Repr::Exact(values) = &self.repr {
            self.repr = Repr::Sketch(Box::new(Sketch::of(values, max)));
        }
        match &mut self.repr {
            Repr::Sketch(sketch) => sketch,
            Repr::Exact(_) => unreachable!("made a histogram above"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::percentile;
    use proptest::prelude::*;

    /// The percentiles asked in the tests: the summary's, the extremes and
    /// some in between (low <= high).
    const PAIRS: [(f64, f64); 5] = [
        (50.0, 95.0),
        (0.0, 100.0),
        (1.0, 99.0),
        (25.0, 75.0),
        (95.0, 95.0),
    ];

    /// A small deterministic generator (splitmix64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// Uniform in 0..1.
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Log-uniform in lo..=hi (lo >= 1).
        fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
            let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
            ((a + self.unit() * (b - a)).exp() as u64).clamp(lo, hi)
        }
    }

    fn samples(values: &[u64]) -> DurationSamples {
        let mut s = DurationSamples::new();
        for &v in values {
            s.add(v);
        }
        s
    }

    /// Today's answer: nearest rank on the sorted values.
    fn nearest_rank(values: &[u64], low: f64, high: f64) -> (Option<u64>, Option<u64>) {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        (percentile(&sorted, low), percentile(&sorted, high))
    }

    /// `got` is within the relative error of `want` (and both or neither
    /// is there).
    fn assert_close(got: Option<u64>, want: Option<u64>, what: &str) {
        match (got, want) {
            (Some(g), Some(w)) => assert!(
                g.abs_diff(w) as f64 <= w as f64 * RELATIVE_ERROR,
                "{what}: {g} is not within {RELATIVE_ERROR} of {w}"
            ),
            _ => assert_eq!(got, want, "{what}"),
        }
    }

    /// Every pair of percentiles of `s` is close to the exact ones of
    /// `values`.
    fn assert_all_close(s: &DurationSamples, values: &[u64], what: &str) {
        assert_eq!(s.len(), values.len() as u64, "{what}: count");
        for (low, high) in PAIRS {
            let (g_lo, g_hi) = s.two_percentiles(low, high);
            assert_eq!(s.clone().into_two_percentiles(low, high), (g_lo, g_hi));
            let (w_lo, w_hi) = nearest_rank(values, low, high);
            assert_close(g_lo, w_lo, &format!("{what}: p{low}"));
            assert_close(g_hi, w_hi, &format!("{what}: p{high}"));
        }
    }

    /// The distributions of the accuracy tests, `n` values each.
    fn distributions(n: usize) -> Vec<(&'static str, Vec<u64>)> {
        let mut r = Rng(7);
        let mut make = |f: &mut dyn FnMut(&mut Rng) -> u64| (0..n).map(|_| f(&mut r)).collect();
        vec![
            (
                "log-uniform 100 ns..10 s",
                make(&mut |r| r.log_uniform(100, 10_000_000_000)),
            ),
            ("5 µs ± 5%", make(&mut |r| 4_750 + r.next() % 500)),
            ("uniform 0..2 ms", make(&mut |r| r.next() % 2_000_000)),
            (
                "bimodal 2 µs / 50 ms",
                make(&mut |r| {
                    if r.next() % 10 == 0 {
                        r.log_uniform(45_000_000, 55_000_000)
                    } else {
                        r.log_uniform(1_900, 2_100)
                    }
                }),
            ),
            (
                "20% zeros, rest 0..300 ns",
                make(&mut |r| {
                    if r.next() % 5 == 0 {
                        0
                    } else {
                        r.next() % 300
                    }
                }),
            ),
            ("constant 123,457 ns", make(&mut |_| 123_457)),
        ]
    }

    fn value() -> impl Strategy<Value = u64> {
        prop_oneof![0..4u64, 0..1_000u64, 1_000..100_000_000u64, any::<u64>()]
    }

    proptest! {
        #[test]
        fn exact_percentiles_are_nearest_rank(
            values in prop::collection::vec(value(), 0..=600),
        ) {
            let s = samples(&values);
            prop_assert!(s.is_exact());
            prop_assert_eq!(s.exact_values(), Some(&values[..]));
            for (low, high) in PAIRS {
                prop_assert_eq!(s.two_percentiles(low, high), nearest_rank(&values, low, high));
                prop_assert_eq!(
                    s.clone().into_two_percentiles(low, high),
                    nearest_rank(&values, low, high)
                );
            }
        }

        #[test]
        fn exact_merges_are_the_concatenation(
            a in prop::collection::vec(value(), 0..=300),
            b in prop::collection::vec(value(), 0..=300),
        ) {
            let mut s = samples(&a);
            s.merge(&samples(&b));
            let both: Vec<u64> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(s.exact_values(), Some(&both[..]));
            prop_assert_eq!(s.two_percentiles(50.0, 95.0), nearest_rank(&both, 50.0, 95.0));
        }
    }

    #[test]
    fn exact_up_to_the_limit_then_a_histogram() {
        let mut r = Rng(1);
        let values: Vec<u64> = (0..=EXACT_LIMIT).map(|_| r.next() % 1_000_000).collect();
        let mut s = DurationSamples::new();
        assert!(s.is_empty());
        assert_eq!(s.two_percentiles(50.0, 95.0), (None, None));
        for &v in &values[..EXACT_LIMIT] {
            s.add(v);
        }
        assert!(s.is_exact());
        assert_eq!(
            s.two_percentiles(50.0, 95.0),
            nearest_rank(&values[..EXACT_LIMIT], 50.0, 95.0)
        );
        s.add(values[EXACT_LIMIT]);
        assert!(!s.is_exact());
        assert_eq!(s.exact_values(), None);
        assert_all_close(&s, &values, "one past the limit");
    }

    #[test]
    fn histogram_percentiles_are_within_the_relative_error() {
        for (name, values) in distributions(100_000) {
            let s = samples(&values);
            assert!(!s.is_exact(), "{name}");
            assert_all_close(&s, &values, name);
        }
    }

    #[test]
    fn small_and_constant_values_stay_exact_in_the_histogram() {
        let values: Vec<u64> = (0..10_000u64).map(|i| i % 256).collect();
        let s = samples(&values);
        assert!(!s.is_exact());
        for (low, high) in PAIRS {
            assert_eq!(
                s.two_percentiles(low, high),
                nearest_rank(&values, low, high)
            );
        }
        let s = samples(&[0; 5_000]);
        assert_eq!(s.two_percentiles(50.0, 95.0), (Some(0), Some(0)));
        let s = samples(&[987_654_321; 5_000]);
        assert_eq!(
            s.two_percentiles(50.0, 95.0),
            (Some(987_654_321), Some(987_654_321))
        );
    }

    #[test]
    fn huge_values_do_not_panic() {
        // Past 2^62 ns (146 years) the histogram counts a value at its top.
        let mut values = vec![1u64 << 62, u64::MAX, 0, 1];
        values.extend((0..EXACT_LIMIT as u64).map(|i| i * 1_000));
        let s = samples(&values);
        assert_eq!(s.len(), values.len() as u64);
        let (low, high) = s.two_percentiles(50.0, 100.0);
        assert_close(low, nearest_rank(&values, 50.0, 50.0).0, "p50");
        assert!(high >= Some(1 << 61), "{high:?}");
    }

    #[test]
    fn merges_across_the_limit_and_of_histograms() {
        let dists = distributions(3_000);
        let (a, b) = (&dists[0].1, &dists[3].1);
        let big: Vec<u64> = distributions(20_000).swap_remove(2).1;

        // exact + exact, together past the limit.
        let mut s = samples(a);
        s.merge(&samples(b));
        assert!(!s.is_exact());
        let both: Vec<u64> = a.iter().chain(b).copied().collect();
        assert_all_close(&s, &both, "exact + exact");

        // exact + histogram, histogram + exact.
        let mut s = samples(a);
        s.merge(&samples(&big));
        let a_big: Vec<u64> = a.iter().chain(&big).copied().collect();
        assert_all_close(&s, &a_big, "exact + histogram");
        let mut s = samples(&big);
        s.merge(&samples(a));
        assert_all_close(&s, &a_big, "histogram + exact");

        // histogram + histogram, the second with longer durations (the
        // first grows).
        let long: Vec<u64> = big.iter().map(|v| v * 1_000 + 7).collect();
        let mut s = samples(&big);
        s.merge(&samples(&long));
        let both: Vec<u64> = big.iter().chain(&long).copied().collect();
        assert_all_close(&s, &both, "histogram + histogram");

        // Merging nothing changes nothing.
        let before = s.clone();
        s.merge(&DurationSamples::new());
        assert_eq!(s, before);
        let mut empty = DurationSamples::new();
        empty.merge(&before);
        assert_eq!(empty, before);
    }

    #[test]
    fn staged_counts_are_the_histogram_records() {
        let probe = Histogram::<u64>::new(SIGNIFICANT_DIGITS).unwrap();
        let mut r = Rng(11);
        for i in 0..100_000u64 {
            let v = match i % 3 {
                0 => r.next() >> (r.next() % 64),
                1 => i,
                _ => r.log_uniform(1, 1 << 40),
            };
            assert_eq!(
                counter_value(counter_index(v)),
                probe.lowest_equivalent(v),
                "{v}"
            );
        }
        // Narrow (mostly staged), wide (mostly not), growing and huge.
        let sets: [Vec<u64>; 4] = [
            (0..300_000).map(|_| 700 + r.next() % 400).collect(),
            (0..100_000)
                .map(|_| r.log_uniform(1, 10_000_000_000))
                .collect(),
            (0..100_000)
                .map(|i| r.log_uniform(1, 1 + i * 1_000))
                .collect(),
            vec![5, 1 << 62, u64::MAX, 7, 1 << 62, 0, 3],
        ];
        for values in sets {
            let mut sketch = Sketch::sized_for(0);
            let mut direct = Histogram::<u64>::new_with_max(2, SIGNIFICANT_DIGITS).unwrap();
            direct.auto(true);
            for &v in &values {
                sketch.add(v);
                if direct.record(v).is_err() {
                    direct.saturating_record(v);
                }
            }
            assert!(*sketch.flushed() == direct);
            assert_eq!(sketch.flushed().len(), values.len() as u64);
        }
    }

    #[test]
    fn memory_stays_bounded() {
        let mut r = Rng(3);
        // Realistic: kernels of 1 µs..100 ms.
        let mut s = DurationSamples::new();
        for _ in 0..1_000_000 {
            s.add(r.log_uniform(1_000, 100_000_000));
        }
        assert!(s.heap_bytes() <= 22 * 1024, "{} bytes", s.heap_bytes());
        // 10M adds of 1 ns..~18 minutes, the longest last (the counters
        // grow as it goes).
        let mut s = DurationSamples::new();
        for i in 0..10_000_000u64 {
            s.add(r.log_uniform(1, 1 + i * 100_000));
        }
        assert_eq!(s.len(), 10_000_000);
        assert!(s.heap_bytes() <= 36 * 1024, "{} bytes", s.heap_bytes());
        // Any u64: never more than 64 KiB.
        s.add(u64::MAX);
        assert!(s.heap_bytes() <= 64 * 1024, "{} bytes", s.heap_bytes());
        // While exact: the values' 32 KiB.
        let s = samples(&[5; EXACT_LIMIT]);
        assert_eq!(s.heap_bytes(), 32 * 1024);
    }
}
