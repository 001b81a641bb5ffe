//! This process as one rank of an MPI job: its `meta.json`, written when
//! tracing starts (`"complete": false`) and again once its files are
//! finished (`"complete": true`), or once only for a rank outside
//! `SYCLGRAPH_RANKS`, which records nothing.
//!
//! The rank itself and the sampling decision are the configuration's
//! ([`Config::rank`], [`Config::sampled`]); the layout is in
//! docs/guide/mpi.md.

use std::path::Path;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use syclgraph_graph::rank_meta::RankMeta;
use syclgraph_graph::ranks::RankInfo;

use crate::config::Config;
use crate::warn;

/// The runtime's version as the `sycl` stream reported it (`sycl 9.0`).
static RUNTIME_VERSION: OnceLock<String> = OnceLock::new();

/// This rank's `meta.json` as written at start, once tracing started.
static STARTED: OnceLock<RankMeta> = OnceLock::new();

/// Notes the runtime's version (the `sycl` stream's major and minor).
pub fn note_runtime_version(major: u32, minor: u32) {
    let _ = RUNTIME_VERSION.get_or_init(|| format!("sycl {major}.{minor}"));
}

/// At the start of tracing, under MPI: writes `meta.json` into the rank's
/// directory, `complete` false (`config.output_dir`, once it is prepared).
/// Does nothing without MPI.
pub fn started(config: &Config) {
    let Some(rank) = &config.rank else {
        return;
    };
    let meta = describe(rank, true, false);
    if let Err(e) = meta.write(&config.output_dir) {
        warn(format_args!(
            "cannot write {}: {e}",
            config.output_dir.join("meta.json").display()
        ));
    }
    let _ = STARTED.set(meta);
}

/// Once the rank's files are finished: rewrites `meta.json` with
/// `complete` true.
pub fn finished(dir: &Path) {
    let Some(started) = STARTED.get() else {
        return;
    };
    let meta = RankMeta {
        complete: true,
        ..started.clone()
    };
    if let Err(e) = meta.write(dir) {
        warn(format_args!(
            "cannot write {}: {e}",
            dir.join("meta.json").display()
        ));
    }
}

/// For a rank outside `SYCLGRAPH_RANKS`: its directory with `meta.json`
/// only, `sampled` false (nothing is recorded, so nothing is incomplete).
pub fn not_sampled(config: &Config) {
    let Some(rank) = &config.rank else {
        return;
    };
    let written = std::fs::create_dir_all(&config.output_dir)
        .and_then(|()| describe(rank, false, true).write(&config.output_dir));
    if let Err(e) = written {
        warn(format_args!(
            "cannot write {}: {e}",
            config.output_dir.join("meta.json").display()
        ));
    }
}

/// The `meta.json` of this process.
fn describe(rank: &RankInfo, sampled: bool, complete: bool) -> RankMeta {
    let mut argv = command_line().into_iter();
    RankMeta {
        rank: rank.rank,
        size: rank.size,
        local_rank: rank.local_rank,
        host: host_name(),
        pid: std::process::id(),
        program: argv.next().unwrap_or_default(),
        args: argv.collect(),
        start_time_ns: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64),
        syclgraph_version: env!("CARGO_PKG_VERSION").to_string(),
        runtime_version: RUNTIME_VERSION
            .get()
            .cloned()
            .unwrap_or_else(|| "unknown".into()),
        rank_from: rank.rank_from.to_string(),
        sampled,
        complete,
    }
}

/// The process's arguments (`/proc/self/cmdline`, which holds them as the
/// program was started even when it changed its own `argv`).
fn command_line() -> Vec<String> {
    std::fs::read("/proc/self/cmdline")
        .map(|bytes| {
            let bytes = bytes.strip_suffix(&[0]).unwrap_or(&bytes);
            bytes
                .split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_else(|_| {
            std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
}

/// This host's name (`/proc/sys/kernel/hostname`, as `uname -n`).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}
