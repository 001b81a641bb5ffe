//! Ordering violations (`violations.csv`, the summary's `violations:`
//! line) on schedules made up the way the adapter fault of #42 looks: a
//! native command on queue B that depends on a long command of queue A
//! and starts while it still runs; a memset with the same dependency that
//! waited; and a command that started exactly when its dependency ended.

use syclgraph_graph::kind::{NATIVE_COMMAND, UR_FUNCTION_KEY};
use syclgraph_graph::record::{InstanceEdge, Record};
use syclgraph_graph::violations::find_violations;
use syclgraph_graph::violations_csv::{violations_line, write_violations_csv, VIOLATIONS_COLUMNS};
use syclgraph_graph::NodeKind;

use crate::common::*;

fn native(id: u32, line: u32, queue: &str) -> Record {
    node(
        id,
        "command_group_node",
        "unknown",
        Some(("native_commands.cpp", line)),
        &[
            ("kernel_name", "unknown"),
            ("sycl_device_name", "NVIDIA H200"),
            ("sycl_device", "0x1"),
            ("queue_id", queue),
            (UR_FUNCTION_KEY, NATIVE_COMMAND),
        ],
    )
}

fn depends(source: u32, target: u32) -> Record {
    Record::InstanceEdge(InstanceEdge {
        source,
        source_instance: 1,
        target,
        target_instance: 1,
        queue_order: false,
    })
}

/// Long native (n0, 1 ms from 1,100 ns) on queue 1; on queue 2 a native
/// that depends on it starting at 51,100 (950,000 ns early), a memset that
/// depends on it starting after it, and a native (n3) that depends on the
/// memset and starts exactly at its end.
fn schedule() -> Vec<Record> {
    let mut records = vec![
        native(0, 10, "1"),
        native(1, 20, "2"),
        node(
            2,
            "memory_transfer_node::memset",
            "main",
            Some(("native_commands.cpp", 30)),
            &[
                ("sycl_device_name", "NVIDIA H200"),
                ("sycl_device", "0x1"),
                ("queue_id", "2"),
            ],
        ),
        native(3, 40, "2"),
    ];
    records.extend(device_run(0, 1, 1, 1_000, 1_000_000));
    records.extend(device_run(1, 1, 1, 51_000, 20_000));
    records.push(depends(0, 1));
    records.extend(device_run(2, 1, 1, 1_001_000, 5_000));
    records.push(depends(0, 2));
    // n2 ends at 1,001,100 + 5,000; n3 starts then.
    records.extend(device_run(3, 1, 1, 1_006_000, 3_000));
    records.push(depends(2, 3));
    records
}

#[test]
fn the_command_that_started_early_is_reported_with_its_overlap() {
    let (run, _) = build(schedule());
    assert_eq!(run.node(1).unwrap().kind, NodeKind::Native);
    let found = find_violations(&run);
    assert_eq!(found.len(), 1, "{found:?}");
    let v = found[0];
    assert_eq!((v.source, v.target), ((0, 1), (1, 1)));
    assert_eq!(v.source_end_ns, 1_001_100);
    assert_eq!(v.target_start_ns, 51_100);
    assert_eq!(v.overlap_ns(), 950_000);
    assert!(!v.queue_order);

    let line = violations_line(&run, &found).unwrap();
    assert!(
        line.starts_with("violations: 1 command(s) started on the device before a dependency ended; longest: native command #1 (native_commands.cpp:20) started 950 µs before native command #1 (native_commands.cpp:10) ended"),
        "{line}"
    );

    let mut csv = Vec::new();
    write_violations_csv(&mut csv, &run, &found).unwrap();
    let text = String::from_utf8(csv).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], VIOLATIONS_COLUMNS.join(","));
    assert_eq!(
        lines[1],
        "950000,dependency,n0,1,native,native command,native_commands.cpp:10,1001100,n1,1,native,native command,native_commands.cpp:20,51100"
    );
    assert_eq!(lines.len(), 2);
}

#[test]
fn a_schedule_that_kept_its_order_has_none() {
    let mut records = schedule();
    // The early native now starts after the long one ended.
    for r in &mut records {
        if let Record::Device(times) = r {
            if times.node == 1 {
                times.start_ns = 1_001_100;
                times.end_ns = 1_021_100;
            }
        }
    }
    let (run, _) = build(records);
    assert!(find_violations(&run).is_empty());
    assert_eq!(violations_line(&run, &[]), None);
}
