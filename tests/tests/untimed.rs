//! Without device timing (`SYCLGRAPH_DEVICE_TIMING=0`) syclgraph's
//! collector only journals the records during the run, and every output is
//! written at exit from the journal. Nothing is lost by it: every command
//! is still a row (`timing=unavailable`), as many per source line as with
//! device timing on, every node of the timed run's graph is there with its
//! count, the analyses are written, and the summary says what changed.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const UNTIMED: [(&str, &str); 1] = [("SYCLGRAPH_DEVICE_TIMING", "0")];

/// The summary's line for a run without device timing.
const UNTIMED_LINE: &str = "device timing off: kernels.csv, graph.dot and summary.csv were written at exit from the journal, none during the run";

/// (kind, name, source file, line) → rows of kernels.csv.
fn rows_by_command(t: &Traced) -> BTreeMap<[String; 4], usize> {
    let mut rows = BTreeMap::new();
    for r in t.csv("kernels.csv") {
        let key = ["kind", "name", "source_file", "source_line"].map(|k| r[k].clone());
        *rows.entry(key).or_default() += 1;
    }
    rows
}

/// (kind, operation, file, line) → count of graph.dot's nodes, less the
/// virtual nodes: without the UR tracing layer an event named only in a
/// wait list stays a `virtual_node[<address>]` (docs/guide/limitations.md),
/// and addresses differ from run to run.
fn nodes_by_place(t: &Traced) -> BTreeMap<[String; 4], String> {
    let get = |a: &Attrs, k: &str| a.get(k).cloned().unwrap_or_default();
    t.graph()
        .nodes
        .values()
        .filter(|a| a.contains_key("kind") && a["kind"] != "virtual")
        .map(|a| {
            (
                ["kind", "operation", "file", "line"].map(|k| get(a, k)),
                get(a, "count"),
            )
        })
        .collect()
}

/// The untimed run of `name` against its timed run.
fn untimed_matches_timed(name: &str, load: bool) {
    let make = || runtime_command(&program(name));
    let timed = run_both(&format!("untimed-{name}-timed"), make, &[]);
    let _load = load.then(Load::every_core);
    let untimed = run_both(&format!("untimed-{name}"), make, &UNTIMED);
    let rows = rows_by_command(&untimed);
    assert!(rows.values().sum::<usize>() >= 5, "{name}: {rows:?}");
    assert_eq!(rows, rows_by_command(&timed), "{name}: rows per command");
    for row in untimed.csv("kernels.csv") {
        assert_eq!(row["timing"], "unavailable", "{name}: {row:?}");
        assert!(row["start_ns"].is_empty() && row["duration_ns"].is_empty());
        assert!(row["submit_ns"].parse::<u64>().is_ok(), "{name}: {row:?}");
    }
    assert_eq!(
        nodes_by_place(&untimed),
        nodes_by_place(&timed),
        "{name}: graph.dot's nodes and counts"
    );
    // The analyses and the trace, from the journal at exit, which is gone.
    for file in ["critical_path.csv", "idle_gaps.csv", "summary.csv"] {
        assert!(untimed.dir.join(file).exists(), "{name}: no {file}");
    }
    check_pftrace(&untimed.dir, false);
    assert!(!untimed.dir.join(".syclgraph-journal").exists());
    let summary = std::fs::read_to_string(untimed.dir.join("summary.txt")).unwrap();
    assert!(summary.lines().any(|l| l == UNTIMED_LINE), "{summary}");
    assert!(untimed.stderr().lines().any(|l| l == UNTIMED_LINE));
    assert!(
        !timed.stderr().contains("device timing off"),
        "{}",
        timed.stderr()
    );
}

#[test]
fn usm_commands_untimed_are_the_timed_runs_rows_and_nodes() {
    untimed_matches_timed("usm_chain", false);
}

#[test]
fn host_tasks_untimed_are_the_timed_runs_rows_and_nodes() {
    untimed_matches_timed("host_tasks", false);
}

/// Every core busy, as when every rank of an MPI job starts at once.
#[test]
fn untimed_under_load_loses_nothing() {
    untimed_matches_timed("pipeline", true);
}
