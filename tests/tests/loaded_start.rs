//! A loaded start, as every rank of an MPI job has: the machine's cores are
//! all kept busy by other processes while a short program starts the
//! runtime and submits its first commands at once. Every device command
//! must still be timed: none may be `not_ready` (its event came before
//! syclgraph's timestamp source was ready) or `unavailable`.
//!
//! The short program runs 10 times, the dpnp script (about 5 s a run on a
//! loaded 2-core machine) 4 times; `LOADED_START_RUNS=20` runs each 20
//! times (the 20-of-20 check, by hand). The busy processes are this
//! test's children, killed when it ends, pass or fail.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/short_start.cpp";

/// Runs per program: `default`, or `LOADED_START_RUNS`.
fn runs(default: usize) -> usize {
    std::env::var("LOADED_START_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn num(row: &std::collections::BTreeMap<String, String>, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

/// What went untimed in one run: `(row kind, timing)` of every device row
/// that is not `ok`, and the summary lines about start-up.
fn untimed(traced: &Traced, kinds: &[&str]) -> Vec<String> {
    let mut bad: Vec<String> = traced
        .csv("kernels.csv")
        .iter()
        .filter(|r| kinds.contains(&r["kind"].as_str()) && r["timing"] != "ok")
        .map(|r| format!("{} {} {}", r["kind"], r["name"], r["timing"]))
        .collect();
    let stderr = traced.stderr();
    bad.extend(
        stderr
            .lines()
            .filter(|l| l.contains("not_ready") || l.contains("stopped waiting"))
            .map(str::to_owned),
    );
    bad
}

#[test]
fn a_short_program_is_timed_from_its_first_command_on_a_busy_machine() {
    let program = program("short_start");
    let (up, down) = (
        tag_line(SRC, "up").to_string(),
        tag_line(SRC, "down").to_string(),
    );
    let _load = Load::every_core();
    let mut failures = Vec::new();
    for run in 0..runs(10) {
        let traced = run_traced("loaded-short", runtime_command(&program), &[]);
        assert!(traced.output.status.success(), "{}", traced.stderr());
        assert_eq!(traced.stdout(), "short_start ok\n");
        let bad = untimed(&traced, &["memcpy"]);
        if !bad.is_empty() {
            failures.push(format!("run {run}: {bad:?}"));
            continue;
        }
        let rows = traced.csv("kernels.csv");
        let at = |line: &str| {
            let found: Vec<_> = rows
                .iter()
                .filter(|r| r["source_file"].ends_with(SRC) && r["source_line"] == line)
                .collect();
            assert_eq!(found.len(), 1, "line {line}: {rows:?}");
            found[0]
        };
        let (up, down) = (at(&up), at(&down));
        // The oracle is the program's construction: the second copy depends
        // on a host task that sleeps 100 ms after the first copy ended.
        for row in [up, down] {
            assert!(num(row, "start_ns") >= num(row, "submit_ns"), "{row:?}");
            assert!(num(row, "end_ns") >= num(row, "start_ns"), "{row:?}");
        }
        let gap = num(down, "start_ns").saturating_sub(num(up, "end_ns"));
        assert!(gap >= 100_000_000, "{gap} ns between the copies: {rows:?}");
    }
    assert!(failures.is_empty(), "untimed under load: {failures:#?}");
}

#[test]
fn a_dpnp_script_is_timed_from_its_first_command_on_a_busy_machine() {
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let _load = Load::every_core();
    let mut failures = Vec::new();
    for run in 0..runs(4) {
        let traced = run_traced("loaded-dpnp", python_command(&script), &[]);
        assert!(traced.output.status.success(), "{}", traced.stderr());
        assert!(traced.stdout().contains("checksum"), "{}", traced.stdout());
        let rows = traced.csv("kernels.csv");
        assert!(
            rows.iter().filter(|r| r["kind"] == "kernel").count() >= 5,
            "{rows:?}"
        );
        let bad = untimed(&traced, &["kernel", "memcpy", "memset", "fill"]);
        if !bad.is_empty() {
            failures.push(format!("run {run}: {bad:?}"));
        }
    }
    assert!(failures.is_empty(), "untimed under load: {failures:#?}");
}
