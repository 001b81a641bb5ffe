//! Settings from `SYCLGRAPH_*` environment variables, read once at start.
//!
//! A bad value never stops the traced program: it is reported on one stderr
//! line naming syclgraph and the default is used instead.

use std::path::PathBuf;

use syclgraph_graph::ranks::{self, RankInfo, RankSet, RankSummary};

/// Everything the user can set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `SYCLGRAPH_OUTPUT_DIR`: where graph.dot and the CSV files go; under
    /// MPI, this process's `rank-NNNNN` directory inside it.
    pub output_dir: PathBuf,
    /// This process's rank, when a launcher's variables give one.
    pub rank: Option<RankInfo>,
    /// `SYCLGRAPH_RANKS`: the ranks of an MPI job that are traced.
    pub ranks: RankSet,
    /// `SYCLGRAPH_RANK_SUMMARY`: which ranks print their summary on stderr.
    pub rank_summary: RankSummary,
    /// `SYCLGRAPH_MAX_INSTANCES`: instances kept in memory for the instance graph.
    pub max_instances: usize,
    /// `SYCLGRAPH_QUEUE_CAPACITY`: records buffered between the application's
    /// threads and the collector before new ones are dropped (and counted).
    pub queue_capacity: usize,
    /// `SYCLGRAPH_DEVICE_TIMING`: read device timestamps (`1`, default) or not (`0`).
    pub device_timing: bool,
    /// `SYCLGRAPH_DRAIN_TIMEOUT_MS`: how long the exit drain waits for
    /// commands still running on the device.
    pub drain_timeout_ms: u64,
    /// `SYCLGRAPH_START_WAIT_MS`: how long the program's first device
    /// commands may wait, in all, for the timestamp source at start-up
    /// (0: never wait; those commands are then `not_ready`).
    pub start_wait_ms: u64,
    /// `SYCLGRAPH_QUIET`: `1` leaves out the summary on stderr.
    pub quiet: bool,
    /// `SYCLGRAPH_MAX_UR_CALLS`: UR calls syclgraph follows on `ur.call.debug`
    /// before it unsubscribes (0: no limit). While anyone listens there, the
    /// runtime keeps a trace event per UR call (hundreds of bytes each).
    pub max_ur_calls: u64,
    /// `SYCLGRAPH_FORCE_PROFILING`: turn device profiling on for every
    /// queue (`1`, default) or leave queues as the application made them (`0`).
    pub force_profiling: bool,
    /// `SYCLGRAPH_UR_HOOKS`: follow UR calls through the adapter's dispatch
    /// table once it is known (`1`, default: cheapest), or only through the
    /// UR tracing layer on `ur.call.debug` (`0`).
    pub ur_hooks: bool,
    /// `SYCLGRAPH_TRACE_MAX_MB`: the largest `trace.pftrace` (MiB) before
    /// later slices are dropped and counted; 0 writes no trace.
    pub trace_max_mb: u64,
    /// `SYCLGRAPH_START`: `paused` begins with tracing stopped (started by
    /// the C API, ITT, the toggle signal or the control file); `on`
    /// (default) begins with it on.
    pub start_paused: bool,
    /// `SYCLGRAPH_DELAY`: seconds after start-up before tracing starts
    /// (0: none), as nsys `--delay`.
    pub delay: std::time::Duration,
    /// `SYCLGRAPH_DURATION`: seconds tracing stays on once started, then
    /// it stops (0: no limit), as nsys `--duration`.
    pub duration: std::time::Duration,
    /// `SYCLGRAPH_TOGGLE_SIGNAL`: a signal (`USR1`, `USR2`, or a number)
    /// whose handler starts tracing when stopped and stops it when on.
    /// Unset: syclgraph installs no signal handler.
    pub toggle_signal: Option<i32>,
    /// `SYCLGRAPH_REGION`: record only while an ITT task of this name is
    /// open on the submitting thread (within the windows the other
    /// start/stop settings make). Unset: everything is recorded.
    pub region: Option<String>,
}

impl Config {
    /// Reads the process environment; `warn` receives one message per bad value.
    pub fn from_env(mut warn: impl FnMut(String)) -> Config {
        Self::from_lookup(|k| std::env::var(k).ok(), std::process::id(), &mut warn)
    }

