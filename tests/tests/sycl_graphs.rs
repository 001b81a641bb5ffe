//! SYCL graphs (`sycl_ext_oneapi_graph`) on the real runtime
//! (tests/programs/sycl_graphs.cpp): recorded commands are the graph's
//! members, never submissions that ran; each replay is an instance of the
//! graph's node, in queue order with the commands around it, timed by the
//! marker the OpenCL CPU device signals after it (`timing=marker`: not
//! device time in the critical path or the summary).
//!
//! The programs record, finalise and replay their graphs right after their
//! first command, before syclgraph's collector hooked the runtime's UR
//! entry points (those calls are followed on `ur.call.debug` until then);
//! one test does so with every core kept busy by other processes.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/sycl_graphs.cpp";

pub(crate) type Row = BTreeMap<String, String>;

pub(crate) fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

fn run(test: &str, args: &[&str]) -> Traced {
    run_with(test, args, &[])
}

/// Runs the program untraced and traced, with `env` for syclgraph.
fn run_with(test: &str, args: &[&str], env: &[(&str, &str)]) -> Traced {
    run_program(test, "sycl_graphs", args, env)
}

/// Runs test program `name` with `args` untraced and traced, with `env`
/// for syclgraph.
pub(crate) fn run_program(test: &str, name: &str, args: &[&str], env: &[(&str, &str)]) -> Traced {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    run_both(
        test,
        || {
            let mut cmd = runtime_command(&program(name));
            cmd.args(&args);
            cmd
        },
        env,
    )
}

/// kernels.csv rows of kind `graph` for node `node`, by instance.
pub(crate) fn replay_rows(t: &Traced, node: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = t
        .csv("kernels.csv")
        .into_iter()
        .filter(|r| r["kind"] == "graph" && r["node_id"] == node)
        .collect();
    rows.sort_by_key(|r| num(r, "instance"));
    rows
}

/// The graph.dot node of kind `graph` for SYCL graph `number`.
pub(crate) fn replay_node(graph: &DotGraph, number: u32) -> (String, Attrs) {
    let found: Vec<_> = graph
        .nodes_where("kind", "graph")
        .into_iter()
        .filter(|(_, a)| a.get("sycl_graph") == Some(&number.to_string()))
        .collect();
    assert_eq!(found.len(), 1, "graph {number}: {found:?}");
    (found[0].0.clone(), found[0].1.clone())
}

/// The member nodes named in `cluster_sycl_graph_<number>` (each declared
/// with `sycl_graph` = number) and the graph's inner edges.
pub(crate) fn cluster(graph: &DotGraph, number: u32) -> (Vec<String>, Vec<(String, String)>) {
    let members = graph
        .subgraphs
        .get(&format!("cluster_sycl_graph_{number}"))
        .cloned()
        .unwrap_or_else(|| panic!("no cluster for graph {number}: {:?}", graph.subgraphs));
    for m in &members {
        assert_eq!(graph.nodes[m]["sycl_graph"], number.to_string(), "{m}");
    }
    let edges = graph
        .edges
        .iter()
        .filter(|(_, _, a)| {
            a.get("kind").map(String::as_str) == Some("sycl_graph")
                && a.get("sycl_graph") == Some(&number.to_string())
        })
        .map(|(a, b, _)| (a.clone(), b.clone()))
        .collect();
    (members, edges)
}

