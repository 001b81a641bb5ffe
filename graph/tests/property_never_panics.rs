//! No record stream, in any order and with any limits, makes the graph
//! builder or any writer panic: not records before their node or edge, not
//! repeated ids, task ends without begins, null events, device ends before
//! starts, unbalanced spans, a pending table of one, no memory of finalised
//! instances, a second `finish`, nor names full of quotes and line breaks.

use crate::property_strategies as strategies;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::Record;
use syclgraph_graph::{
    render_dot, summary_rows, summary_table, write_kernel_rows, write_summary_csv, Run,
};

/// Everything a reader of the graph can ask for.
fn read_everything(g: &Run) {
    let _ = g.stats();
    let _ = render_dot(g);
    let _ = summary_rows(g);
    let _ = summary_table(g);
    let _ = g.host_spans();
    let _ = g.queues();
    let _ = g.pending().count();
    for id in 0..=NODES {
        let _ = g.node(id);
        let _ = g.edges_into(id);
        let _ = g.edges_from(id);
    }
    write_kernel_rows(Vec::new(), g).expect("kernels.csv into memory");
    write_summary_csv(Vec::new(), g).expect("summary.csv into memory");
}

/// Drives `records` through the builder and the writers, reading
/// everything every 7 records, after the end, after a second `finish` and
/// after late records.
fn check_stream(records: &[Record], limits: syclgraph_graph::Limits) -> Result<(), TestCaseError> {
    let mut steps = 0;
    let mut out = drive_with(records, limits, |g, step| {
        // Reading mid-stream is what a signal handler's dump does.
        if step % 7 == 0 {
            read_everything(g);
        }
        steps += 1;
    });
    prop_assert_eq!(steps, records.len() + 1);
    read_everything(&out.graph);
    let mut again = Vec::new();
    out.graph.finish(&mut again);
    prop_assert!(again.is_empty(), "a second finish handed out {:?}", again);
    // Records after finish (a late thread) are still safe.
    let mut late = Vec::new();
    for r in records.iter().rev().take(5) {
        out.graph.apply(r.clone(), &mut late);
    }
    out.graph.finish(&mut late);
    read_everything(&out.graph);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_stream_is_safe(records in stream(), limits in any_limits()) {
        check_stream(&records, limits)?;
    }

    #[test]
    fn single_record_kinds_in_bulk_are_safe(
        record in record(),
        copies in 1..40usize,
        limits in any_limits(),
    ) {
        let records: Vec<Record> = std::iter::repeat_n(record, copies).collect();
        let out = drive(&records, limits);
        read_everything(&out.graph);
    }
}

/// The case proptest found (a fresh clone's CI run): one instance whose
/// device time spans nearly all of u64, its records applied again late,
/// so that the node's steady total saturates at u64::MAX over two
/// instances and its mean must not overflow while rounding.
#[test]
fn a_device_span_near_u64_max_is_safe() {
    use syclgraph_graph::record::{DeviceTimes, NodeInfo, TimingStatus};
    use syclgraph_graph::Limits;
    let records = vec![
        Record::NodeDefined(Box::new(NodeInfo {
            id: 3,
            uid: 0,
            kind_hint: "command_group_node".into(),
            name: String::new(),
            source_file: None,
            source_line: None,
            source_column: None,
            metadata: Default::default(),
        })),
        Record::Submitted {
            node: 3,
            instance: 2,
            thread: 0,
            ns: 0,
        },
        Record::TaskEnd {
            node: 3,
            instance: 2,
            thread: 0,
            ns: 1,
        },
        Record::Device(DeviceTimes {
            node: 3,
            instance: 2,
            status: TimingStatus::Ok,
            start_ns: 0,
            end_ns: u64::MAX - 9_114,
        }),
    ];
    let limits = Limits {
        max_instances: 3,
        max_pending: 2,
        recent_finalised: 0,
    };
    check_stream(&records, limits).expect("the stream's checks");
}
