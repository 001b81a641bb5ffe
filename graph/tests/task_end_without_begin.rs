//! A task_end with no task_begin still completes the instance; it just has
//! no begin time and no host duration.

use crate::common;
use common::*;
use syclgraph_graph::InstanceStatus;

#[test]
fn end_alone_completes() {
    let (g, done) = build([
        kernel(0, "_ZTS1K", "/k.cpp", 1),
        submitted(0, 1, 0, 100),
        signal(0, 1, 0xabc),
        end(0, 1, 3, 150),
        device_ok(0, 1, 200, 260),
    ]);
    assert_eq!(done.len(), 1);
    let i = done[0].instance;
    assert_eq!(i.status, InstanceStatus::Complete);
    assert_eq!((i.begin_ns, i.end_ns), (None, Some(150)));
    assert_eq!(i.task_thread, Some(3));
    assert_eq!(i.host_ns(), None);
    let n = g.node(0).unwrap();
    assert_eq!(n.times.host.count, 0);
    assert_eq!(n.times.device.total_ns, 60);
}

#[test]
fn a_second_end_is_a_duplicate_not_a_new_instance() {
    let (g, done) = build([
        kernel(0, "_ZTS1K", "/k.cpp", 1),
        submitted(0, 1, 0, 100),
        end(0, 1, 0, 150),
        end(0, 1, 0, 170),
        device_ok(0, 1, 200, 260),
    ]);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].instance.end_ns, Some(150));
    assert_eq!(g.stats().duplicate_instance_records, 1);
}
