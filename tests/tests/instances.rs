//! instances.dot: dependencies between submissions (the 3rd saxpy feeds the
//! 3rd scale), queue order on in-order queues marked as such, and a bound
//! that says where it cut.

use syclgraph_tests::*;

/// The instances.dot id of instance `instance` of the node at `file:line`.
fn instance_at(graph: &DotGraph, file: &str, line: u32, instance: u64) -> String {
    let found: Vec<&String> = graph
        .nodes
        .iter()
        .filter(|(_, a)| {
            a.get("file").is_some_and(|f| f.ends_with(file))
                && a.get("line") == Some(&line.to_string())
                && a.get("instance") == Some(&instance.to_string())
        })
        .map(|(id, _)| id)
        .collect();
    assert_eq!(found.len(), 1, "{file}:{line} #{instance}: {found:?}");
    found[0].clone()
}

#[test]
fn each_iteration_feeds_its_own_successor() {
    const SRC: &str = "examples/pipeline.cpp";
    let traced = pipeline_run();
    let graph = DotGraph::read(&traced.dir.join("instances.dot"));
    let (saxpy, scale) = (tag_line(SRC, "saxpy"), tag_line(SRC, "scale"));
    for k in 1..=3 {
        let from = instance_at(&graph, SRC, saxpy, k);
        let to = instance_at(&graph, SRC, scale, k);
        let edges: Vec<_> = graph
            .edges
            .iter()
            .filter(|(a, b, _)| *a == from && *b == to)
            .collect();
        assert_eq!(edges.len(), 1, "saxpy #{k} -> scale #{k}");
        assert_eq!(edges[0].2["kind"], "memory");
        for other in (1..=3).filter(|&j| j != k) {
            let wrong = instance_at(&graph, SRC, scale, other);
            assert!(
                !graph
                    .edges
                    .iter()
                    .any(|(a, b, _)| *a == from && *b == wrong),
                "saxpy #{k} must not feed scale #{other}"
            );
        }
    }
}

#[test]
fn in_order_queues_chain_their_submissions_as_queue_order() {
    const SRC: &str = "tests/programs/usm_chain.cpp";
    let traced = shared_run("usm_chain");
    let graph = DotGraph::read(&traced.dir.join("instances.dot"));
    let chain = ["ino_memset", "ino_iota", "ino_scale", "ino_memcpy"];
    for pair in chain.windows(2) {
        let a = instance_at(&graph, SRC, tag_line(SRC, pair[0]), 1);
        let b = instance_at(&graph, SRC, tag_line(SRC, pair[1]), 1);
        let kinds: Vec<&str> = graph
            .edges
            .iter()
            .filter(|(x, y, _)| *x == a && *y == b)
            .map(|(_, _, attrs)| attrs["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["queue_order"], "{} -> {}", pair[0], pair[1]);
    }
    // The out-of-order queue imposes no order: only its depends_on.
    let a = instance_at(&graph, SRC, tag_line(SRC, "ooo_memset"), 1);
    let b = instance_at(&graph, SRC, tag_line(SRC, "ooo_fill"), 1);
    assert!(!graph.edges.iter().any(|(x, y, _)| *x == a && *y == b));
}

#[test]
fn depends_on_chains_are_instance_edges() {
    // Out-of-order queue: every edge comes from an event wait list or the
    // scheduler. The memcpy is a direct-path command, whose submission
    // syclgraph keeps back until its task ends: its wait list's edge must
    // still find it in the instance graph.
    const SRC: &str = "tests/programs/usm_chain.cpp";
    let traced = shared_run("usm_chain");
    let graph = DotGraph::read(&traced.dir.join("instances.dot"));
    for (from, to) in [
        ("ooo_memset", "ooo_iota"),
        ("ooo_iota", "ooo_axpy"),
        ("ooo_axpy", "ooo_memcpy"),
        ("ooo_memcpy", "ooo_host_task"),
    ] {
        let a = instance_at(&graph, SRC, tag_line(SRC, from), 1);
        let b = instance_at(&graph, SRC, tag_line(SRC, to), 1);
        assert!(
            graph.edges.iter().any(|(x, y, _)| *x == a && *y == b),
            "{from} -> {to} missing from instances.dot"
        );
    }
}

#[test]
fn the_instance_bound_cuts_and_says_so() {
    let traced = run_both(
        "instances-cut",
        || runtime_command(&program("pipeline")),
        &[("SYCLGRAPH_MAX_INSTANCES", "4")],
    );
    let text = std::fs::read_to_string(traced.dir.join("instances.dot")).unwrap();
    let graph = DotGraph::read(&traced.dir.join("instances.dot"));
    assert_eq!(graph.nodes.len(), 4, "{text}");
    assert!(text.contains("cut=\"true\""), "{text}");
    assert!(text.contains("first 4 of"), "{text}");
    // graph.dot is not bounded: every code location and count is there.
    let full = traced.graph();
    assert!(full.nodes.len() > 4);
}
