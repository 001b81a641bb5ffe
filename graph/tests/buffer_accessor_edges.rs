//! Buffers with write, read and read_write accessors give memory edges that
//! carry the access mode and the buffer, and the right node kinds.

use crate::common;
use common::*;
use syclgraph_graph::record::Record;
use syclgraph_graph::{EdgeKind, NodeKind};

/// Two buffers `a` (0x1000) and `b` (0x2000):
/// Init writes a; Add reads a and read_writes b; a host accessor copies b
/// back; a is released.
fn buffer_program() -> Vec<Record> {
    let dev = ("sycl_device_name", "Intel(R) Core(TM) CPU");
    let mut r = vec![
        node(
            0,
            "memory_allocation_node",
            "Memory Allocation[0x1000]",
            None,
            &[("memory_object", "4096"), dev],
        ),
        kernel(1, "_ZTSZ4mainE4Init", "/src/app.cpp", 10),
        edge(
            0,
            0,
            1,
            &[("access_mode", "1025"), ("memory_object", "4096")],
        ),
        node(
            2,
            "memory_allocation_node",
            "Memory Allocation[0x2000]",
            None,
            &[("memory_object", "8192"), dev],
        ),
        kernel(3, "_ZTSZ4mainE3Add", "/src/app.cpp", 15),
        edge(
            1,
            1,
            3,
            &[("access_mode", "1024"), ("memory_object", "4096")],
        ),
        edge(
            2,
            2,
            3,
            &[("access_mode", "1026"), ("memory_object", "8192")],
        ),
        node(
            4,
            "memory_transfer_node",
            "Memory Transfer (Copy)[0x2000]",
            None,
            &[
                ("memory_object", "8192"),
                ("copy_from", "1"),
                ("copy_to", "0"),
                dev,
            ],
        ),
        edge(
            3,
            3,
            4,
            &[("access_mode", "1024"), ("memory_object", "8192")],
        ),
        node(
            5,
            "memory_deallocation_node",
            "Memory Deallocation[0x1000]",
            None,
            &[dev],
        ),
        edge(4, 0, 5, &[("memory_object", "4096")]),
    ];
    r.extend(host_run(0, 1, 0, 1_000, 50));
    r.extend(device_run(1, 1, 0, 2_000, 700));
    r.extend(host_run(2, 1, 0, 3_000, 50));
    r.extend(device_run(3, 1, 0, 4_000, 900));
    r.extend(device_run(4, 1, 0, 5_000, 120));
    r.extend(host_run(5, 1, 0, 6_000, 20));
    r
}

#[test]
fn kinds_and_operations() {
    let (g, _) = build(buffer_program());
    let got: Vec<(u32, NodeKind, &str)> = g
        .nodes()
        .map(|n| (n.id, n.kind, n.operation.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (0, NodeKind::Alloc, "Memory Allocation"),
            (1, NodeKind::Kernel, "main::Init"),
            (2, NodeKind::Alloc, "Memory Allocation"),
            (3, NodeKind::Kernel, "main::Add"),
            (4, NodeKind::Copy, "Memory Transfer (Copy)"),
            (5, NodeKind::Dealloc, "Memory Deallocation"),
        ]
    );
    let init = g.node(1).unwrap();
    assert_eq!(init.source_file.as_deref(), Some("/src/app.cpp"));
    assert_eq!(init.source_line, Some(10));
    assert_eq!(init.device.as_deref(), Some("Intel(R) Core(TM) CPU"));
    assert_eq!(init.queue_ids, ["1"]);
}

/// source, target, kind, access mode, memory object, count.
type EdgeRow<'a> = (u32, u32, EdgeKind, Option<&'a str>, Option<&'a str>, u64);

#[test]
fn accessor_edges_carry_mode_and_buffer() {
    let (g, _) = build(buffer_program());
    let got: Vec<EdgeRow> = g
        .edges()
        .map(|e| {
            (
                e.source,
                e.target,
                e.kind,
                e.access_mode.as_deref(),
                e.memory_object.as_deref(),
                e.count,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (0, 1, EdgeKind::Memory, Some("write"), Some("0x1000"), 1),
            (1, 3, EdgeKind::Memory, Some("read"), Some("0x1000"), 1),
            (
                2,
                3,
                EdgeKind::Memory,
                Some("read_write"),
                Some("0x2000"),
                1
            ),
            (3, 4, EdgeKind::Memory, Some("read"), Some("0x2000"), 1),
            (0, 5, EdgeKind::Memory, None, Some("0x1000"), 1),
        ]
    );
}

#[test]
fn dependencies_of_a_node() {
    let (g, _) = build(buffer_program());
    let into: Vec<(u32, &str)> = g
        .edges_into(3)
        .iter()
        .map(|e| (e.source, e.access_mode.as_deref().unwrap()))
        .collect();
    assert_eq!(into, [(1, "read"), (2, "read_write")]);
    let from: Vec<u32> = g.edges_from(0).iter().map(|e| e.target).collect();
    assert_eq!(from, [1, 5]);
    assert!(g.edges_into(42).is_empty());
}

#[test]
fn every_run_is_finalised_once_and_complete() {
    let (g, done) = build(buffer_program());
    assert_eq!(done.len(), 6);
    let s = g.stats();
    assert_eq!((s.nodes, s.edges, s.submissions, s.instances), (6, 5, 6, 6));
    assert_eq!(s.instances_flushed, 0);
    assert_eq!(s.unknown_node_records, 0);
    assert_eq!(g.node(3).unwrap().times.device.total_ns, 900);
    assert_eq!(g.node(0).unwrap().times.host.total_ns, 50);
}
