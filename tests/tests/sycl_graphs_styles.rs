//! A SYCL graph's edges come from its structure, whatever the recording
//! style, with and without `enable_profiling`, through the UR hooks and on
//! `ur.call.debug` (tests/programs/sycl_graphs_styles.cpp: one graph per
//! style in one run), and the program of issue #40
//! (tests/programs/sycl_graphs_plain.cpp) as a new user writes it: two
//! members, one edge, five replay rows whose `timing` says what their time
//! covers, checked against the program's own clock.
//!
//! Without `enable_profiling` the runtime builds a graph that is a single
//! path into an in-order command buffer and hands out no sync points; with
//! it, or for any other shape, an out-of-order buffer with sync points.
//! On the OpenCL CPU device a replay's event times a marker after the
//! replay's work (`timing=marker`).

use syclgraph_tests::*;

use crate::sycl_graphs::{cluster, nothing_lost, num, replay_node, replay_rows, run_program, Row};

const STYLES: &str = "tests/programs/sycl_graphs_styles.cpp";
const PLAIN: &str = "tests/programs/sycl_graphs_plain.cpp";

/// What one graph of the styles program must be: its members (the
/// `@node` tag of each, `None` for a command added with the explicit API,
/// which has no source location: those are taken in append order) and its
/// edges (positions in that list).
struct Expected {
    graph: u32,
    style: &'static str,
    replays: usize,
    members: &'static [Option<&'static str>],
    edges: &'static [(usize, usize)],
}

/// The graphs in the order the program finalises them.
const EXPECTED: [Expected; 8] = [
    Expected {
        graph: 1,
        replays: 2,
        style: "in_order",
        members: &[
            Some("in_order_memcpy"),
            Some("in_order_memset"),
            Some("in_order_fill"),
        ],
        edges: &[(0, 1), (1, 2)],
    },
    Expected {
        graph: 2,
        replays: 2,
        style: "out_of_order",
        members: &[Some("ooo_a"), Some("ooo_b"), Some("ooo_c"), Some("ooo_d")],
        edges: &[(0, 1), (0, 3), (2, 3)],
    },
    Expected {
        graph: 3,
        replays: 2,
        style: "accessors",
        members: &[
            Some("acc_fill_a"),
            Some("acc_fill_c"),
            Some("acc_copy_ab"),
            Some("acc_copy_cd"),
        ],
        edges: &[(0, 2), (1, 3)],
    },
    Expected {
        graph: 4,
        replays: 2,
        style: "explicit",
        members: &[None, None, None],
        edges: &[(0, 2), (1, 2)],
    },
    Expected {
        graph: 5,
        replays: 2,
        style: "fork_join",
        members: &[
            Some("fork_a"),
            Some("fork_b"),
            Some("fork_c"),
            Some("join_d"),
        ],
        edges: &[(0, 1), (0, 2), (1, 3), (2, 3)],
    },
    Expected {
        graph: 6,
        replays: 2,
        style: "native",
        members: &[
            Some("native_memcpy"),
            Some("native_command"),
            Some("native_memset"),
        ],
        edges: &[(0, 1), (1, 2)],
    },
    // The nested style's inner graph, finalised and never replayed itself.
    Expected {
        graph: 7,
        replays: 0,
        style: "nested",
        members: &[Some("nested_sub_memcpy"), Some("nested_sub_memset")],
        edges: &[(0, 1)],
    },
    // Its commands copied into the graph that replayed it, where it did.
    Expected {
        graph: 8,
        replays: 2,
        style: "nested",
        members: &[
            Some("nested_memset_z"),
            Some("nested_sub_memcpy"),
            Some("nested_sub_memset"),
            Some("nested_memset_w"),
        ],
        edges: &[(0, 1), (1, 2), (2, 3)],
    },
];

/// Runs the styles program untraced and traced with `args` and `env`.
fn styles(test: &str, args: &[&str], env: &[(&str, &str)]) -> Traced {
    run_program(test, "sycl_graphs_styles", args, env)
}

