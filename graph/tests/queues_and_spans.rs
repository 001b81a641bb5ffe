//! Queues and host waits: device names and labels are interned strings that
//! may arrive after the records using them; waits pair per thread and add up
//! per label.

use crate::common;
use common::*;
use syclgraph_graph::record::{Record, SpanKind};

#[test]
fn queues_with_late_strings() {
    let (g, _) = build([
        Record::QueueCreated {
            queue_id: 2,
            device: 5,
            device_handle: 0,
            ns: 100,
        },
        Record::QueueDestroyed {
            queue_id: 3,
            ns: 900,
        },
        string(5, "Intel(R) Core(TM) CPU"),
        Record::QueueDestroyed {
            queue_id: 2,
            ns: 800,
        },
    ]);
    let q = g.queues();
    assert_eq!(q.len(), 2);
    assert_eq!(q[0].id, 2);
    assert_eq!(q[0].device.as_deref(), Some("Intel(R) Core(TM) CPU"));
    assert_eq!((q[0].created_ns, q[0].destroyed_ns), (Some(100), Some(800)));
    assert_eq!(
        (q[1].id, q[1].device.as_deref(), q[1].created_ns),
        (3, None, None)
    );
    assert_eq!(g.stats().queues, 2);
}

#[test]
fn waits_add_up_per_label() {
    let (g, _) = build([
        string(1, "queue.wait"),
        wait_begin(1, 0, 1_000),
        wait_begin(2, 1, 1_100), // label 2's string never arrives
        wait_end(0, 4_000),
        wait_begin(1, 0, 5_000),
        wait_end(0, 5_500),
        wait_end(1, 1_600),
        wait_end(2, 9_999), // nothing open on thread 2
        Record::SpanBegin {
            kind: SpanKind::Barrier,
            label: 1,
            thread: 0,
            ns: 10,
        },
    ]);
    let spans = g.host_spans();
    let got: Vec<(SpanKind, &str, u64, u64, u64)> = spans
        .iter()
        .map(|s| (s.kind, s.label.as_str(), s.count, s.total_ns, s.max_ns))
        .collect();
    assert_eq!(
        got,
        [
            (SpanKind::Wait, "queue.wait", 2, 3_500, 3_000),
            (SpanKind::Wait, "<string 2>", 1, 500, 500),
        ]
    );
    let s = g.stats();
    assert_eq!((s.unmatched_span_ends, s.open_spans), (1, 1));
}
