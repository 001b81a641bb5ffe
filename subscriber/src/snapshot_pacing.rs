//! When the collector rewrites the graph files (`graph.dot`, `summary.csv`,
//! `critical_path.csv`, `idle_gaps.csv`) while the program runs: a
//! *snapshot*, so that a killed or hung program leaves recent files.
//!
//! A snapshot costs CPU time that grows with the graph (and, for
//! `critical_path.csv`, with the steps kept). It is paced on the collector's
//! own CPU time: while the collector is busy, the next snapshot waits until
//! the collector used [`CPU_SHARE_FACTOR`] times the last snapshot's CPU
//! time on other work, so snapshots stay about 1% of its time whatever the
//! speed of the machine (natively and under callgrind's ~50× slow-down
//! alike: both sides slow down together). While the collector idles (a slow
//! or hung program) its CPU time hardly moves, so wall time takes over: a
//! snapshot comes once [`IDLE_FACTOR`] times its CPU time passed on the
//! wall clock (at most a third of 1% of a core). A busy collector gets
//! about a third of a core under callgrind (one thread at a time, among
//! the program's two), so there the two paces meet. Never more often than
//! [`SNAPSHOT_EVERY`]. CPU time, not wall time, measures the snapshot:
//! waiting for the disk (the files are synced) costs the program nothing,
//! and a slow sync of an early, empty graph once paused the next snapshot
//! for seconds (a program killed then left an empty `graph.dot`).

use std::time::{Duration, Instant};

/// Two snapshots are at least this far apart on the wall clock.
pub const SNAPSHOT_EVERY: Duration = Duration::from_secs(1);
/// A busy collector's next snapshot waits for this many times the last
/// snapshot's CPU time of the collector's other work (about 1% of it).
pub const CPU_SHARE_FACTOR: u32 = 100;
/// An idle collector's next snapshot waits for this many times the last
/// snapshot's CPU time on the wall clock.
pub const IDLE_FACTOR: u32 = 300;

/// The pace of snapshots: when the last one ended and what it cost.
#[derive(Clone, Copy, Debug)]
pub struct SnapshotPacing {
    /// Wall time at the end of the last snapshot (or the start).
    last_wall: Instant,
    /// The collector's CPU time at the end of the last snapshot.
    last_cpu: Duration,
    /// The last snapshot's CPU time (zero before the first).
    cost: Duration,
}

impl SnapshotPacing {
    /// Pacing from the collector's start: the first snapshot is due
    /// [`SNAPSHOT_EVERY`] after `now`.
    pub fn new(now: Instant, cpu: Duration) -> SnapshotPacing {
        SnapshotPacing {
            last_wall: now,
            last_cpu: cpu,
            cost: Duration::ZERO,
        }
    }

    /// Whether a snapshot is due at wall time `now`; `cpu` reads the
    /// collector's CPU time (called only once [`SNAPSHOT_EVERY`] passed).
    pub fn due(&self, now: Instant, cpu: impl FnOnce() -> Duration) -> bool {
        let wall = now.saturating_duration_since(self.last_wall);
        if wall < SNAPSHOT_EVERY {
            return false;
        }
        wall >= self.cost.saturating_mul(IDLE_FACTOR)
            || cpu().saturating_sub(self.last_cpu) >= self.cost.saturating_mul(CPU_SHARE_FACTOR)
    }

    /// Notes a snapshot that took the collector's CPU time from `began` to
    /// `ended` and ended at wall time `now`.
    pub fn done(&mut self, began: Duration, ended: Duration, now: Instant) {
        self.cost = ended.saturating_sub(began);
        self.last_cpu = ended;
        self.last_wall = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Runs a collector for `seconds` of wall time in steps of 1 ms, using
    /// `busy` of CPU per ms of wall time on its other work, with snapshots
    /// costing `cost`; returns the snapshots' share of its CPU time and
    /// the longest wall time between two snapshots.
    fn simulate(seconds: u64, busy: f64, cost: Duration) -> (f64, Duration) {
        let start = Instant::now();
        let (mut cpu, mut spent) = (Duration::ZERO, Duration::ZERO);
        let mut pacing = SnapshotPacing::new(start, cpu);
        let (mut last, mut longest) = (start, Duration::ZERO);
        for step in 1..=seconds * 1000 {
            let now = start + step as u32 * MS;
            cpu += MS.mul_f64(busy);
            if pacing.due(now, || cpu) {
                let began = cpu;
                cpu += cost;
                spent += cost;
                pacing.done(began, cpu, now);
                longest = longest.max(now - last);
                last = now;
            }
        }
        (spent.as_secs_f64() / cpu.as_secs_f64(), longest)
    }

    #[test]
    fn the_first_snapshot_comes_after_a_second() {
        let start = Instant::now();
        let pacing = SnapshotPacing::new(start, Duration::ZERO);
        assert!(!pacing.due(start + 999 * MS, || Duration::ZERO));
        assert!(pacing.due(start + SNAPSHOT_EVERY, || Duration::ZERO));
    }

    #[test]
    fn a_busy_collector_spends_about_one_percent_on_snapshots() {
        // 2 ms snapshots natively, 100 ms under a 50x slow-down: the same
        // share either way, where a wall-clock pace would give 50x more.
        // (2 ms: every second, 0.2%; 100 ms: every 10 s of CPU time, 1%.)
        for (cost, least) in [(2 * MS, 0.0019), (100 * MS, 0.009)] {
            let (share, _) = simulate(600, 1.0, cost);
            assert!(share <= 0.0101 && share > least, "{cost:?}: {share}");
        }
        // Half busy: the CPU criterion still decides.
        let (share, longest) = simulate(600, 0.5, 5 * MS);
        assert!(share <= 0.0101, "{share}");
        assert!(longest <= 1001 * MS, "{longest:?}");
    }

    #[test]
    fn an_idle_collector_still_snapshots_within_seconds() {
        // A slow program: the collector uses 0.1% of a core.
        let (_, longest) = simulate(120, 0.001, 2 * MS);
        assert!(longest <= 2 * SNAPSHOT_EVERY, "{longest:?}");
        // Cheap snapshots come every second.
        let (_, longest) = simulate(60, 0.0, MS / 2);
        assert_eq!(longest, SNAPSHOT_EVERY);
    }

    #[test]
    fn never_more_often_than_every_second() {
        let start = Instant::now();
        let mut pacing = SnapshotPacing::new(start, Duration::ZERO);
        pacing.done(Duration::ZERO, Duration::ZERO, start + SNAPSHOT_EVERY);
        let soon = start + SNAPSHOT_EVERY + 999 * MS;
        assert!(!pacing.due(soon, || Duration::from_secs(100)));
    }
}