    /// Reads settings through `lookup` (testable without touching the environment).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
        pid: u32,
        warn: &mut dyn FnMut(String),
    ) -> Config {
        let rank = ranks::detect(&lookup);
        let default_dir = || match &rank {
            Some(_) => PathBuf::from(ranks::default_job_dir_name(&lookup)),
            None => default_dir(pid),
        };
        let output_dir = match lookup("SYCLGRAPH_OUTPUT_DIR") {
            Some(dir) if !dir.trim().is_empty() => PathBuf::from(dir),
            Some(_) => {
                let dir = default_dir();
                warn(format!(
                    "SYCLGRAPH_OUTPUT_DIR is empty; using ./{}",
                    dir.display()
                ));
                dir
            }
            None => default_dir(),
        };
        let output_dir = match &rank {
            Some(rank) => output_dir.join(rank.dir_name()),
            None => output_dir,
        };
        let ranks = match lookup("SYCLGRAPH_RANKS") {
            None => RankSet::all(),
            Some(raw) => RankSet::parse(&raw).unwrap_or_else(|why| {
                warn(format!(
                    "SYCLGRAPH_RANKS={raw:?}: {why}; every rank is traced"
                ));
                RankSet::all()
            }),
        };
        let rank_summary = match lookup("SYCLGRAPH_RANK_SUMMARY") {
            None => RankSummary::First,
            Some(raw) => RankSummary::parse(&raw).unwrap_or_else(|| {
                warn(format!(
                    "SYCLGRAPH_RANK_SUMMARY={raw:?} is not first, all or none; using first"
                ));
                RankSummary::First
            }),
        };
        let mut number = |name: &str, default: u64, min: u64, max: u64| -> u64 {
            let Some(raw) = lookup(name) else {
                return default;
            };
            match raw.trim().parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => v,
                _ => {
                    warn(format!(
                        "{name}={raw:?} is not a whole number from {min} to {max}; using {default}"
                    ));
                    default
                }
            }
        };
        let max_instances = number("SYCLGRAPH_MAX_INSTANCES", 5000, 0, 100_000_000) as usize;
        let queue_capacity = number("SYCLGRAPH_QUEUE_CAPACITY", 65536, 16, 1 << 26) as usize;
        let drain_timeout_ms = number("SYCLGRAPH_DRAIN_TIMEOUT_MS", 10_000, 0, 3_600_000);
        let start_wait_ms = number("SYCLGRAPH_START_WAIT_MS", 5_000, 0, 600_000);
        let max_ur_calls = number("SYCLGRAPH_MAX_UR_CALLS", 100_000, 0, u64::MAX / 2);
        let trace_max_mb = number("SYCLGRAPH_TRACE_MAX_MB", 1024, 0, 1 << 30);
        let mut flag = |name: &str, default: bool| -> bool {
            match lookup(name).as_deref().map(str::trim) {
                None => default,
                Some("1" | "true" | "yes" | "on") => true,
                Some("0" | "false" | "no" | "off") => false,
                Some(other) => {
                    warn(format!(
                        "{name}={other:?} is not 0 or 1; using {}",
                        u8::from(default)
                    ));
                    default
                }
            }
        };
        let device_timing = flag("SYCLGRAPH_DEVICE_TIMING", true);
        let quiet = flag("SYCLGRAPH_QUIET", false);
        let force_profiling = flag("SYCLGRAPH_FORCE_PROFILING", true);
        let ur_hooks = flag("SYCLGRAPH_UR_HOOKS", true);
        let start_paused = match lookup("SYCLGRAPH_START").as_deref().map(str::trim) {
            None | Some("on" | "1" | "") => false,
            Some("paused" | "off" | "0" | "stopped") => true,
            Some(other) => {
                warn(format!(
                    "SYCLGRAPH_START={other:?} is neither on nor paused; using on"
                ));
                false
            }
        };
        let mut seconds = |name: &str| -> std::time::Duration {
            let Some(raw) = lookup(name) else {
                return std::time::Duration::ZERO;
            };
            match raw.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=1e9).contains(&v) => {
                    std::time::Duration::from_secs_f64(v)
                }
                _ => {
                    warn(format!(
                        "{name}={raw:?} is not a number of seconds (0 or more); using 0"
                    ));
                    std::time::Duration::ZERO
                }
            }
        };
        let delay = seconds("SYCLGRAPH_DELAY");
        let duration = seconds("SYCLGRAPH_DURATION");
        let toggle_signal = lookup("SYCLGRAPH_TOGGLE_SIGNAL").and_then(|raw| {
            let name = raw.trim().to_ascii_uppercase();
            let name = name.strip_prefix("SIG").unwrap_or(&name);
            let signal = match name {
                "USR1" => Some(libc::SIGUSR1),
                "USR2" => Some(libc::SIGUSR2),
                n => n
                    .parse::<i32>()
                    .ok()
                    .filter(|&s| s == libc::SIGUSR1 || s == libc::SIGUSR2 || (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&s)),
            };
            if signal.is_none() {
                warn(format!(
                    "SYCLGRAPH_TOGGLE_SIGNAL={raw:?} is not USR1, USR2 or a real-time signal number; no signal is used"
                ));
            }
            signal
        });
        let region = match lookup("SYCLGRAPH_REGION") {
            Some(name) if name.is_empty() => {
                warn("SYCLGRAPH_REGION is empty; every region is recorded".to_owned());
                None
            }
            other => other,
        };
        Config {
            region,
            output_dir,
            rank,
            ranks,
            rank_summary,
            max_instances,
            queue_capacity,
            device_timing,
            drain_timeout_ms,
            start_wait_ms,
            quiet,
            max_ur_calls,
            force_profiling,
            ur_hooks,
            trace_max_mb,
            start_paused,
            delay,
            duration,
            toggle_signal,
        }
    }
}

