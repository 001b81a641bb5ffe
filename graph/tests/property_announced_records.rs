//! The records the collector makes of a timed direct-path command are the
//! records they stand for: a `SubmissionAnnounced` where the subscriber's
//! `SubmittedTask` arrived and a `TimedTask` where its device times were
//! read give the same kernels.csv, handed-out instances, stats, instance
//! graph and graph files as that `SubmittedTask` followed, at the second
//! place, by its `Device` record.
//!
//! As the collector does, a Submitted is announced only when the graph so
//! far allows it (`may_announce`: a defined device command, none of its
//! instances pending; its thread in no region). The `TimedTask` comes before any later
//! record that names the same node (its definition, metadata or an
//! instance of it), and before the end of the stream; the pending table is
//! large enough not to fill up (the announced instance does not wait in
//! it, so a full table would push out different instances).

use crate::property_strategies as strategies;

use proptest::collection::vec;
use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::{DeviceTimes, NodeId, Record, TimingStatus};
use syclgraph_graph::{Limits, Run};

/// How one Submitted record becomes a timed direct-path command: its task
/// (begin, duration), queue predecessor, event (not 0), device times
/// (status, start, end) and how many records later they are read.
#[derive(Clone, Debug)]
struct Timed {
    begin_ns: u64,
    took: u64,
    after: Option<(NodeId, u64)>,
    event: u64,
    status: TimingStatus,
    start_ns: u64,
    /// Independent of the start: often before it (then `invalid`).
    device_end_ns: u64,
    delay: usize,
}

fn timed() -> impl Strategy<Value = Option<Timed>> {
    let some = (
        (ns(), 0..1_000u64),
        proptest::option::of((0..NODES, 0..INSTANCES)),
        1..=u64::MAX,
        (status(), ns(), ns()),
        0..6usize,
    )
        .prop_map(
            |((begin_ns, took), after, event, (status, start_ns, device_end_ns), delay)| Timed {
                begin_ns,
                took,
                after,
                event,
                status,
                start_ns,
                device_end_ns,
                delay,
            },
        );
    prop_oneof![1 => Just(None), 2 => some.prop_map(Some)]
}

/// Whether `record` names `node`: an instance of it, its definition or
/// its metadata.
fn names_node(record: &Record, node: NodeId) -> bool {
    match record {
        Record::NodeDefined(info) => info.id == node,
        Record::NodeMetadata { node: n, .. } => *n == node,
        r => instance_key(r).is_some_and(|(n, _)| n == node),
    }
}

/// A read-out waiting for its place: the node, the index it is due at,
/// and the record in each stream.
struct Due {
    node: NodeId,
    at: usize,
    timed_task: Record,
    device: Record,
}

/// The stream as the collector applies it, and the same stream with the
/// subscriber's `SubmittedTask` and a `Device` record instead.
fn split(records: &[Record], choices: &[Option<Timed>]) -> (Vec<Record>, Vec<Record>) {
    let (mut collector, mut expanded) = (Vec::new(), Vec::new());
    // The collector's graph: what it knows of the nodes when it decides.
    let mut graph = Run::new();
    let mut applied = 0;
    let mut due: Vec<Due> = Vec::new();
    let flush = |due: &mut Vec<Due>,
                 keep: &dyn Fn(&Due) -> bool,
                 c: &mut Vec<Record>,
                 e: &mut Vec<Record>| {
        let mut i = 0;
        while i < due.len() {
            if keep(&due[i]) {
                i += 1;
            } else {
                let d = due.remove(i);
                c.push(d.timed_task);
                e.push(d.device);
            }
        }
    };
    for (at, (r, choice)) in records.iter().zip(choices.iter().cycle()).enumerate() {
        flush(
            &mut due,
            &|d: &Due| d.at > at && !names_node(r, d.node),
            &mut collector,
            &mut expanded,
        );
        for record in &collector[applied..] {
            graph.apply(record.clone(), &mut Vec::new());
        }
        applied = collector.len();
        let choice = match (r, choice) {
            // Only outside any region, as the collector announces.
            (Record::Submitted { node, thread, .. }, Some(_))
                if graph.may_announce(*node) && !graph.in_region(*thread) =>
            {
                choice
            }
            _ => &None,
        };
        match (r, choice) {
            (
                &Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                },
                Some(t),
            ) => {
                let end_ns = t.begin_ns.saturating_add(t.took);
                collector.push(Record::SubmissionAnnounced {
                    node,
                    instance,
                    after: t.after,
                });
                expanded.push(Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns: ns,
                    after: t.after,
                    begin_ns: t.begin_ns,
                    end_ns,
                    event: Some(t.event),
                });
                let device_end_ns = t.device_end_ns;
                due.push(Due {
                    node,
                    at: at + 1 + t.delay,
                    timed_task: Record::TimedTask {
                        node,
                        instance,
                        thread,
                        submit_ns: ns,
                        begin_ns: t.begin_ns,
                        end_ns,
                        event: t.event,
                        device_status: t.status,
                        device_start_ns: t.start_ns,
                        device_end_ns,
                    },
                    device: Record::Device(DeviceTimes {
                        node,
                        instance,
                        status: t.status,
                        start_ns: t.start_ns,
                        end_ns: device_end_ns,
                    }),
                });
            }
            (r, _) => {
                collector.push(r.clone());
                expanded.push(r.clone());
            }
        }
    }
    flush(&mut due, &|_: &Due| false, &mut collector, &mut expanded);
    (collector, expanded)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn announced_and_timed_records_equal_their_expansion(
        records in stream(),
        choices in vec(timed(), 1..8),
        max_instances in 0..=3usize,
    ) {
        let limits = Limits { max_instances, ..Limits::default() };
        let (collector, expanded) = split(&records, &choices);
        let (a, b) = (drive(&collector, limits), drive(&expanded, limits));
        same_outcome(&a, &b)?;
    }
}
