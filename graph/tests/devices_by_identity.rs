//! Devices are told apart by identity (the runtime's device handle), not by
//! name: two tiles of one GPU and a second GPU, all three of one name, with
//! one code location submitted to all three queues, and a direct-path USM
//! memcpy whose metadata names no device. Each instance lands on its
//! queue's device: its own `device_id`, busy time and idle gaps.

use crate::common;

use common::*;
use syclgraph_graph::idle_gaps_csv::write_idle_gaps_csv;
use syclgraph_graph::record::Record;
use syclgraph_graph::{write_kernel_rows, TraceWriter};

const GPU: u64 = 0x6000;
const TILE0: u64 = 0x6100;
const TILE1: u64 = 0x6200;
const OTHER_GPU: u64 = 0x7000;

fn queue(queue_id: u64, device_handle: u64) -> Record {
    Record::QueueCreated {
        queue_id,
        device: 1,
        device_handle,
        ns: 1,
    }
}

fn on_queue(node: u32, instance: u64, queue_id: u64) -> Record {
    Record::InstanceQueue {
        node,
        instance,
        queue_id,
    }
}

fn records() -> Vec<Record> {
    let mut r = vec![
        string(1, "Intel(R) Data Center GPU Max 1550"),
        // As the collector sends them: the parent first.
        Record::DeviceDefined {
            device: GPU,
            parent: 0,
        },
        Record::DeviceDefined {
            device: TILE0,
            parent: GPU,
        },
        queue(1, TILE0),
        Record::DeviceDefined {
            device: TILE1,
            parent: GPU,
        },
        queue(2, TILE1),
        queue(3, OTHER_GPU),
        node(
            0,
            "command_group_node",
            "_ZTS1K",
            Some(("k.cpp", 5)),
            &[
                ("kernel_name", "_ZTS1K"),
                ("sycl_device_name", "Intel(R) Data Center GPU Max 1550"),
                ("sycl_device", &TILE0.to_string()),
                ("queue_id", "1"),
            ],
        ),
        // No device in a direct-path USM command's metadata.
        node(
            1,
            "memory_transfer_node::memcpy",
            "memcpy",
            Some(("k.cpp", 9)),
            &[("memory_size", "64"), ("queue_id", "2")],
        ),
    ];
    // The three instances of node 0 run at the same time, each on its own
    // device: merged by name they would be one device, busy 300 ns.
    for (instance, q) in [(1, 1), (2, 2), (3, 3)] {
        r.push(on_queue(0, instance, q));
        r.extend(device_run(0, instance, 1, 1_000, 300));
    }
    // Tile 1: the memcpy 1,000 ns after the kernel ended.
    r.extend(device_run(1, 1, 1, 2_300, 50));
    r
}

#[test]
fn each_instance_on_its_queues_device() {
    let (g, _) = build(records());
    let labels: Vec<(String, Option<usize>)> = g
        .devices()
        .devices()
        .map(|d| (d.label.clone(), d.parent))
        .collect();
    assert_eq!(
        labels,
        [
            ("0".to_string(), None),
            ("0.0".to_string(), Some(0)),
            ("0.1".to_string(), Some(0)),
            ("1".to_string(), None),
        ]
    );
    // A GPU without a queue of its own is named after its tiles.
    assert_eq!(
        g.devices().display(0),
        "0 Intel(R) Data Center GPU Max 1550"
    );

    let mut out = Vec::new();
    write_kernel_rows(&mut out, &g).unwrap();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // node_id, instance, queue_id, device, device_id
    let mut got: Vec<(&str, &str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[2], r[3], r[4], r[5], r[6]))
        .collect();
    got.sort();
    let gpu = "Intel(R) Data Center GPU Max 1550";
    assert_eq!(
        got,
        [
            ("n0", "1", "1", gpu, "0.0"),
            ("n0", "2", "2", gpu, "0.1"),
            ("n0", "3", "3", gpu, "1"),
            ("n1", "1", "2", gpu, "0.1"),
        ]
    );
}

#[test]
fn idle_gaps_and_busy_time_per_device() {
    let (g, _) = build(records());
    let mut out = Vec::new();
    write_idle_gaps_csv(&mut out, g.idle_gaps()).unwrap();
    let text = String::from_utf8(out).unwrap();
    let total = |resource: &str, cause: &str| -> Option<(u64, u64)> {
        text.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[0] == "total" && f[1] == "device" && f[2] == resource && f[3] == cause)
            .map(|f| (f[4].parse().unwrap(), f[5].parse().unwrap()))
    };
    let gpu = "Intel(R) Data Center GPU Max 1550";
    // Kernel: device 1,100..1,400; memcpy on tile 1: 2,400..2,450.
    assert_eq!(
        total(&format!("0.0 {gpu}"), "busy"),
        Some((1, 300)),
        "{text}"
    );
    assert_eq!(
        total(&format!("0.1 {gpu}"), "busy"),
        Some((2, 350)),
        "{text}"
    );
    assert_eq!(total(&format!("1 {gpu}"), "busy"), Some((1, 300)), "{text}");
    // The one gap is tile 1's, between its kernel and the memcpy.
    let idle: u64 = text
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == "total" && f[1] == "device" && !["busy", "late"].contains(&f[3]))
        .map(|f| f[5].parse::<u64>().unwrap())
        .sum();
    assert_eq!(idle, 1_000, "{text}");
    assert!(
        !text.contains(&format!(",{gpu},")),
        "merged by name:\n{text}"
    );
}

#[test]
fn perfetto_groups_tiles_under_their_gpu() {
    let mut g = syclgraph_graph::Run::new();
    let mut trace = TraceWriter::new(Vec::new(), 1, "app", &[(3, 1)], u64::MAX).unwrap();
    let mut done = Vec::new();
    for r in records() {
        trace.observe(&g, &r);
        g.apply(r, &mut done);
        for c in done.drain(..) {
            trace.write(&g, &c);
        }
    }
    g.finish(&mut done);
    for c in done.drain(..) {
        trace.write(&g, &c);
    }
    trace.flush().unwrap();
    let bytes = trace.get_ref().clone();
    let text = String::from_utf8_lossy(&bytes);
    let gpu = "Intel(R) Data Center GPU Max 1550";
    for name in [
        format!("device 0 {gpu}"),
        format!("device 0.0 {gpu}"),
        format!("device 0.1 {gpu}"),
        format!("device 1 {gpu}"),
        format!("queue 1 0.0 {gpu}"),
        format!("queue 2 0.1 {gpu}"),
        format!("queue 3 1 {gpu}"),
    ] {
        assert_eq!(text.matches(name.as_str()).count(), 1, "{name}");
    }
}
