//! One code location submitted many times is one node whose count is the
//! number of submissions; its edges count every time the runtime made them.

use crate::common;
use common::*;
use syclgraph_graph::render_dot;

#[test]
fn loop_of_submissions() {
    let mut r = vec![
        kernel(0, "_ZTS4Step", "/src/loop.cpp", 30),
        kernel(1, "_ZTS6Reduce", "/src/loop.cpp", 31),
    ];
    for i in 1..=5u64 {
        let t = i * 10_000;
        r.extend(device_run(0, i, 0, t, 100 * i));
        if i == 1 {
            r.push(edge(
                0,
                0,
                1,
                &[("access_mode", "1024"), ("memory_object", "4096")],
            ));
        } else {
            r.push(edge_again(0, i));
        }
        r.extend(device_run(1, i, 0, t + 5_000, 50));
    }
    let (g, done) = build(r);

    assert_eq!(g.stats().nodes, 2);
    let step = g.node(0).unwrap();
    assert_eq!(step.submissions, 5);
    assert_eq!(step.instances.len(), 5);
    let numbers: Vec<u64> = step.instances.iter().map(|i| i.instance).collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
    assert_eq!(step.times.device.count, 5);
    assert_eq!(step.times.device.total_ns, 100 + 200 + 300 + 400 + 500);
    assert_eq!(step.times.device.min_ns, 100);
    assert_eq!(step.times.device.max_ns, 500);
    assert_eq!(done.len(), 10);

    let e = g.edge(0).unwrap();
    assert_eq!(e.count, 5);
    assert_eq!(g.stats().edges, 1);

    let dot = parse_dot(&render_dot(&g));
    assert_eq!(dot.nodes["n0"]["count"], "5");
    assert!(dot.nodes["n0"]["label"].contains("×5"));
    assert_eq!(dot.edges[0].2["count"], "5");
}
