//! Host tasks complete at task_end (no device record is waited for), keep
//! their host duration, and never appear in kernels.csv or the summary.

use crate::common;
use common::*;
use syclgraph_graph::{summary_rows, write_kernel_rows, InstanceStatus, NodeKind};

#[test]
fn host_task_lifecycle() {
    let mut r = vec![
        kernel(0, "_ZTS8Producer", "/src/ht.cpp", 5),
        node(
            1,
            "command_group_node",
            "host task",
            Some(("/src/ht.cpp", 9)),
            &[("kernel_name", "host task"), ("queue_id", "1")],
        ),
        edge(
            0,
            0,
            1,
            &[("access_mode", "1024"), ("memory_object", "4096")],
        ),
    ];
    r.extend(device_run(0, 1, 0, 100, 500));
    // Submitted on the user's thread, run on a worker thread (2).
    r.push(submitted(1, 1, 0, 150));
    r.push(begin(1, 1, 2, 1_000));
    r.push(signal(1, 1, 0));
    r.push(end(1, 1, 2, 4_000));
    let (g, done) = build(r);

    let ht = g.node(1).unwrap();
    assert_eq!(
        (ht.kind, ht.operation.as_str()),
        (NodeKind::HostTask, "host task")
    );
    let finalised: Vec<_> = done.iter().filter(|c| c.node == 1).collect();
    assert_eq!(finalised.len(), 1);
    let i = finalised[0].instance;
    assert_eq!(i.status, InstanceStatus::Complete);
    assert_eq!((i.thread, i.task_thread), (Some(0), Some(2)));
    assert_eq!(i.host_ns(), Some(3_000));
    assert_eq!(ht.times.host.total_ns, 3_000);
    assert_eq!(
        ht.times.untimed.total(),
        0,
        "host tasks are not untimed device work"
    );

    let mut csv = Vec::new();
    assert_eq!(write_kernel_rows(&mut csv, &g).unwrap(), 1);
    assert!(!String::from_utf8(csv).unwrap().contains("host task"));
    let rows = summary_rows(&g);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].name, "Producer");
}
