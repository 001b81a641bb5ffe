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

/// The summary's line for a run without device timing, where the runtime
/// sends no UR call (the UR tracing layer is off).
const UR_CALLS_OFF: &str = "UR calls: not followed (SYCLGRAPH_DEVICE_TIMING=0 leaves the UR tracing layer off): dependencies given only by depends_on are missing or start at a virtual_node, and SYCL graphs are not followed (recorded commands are rows, replays are not); UR_ENABLE_LAYERS=UR_LAYER_TRACING brings both back";

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
fn untimed_matches_timed(name: &'static str, load: bool) {
    let make = || runtime_command(&program(name));
    let timed = shared_run(name);
    let _load = load.then(Load::every_core);
    let untimed = run_both(&format!("untimed-{name}"), make, &UNTIMED);
    let rows = rows_by_command(&untimed);
    assert!(rows.values().sum::<usize>() >= 5, "{name}: {rows:?}");
    assert_eq!(rows, rows_by_command(timed), "{name}: rows per command");
    for row in untimed.csv("kernels.csv") {
        assert_eq!(row["timing"], "unavailable", "{name}: {row:?}");
        assert!(row["start_ns"].is_empty() && row["duration_ns"].is_empty());
        assert!(row["submit_ns"].parse::<u64>().is_ok(), "{name}: {row:?}");
    }
    assert_eq!(
        nodes_by_place(&untimed),
        nodes_by_place(timed),
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
    assert!(!timed.stderr().contains("UR calls: not followed"));
}

/// The source of `usm_chain`, whose commands the tests name by tag.
const USM_CHAIN: &str = "tests/programs/usm_chain.cpp";

/// The graph.dot node of a tagged command of `usm_chain.cpp`.
fn tagged(graph: &DotGraph, tag: &str) -> String {
    node_at(graph, USM_CHAIN, tag_line(USM_CHAIN, tag))
        .0
        .clone()
}

/// The graph.dot edges between two tagged commands of `usm_chain.cpp`.
fn edges_between_tags(t: &Traced, from: &str, to: &str) -> usize {
    let graph = t.graph();
    let (a, b) = (tagged(&graph, from), tagged(&graph, to));
    graph
        .edges
        .iter()
        .filter(|(x, y, _)| *x == a && *y == b)
        .count()
}

#[test]
fn untimed_summary_says_which_dependencies_are_missing_and_is_right() {
    let make = || runtime_command(&program("usm_chain"));
    let untimed = run_both("untimed-ur-calls-off", make, &UNTIMED);
    let summary = std::fs::read_to_string(untimed.dir.join("summary.txt")).unwrap();
    for text in [&summary, &untimed.stderr()] {
        assert!(text.lines().any(|l| l == UR_CALLS_OFF), "{text}");
        assert!(!text.contains("the runtime made no UR call"), "{text}");
    }
    // What it says is so: the kernels' depends_on are not edges, and the
    // host task's depends_on on a memcpy starts at a virtual node.
    assert_eq!(edges_between_tags(&untimed, "ooo_iota", "ooo_axpy"), 0);
    assert_eq!(edges_between_tags(&untimed, "x_fill_ooo", "x_axpy_ino"), 0);
    let graph = untimed.graph();
    let host_task = tagged(&graph, "ooo_host_task");
    assert!(
        graph
            .edges
            .iter()
            .any(|(a, b, _)| *b == host_task && graph.nodes[a]["kind"] == "virtual"),
        "{:?}",
        graph.edges
    );
    // And what it advises adds them, without device timing still.
    let layer = [
        ("SYCLGRAPH_DEVICE_TIMING", "0"),
        ("UR_ENABLE_LAYERS", "UR_LAYER_TRACING"),
    ];
    let with_layer = run_both("untimed-ur-calls-layer", make, &layer);
    assert!(
        !with_layer.stderr().contains("UR calls:"),
        "{}",
        with_layer.stderr()
    );
    assert_eq!(edges_between_tags(&with_layer, "ooo_iota", "ooo_axpy"), 1);
    assert_eq!(
        edges_between_tags(&with_layer, "x_fill_ooo", "x_axpy_ino"),
        1
    );
    assert_eq!(
        edges_between_tags(&with_layer, "ooo_memcpy", "ooo_host_task"),
        1
    );
}

/// kernels.csv's rows of `sycl_graphs kernel` by kind.
fn rows_by_kind(t: &Traced) -> BTreeMap<String, usize> {
    let mut kinds = BTreeMap::new();
    for row in t.csv("kernels.csv") {
        *kinds.entry(row["kind"].clone()).or_default() += 1;
    }
    kinds
}

#[test]
fn untimed_summary_is_right_that_sycl_graphs_are_not_followed() {
    // A memcpy, a kernel and a memset recorded into a graph, replayed 5 times.
    let make = || {
        let mut cmd = runtime_command(&program("sycl_graphs"));
        cmd.arg("kernel");
        cmd
    };
    let untimed = run_both("untimed-sycl-graphs", make, &UNTIMED);
    assert!(
        untimed.stderr().lines().any(|l| l == UR_CALLS_OFF),
        "{}",
        untimed.stderr()
    );
    // The recorded kernel is a row, once, as if it ran; no replay is.
    let kinds = rows_by_kind(&untimed);
    assert_eq!(kinds.get("graph"), None, "{kinds:?}");
    assert_eq!(kinds.get("kernel"), Some(&1), "{kinds:?}");
    // With the layer the user sets, the replays are the rows.
    let layer = [
        ("SYCLGRAPH_DEVICE_TIMING", "0"),
        ("UR_ENABLE_LAYERS", "UR_LAYER_TRACING"),
    ];
    let with_layer = run_both("untimed-sycl-graphs-layer", make, &layer);
    let kinds = rows_by_kind(&with_layer);
    assert_eq!(kinds.get("graph"), Some(&5), "{kinds:?}");
    assert_eq!(kinds.get("kernel"), None, "{kinds:?}");
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
