//! The critical path and idle gaps on the real runtime, on programs whose
//! answer is known by construction (tests/programs/critical_path.cpp), and
//! on a dpnp workload nobody here wrote.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/critical_path.cpp";

type Row = BTreeMap<String, String>;

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

fn at_line<'r>(rows: &'r [Row], label: &str) -> Vec<&'r Row> {
    let line = tag_line(SRC, label).to_string();
    rows.iter()
        .filter(|r| r["source_file"].ends_with(SRC) && r["source_line"] == line)
        .collect()
}

fn traced(mode: &str) -> Traced {
    let mut cmd = runtime_command(&program("critical_path"));
    cmd.arg(mode);
    let t = run_traced(&format!("critical-{mode}"), cmd, &[]);
    assert!(t.output.status.success(), "{}", t.stderr());
    t
}

/// Every step is an instance of instances.dot (`i<node>_<instance>` for
/// `node` `n<node>`), numbered 1, 2, ... in time order, and the path ends
/// at the device command that ended last.
fn check_steps(t: &Traced, path: &[Row]) {
    assert!(!path.is_empty(), "no critical path:\n{}", t.stderr());
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    for (i, row) in path.iter().enumerate() {
        assert_eq!(num(row, "step"), i as u64 + 1);
        let node = row["node"].strip_prefix('n').expect("node is n<id>");
        let id = format!("i{node}_{}[", row["instance"]);
        assert!(dot.contains(&id), "{id} not in instances.dot: {row:?}");
        assert_eq!(
            num(row, "duration_ns"),
            num(row, "end_ns") - num(row, "start_ns")
        );
        if i == 0 {
            assert_eq!(row["gap_cause"], "none");
        } else {
            assert!(
                ["dependency", "queue", "host"].contains(&row["gap_cause"].as_str()),
                "{row:?}"
            );
            assert!(num(row, "end_ns") >= num(&path[i - 1], "end_ns"), "{row:?}");
        }
    }
    let last_end = t
        .csv("kernels.csv")
        .iter()
        .filter(|r| r["timing"] == "ok")
        .map(|r| num(r, "end_ns"))
        .max()
        .unwrap();
    assert_eq!(num(path.last().unwrap(), "end_ns"), last_end);
    // Device steps are kernels.csv rows: same instance, start and end.
    let rows = t.csv("kernels.csv");
    for row in path.iter().filter(|r| r["kind"] != "host_task") {
        assert!(
            rows.iter().any(|k| k["instance"] == row["instance"]
                && k["start_ns"] == row["start_ns"]
                && k["end_ns"] == row["end_ns"]),
            "{row:?} is no kernels.csv row"
        );
    }
}

#[test]
fn the_long_chain_is_the_path() {
    let t = traced("chains");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let long = at_line(&path, "long_link");
    let instances: Vec<&str> = long.iter().map(|r| r["instance"].as_str()).collect();
    assert_eq!(instances, ["1", "2", "3", "4"], "{path:#?}");
    assert!(at_line(&path, "short_link").is_empty(), "{path:#?}");
    let join = at_line(&path, "join");
    assert_eq!(join.len(), 1, "{path:#?}");
    assert_eq!(join[0]["kind"], "host_task");
    assert_eq!(at_line(&path, "after_join").len(), 1, "{path:#?}");
    // Each link of the long chain waited for the one before (a dependency
    // through buffer a), in order.
    let steps: Vec<u64> = long.iter().map(|r| num(r, "step")).collect();
    assert!(steps.windows(2).all(|w| w[1] == w[0] + 1), "{steps:?}");
    assert!(long[1..].iter().all(|r| r["gap_cause"] == "dependency"));
    // summary.csv: the long-chain node holds most of the path.
    let summary = t.csv("summary.csv");
    let kernel = summary
        .iter()
        .find(|r| r["kind"] == "kernel")
        .expect("a kernel row");
    let long_ns: u64 = long.iter().map(|r| num(r, "duration_ns")).sum();
    assert!(num(kernel, "critical_ns") >= long_ns, "{kernel:?}");
    // Marked in graph.dot (the long-chain node, not the short one) and in
    // instances.dot (its instances, and the edges between consecutive steps).
    let graph = t.graph();
    let critical = |label: &str| {
        node_at(&graph, SRC, tag_line(SRC, label))
            .1
            .get("critical")
            .cloned()
    };
    assert_eq!(critical("long_link").as_deref(), Some("true"));
    assert_eq!(critical("short_link"), None);
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    let node = long[0]["node"].strip_prefix('n').unwrap();
    let edge = format!("i{node}_2 -> i{node}_3 [");
    let line = dot.lines().find(|l| l.contains(&edge));
    assert!(
        line.is_some_and(|l| l.contains("critical=\"true\"")),
        "{edge} marked in\n{dot}"
    );
    let stderr = t.stderr();
    assert!(stderr.contains("critical path: "), "{stderr}");
    assert!(
        stderr.contains("device AMD") || stderr.contains("device "),
        "{stderr}"
    );
}

