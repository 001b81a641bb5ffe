//! An edge (and its repeats) can arrive before the nodes it joins are
//! defined: placeholders stand in, and the definitions fill them in.

use crate::common;
use common::*;
use syclgraph_graph::{EdgeKind, NodeKind};

#[test]
fn definitions_fill_the_placeholders() {
    let mut g = syclgraph_graph::Run::new();
    let mut done = Vec::new();
    for r in [
        edge_again(7, 2), // a repeat before the definition
        edge(7, 10, 11, &[("event", "123456")]),
        submitted(11, 1, 1, 500), // thread 1 runs ahead of thread 0
    ] {
        g.apply(r, &mut done);
    }
    let s = g.stats();
    assert_eq!(s.nodes, 2);
    assert_eq!(s.undefined_nodes, 2);
    assert_eq!(s.unknown_edge_records, 1);
    assert_eq!(
        s.unknown_node_records, 3,
        "edge source, edge target, submitted"
    );
    assert!(!g.node(10).unwrap().defined);
    assert_eq!(g.node(10).unwrap().kind, NodeKind::Other);

    for r in [
        kernel(10, "_ZTS1A", "/a.cpp", 1),
        kernel(11, "_ZTS1B", "/a.cpp", 2),
    ] {
        g.apply(r, &mut done);
    }
    let s = g.stats();
    assert_eq!((s.nodes, s.undefined_nodes, s.edges), (2, 0, 1));
    assert_eq!(g.node(11).unwrap().operation, "B");
    assert_eq!(g.node(11).unwrap().submissions, 1);
    let e = g.edge(7).unwrap();
    assert_eq!((e.source, e.target, e.kind), (10, 11, EdgeKind::Event));
    assert_eq!(e.event.as_deref(), Some("0x1e240"));
    assert_eq!(e.count, 2, "the early repeat is counted");
}

#[test]
fn instance_of_an_undefined_node_waits_for_the_definition() {
    let mut g = syclgraph_graph::Run::new();
    let mut done = Vec::new();
    for r in device_run(4, 1, 1, 100, 40) {
        g.apply(r, &mut done);
    }
    assert!(
        done.is_empty(),
        "kind unknown: cannot tell if it is complete"
    );
    g.apply(kernel(4, "_ZTS1K", "/k.cpp", 3), &mut done);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].instance.device_ns(), Some(40));
    assert_eq!(g.node(4).unwrap().times.device.total_ns, 40);
}
