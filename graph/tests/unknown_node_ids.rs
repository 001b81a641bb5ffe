//! Records naming node ids that are never defined do not panic: the nodes
//! stay undefined placeholders, their instances are flushed at the end, and
//! they are marked in the DOT output.

use crate::common;
use common::*;
use syclgraph_graph::record::{Metadata, Record, TimingStatus};
use syclgraph_graph::{render_dot, write_kernel_rows, InstanceStatus};

#[test]
fn never_defined_nodes() {
    let mut r = vec![kernel(0, "_ZTS1K", "/k.cpp", 1)];
    r.extend(device_run(0, 1, 0, 100, 10));
    r.push(edge(0, 0, 99, &[]));
    r.extend(device_run(99, 1, 0, 200, 10));
    r.push(Record::NodeMetadata {
        node: 98,
        metadata: Box::new(Metadata::from([("queue_id".to_string(), "1".to_string())])),
    });
    r.push(signal(97, 3, 1));
    r.push(device_untimed(96, 1, TimingStatus::Lost));
    let (g, done) = build(r);

    let s = g.stats();
    assert_eq!(s.nodes, 5);
    assert_eq!(s.undefined_nodes, 4);
    assert_eq!(s.unknown_node_records, 1 + 5 + 1 + 1 + 1);
    let undefined: Vec<_> = done.iter().filter(|c| c.node != 0).collect();
    assert_eq!(undefined.len(), 3, "99, 97, 96 each had one instance");
    assert!(undefined
        .iter()
        .all(|c| c.instance.status == InstanceStatus::Flushed));
    assert_eq!(g.node(98).unwrap().queue_ids, ["1"]);

    let mut csv = Vec::new();
    assert_eq!(
        write_kernel_rows(&mut csv, &g).unwrap(),
        1,
        "only the kernel"
    );

    let dot = parse_dot(&render_dot(&g));
    assert_eq!(dot.nodes["n99"]["defined"], "false");
    assert_eq!(dot.nodes["n99"]["kind"], "other");
    assert!(!dot.nodes["n0"].contains_key("defined"));
    check_with_dot_binary(&render_dot(&g));
}
