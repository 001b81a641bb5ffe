//! USM memcpy: the fast-path node (`memory_transfer_node::memcpy`, named after
//! the caller) and the `copy usm` command group created inside it are both
//! memcpy nodes; the fast path gets no signal, so it is untimed.

use crate::common;
use common::*;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::{write_kernel_rows, InstanceStatus, NodeKind};

fn memcpy_program(with_device_record: bool) -> Vec<Record> {
    let mut r = vec![
        node(
            0,
            "memory_transfer_node::memcpy",
            "main",
            Some(("/src/usm.cpp", 21)),
            &[
                ("memory_size", "64"),
                ("queue_id", "3"),
                ("src_memory_ptr", "140000"),
                ("dest_memory_ptr", "150000"),
                ("sycl_device_name", "cpu0"),
            ],
        ),
        submitted(0, 1, 0, 1_000),
        begin(0, 1, 0, 1_010),
        // The command group the fast path fell back on, inside begin..end.
        node(
            1,
            "command_group_node",
            "copy usm",
            Some(("/src/usm.cpp", 21)),
            &[
                ("kernel_name", "copy usm"),
                ("queue_id", "3"),
                ("sycl_device_name", "cpu0"),
            ],
        ),
    ];
    r.extend(device_run(1, 1, 0, 1_020, 300));
    r.push(end(0, 1, 0, 1_100));
    if with_device_record {
        r.push(device_untimed(0, 1, TimingStatus::Unavailable));
    }
    r
}

#[test]
fn both_nodes_are_memcpy() {
    let (g, _) = build(memcpy_program(true));
    let fast = g.node(0).unwrap();
    assert_eq!(
        (fast.kind, fast.operation.as_str()),
        (NodeKind::Memcpy, "memcpy")
    );
    assert_eq!(fast.function.as_deref(), Some("main"));
    assert_eq!(fast.bytes(), Some("64"));
    let cg = g.node(1).unwrap();
    assert_eq!(
        (cg.kind, cg.operation.as_str()),
        (NodeKind::Memcpy, "copy usm")
    );
    assert_eq!(cg.function, None);
}

#[test]
fn fast_path_completes_with_its_device_record() {
    let (g, done) = build(memcpy_program(true));
    let fast: Vec<_> = done.iter().filter(|c| c.node == 0).collect();
    assert_eq!(fast.len(), 1);
    assert_eq!(fast[0].instance.status, InstanceStatus::Complete);
    assert_eq!(fast[0].instance.timing(), TimingStatus::Unavailable);
    assert_eq!(fast[0].instance.event, None);
    assert_eq!(g.stats().untimed.unavailable, 1);
}

#[test]
fn fast_path_without_device_record_is_flushed_at_finish() {
    let (g, done) = build(memcpy_program(false));
    let fast: Vec<_> = done.iter().filter(|c| c.node == 0).collect();
    assert_eq!(fast.len(), 1);
    assert_eq!(fast[0].instance.status, InstanceStatus::Flushed);
    assert_eq!(fast[0].instance.timing(), TimingStatus::Unavailable);
    assert_eq!(g.stats().instances_flushed, 1);
}

#[test]
fn rows_for_both_with_bytes_only_where_known() {
    let (g, _) = build(memcpy_program(true));
    let mut out = Vec::new();
    assert_eq!(write_kernel_rows(&mut out, &g).unwrap(), 2);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "memcpy,memcpy,n0,1,3,cpu0,,0,1000,,,,unavailable,,,64,/src/usm.cpp,21,"
    );
    assert_eq!(
        lines[2],
        "copy usm,memcpy,n1,1,3,cpu0,,0,1020,1120,1420,300,ok,,,,/src/usm.cpp,21,"
    );
}
