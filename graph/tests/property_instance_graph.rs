//! The instance graph behind instances.dot keeps the first `max_instances`
//! distinct submissions in submission order and the dependencies among them
//! (no self loops; a data dependency outranks queue order on the same pair),
//! counts every Submitted and InstanceEdge record, and says it was cut
//! exactly when a submission was left out.

use crate::property_strategies as strategies;

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::Record;

type Key = (u32, u64);

proptest! {
    #![proptest_config(config())]

    #[test]
    fn first_submissions_and_their_dependencies(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let ig = out.graph.instance_graph();

        let mut kept: Vec<Key> = Vec::new();
        let mut members: HashSet<Key> = HashSet::new();
        let mut left_out = false;
        let mut edges: BTreeMap<(Key, Key), bool> = BTreeMap::new();
        let (mut submissions, mut edges_seen) = (0u64, 0u64);
        for r in &records {
            match *r {
                Record::Submitted { node, instance, .. } => {
                    submissions += 1;
                    let key = (node, instance);
                    if members.contains(&key) {
                        continue;
                    }
                    if kept.len() < limits.max_instances {
                        members.insert(key);
                        kept.push(key);
                    } else {
                        left_out = true;
                    }
                }
                Record::InstanceEdge(e) => {
                    edges_seen += 1;
                    let from = (e.source, e.source_instance);
                    let to = (e.target, e.target_instance);
                    if from != to && members.contains(&from) && members.contains(&to) {
                        *edges.entry((from, to)).or_insert(true) &= e.queue_order;
                    }
                }
                _ => {}
            }
        }
        prop_assert_eq!(ig.instances(), &kept[..]);
        let expected: Vec<(Key, Key, bool)> = edges.into_iter().map(|((a, b), q)| (a, b, q)).collect();
        prop_assert_eq!(ig.edges(), expected);
        prop_assert_eq!(ig.submissions(), submissions);
        prop_assert_eq!(ig.edges_seen(), edges_seen);
        prop_assert_eq!(ig.cut(), left_out, "cut() vs a submission left out");
    }
}