/// Every graph of a styles run: its members at their source lines (or
/// without one), its edges exactly, two replays each; every style's data
/// came out right; nothing lost.
fn check_styles(t: &Traced) {
    let stdout = t.stdout();
    nothing_lost(t);
    let graph = t.graph();
    for e in &EXPECTED {
        assert!(
            stdout.contains(&format!("{} ok", e.style)),
            "{}: {stdout}",
            e.style
        );
        // Members by the graph node's `members` (a command of an earlier
        // graph, a nested one's, is drawn in that graph's cluster).
        let (replay, attrs) = replay_node(&graph, e.graph);
        let members: Vec<String> = attrs["members"].split(' ').map(str::to_owned).collect();
        let (_, edges) = cluster(&graph, e.graph);
        let line = |m: &String| {
            graph.nodes[m]
                .get("line")
                .map(|l| l.parse::<u32>().unwrap())
        };
        // Each expected member: the member at its line, or (explicit API)
        // the next member without a line, in append order.
        let mut unlocated = members.iter().filter(|m| line(m).is_none());
        let matched: Vec<&String> =
            e.members
                .iter()
                .map(|tag| match tag {
                    Some(tag) => {
                        let want = Some(tag_line(STYLES, tag));
                        members.iter().find(|m| line(m) == want).unwrap_or_else(|| {
                            panic!("{}: no member at {tag}: {members:?}", e.style)
                        })
                    }
                    None => unlocated
                        .next()
                        .unwrap_or_else(|| panic!("{}: {members:?}", e.style)),
                })
                .collect();
        assert_eq!(members.len(), e.members.len(), "{}: {members:?}", e.style);
        let mut got: Vec<(usize, usize)> = edges
            .iter()
            .map(|(a, b)| {
                let at = |n: &String| matched.iter().position(|m| *m == n).unwrap();
                (at(a), at(b))
            })
            .collect();
        got.sort_unstable();
        assert_eq!(got, e.edges, "{}: edges {edges:?}", e.style);
        for m in &members {
            assert_eq!(graph.nodes[m]["count"], "0", "{}: {m}", e.style);
        }
        assert_eq!(
            attrs["count"],
            e.replays.to_string(),
            "{}: {attrs:?}",
            e.style
        );
        let rows = replay_rows(t, &replay);
        assert_eq!(rows.len(), e.replays, "{}: {rows:?}", e.style);
        for row in &rows {
            assert_eq!(row["timing"], "marker", "{}: {row:?}", e.style);
        }
    }
    // The native command is the `native` node of its line (its
    // urCommandBufferAppendNativeCommandExp says what the runtime's node
    // does not).
    let (_, native) = node_at(&graph, STYLES, tag_line(STYLES, "native_command"));
    assert_eq!(native["kind"], "native", "{native:?}");
    assert_eq!(native["operation"], "native command", "{native:?}");
}

#[test]
fn every_recording_style_gives_its_edges_with_and_without_profiling() {
    // Through the hooks: the program waits until they are in.
    let settled = ["--settle-ms", "300"];
    check_styles(&styles("sycl-graphs-styles", &settled, &[]));
    check_styles(&styles(
        "sycl-graphs-styles-profiling",
        &["--profiling", "--settle-ms", "300"],
        &[],
    ));
}

#[test]
fn every_recording_style_gives_its_edges_on_ur_call_debug() {
    let env = [("SYCLGRAPH_UR_HOOKS", "0")];
    check_styles(&styles("sycl-graphs-styles-layer", &[], &env));
    check_styles(&styles(
        "sycl-graphs-styles-layer-profiling",
        &["--profiling"],
        &env,
    ));
}

/// The program of issue #40, traced: two members with their edge, five
/// replay rows timed by their marker, each inside the program's own clock
/// bracket around its submission and wait.
fn check_plain(t: &Traced) {
    nothing_lost(t);
    let graph = t.graph();
    let (memcpy, _) = node_at(&graph, PLAIN, tag_line(PLAIN, "plain_memcpy"));
    let (memset, _) = node_at(&graph, PLAIN, tag_line(PLAIN, "plain_memset"));
    let (members, edges) = cluster(&graph, 1);
    assert_eq!(members, vec![memcpy.clone(), memset.clone()]);
    assert_eq!(edges, vec![(memcpy.clone(), memset.clone())]);
    let (replay, attrs) = replay_node(&graph, 1);
    assert_eq!(attrs["count"], "5", "{attrs:?}");
    let rows: Vec<Row> = replay_rows(t, &replay);
    assert_eq!(rows.len(), 5, "{rows:?}");
    let clock = clock_lines(&t.stdout());
    for (k, row) in rows.iter().enumerate() {
        // Not the graph's work: a marker the device signalled after it.
        assert_eq!(row["timing"], "marker", "{row:?}");
        assert_eq!(
            (row["start_ns"].as_str(), row["duration_ns"].as_str()),
            ("", "")
        );
        let bracket = &clock[&("host_replay".to_owned(), k as u64)];
        let (before, after) = (bracket[0], bracket[1]);
        // Submitted and ended inside the program's own bracket.
        assert!(before <= num(row, "submit_ns"), "{row:?} {bracket:?}");
        assert!(num(row, "end_ns") <= after, "{row:?} {bracket:?}");
        assert!(num(row, "submit_ns") < num(row, "end_ns"), "{row:?}");
    }
    // Not device time anywhere: no critical path step, no summary time.
    let path = t.csv("critical_path.csv");
    assert!(path.iter().all(|r| r["node"] != replay), "{path:?}");
    let summary = t.csv("summary.csv");
    let line = summary.iter().find(|r| r["node_id"] == replay).unwrap();
    assert_eq!(
        (num(line, "count"), num(line, "total_ns")),
        (5, 0),
        "{line:?}"
    );
}

#[test]
fn the_program_of_issue_40_gives_its_edge_and_honest_replays_in_both_finalise_styles() {
    for (test, args) in [
        ("sycl-graphs-plain", &[][..]),
        ("sycl-graphs-plain-profiling", &["--profiling"][..]),
    ] {
        let t = run_program(test, "sycl_graphs_plain", args, &[]);
        check_plain(&t);
    }
}