/// Each replay row says what the OpenCL CPU device timed: a marker after
/// the replay's work (`timing=marker`), of which only the end is written
/// (no start, no duration: the graph's device time is not known), after
/// the submission; on an in-order queue each replay ends after the
/// previous one. The program's own `profiling <label> <k>` lines (the
/// replay event's duration) are there for every replay.
fn check_replays(rows: &[Row], stdout: &str, label: &str, first: u64, step: u64) {
    let own = profiling_lines(stdout);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(num(row, "instance"), k as u64 + 1, "{row:?}");
        assert_eq!(row["timing"], "marker", "{row:?}");
        assert_eq!(row["start_ns"], "", "{row:?}");
        assert_eq!(row["duration_ns"], "", "{row:?}");
        assert!(num(row, "end_ns") > num(row, "submit_ns"), "{row:?}");
        assert!(
            own.contains_key(&(label.to_owned(), first + step * k as u64)),
            "replay {k}: {own:?}"
        );
        if k > 0 {
            assert!(
                num(row, "end_ns") > num(&rows[k - 1], "end_ns"),
                "replay {k} ends before the one before it"
            );
        }
    }
}

/// The slices named `name` in trace.pftrace: (track name, begin, end),
/// in time order.
fn queue_slices(t: &Traced, name: &str) -> Vec<(String, u64, u64)> {
    // The trace is read as Perfetto's trace processor reads it (per-sequence
    // defaults, interned names, incremental clocks), by the checker's decoder.
    let code = r#"
import sys
sys.path.insert(0, sys.argv[3])
from check_pftrace import decode_events, pb, TE
trace = pb.Trace()
trace.ParseFromString(open(sys.argv[1], "rb").read())
tracks, events, problems = decode_events(trace)
assert not problems, problems
open_at = {}
for track, ts, _, typ, _, name, _ in events:
    if typ == TE.TYPE_SLICE_BEGIN and name == sys.argv[2]:
        open_at[track] = (ts, tracks.get(track, "?"))
    elif typ == TE.TYPE_SLICE_END and track in open_at:
        begin, name = open_at.pop(track)
        print(name, begin, ts, sep="\t")
"#;
    let out = python_command_c(code)
        .arg(t.dir.join("trace.pftrace"))
        .arg(name)
        .arg(repo_root().join("tests/scripts"))
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut slices: Vec<(String, u64, u64)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_owned(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    slices.sort_by_key(|s| s.1);
    slices
}

#[test]
fn record_and_replay_gives_two_nodes_one_edge_and_five_timed_replays() {
    let t = run("sycl-graphs-record", &["record"]);
    let graph = t.graph();
    let (memcpy_line, memset_line) = (tag_line(SRC, "graph_memcpy"), tag_line(SRC, "graph_memset"));
    let (memcpy, memcpy_attrs) = node_at(&graph, SRC, memcpy_line);
    let (memset, memset_attrs) = node_at(&graph, SRC, memset_line);
    // The recorded commands are the graph's two members, with its one edge.
    let (replay, attrs) = replay_node(&graph, 1);
    let (members, edges) = cluster(&graph, 1);
    assert_eq!(members, vec![memcpy.clone(), memset.clone()]);
    assert_eq!(edges, vec![(memcpy.clone(), memset.clone())]);
    assert_eq!(memcpy_attrs["kind"], "memcpy");
    assert_eq!(memset_attrs["kind"], "memset");
    for a in [memcpy_attrs, memset_attrs] {
        assert_eq!(
            a["count"], "0",
            "a recorded command is no submission: {a:?}"
        );
        assert_eq!(a["inside_replay"], "not timed by this backend");
    }
    assert_eq!(attrs["members"], format!("{memcpy} {memset}"));
    assert_eq!(attrs["count"], "5");
    assert!(num(&attrs, "finalize_ns") > 0, "{attrs:?}");

    // Never listed as run: no kernels.csv row at the recorded lines.
    let rows = t.csv("kernels.csv");
    for line in [memcpy_line, memset_line] {
        assert!(
            rows_at(&rows, SRC, line).is_empty(),
            "line {line} listed as run"
        );
    }
    // Five replays, each a row timed by the marker at its end.
    let replays = replay_rows(&t, &replay);
    assert_eq!(replays.len(), 5, "{rows:?}");
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    for r in &replays {
        assert_eq!(r["name"], "graph 1");
        assert_eq!(r["queue_id"], replays[0]["queue_id"]);
    }

    // The summary: count 5, no device time (a marker is not the graph's
    // work), and the stderr table and its SYCL graph lines say so.
    let summary = t.csv("summary.csv");
    let row = summary
        .iter()
        .find(|r| r["node_id"] == replay)
        .unwrap_or_else(|| panic!("no summary row for {replay}: {summary:?}"));
    assert_eq!(row["kind"], "graph");
    assert_eq!(num(row, "count"), 5);
    assert_eq!(num(row, "total_ns"), 0, "{row:?}");
    assert_eq!(row["p50_ns"], "", "{row:?}");
    assert!(
        summary
            .iter()
            .all(|r| r["node_id"] != *memcpy && r["node_id"] != *memset),
        "recorded commands in the summary: {summary:?}"
    );
    let stderr = t.stderr();
    let table_line = stderr
        .lines()
        .find(|l| l.starts_with("graph ") && l.contains("graph 1"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no graph line in:\n{stderr}"));
    assert_eq!(
        table_line.split_whitespace().nth(3),
        Some("5"),
        "{table_line}"
    );
    assert!(stderr.contains("untimed: 5 marker"), "{stderr}");
    assert!(stderr.contains("5 replay(s) timing=marker"), "{stderr}");

    // The timeline has no device slice for them, and the critical path
    // takes no replay as a step: neither counts a marker as device time.
    assert_eq!(queue_slices(&t, "graph 1"), vec![]);
    let path = t.csv("critical_path.csv");
    assert!(path.iter().all(|r| r["node"] != replay), "{path:?}");
    assert!(!path.is_empty(), "the memcpys around the graph are steps");
}

/// Nothing about SYCL graphs was lost: no `lost:` line about them (or
/// their command buffers) on stderr.
pub(crate) fn nothing_lost(t: &Traced) {
    let stderr = t.stderr();
    let lost: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.starts_with("lost:") && (l.contains("SYCL graph") || l.contains("command buffer"))
        })
        .collect();
    assert!(lost.is_empty(), "{lost:?}");
}

/// The `kernel` scenario's outputs: a memcpy, a kernel and a memset
/// recorded, the graph's three members with its two edges, none of them a
/// row; five timed replays.
fn check_kernel_graph(t: &Traced) {
    nothing_lost(t);
    let graph = t.graph();
    let lines = [
        tag_line(SRC, "kernel_graph_memcpy"),
        tag_line(SRC, "kernel_graph_kernel"),
        tag_line(SRC, "kernel_graph_memset"),
    ];
    let nodes: Vec<(String, Attrs)> = lines
        .iter()
        .map(|l| {
            let (id, attrs) = node_at(&graph, SRC, *l);
            (id.clone(), attrs.clone())
        })
        .collect();
    let ids: Vec<String> = nodes.iter().map(|(id, _)| id.clone()).collect();
    let kinds: Vec<&str> = nodes.iter().map(|(_, a)| a["kind"].as_str()).collect();
    assert_eq!(kinds, ["memcpy", "kernel", "memset"]);
    for (id, a) in &nodes {
        assert_eq!(a["count"], "0", "{id} counted as run: {a:?}");
        assert_eq!(a["inside_replay"], "not timed by this backend");
    }
    // The recorded kernel is the graph's middle member, with an edge in
    // and an edge out (the in-order queue's order, as sync points).
    let (replay, attrs) = replay_node(&graph, 1);
    let (members, edges) = cluster(&graph, 1);
    assert_eq!(members, ids);
    assert_eq!(
        edges,
        vec![
            (ids[0].clone(), ids[1].clone()),
            (ids[1].clone(), ids[2].clone())
        ]
    );
    assert_eq!(attrs["members"], ids.join(" "));
    assert_eq!(attrs["count"], "5");
    // No row for a recorded command; the program's two memcpys and the
    // five replays, each timed with the replay event's own times.
    let rows = t.csv("kernels.csv");
    for line in lines {
        assert!(
            rows_at(&rows, SRC, line).is_empty(),
            "line {line} listed as run"
        );
    }
    let replays = replay_rows(t, &replay);
    assert_eq!(replays.len(), 5, "{rows:?}");
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    assert_eq!(rows.len(), 7, "{rows:?}");
    assert!(rows.iter().all(|r| r["kind"] != "kernel"), "{rows:?}");
}

#[test]
fn recorded_kernels_are_graph_members_with_edges_never_rows() {
    check_kernel_graph(&run("sycl-graphs-kernel", &["kernel"]));
}

#[test]
fn graphs_are_followed_on_ur_call_debug_before_the_hooks_are_in() {
    // Without hooks, UR calls are followed on ur.call.debug all along, as
    // they are from the runtime's first UR call until the collector
    // installed its hooks: the same graph, the same rows.
    let env = [("SYCLGRAPH_UR_HOOKS", "0")];
    check_kernel_graph(&run_with("sycl-graphs-layer", &["kernel"], &env));
}

#[test]
fn graphs_at_a_loaded_start_are_followed_from_the_first_command() {
    // Every core busy: the collector hooks the runtime late, the program
    // records and replays at once. Each run must give the whole graph.
    let _load = Load::every_core();
    for run_number in 0..3 {
        check_kernel_graph(&run(
            &format!("sycl-graphs-loaded-{run_number}"),
            &["kernel"],
        ));
    }
}

#[test]
fn explicit_api_graph_is_its_appended_commands() {
    let t = run("sycl-graphs-explicit", &["explicit"]);
    let graph = t.graph();
    let (replay, attrs) = replay_node(&graph, 1);
    let (members, edges) = cluster(&graph, 1);
    assert_eq!(members.len(), 2, "{members:?}");
    let kinds: Vec<&str> = members
        .iter()
        .map(|m| graph.nodes[m]["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["memcpy", "fill"]);
    assert_eq!(edges, vec![(members[0].clone(), members[1].clone())]);
    assert_eq!(attrs["members"], members.join(" "));
    let replays = replay_rows(&t, &replay);
    assert_eq!(replays.len(), 5);
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    // Only the program's first memcpy ran outside the graph.
    let rows = t.csv("kernels.csv");
    assert_eq!(rows.len(), 6, "{rows:?}");
}

#[test]
fn replays_in_a_loop_give_one_row_each() {
    let t = run("sycl-graphs-loop", &["record", "--replays", "40"]);
    let (replay, attrs) = replay_node(&t.graph(), 1);
    assert_eq!(attrs["count"], "40");
    let replays = replay_rows(&t, &replay);
    assert_eq!(replays.len(), 40);
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
}

#[test]
fn a_graph_between_two_kernels_is_one_step_in_queue_order() {
    let t = run("sycl-graphs-between", &["between"]);
    let graph = t.graph();
    let (replay, _) = replay_node(&graph, 1);
    let id = replay.trim_start_matches('n');
    let (before, _) = node_at(&graph, SRC, tag_line(SRC, "kernel_before"));
    let (after, _) = node_at(&graph, SRC, tag_line(SRC, "kernel_after"));
    let instances = DotGraph::read(&t.dir.join("instances.dot"));
    let inst = |node: &str, k: u64| format!("i{}_{k}", node.trim_start_matches('n'));
    let edge = |from: String, to: String| {
        instances
            .edges
            .iter()
            .any(|(a, b, _)| *a == from && *b == to)
    };
    // Edges in and out: the kernel before → replay 1 ... replay 5 → the kernel after.
    assert!(
        edge(inst(before, 1), format!("i{id}_1")),
        "no edge into the first replay"
    );
    for k in 1..5 {
        assert!(edge(format!("i{id}_{k}"), format!("i{id}_{}", k + 1)));
    }
    assert!(
        edge(format!("i{id}_5"), inst(after, 1)),
        "no edge out of the last replay"
    );
    // The device ran them in that order: the rows' times say so (a
    // replay's marker ends after the kernel before it, and before the
    // kernel after it starts).
    let rows = t.csv("kernels.csv");
    let before_row = &rows_at(&rows, SRC, tag_line(SRC, "kernel_before"))[0];
    let after_row = &rows_at(&rows, SRC, tag_line(SRC, "kernel_after"))[0];
    let replays = replay_rows(&t, &replay);
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    assert!(num(&replays[0], "end_ns") >= num(before_row, "end_ns"));
    assert!(num(after_row, "start_ns") >= num(&replays[4], "end_ns"));
    // The replays have no device time: not steps of the critical path,
    // which still runs from the kernel before to the kernel after.
    let path = t.csv("critical_path.csv");
    let nodes: Vec<&str> = path.iter().map(|r| r["node"].as_str()).collect();
    let at = |n: &str| nodes.iter().position(|x| *x == n).unwrap_or(usize::MAX);
    assert!(!nodes.contains(&replay.as_str()), "{nodes:?}");
    assert!(
        at(before) < at(after) && at(after) < usize::MAX,
        "{nodes:?}"
    );
}

#[test]
fn two_graphs_on_two_queues_are_kept_apart() {
    let t = run("sycl-graphs-two", &["two"]);
    let graph = t.graph();
    let (g1, _) = replay_node(&graph, 1);
    let (g2, _) = replay_node(&graph, 2);
    let (m1, e1) = cluster(&graph, 1);
    let (m2, e2) = cluster(&graph, 2);
    let line = |n: &String| graph.nodes[n]["line"].parse::<u32>().unwrap();
    assert_eq!(
        m1.iter().map(line).collect::<Vec<_>>(),
        [tag_line(SRC, "g1_memcpy")]
    );
    assert!(e1.is_empty());
    assert_eq!(
        m2.iter().map(line).collect::<Vec<_>>(),
        [tag_line(SRC, "g2_memset"), tag_line(SRC, "g2_memcpy")]
    );
    assert_eq!(e2, vec![(m2[0].clone(), m2[1].clone())]);
    let (r1, r2) = (replay_rows(&t, &g1), replay_rows(&t, &g2));
    assert_eq!((r1.len(), r2.len()), (5, 5));
    check_replays(&r1, &t.stdout(), "replay_g1", 0, 1);
    check_replays(&r2, &t.stdout(), "replay_g2", 0, 1);
    assert_ne!(r1[0]["queue_id"], r2[0]["queue_id"], "one queue each");
    assert!(r1.iter().all(|r| r["queue_id"] == r1[0]["queue_id"]));
    assert!(r2.iter().all(|r| r["queue_id"] == r2[0]["queue_id"]));
}

#[test]
fn one_graph_finalised_twice_is_two_executable_graphs() {
    let t = run("sycl-graphs-twice", &["twice"]);
    let graph = t.graph();
    let (g1, a1) = replay_node(&graph, 1);
    let (g2, a2) = replay_node(&graph, 2);
    let (memcpy, _) = node_at(&graph, SRC, tag_line(SRC, "twice_memcpy"));
    // Both executable graphs run the one recorded memcpy; each finalisation
    // has its own cost.
    assert_eq!(a1["members"], *memcpy);
    assert_eq!(a2["members"], *memcpy);
    assert!(num(&a1, "finalize_ns") > 0 && num(&a2, "finalize_ns") > 0);
    let (r1, r2) = (replay_rows(&t, &g1), replay_rows(&t, &g2));
    assert_eq!((r1.len(), r2.len()), (5, 5));
    // The program submits first, second, first, ...: replay 2k and 2k+1.
    check_replays(&r1, &t.stdout(), "replay", 0, 2);
    check_replays(&r2, &t.stdout(), "replay", 1, 2);
}
