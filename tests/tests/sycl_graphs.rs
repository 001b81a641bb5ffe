//! SYCL graphs (`sycl_ext_oneapi_graph`) on the real runtime
//! (tests/programs/sycl_graphs.cpp): recorded commands are the graph's
//! members, never submissions that ran; each replay is a timed instance of
//! the graph's node, in queue order with the commands around it, in the
//! critical path and the summary.
//!
//! The programs record, finalise and replay their graphs right after their
//! first command, before syclgraph's collector hooked the runtime's UR
//! entry points (those calls are followed on `ur.call.debug` until then);
//! one test does so with every core kept busy by other processes.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/sycl_graphs.cpp";

type Row = BTreeMap<String, String>;

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

fn run(test: &str, args: &[&str]) -> Traced {
    run_with(test, args, &[])
}

/// Runs the program untraced and traced, with `env` for syclgraph.
fn run_with(test: &str, args: &[&str], env: &[(&str, &str)]) -> Traced {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    run_both(
        test,
        || {
            let mut cmd = runtime_command(&program("sycl_graphs"));
            cmd.args(&args);
            cmd
        },
        env,
    )
}

/// kernels.csv rows of kind `graph` for node `node`, by instance.
fn replay_rows(t: &Traced, node: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = t
        .csv("kernels.csv")
        .into_iter()
        .filter(|r| r["kind"] == "graph" && r["node_id"] == node)
        .collect();
    rows.sort_by_key(|r| num(r, "instance"));
    rows
}

/// The graph.dot node of kind `graph` for SYCL graph `number`.
fn replay_node(graph: &DotGraph, number: u32) -> (String, Attrs) {
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
fn cluster(graph: &DotGraph, number: u32) -> (Vec<String>, Vec<(String, String)>) {
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

/// Each replay row carries the replay event's own device time (the
/// program's `profiling <label> <k>` line), ordered submit ≤ start ≤ end,
/// and on an in-order queue each replay starts after the previous ended.
fn check_replays(rows: &[Row], stdout: &str, label: &str, first: u64, step: u64) {
    let own = profiling_lines(stdout);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(num(row, "instance"), k as u64 + 1, "{row:?}");
        assert_eq!(row["timing"], "ok", "{row:?}");
        let (submit, start, end) = (
            num(row, "submit_ns"),
            num(row, "start_ns"),
            num(row, "end_ns"),
        );
        assert!(submit <= start && start <= end, "{row:?}");
        assert_eq!(num(row, "duration_ns"), end - start, "{row:?}");
        let app = own[&(label.to_owned(), first + step * k as u64)];
        assert_eq!(num(row, "duration_ns"), app, "replay {k}: {row:?}");
        if k > 0 {
            assert!(start >= num(&rows[k - 1], "end_ns"), "replay {k} overlaps");
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
    // Five timed replays, each the replay event's own time.
    let replays = replay_rows(&t, &replay);
    assert_eq!(replays.len(), 5, "{rows:?}");
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    for r in &replays {
        assert_eq!(r["name"], "graph 1");
        assert_eq!(r["queue_id"], replays[0]["queue_id"]);
    }

    // The summary: count 5, total/mean/p50/p95 from the five durations
    // (nearest rank), computed here from kernels.csv.
    let mut durations: Vec<u64> = replays.iter().map(|r| num(r, "duration_ns")).collect();
    durations.sort_unstable();
    let total: u64 = durations.iter().sum();
    let summary = t.csv("summary.csv");
    let row = summary
        .iter()
        .find(|r| r["node_id"] == replay)
        .unwrap_or_else(|| panic!("no summary row for {replay}: {summary:?}"));
    assert_eq!(row["kind"], "graph");
    assert_eq!(num(row, "count"), 5);
    assert_eq!(num(row, "total_ns"), total);
    // Rounded to the nearest ns, as the summary documents.
    assert_eq!(num(row, "mean_ns"), (total + 2) / 5);
    assert_eq!(num(row, "p50_ns"), durations[2]);
    assert_eq!(num(row, "p95_ns"), durations[4]);
    assert!(
        summary
            .iter()
            .all(|r| r["node_id"] != *memcpy && r["node_id"] != *memset),
        "recorded commands in the summary: {summary:?}"
    );
    // The stderr table counts the five replays.
    let table_line = t
        .stderr()
        .lines()
        .find(|l| l.starts_with("graph ") && l.contains("graph 1"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no graph line in:\n{}", t.stderr()));
    assert_eq!(
        table_line.split_whitespace().nth(3),
        Some("5"),
        "{table_line}"
    );

    // The timeline: one slice per replay on its queue's track, with the
    // replays' own times (parsed with Perfetto's own protos).
    let slices = queue_slices(&t, "graph 1");
    let expected: Vec<(String, u64, u64)> = replays
        .iter()
        .map(|r| {
            (
                // A queue's track names its device (label and name).
                format!("queue {} {} {}", r["queue_id"], r["device_id"], r["device"]),
                num(r, "start_ns"),
                num(r, "end_ns"),
            )
        })
        .collect();
    assert_eq!(slices, expected);

    // The critical path: the five replays are five steps, in order, with
    // the replays' own times.
    let path = t.csv("critical_path.csv");
    let steps: Vec<&Row> = path.iter().filter(|r| r["node"] == replay).collect();
    assert_eq!(steps.len(), 5, "{path:?}");
    for (k, step) in steps.iter().enumerate() {
        assert_eq!(num(step, "instance"), k as u64 + 1);
        assert_eq!(step["start_ns"], replays[k]["start_ns"]);
        assert_eq!(step["end_ns"], replays[k]["end_ns"]);
    }
}

/// Nothing about SYCL graphs was lost: no `lost:` line about them on stderr.
fn nothing_lost(t: &Traced) {
    let stderr = t.stderr();
    let lost: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("lost:") && l.contains("SYCL graph"))
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
    // The device ran them in that order: the rows' times say so.
    let rows = t.csv("kernels.csv");
    let before_row = &rows_at(&rows, SRC, tag_line(SRC, "kernel_before"))[0];
    let after_row = &rows_at(&rows, SRC, tag_line(SRC, "kernel_after"))[0];
    let replays = replay_rows(&t, &replay);
    check_replays(&replays, &t.stdout(), "replay", 0, 1);
    assert!(num(&replays[0], "start_ns") >= num(before_row, "end_ns"));
    assert!(num(after_row, "start_ns") >= num(&replays[4], "end_ns"));
    // Each replay is one step of the critical path, between the kernels.
    let path = t.csv("critical_path.csv");
    let nodes: Vec<&str> = path.iter().map(|r| r["node"].as_str()).collect();
    let at = |n: &str| nodes.iter().position(|x| *x == n).unwrap_or(usize::MAX);
    assert_eq!(
        nodes.iter().filter(|n| **n == replay).count(),
        5,
        "{nodes:?}"
    );
    assert!(
        at(before) < at(&replay) && at(&replay) < at(after),
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
