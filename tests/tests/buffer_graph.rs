//! Buffers with accessors of every access mode: one node per submission at
//! its source line, memory edges with the right access modes, and device
//! durations equal to the application's own profiling info.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/buffers.cpp";

#[test]
fn buffer_accessors_become_memory_edges_at_their_source_lines() {
    let traced = shared_run("buffers");
    let graph = traced.graph();
    let at = |label: &str| node_at(&graph, SRC, tag_line(SRC, label));

    for (label, kind) in BUFFERS_NODES {
        let (_, attrs) = at(label);
        assert_eq!(attrs["kind"], kind, "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "1", "{label}");
        assert!(attrs.contains_key("operation"), "{label}");
    }
    assert_eq!(at("copy_c_to_a").1["operation"], "copy acc to acc");

    let edge = |from: &str, to: &str| {
        let (a, _) = at(from);
        let (b, _) = at(to);
        graph
            .edges
            .iter()
            .filter(|(x, y, _)| x == a && y == b)
            .map(|(_, _, attrs)| attrs.clone())
            .collect::<Vec<_>>()
    };
    // axpy_rw reads a (written by write_iota) and updates b (filled by fill_b).
    let e = edge("write_iota", "axpy_rw");
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["kind"], "memory");
    assert_eq!(e[0]["access_mode"], "read");
    assert_eq!(e[0]["count"], "1");
    assert_eq!(edge("fill_b", "axpy_rw")[0]["access_mode"], "read_write");
    assert_eq!(edge("axpy_rw", "square_discard")[0]["access_mode"], "read");
    assert_eq!(
        edge("square_discard", "copy_c_to_a")[0]["access_mode"],
        "read"
    );

    // discard_write and write_only+no_init reach the graph as discard_write,
    // on the edge from the output buffer's allocation.
    for label in ["square_discard", "square_no_init"] {
        let (id, _) = at(label);
        let modes: Vec<&str> = graph
            .edges
            .iter()
            .filter(|(_, to, _)| to == id)
            .filter_map(|(_, _, a)| a.get("access_mode").map(String::as_str))
            .collect();
        assert!(modes.contains(&"discard_write"), "{label}: {modes:?}");
    }

    for attrs in graph.nodes.values() {
        assert!(!attrs.contains_key("name"), "pydot cannot load `name`");
    }
    for (_, _, attrs) in &graph.edges {
        assert!(attrs.contains_key("kind") && attrs.contains_key("count"));
    }
}

#[test]
fn kernel_durations_equal_the_applications_profiling_info() {
    let traced = shared_run("buffers");
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    let mut compared = 0;
    for ((label, _), ns) in &measured {
        let line = tag_line(SRC, label);
        let found = rows_at(&rows, SRC, line);
        if label == "update_host_a" {
            // update_host makes no command-group node (only a Map command).
            continue;
        }
        assert_eq!(found.len(), 1, "{label}: {found:?}");
        assert_eq!(found[0]["timing"], "ok", "{label}");
        assert_eq!(found[0]["duration_ns"], ns.to_string(), "{label}");
        compared += 1;
    }
    assert!(compared >= 8, "compared only {compared}");
}
