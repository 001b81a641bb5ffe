//! The combined records the subscriber sends on its fast path are exactly
//! the records they stand for: `SignalledTask` = `Signal` then `Task`,
//! `SubmittedAfter` = `Submitted` then a queue-order `InstanceEdge`,
//! `SubmittedTask` = `Submitted`, the edge (if any), `Signal` (if any),
//! `Task`. An
//! arbitrary stream in which some Signal/Submitted records are replaced by
//! a combined record gives the same kernels.csv, handed-out instances,
//! stats, instance graph and graph files as the same stream with each
//! combined record written out as its two records.

use crate::property_strategies as strategies;

use proptest::collection::vec;
use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::{InstanceEdge, Record};

/// What to do with one record of the stream: keep it, or combine it with
/// a task (thread, begin, duration) or a previous submission (node, instance).
#[derive(Clone, Debug)]
enum Choice {
    Keep,
    WithTask(u32, u64, u64),
    After(u32, u64),
    /// Submission and task in one: (begin, duration, after, event).
    Whole(u64, u64, Option<(u32, u64)>, Option<u64>),
}

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        2 => Just(Choice::Keep),
        2 => (0..THREADS, ns(), 0..1_000u64).prop_map(|(t, b, d)| Choice::WithTask(t, b, d)),
        2 => (0..NODES, 0..INSTANCES).prop_map(|(n, i)| Choice::After(n, i)),
        3 => (
            ns(),
            0..1_000u64,
            proptest::option::of((0..NODES, 0..INSTANCES)),
            proptest::option::of(event()),
        )
            .prop_map(|(b, d, after, event)| Choice::Whole(b, d, after, event)),
    ]
}

/// The stream with combined records, and the same stream written out.
fn combine(records: &[Record], choices: &[Choice]) -> (Vec<Record>, Vec<Record>) {
    let (mut combined, mut expanded) = (Vec::new(), Vec::new());
    for (r, c) in records.iter().zip(choices.iter().cycle()) {
        match (r.clone(), c.clone()) {
            (
                Record::Signal {
                    node,
                    instance,
                    event,
                },
                Choice::WithTask(thread, begin_ns, took),
            ) => {
                let end_ns = begin_ns.saturating_add(took);
                combined.push(Record::SignalledTask {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns,
                    event,
                });
                expanded.push(r.clone());
                expanded.push(Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns,
                });
            }
            (
                Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                },
                Choice::After(source, source_instance),
            ) => {
                combined.push(Record::SubmittedAfter {
                    node,
                    instance,
                    thread,
                    ns,
                    after: (source, source_instance),
                });
                expanded.push(r.clone());
                expanded.push(Record::InstanceEdge(InstanceEdge {
                    source,
                    source_instance,
                    target: node,
                    target_instance: instance,
                    queue_order: true,
                }));
            }
            (
                Record::Submitted {
                    node,
                    instance,
                    thread,
                    ns,
                },
                Choice::Whole(begin_ns, took, after, event),
            ) => {
                let end_ns = begin_ns.saturating_add(took);
                combined.push(Record::SubmittedTask {
                    node,
                    instance,
                    thread,
                    submit_ns: ns,
                    after,
                    begin_ns,
                    end_ns,
                    event,
                });
                expanded.push(r.clone());
                if let Some((source, source_instance)) = after {
                    expanded.push(Record::InstanceEdge(InstanceEdge {
                        source,
                        source_instance,
                        target: node,
                        target_instance: instance,
                        queue_order: true,
                    }));
                }
                if let Some(event) = event {
                    expanded.push(Record::Signal {
                        node,
                        instance,
                        event,
                    });
                }
                expanded.push(Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns,
                });
            }
            (r, _) => {
                combined.push(r.clone());
                expanded.push(r);
            }
        }
    }
    (combined, expanded)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn combined_records_equal_their_expansion(
        records in stream(),
        choices in vec(choice(), 1..8),
        limits in limits(),
    ) {
        let (combined, expanded) = combine(&records, &choices);
        let (a, b) = (drive(&combined, limits), drive(&expanded, limits));
        same_outcome(&a, &b)?;
    }
}
