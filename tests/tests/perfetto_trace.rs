//! `trace.pftrace` on the real runtime, checked with Perfetto's own trace
//! proto by `tests/scripts/check_pftrace.py` (the `perfetto` and `protobuf`
//! packages, installed by scripts/setup.sh): the demo, a host-task program,
//! a USM program, the dpnp workload, and a program killed by SIGTERM.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use syclgraph_tests::*;

/// The number after `label` in the checker's summary line.
fn count(summary: &str, label: &str) -> u64 {
    let at = summary
        .find(label)
        .unwrap_or_else(|| panic!("{label} in {summary}"));
    summary[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("a number before {label} in {summary}"))
}

#[test]
fn the_demo_trace_has_every_timed_command_and_every_instance_edge() {
    let traced = pipeline_run();
    let summary = check_pftrace(&traced.dir, false);
    // The demo's 16 timed commands and its instance edges (39 on this
    // runtime; the checker compares them one by one).
    assert!(count(&summary, "device)") >= 10, "{summary}");
    assert!(count(&summary, "instance edges checked") >= 20, "{summary}");
    // The critical path as a track of its own: one slice per row of
    // critical_path.csv (the checker compares the two counts).
    assert!(count(&summary, "critical path slices") >= 10, "{summary}");
    // Each timed row against its slices, an oracle apart from the writer
    // (the checker reads the trace with Perfetto's protos and its trace
    // processor's sequence rules: interned names, incremental clocks):
    // the device slice has the row's name, start and end and is on the
    // row's queue track; its task span is on the row's thread track.
    let timed = count(&summary, "timed kernels.csv rows");
    assert_eq!(
        count(&summary, "device slices on their row's queue track"),
        timed,
        "{summary}"
    );
    assert!(
        count(&summary, "task spans on their row's thread") >= timed / 2,
        "{summary}"
    );
    let stderr = traced.stderr();
    assert!(!stderr.contains("trace.pftrace"), "{stderr}");
}

#[test]
fn host_task_and_usm_programs_give_valid_traces() {
    for name in ["host_tasks", "usm_chain"] {
        let traced = run_both(
            &format!("pftrace-{name}"),
            || runtime_command(&program(name)),
            &[],
        );
        let summary = check_pftrace(&traced.dir, false);
        assert!(count(&summary, "slices") > 0, "{name}: {summary}");
        assert!(count(&summary, "flows") > 0, "{name}: {summary}");
    }
}

#[test]
fn the_dpnp_workload_gives_a_valid_trace() {
    let traced = shared_dpnp_run();
    let summary = check_pftrace(&traced.dir, false);
    assert!(count(&summary, "device)") > 0, "{summary}");
}

#[test]
fn no_trace_with_a_zero_bound() {
    // The bound itself (a cut trace that still parses, the dropped count)
    // is tested in graph/src/writers/perfetto/; the demo writes ~11 KB.
    let traced = run_both(
        "pftrace-off",
        || runtime_command(&program("pipeline")),
        &[("SYCLGRAPH_TRACE_MAX_MB", "0")],
    );
    assert!(!traced.dir.join("trace.pftrace").exists());
    assert!(traced.dir.join("kernels.csv").exists());
}

#[test]
fn a_program_killed_by_sigterm_leaves_a_trace_that_parses() {
    const SRC: &str = "tests/programs/long_running.cpp";
    let dir = fresh_dir("pftrace-sigterm");
    let mut child = long_running_until_ready(&dir);
    std::thread::sleep(Duration::from_millis(1500));
    signal_process(child.id(), "TERM");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(15), "{status:?}");

    // The trace is streamed as instances finish, whole packets at each
    // flush: a killed program leaves one that parses, with the slices of
    // what finished, and the journal of what was recorded.
    let summary = check_pftrace(&dir, true);
    assert!(!summary.contains(" 0 slices"), "{summary}");
    let rows = read_csv(&dir.join("kernels.csv"));
    let timed = rows_at(&rows, SRC, tag_line(SRC, "long_kernel"))
        .iter()
        .filter(|r| r["timing"] == "ok")
        .count();
    assert!(timed > 0, "no timed long_kernel row");
    let journal = std::fs::metadata(dir.join(".syclgraph-journal")).expect("the journal");
    assert!(journal.len() > 0, "an empty journal");
}
