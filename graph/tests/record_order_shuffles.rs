//! Any interleaving of a realistic record stream builds the same graph
//! without panicking: every instance is finalised exactly once, and counts
//! do not depend on the order.

use crate::common;
use common::*;
use std::collections::HashSet;
use syclgraph_graph::record::{Record, TimingStatus};

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

fn stream() -> Vec<Record> {
    let mut r = vec![
        string(0, "queue.wait"),
        node(
            0,
            "memory_allocation_node",
            "Memory Allocation[0x10]",
            None,
            &[("memory_object", "16")],
        ),
        kernel(1, "_ZTS1A", "/s.cpp", 1),
        kernel(2, "_ZTS1B", "/s.cpp", 2),
        node(
            3,
            "command_group_node",
            "host task",
            None,
            &[("kernel_name", "host task")],
        ),
        node(
            4,
            "",
            "virtual_node[0xbeef]",
            None,
            &[("kernel_name", "virtual_node[0xbeef]")],
        ),
        edge(0, 0, 1, &[("access_mode", "1025"), ("memory_object", "16")]),
        edge(1, 1, 2, &[("access_mode", "1024"), ("memory_object", "16")]),
        edge(2, 2, 3, &[("event", "77")]),
        edge(3, 4, 1, &[("event", "48879")]),
        wait_begin(0, 0, 1),
        wait_end(0, 90_000),
    ];
    r.extend(host_run(0, 1, 0, 10, 5));
    r.push(submitted(4, 1, 0, 15));
    for i in 1..=4u64 {
        r.extend(device_run(1, i, 0, i * 1000, 100 + i));
        r.extend(device_run(2, i, 1, i * 1000 + 500, 200 + i));
        r.extend(host_run(3, i, 2, i * 1000 + 900, 50));
        if i > 1 {
            r.push(edge_again(0, i));
            r.push(edge_again(1, i));
        }
    }
    r.push(device_untimed(2, 9, TimingStatus::NoProfiling));
    r
}

#[test]
fn shuffled_streams_agree() {
    let (reference, ref_done) = build(stream());
    assert_eq!(ref_done.len(), 1 + 1 + 4 * 3 + 1);
    let ref_stats = reference.stats();
    let mut rng = Rng(42);
    for round in 0..200 {
        let mut records = stream();
        rng.shuffle(&mut records);
        let (g, done) = build(records);
        let keys: HashSet<(u32, u64)> =
            done.iter().map(|c| (c.node, c.instance.instance)).collect();
        assert_eq!(
            keys.len(),
            done.len(),
            "round {round}: an instance was finalised twice"
        );
        assert_eq!(done.len(), ref_done.len(), "round {round}");
        let s = g.stats();
        assert_eq!(
            (s.nodes, s.edges, s.submissions),
            (ref_stats.nodes, ref_stats.edges, ref_stats.submissions)
        );
        assert_eq!(s.undefined_nodes, 0, "round {round}");
        for e in reference.edges() {
            assert_eq!(
                g.edge(e.id).unwrap().count,
                e.count,
                "round {round}: edge {}",
                e.id
            );
        }
        for n in reference.nodes() {
            let m = g.node(n.id).unwrap();
            assert_eq!(
                (m.kind, &m.operation),
                (n.kind, &n.operation),
                "round {round}"
            );
            assert_eq!(m.submissions, n.submissions, "round {round}");
        }
        // Rendering never fails either.
        let _ = syclgraph_graph::render_dot(&g);
        let _ = syclgraph_graph::summary_table(&g);
    }
}

#[test]
fn ordered_stream_completes_everything() {
    let (g, done) = build(stream());
    let s = g.stats();
    assert_eq!(
        s.instances_flushed, 1,
        "only the instance with just a device record"
    );
    assert_eq!(
        done.iter().filter(|c| c.node == 4).count(),
        1,
        "virtual node completes at submission"
    );
    assert_eq!(
        g.node(1).unwrap().times.device.total_ns,
        101 + 102 + 103 + 104
    );
    assert_eq!(g.edge(0).unwrap().count, 4);
    assert_eq!(g.host_spans()[0].total_ns, 89_999);
}
