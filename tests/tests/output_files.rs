//! The files a user opens: graph.dot renders with graphviz and loads with
//! pydot and networkx, every node/edge carries the documented attributes,
//! and nothing half-written is left behind.

use syclgraph_tests::*;

fn pipeline() -> &'static Traced {
    pipeline_run()
}

#[test]
fn graph_dot_has_the_documented_attributes() {
    let traced = pipeline();
    let graph = traced.graph();
    assert!(graph.nodes.len() >= 5);
    for (id, attrs) in &graph.nodes {
        for key in ["kind", "operation", "count", "label"] {
            assert!(attrs.contains_key(key), "{id} lacks {key}: {attrs:?}");
        }
        assert_eq!(
            attrs.contains_key("file"),
            attrs.contains_key("line"),
            "{attrs:?}"
        );
        assert!(!attrs.contains_key("name"));
        assert!(
            !attrs.contains_key("defined"),
            "{id} was never defined: {attrs:?}"
        );
    }
    for (a, b, attrs) in &graph.edges {
        for key in ["kind", "count", "label"] {
            assert!(attrs.contains_key(key), "{a}->{b} lacks {key}");
        }
    }
    // The example's kernels are labelled with their own source lines.
    const SRC: &str = "examples/pipeline.cpp";
    let saxpy = node_at(&graph, SRC, tag_line(SRC, "saxpy")).1;
    assert_eq!(saxpy["kind"], "kernel");
    assert_eq!(saxpy["count"], "3");
    assert!(saxpy["label"].contains("pipeline.cpp:"), "{saxpy:?}");
    let leftovers: Vec<_> = std::fs::read_dir(&traced.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn both_dot_files_render_with_graphviz_and_load_with_pydot_and_networkx() {
    // run_both checked them (check_outputs); here: both files were there,
    // and instances.dot names its graph.dot node without the DOT keyword
    // `node` as an attribute (Graphviz's dot rejected that file).
    let traced = pipeline();
    assert_eq!(check_dot_files(&traced.dir), 2);
    let text = std::fs::read_to_string(traced.dir.join("instances.dot")).unwrap();
    assert!(!text.contains(" node=\""), "{text}");
    assert!(text.contains(" node_id=\"n0\""), "{text}");
}

#[test]
fn node_id_is_unique_where_the_runtime_unique_id_is_not() {
    // Four direct-path USM commands: the runtime may give them one
    // unique_id (an address it reuses); node_id tells them apart.
    let traced = shared_run("usm_chain");
    let graph = traced.graph();
    let rows = traced.csv("kernels.csv");
    use std::collections::{BTreeMap, BTreeSet};
    let mut place_of: BTreeMap<&String, BTreeSet<(&String, &String, &String)>> = BTreeMap::new();
    let mut node_at: BTreeMap<(&String, &String), BTreeSet<&String>> = BTreeMap::new();
    for r in &rows {
        let place = (&r["name"], &r["source_file"], &r["source_line"]);
        place_of.entry(&r["node_id"]).or_default().insert(place);
        if !r["source_file"].is_empty() {
            node_at
                .entry((&r["source_file"], &r["source_line"]))
                .or_default()
                .insert(&r["node_id"]);
        }
    }
    assert!(node_at.len() >= 4, "{node_at:?}");
    for (id, places) in &place_of {
        assert_eq!(places.len(), 1, "{id} stands for one command: {places:?}");
        assert!(graph.nodes.contains_key(*id), "{id}");
    }
    for (place, ids) in &node_at {
        assert_eq!(ids.len(), 1, "{place:?} is one node: {ids:?}");
    }
}

#[test]
fn a_profiling_queue_is_not_counted_as_forced() {
    // The demo makes one queue, with enable_profiling: nothing is forced.
    let traced = pipeline();
    assert!(
        !traced.stderr().contains("device profiling: turned on"),
        "{}",
        traced.stderr()
    );
}