impl Config {
    /// True when this process is traced: not under MPI, or its rank is in
    /// `SYCLGRAPH_RANKS`. The one place that decides it.
    pub fn sampled(&self) -> bool {
        self.rank
            .as_ref()
            .is_none_or(|r| self.ranks.contains(r.rank))
    }

    /// True when the summary goes to stderr: not `SYCLGRAPH_QUIET`, and
    /// under MPI a rank `SYCLGRAPH_RANK_SUMMARY` chooses.
    pub fn prints_summary(&self) -> bool {
        !self.quiet
            && self
                .rank
                .as_ref()
                .is_none_or(|r| self.rank_summary.prints(r.rank, &self.ranks))
    }
}

fn default_dir(pid: u32) -> PathBuf {
    PathBuf::from(format!("syclgraph-{pid}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> (Config, Vec<String>) {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut warnings = Vec::new();
        let config = Config::from_lookup(|k| map.get(k).cloned(), 42, &mut |w| warnings.push(w));
        (config, warnings)
    }

    #[test]
    fn the_captured_region_is_taken_as_it_is() {
        let (c, w) = read(&[("SYCLGRAPH_REGION", " backward")]);
        assert!(w.is_empty());
        assert_eq!(c.region.as_deref(), Some(" backward"));
        let (c, w) = read(&[("SYCLGRAPH_REGION", "")]);
        assert_eq!((c.region, w.len()), (None, 1));
        assert!(read(&[]).0.region.is_none());
    }

    #[test]
    fn defaults_without_variables() {
        let (c, w) = read(&[]);
        assert!(w.is_empty());
        assert_eq!(c.output_dir, PathBuf::from("syclgraph-42"));
        assert_eq!(c.max_instances, 5000);
        assert!(c.device_timing);
        assert_eq!(c.trace_max_mb, 1024);
        assert_eq!(c.start_wait_ms, 5_000);
    }

    #[test]
    fn bad_values_warn_once_each_and_fall_back() {
        let (c, w) = read(&[
            ("SYCLGRAPH_MAX_INSTANCES", "lots"),
            ("SYCLGRAPH_DEVICE_TIMING", "maybe"),
            ("SYCLGRAPH_QUEUE_CAPACITY", "3"),
            ("SYCLGRAPH_MAX_UR_CALLS", "-1"),
            ("SYCLGRAPH_UR_HOOKS", "sometimes"),
        ]);
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[4].contains("SYCLGRAPH_UR_HOOKS"));
        assert!(c.ur_hooks);
        assert!(w[0].contains("SYCLGRAPH_MAX_INSTANCES"));
        assert_eq!(c.max_instances, 5000);
        assert!(c.device_timing);
        assert_eq!(c.queue_capacity, 65536);
        assert_eq!(c.max_ur_calls, 100_000);
    }

    #[test]
    fn good_values_are_taken() {
        let (c, w) = read(&[
            ("SYCLGRAPH_OUTPUT_DIR", "/tmp/x"),
            ("SYCLGRAPH_MAX_INSTANCES", "10"),
            ("SYCLGRAPH_DEVICE_TIMING", "0"),
            ("SYCLGRAPH_UR_HOOKS", "0"),
            ("SYCLGRAPH_TRACE_MAX_MB", "0"),
            ("SYCLGRAPH_START_WAIT_MS", "0"),
        ]);
        assert!(w.is_empty());
        assert_eq!(c.start_wait_ms, 0);
        assert_eq!(c.trace_max_mb, 0);
        assert!(!c.ur_hooks);
        assert_eq!(c.output_dir, PathBuf::from("/tmp/x"));
        assert_eq!(c.max_instances, 10);
        assert!(!c.device_timing);
    }

    #[test]
    fn under_mpi_each_rank_writes_to_its_directory_in_the_job_directory() {
        let (c, w) = read(&[("PMI_RANK", "3"), ("PMI_SIZE", "4")]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.output_dir, PathBuf::from("syclgraph-job/rank-00003"));
        assert_eq!(c.rank.as_ref().unwrap().rank_from, "PMI_RANK");
        assert!(c.sampled() && !c.prints_summary());
        let (c, _) = read(&[
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "4"),
            ("SYCLGRAPH_OUTPUT_DIR", "/tmp/out"),
        ]);
        assert_eq!(c.output_dir, PathBuf::from("/tmp/out/rank-00000"));
        assert!(c.prints_summary());
        // Without MPI nothing changes.
        let (c, _) = read(&[
            ("SYCLGRAPH_RANKS", "1"),
            ("SYCLGRAPH_OUTPUT_DIR", "/tmp/out"),
        ]);
        assert_eq!(c.output_dir, PathBuf::from("/tmp/out"));
        assert!(c.sampled() && c.prints_summary());
    }

    #[test]
    fn sampling_and_which_rank_prints() {
        let at = |rank: &str, extra: &[(&str, &str)]| {
            let mut pairs = vec![("PMI_RANK", rank), ("PMI_SIZE", "16")];
            pairs.extend_from_slice(extra);
            read(&pairs)
        };
        let sample = [("SYCLGRAPH_RANKS", "2,8-15")];
        assert!(!at("0", &sample).0.sampled());
        assert!(at("2", &sample).0.sampled() && at("2", &sample).0.prints_summary());
        assert!(at("9", &sample).0.sampled() && !at("9", &sample).0.prints_summary());
        let all = [("SYCLGRAPH_RANK_SUMMARY", "all")];
        assert!(at("9", &all).0.prints_summary());
        let none = [("SYCLGRAPH_RANK_SUMMARY", "none")];
        assert!(!at("0", &none).0.prints_summary());
        let quiet = [("SYCLGRAPH_QUIET", "1")];
        assert!(!at("0", &quiet).0.prints_summary());
        let (c, w) = at(
            "5",
            &[
                ("SYCLGRAPH_RANKS", "5-"),
                ("SYCLGRAPH_RANK_SUMMARY", "some"),
            ],
        );
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("SYCLGRAPH_RANKS") && w[1].contains("SYCLGRAPH_RANK_SUMMARY"));
        assert!(c.sampled() && c.ranks.is_all());
        assert_eq!(c.rank_summary, RankSummary::First);
    }

    #[test]
    fn start_stop_settings() {
        let (c, w) = read(&[]);
        assert!(w.is_empty());
        assert!(!c.start_paused);
        let zero = std::time::Duration::ZERO;
        assert_eq!((c.delay, c.duration, c.toggle_signal), (zero, zero, None));
        let (c, w) = read(&[
            ("SYCLGRAPH_START", "paused"),
            ("SYCLGRAPH_DELAY", "1.5"),
            ("SYCLGRAPH_DURATION", "2"),
            ("SYCLGRAPH_TOGGLE_SIGNAL", "SIGUSR2"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert!(c.start_paused);
        assert_eq!(c.delay, std::time::Duration::from_millis(1500));
        assert_eq!(c.duration, std::time::Duration::from_secs(2));
        assert_eq!(c.toggle_signal, Some(libc::SIGUSR2));
        let (c, w) = read(&[
            ("SYCLGRAPH_START", "later"),
            ("SYCLGRAPH_DELAY", "-1"),
            ("SYCLGRAPH_DURATION", "soon"),
            ("SYCLGRAPH_TOGGLE_SIGNAL", "INT"),
        ]);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].contains("SYCLGRAPH_START"));
        assert!(w[1].contains("SYCLGRAPH_DELAY"));
        assert!(w[2].contains("SYCLGRAPH_DURATION"));
        assert!(w[3].contains("SYCLGRAPH_TOGGLE_SIGNAL"));
        assert!(!c.start_paused);
        assert_eq!((c.delay, c.duration, c.toggle_signal), (zero, zero, None));
    }
}
