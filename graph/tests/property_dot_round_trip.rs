//! graph.dot and instances.dot always parse back with graphviz-rust,
//! whatever the names and metadata hold (quotes, backslashes, line breaks,
//! control characters, unicode) and whatever the record order: one
//! statement per node and edge, every attribute value reading back as the
//! model's text (line breaks kept, other control characters as spaces), and
//! no attribute called `name` anywhere. Loop-carried edges are marked, and
//! without them graph.dot has no cycle.

use crate::property_strategies as strategies;

use std::collections::HashSet;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::dot::loop_carried_edges;
use syclgraph_graph::dot_ids::instance_dot_id;
use syclgraph_graph::instances_dot::write_instances_dot;
use syclgraph_graph::{render_dot, NodeKind, Run};

fn check(graph: &Run) -> Result<(), TestCaseError> {
    let text = render_dot(graph);
    let dot = parse_dot(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    prop_assert!(
        !dot.keys.iter().any(|k| k == "name"),
        "an attribute called name:\n{}",
        text
    );

    let ids: HashSet<String> = graph.nodes().map(|n| format!("n{}", n.id)).collect();
    let parsed: HashSet<String> = dot.nodes.keys().cloned().collect();
    prop_assert_eq!(ids, parsed);
    for n in graph.nodes() {
        let a = &dot.nodes[&format!("n{}", n.id)];
        let get = |k: &str| a.get(k).cloned();
        prop_assert_eq!(get("kind"), Some(n.kind.as_str().to_string()));
        prop_assert_eq!(get("operation"), Some(dot_text(&n.operation)));
        prop_assert_eq!(get("count"), Some(n.submissions.to_string()));
        prop_assert_eq!(get("file"), n.source_file.as_deref().map(dot_text));
        prop_assert_eq!(get("line"), n.source_line.map(|l| l.to_string()));
        prop_assert_eq!(get("function"), n.function.as_deref().map(dot_text));
        prop_assert_eq!(get("device"), n.device.as_deref().map(dot_text));
        prop_assert_eq!(get("queue"), n.queue_text().as_deref().map(dot_text));
        prop_assert_eq!(get("uid"), n.uid.map(|u| u.to_string()));
        prop_assert_eq!(get("defined").is_some(), !n.defined);
        let d = &n.times.device;
        prop_assert_eq!(
            get("device_total_ns"),
            (d.count > 0).then(|| d.total_ns.to_string())
        );
        prop_assert_eq!(get("timed"), (d.count > 0).then(|| d.count.to_string()));
        prop_assert!(a.contains_key("label"));
    }

    // Self-loops on allocation/release nodes are left out of graph.dot.
    let edges: Vec<_> = graph
        .edges()
        .filter(|e| {
            let memory = graph
                .node(e.source)
                .is_some_and(|n| matches!(n.kind, NodeKind::Alloc | NodeKind::Dealloc));
            !(e.source == e.target && memory)
        })
        .collect();
    // A SYCL graph's inner edges are its own (kind sycl_graph), each once,
    // between members its cluster names (when it has a cluster).
    let (inner, drawn): (Vec<_>, Vec<_>) = dot
        .edges
        .iter()
        .partition(|(_, _, a)| a.get("kind").map(String::as_str) == Some("sycl_graph"));
    let expected_inner: usize = graph
        .sycl_graphs()
        .iter()
        .filter(|g| {
            dot.clusters
                .contains_key(&format!("cluster_sycl_graph_{}", g.number))
        })
        .map(|g| g.edges.len())
        .sum();
    prop_assert_eq!(inner.len(), expected_inner);
    for g in graph.sycl_graphs().iter() {
        let Some(members) = dot
            .clusters
            .get(&format!("cluster_sycl_graph_{}", g.number))
        else {
            continue;
        };
        for m in members {
            let id: u32 = m[1..].parse().unwrap();
            prop_assert_eq!(graph.sycl_graphs().member_of(id), Some(g.number));
            prop_assert_eq!(
                dot.nodes[m].get("sycl_graph").cloned(),
                Some(g.number.to_string())
            );
        }
    }
    prop_assert_eq!(edges.len(), drawn.len());
    // Ranked last: nodes without a drawn edge, seen after every other.
    let drawn_ends: HashSet<String> = drawn
        .iter()
        .flat_map(|(a, b, _)| [a.clone(), b.clone()])
        .collect();
    for id in &dot.ranked_last {
        prop_assert!(!drawn_ends.contains(id), "{} has edges", id);
        prop_assert!(
            drawn_ends
                .iter()
                .all(|e| e[1..].parse::<u32>().unwrap() < id[1..].parse::<u32>().unwrap()),
            "{} ranked last before a connected node",
            id
        );
    }
    // Without the loop-carried edges, the graph has no cycle.
    let carried = loop_carried_edges(graph);
    let mut forward = petgraph::graphmap::DiGraphMap::<u32, ()>::new();
    for n in graph.nodes() {
        forward.add_node(n.id);
    }
    for e in graph.edges().filter(|e| !carried.contains(&e.id)) {
        forward.add_edge(e.source, e.target, ());
    }
    prop_assert!(
        !petgraph::algo::is_cyclic_directed(&forward),
        "a cycle left without the loop-carried edges"
    );
    for (e, (source, target, a)) in edges.iter().zip(drawn) {
        prop_assert_eq!(source, &format!("n{}", e.source));
        prop_assert_eq!(target, &format!("n{}", e.target));
        let get = |k: &str| a.get(k).cloned();
        prop_assert_eq!(get("kind"), Some(e.kind.as_str().to_string()));
        prop_assert_eq!(get("count"), Some(e.count.to_string()));
        prop_assert_eq!(get("access_mode"), e.access_mode.as_deref().map(dot_text));
        prop_assert_eq!(
            get("memory_object"),
            e.memory_object.as_deref().map(dot_text)
        );
        prop_assert_eq!(get("event"), e.event.as_deref().map(dot_text));
        prop_assert_eq!(
            get("loop_carried").is_some(),
            carried.contains(&e.id) || e.source == e.target
        );
        prop_assert_eq!(
            get("constraint").as_deref() == Some("false"),
            carried.contains(&e.id)
        );
    }
    check_instances(graph)
}

fn check_instances(graph: &Run) -> Result<(), TestCaseError> {
    let mut bytes = Vec::new();
    write_instances_dot(&mut bytes, graph).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let dot = parse_dot(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    prop_assert!(
        !dot.keys.iter().any(|k| k == "name"),
        "an attribute called name:\n{}",
        text
    );
    let ig = graph.instance_graph();
    let ids: HashSet<String> = ig.instances().iter().map(|&k| instance_dot_id(k)).collect();
    let parsed: HashSet<String> = dot.nodes.keys().cloned().collect();
    prop_assert_eq!(ids, parsed);
    for &(node, instance) in ig.instances() {
        let a = &dot.nodes[&instance_dot_id((node, instance))];
        prop_assert_eq!(a.get("node_id").cloned(), Some(format!("n{node}")));
        prop_assert_eq!(a.get("instance").cloned(), Some(instance.to_string()));
        if let Some(n) = graph.node(node) {
            prop_assert_eq!(a.get("operation").cloned(), Some(dot_text(&n.operation)));
            prop_assert_eq!(
                a.get("file").cloned(),
                n.source_file.as_deref().map(dot_text)
            );
        }
    }
    let edges: Vec<(String, String)> = ig
        .edges()
        .into_iter()
        .map(|(a, b, _)| (instance_dot_id(a), instance_dot_id(b)))
        .collect();
    let parsed: Vec<(String, String)> = dot
        .edges
        .iter()
        .map(|(a, b, _)| (a.clone(), b.clone()))
        .collect();
    prop_assert_eq!(edges, parsed);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn dot_parses_back(records in stream(), limits in limits()) {
        let mut mid_stream = Ok(());
        let out = drive_with(&records, limits, |g, step| {
            // Snapshots are written mid-stream too.
            if step == records.len() / 2 && mid_stream.is_ok() {
                mid_stream = check(g);
            }
        });
        mid_stream?;
        check(&out.graph)?;
    }
}
