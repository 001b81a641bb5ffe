//! Every instance is handed out (as a `Completed`) at most once per
//! (node, instance), exactly when the documented rule says: an instance
//! leaves the pending table as `complete` as soon as its node is defined and
//! it has a Submitted (virtual nodes), plus a TaskEnd (other kinds), plus a
//! Device record (device commands), and never earlier; otherwise it is
//! `flushed` by a full table or by `finish`, after which nothing is pending.
//! Holds while the memory of finalised keys covers the stream (the default);
//! with a shorter memory every hand-out is still accounted for.

use crate::property_strategies as strategies;

use std::collections::HashSet;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::{Instance, InstanceStatus, Node, Run};

/// The documented completion rule.
fn complete(node: &Node, i: &Instance) -> bool {
    node.defined
        && i.submit_ns.is_some()
        && (!node.kind.expects_task()
            || (i.end_ns.is_some() && (!node.kind.is_device_command() || i.device.is_some())))
}

/// Pending instances that the rule says should have left the table.
fn overdue(g: &Run) -> Vec<(u32, u64)> {
    g.pending()
        .filter(|(id, i)| g.node(*id).is_some_and(|n| complete(n, i)))
        .map(|(id, i)| (id, i.instance))
        .collect()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn at_most_once_and_exactly_when_complete(records in stream(), limits in limits()) {
        let mut stuck = Vec::new();
        let mut pending_sizes = Vec::new();
        let out = drive_with(&records, limits, |g, step| {
            for key in overdue(g) {
                stuck.push((step, key));
            }
            pending_sizes.push(g.stats().instances_pending);
        });
        prop_assert!(stuck.is_empty(), "complete instances left pending (step, key): {:?}", stuck);
        let cap = limits.max_pending.max(1);
        prop_assert!(pending_sizes.iter().all(|&n| n <= cap), "pending table over {}: {:?}", cap, pending_sizes);

        let mut keys = HashSet::new();
        for h in &out.handed {
            prop_assert!(keys.insert(h.key()), "{:?} handed out twice: {:?}", h.key(), out.handed);
            let i = &h.completed.instance;
            match i.status {
                InstanceStatus::Complete => {
                    // Judged against the node as it was when handed out.
                    let node = out.graph.node(h.completed.node).unwrap();
                    prop_assert!(node.defined);
                    prop_assert!(i.submit_ns.is_some());
                    if h.kind.expects_task() {
                        prop_assert!(i.end_ns.is_some(), "{:?}", h);
                        if h.kind.is_device_command() {
                            prop_assert!(i.device.is_some(), "{:?}", h);
                        }
                    }
                }
                InstanceStatus::Flushed => {}
                InstanceStatus::Pending => prop_assert!(false, "handed out pending: {:?}", h),
            }
        }
        // Every instance record's key was handed out: nothing lost, nothing left.
        let named: HashSet<(u32, u64)> = records.iter().filter_map(instance_key).collect();
        prop_assert_eq!(&named, &keys);
        prop_assert_eq!(out.graph.pending().count(), 0);
        let s = out.graph.stats();
        prop_assert_eq!(s.instances_pending, 0);
        prop_assert_eq!(s.instances, out.handed.len() as u64);
        let flushed = out
            .handed
            .iter()
            .filter(|h| h.completed.instance.status == InstanceStatus::Flushed)
            .count() as u64;
        prop_assert_eq!(s.instances_flushed, flushed);
        // Flushed before the end only by a full table.
        let early = out
            .handed
            .iter()
            .filter(|h| h.step < records.len() && h.completed.instance.status == InstanceStatus::Flushed)
            .count() as u64;
        prop_assert_eq!(s.pending_evicted, early);
    }

    #[test]
    fn a_short_memory_still_accounts_every_hand_out(
        records in stream(),
        limits in limits(),
        recent_finalised in 0..=3usize,
    ) {
        // With fewer finalised keys remembered than the stream needs, a late
        // record may start the same (node, instance) again: it is then
        // handed out again, but every hand-out is still counted and nothing
        // stays pending.
        let limits = syclgraph_graph::Limits { recent_finalised, ..limits };
        let out = drive(&records, limits);
        let s = out.graph.stats();
        prop_assert_eq!(s.instances, out.handed.len() as u64);
        prop_assert_eq!(s.instances_kept as u64 + s.instances_dropped, s.instances);
        prop_assert_eq!(s.instances_pending, 0);
        let named: HashSet<(u32, u64)> = records.iter().filter_map(instance_key).collect();
        let keys: HashSet<(u32, u64)> = out.handed.iter().map(Handed::key).collect();
        prop_assert_eq!(named, keys);
        for h in &out.handed {
            prop_assert!(h.completed.instance.status != InstanceStatus::Pending);
        }
    }
}
