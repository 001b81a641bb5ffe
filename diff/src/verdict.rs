//! A node's verdict: `slower` or `faster` when the rank test on its
//! per-instance device times is significant at [`LEVEL`] and its median
//! changed by at least [`FLOOR_PCT`] percent; `same` otherwise (also with
//! fewer than [`MIN_TIMED`] timed instances on a side: too few to tell);
//! `added` and `removed` when only one run has the node.
//!
//! Instances of one run are not independent draws (a loaded machine slows
//! a whole run), so the test alone flags shifts of a few percent in runs of
//! many instances; the floor keeps those `same`. Measured on this project's
//! loaded 2-core machine, see docs/guide/what-to-optimise.md.

use crate::rank_test::mann_whitney;

/// The rank test's significance level.
pub const LEVEL: f64 = 0.001;

/// The least change of the median, in percent, called slower or faster.
pub const FLOOR_PCT: f64 = 10.0;

/// The fewest timed instances on each side for a test.
pub const MIN_TIMED: usize = 5;

/// What became of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Significantly slower, by the floor at least.
    Slower,
    /// Significantly faster, by the floor at least.
    Faster,
    /// Neither.
    Same,
    /// Only in the new run.
    Added,
    /// Only in the base run.
    Removed,
}

impl Verdict {
    /// `slower`, `faster`, `same`, `added` or `removed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Slower => "slower",
            Verdict::Faster => "faster",
            Verdict::Same => "same",
            Verdict::Added => "added",
            Verdict::Removed => "removed",
        }
    }
}

/// The median's change from `before` to `after` in percent (`None` when
/// `before` is 0).
pub fn change_pct(before: u64, after: u64) -> Option<f64> {
    (before > 0).then(|| (after as f64 - before as f64) * 100.0 / before as f64)
}

/// The verdict on two sorted samples of durations, with the test's
/// p-value when there was a test.
pub fn judge(before: &[u64], after: &[u64], change: Option<f64>) -> (Verdict, Option<f64>) {
    if before.len() < MIN_TIMED || after.len() < MIN_TIMED {
        return (Verdict::Same, None);
    }
    let Some(test) = mann_whitney(after, before) else {
        return (Verdict::Same, Some(1.0));
    };
    let verdict = match change {
        Some(c) if test.p_value < LEVEL && c >= FLOOR_PCT && test.z > 0.0 => Verdict::Slower,
        Some(c) if test.p_value < LEVEL && c <= -FLOOR_PCT && test.z < 0.0 => Verdict::Faster,
        _ => Verdict::Same,
    };
    (verdict, Some(test.p_value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(from: u64, n: u64, step: u64) -> Vec<u64> {
        (0..n).map(|i| from + i * step).collect()
    }

    #[test]
    fn both_the_test_and_the_floor_decide() {
        let base = sample(1_000, 50, 4);
        // 2x longer: slower.
        let twice: Vec<u64> = base.iter().map(|v| v * 2).collect();
        assert_eq!(judge(&base, &twice, Some(100.0)).0, Verdict::Slower);
        assert_eq!(judge(&twice, &base, Some(-50.0)).0, Verdict::Faster);
        // 3% longer, significant with this many: below the floor, same.
        let tight = sample(1_000, 50, 1);
        let shifted: Vec<u64> = tight.iter().map(|v| v + 30).collect();
        let (v, p) = judge(&tight, &shifted, Some(3.0));
        assert_eq!(v, Verdict::Same);
        assert!(p.unwrap() < LEVEL);
        // Few instances: no test.
        assert_eq!(
            judge(&base[..4], &twice[..4], Some(100.0)),
            (Verdict::Same, None)
        );
        // A large change of the median that the test does not back: same.
        let noisy_base = [10, 11, 12, 100, 101, 102];
        let noisy_new = [10, 11, 100, 101, 102, 103];
        assert_eq!(judge(&noisy_base, &noisy_new, Some(800.0)).0, Verdict::Same);
    }
}