#[test]
fn a_host_sleep_is_a_host_gap() {
    let t = traced("host_sleep");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let second = at_line(&path, "second");
    assert_eq!(second.len(), 1, "{path:#?}");
    assert_eq!(second[0]["gap_cause"], "host", "{path:#?}");
    let before = &path[num(second[0], "step") as usize - 2];
    assert_eq!(before["source_line"], tag_line(SRC, "first").to_string());
    // The host slept 50 ms after submitting the first kernel, so the second
    // started at least 50 ms after that submission: the gap after the first
    // kernel's end is at least 50 ms less the first kernel's submit-to-end.
    let rows = t.csv("kernels.csv");
    let first = rows
        .iter()
        .find(|k| k["start_ns"] == before["start_ns"] && k["end_ns"] == before["end_ns"])
        .expect("the first kernel's row");
    let at_least = 50_000_000 - (num(first, "end_ns") - num(first, "submit_ns"));
    assert!(
        num(second[0], "gap_before_ns") >= at_least,
        "{at_least}: {path:#?}"
    );
    assert!(
        at_least > 40_000_000,
        "the first kernel took 10 ms: {first:?}"
    );
    // The device sat idle for it: a host_late gap of at least 50 ms.
    let gaps = t.csv("idle_gaps.csv");
    let longest = gaps
        .iter()
        .find(|g| g["row"] == "gap" && g["scope"] == "device" && g["rank"] == "1")
        .expect("a device gap");
    assert_eq!(longest["cause"], "host_late", "{gaps:#?}");
    assert!(num(longest, "idle_ns") >= at_least);
    assert_eq!(longest["after_node"], second[0]["node"]);
}

#[test]
fn a_command_waiting_on_a_host_task_waits_for_it() {
    let t = traced("host_task");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let ht = at_line(&path, "slow_host_task");
    assert_eq!(ht.len(), 1, "{path:#?}");
    let after = &path[num(ht[0], "step") as usize];
    assert_eq!(after["gap_cause"], "dependency", "{path:#?}");
    // The host task slept 30 ms: the step after it waited that long.
    assert!(num(after, "gap_before_ns") >= 30_000_000, "{path:#?}");
    assert_eq!(at_line(&path, "second").len(), 1, "{path:#?}");
    let gaps = t.csv("idle_gaps.csv");
    let held: u64 = gaps
        .iter()
        .filter(|g| g["row"] == "total" && g["scope"] == "device" && g["cause"] == "host_task")
        .map(|g| num(g, "idle_ns"))
        .sum();
    assert!(held >= 30_000_000, "{gaps:#?}");
}

#[test]
fn a_dpnp_path_ends_at_the_last_command_through_real_instances() {
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let t = run_traced("critical-dpnp", python_command(&script), &[]);
    assert!(t.output.status.success(), "{}", t.stderr());
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    assert!(path.iter().any(|r| r["kind"] == "kernel"), "{path:#?}");
}
