//! Past `max_instances`, instances are dropped from memory but still handed
//! back (so their rows are streamed) and still counted exactly; past
//! `EXACT_LIMIT` timed instances a node's durations for percentiles become a
//! bounded histogram; a full pending table flushes its oldest instance.

use crate::common;
use common::*;
use syclgraph_graph::duration_samples::{EXACT_LIMIT, RELATIVE_ERROR};
use syclgraph_graph::record::TimingStatus;
use syclgraph_graph::timing::percentile;
use syclgraph_graph::{summary_rows, summary_table, InstanceStatus, KernelRowWriter, Limits, Run};

#[test]
fn dropped_instances_keep_exact_aggregates_and_rows() {
    let limits = Limits {
        max_instances: 3,
        ..Limits::default()
    };
    let mut g = Run::with_limits(limits);
    let mut rows = KernelRowWriter::new(Vec::new()).unwrap();
    let mut done = Vec::new();
    g.apply(kernel(0, "_ZTS1K", "/k.cpp", 1), &mut done);
    for i in 1..=10u64 {
        for r in device_run(0, i, 0, i * 1000, i * 10) {
            g.apply(r, &mut done);
        }
        for c in done.drain(..) {
            assert!(rows.write(&g, &c).unwrap());
        }
    }
    g.finish(&mut done);
    assert!(done.is_empty());

    assert_eq!(rows.rows(), 10, "every instance became a row");
    let n = g.node(0).unwrap();
    assert_eq!(n.instances.len(), 3);
    assert_eq!(n.times.finalised, 10);
    assert_eq!(n.times.device.count, 10);
    assert_eq!(n.times.device.total_ns, 550);
    // The durations for percentiles are all kept (exact) though 7 instances
    // were dropped.
    let kept: Vec<u64> = (1..=10).map(|i| i * 10).collect();
    assert_eq!(n.times.durations().len(), 10);
    assert_eq!(n.times.durations().exact_values(), Some(&kept[..]));
    let s = g.stats();
    assert_eq!(
        (s.instances, s.instances_kept, s.instances_dropped),
        (10, 3, 7)
    );
    let row = &summary_rows(&g)[0];
    assert_eq!(
        (row.count, row.device.max_ns, row.p95_ns),
        (10, 100, Some(100))
    );
    assert!(summary_table(&g).contains("dropped: 7 instances not kept in memory (limit 3)"));
}

#[test]
fn past_the_exact_limit_percentiles_are_close_and_memory_bounded() {
    let mut g = Run::new();
    let mut done = Vec::new();
    g.apply(kernel(0, "_ZTS1K", "/k.cpp", 1), &mut done);
    g.apply(kernel(1, "_ZTS1K", "/k.cpp", 2), &mut done); // same group
    let n = EXACT_LIMIT as u64 + 1000;
    // Durations 1 µs..~1 ms in a scrambled order, on two nodes.
    let duration = |i: u64| 1_000 + (i * 7_919) % 1_000_000;
    for i in 1..=n {
        for node in [0, 1] {
            for r in device_run(node, i, 0, i * 10_000, duration(i) + u64::from(node)) {
                g.apply(r, &mut done);
            }
        }
    }
    g.finish(&mut done);

    let mut all = Vec::new();
    for node in [0, 1] {
        let t = &g.node(node).unwrap().times;
        assert_eq!(t.device.count, n, "count stays exact");
        assert_eq!(
            t.device.max_ns,
            (1..=n).map(duration).max().unwrap() + u64::from(node)
        );
        assert_eq!(t.durations().len(), n);
        assert!(!t.durations().is_exact());
        assert!(
            t.durations().heap_bytes() <= 16 * 1024,
            "{}",
            t.durations().heap_bytes()
        );
        all.extend((1..=n).map(|i| duration(i) + u64::from(node)));
    }
    all.sort_unstable();
    let row = &summary_rows(&g)[0];
    assert_eq!(row.device.count, 2 * n);
    for (got, p) in [(row.p50_ns, 50.0), (row.p95_ns, 95.0)] {
        let (got, want) = (got.unwrap(), percentile(&all, p).unwrap());
        assert!(
            got.abs_diff(want) as f64 <= want as f64 * RELATIVE_ERROR,
            "p{p}: {got} vs {want}"
        );
    }
}

#[test]
fn a_full_pending_table_flushes_the_oldest() {
    let limits = Limits {
        max_pending: 2,
        ..Limits::default()
    };
    let mut g = Run::with_limits(limits);
    let mut done = Vec::new();
    g.apply(kernel(0, "_ZTS1K", "/k.cpp", 1), &mut done);
    // Three submissions whose device times never come.
    for i in 1..=3u64 {
        g.apply(submitted(0, i, 0, i * 10), &mut done);
        g.apply(signal(0, i, 0x100 + i), &mut done);
        g.apply(end(0, i, 0, i * 10 + 5), &mut done);
    }
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].instance.instance, 1);
    assert_eq!(done[0].instance.status, InstanceStatus::Flushed);
    assert_eq!(done[0].instance.timing(), TimingStatus::Lost);
    assert_eq!(g.stats().pending_evicted, 1);
    assert_eq!(g.stats().instances_pending, 2);
    assert!(
        summary_table(&g).contains("1 instances flushed early from a full pending table (limit 2)")
    );

    g.finish(&mut done);
    assert_eq!(done.len(), 3);
    assert_eq!(g.stats().untimed.lost, 3);
    assert_eq!(g.stats().instances_pending, 0);
}
