//! The timestamp collector's Device record can overtake the submitting
//! thread's records: the instance still completes once, with its times.

use crate::common;
use common::*;
use syclgraph_graph::record::TimingStatus;
use syclgraph_graph::InstanceStatus;

#[test]
fn device_first() {
    let (g, done) = build([
        kernel(0, "_ZTS1K", "/k.cpp", 1),
        device_ok(0, 1, 500, 800),
        submitted(0, 1, 0, 100),
        begin(0, 1, 0, 110),
        signal(0, 1, 0xfeed),
        end(0, 1, 0, 130),
    ]);
    assert_eq!(done.len(), 1);
    let i = done[0].instance;
    assert_eq!(i.status, InstanceStatus::Complete);
    assert_eq!(i.event, Some(0xfeed));
    assert_eq!(i.device_span(), Some((500, 800)));
    assert_eq!(i.timing(), TimingStatus::Ok);
    assert_eq!(g.stats().late_records, 0);
}

#[test]
fn a_signal_after_completion_is_late_and_changes_nothing_else() {
    let (g, done) = build([
        kernel(0, "_ZTS1K", "/k.cpp", 1),
        submitted(0, 1, 0, 100),
        end(0, 1, 0, 130),
        device_ok(0, 1, 500, 800),
        signal(0, 1, 0xfeed),
    ]);
    assert_eq!(done.len(), 1, "no second instance");
    assert_eq!(g.stats().late_records, 1);
    let kept = &g.node(0).unwrap().instances[0];
    assert_eq!(kept.event, Some(0xfeed), "the kept copy is filled in");
    assert_eq!(g.node(0).unwrap().times.device.count, 1);
}

#[test]
fn backwards_device_times_are_invalid() {
    let (g, done) = build([
        kernel(0, "_ZTS1K", "/k.cpp", 1),
        submitted(0, 1, 0, 100),
        end(0, 1, 0, 130),
        device_ok(0, 1, 800, 500),
    ]);
    assert_eq!(done[0].instance.timing(), TimingStatus::Invalid);
    assert_eq!(g.stats().untimed.invalid, 1);
    assert_eq!(g.node(0).unwrap().times.device.count, 0);
}
