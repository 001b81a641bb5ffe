//! A node's `count` (its `submissions`, the DOT `count` attribute and the
//! `×N` of its label, or `runs in each replay` for a SYCL graph's command
//! never submitted on its own) is, as documented, the number of Submitted records
//! naming it, whatever order they came in, defined node or not; when each
//! (node, instance) is submitted once, as the subscriber does, that is the
//! number of distinct submitted instances. Each node's `times.finalised`
//! counts the instances handed out for it.

use crate::property_strategies as strategies;

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::Record;
use syclgraph_graph::render_dot;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn count_is_the_submitted_records(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let mut submitted: HashMap<u32, u64> = HashMap::new();
        let mut pairs: HashMap<u32, HashSet<u64>> = HashMap::new();
        for r in &records {
            if let Record::Submitted { node, instance, .. } = *r {
                *submitted.entry(node).or_default() += 1;
                pairs.entry(node).or_default().insert(instance);
            }
        }
        let dot = parse_dot(&render_dot(&out.graph)).map_err(TestCaseError::fail)?;
        for n in out.graph.nodes() {
            let records_for = submitted.get(&n.id).copied().unwrap_or(0);
            let distinct = pairs.get(&n.id).map_or(0, |p| p.len() as u64);
            prop_assert_eq!(n.submissions, records_for, "node {}", n.id);
            prop_assert!(distinct <= n.submissions);
            if distinct == records_for && n.defined {
                prop_assert_eq!(n.submissions, distinct);
            }
            let attrs = &dot.nodes[&format!("n{}", n.id)];
            prop_assert_eq!(attrs["count"].clone(), records_for.to_string());
            // A SYCL graph's command never submitted on its own says where
            // it runs instead.
            let in_graph = out.graph.sycl_graphs().member_of(n.id).is_some();
            let times = match (records_for, in_graph) {
                (0, true) => "runs in each replay".to_string(),
                _ => format!("×{records_for}"),
            };
            prop_assert!(attrs["label"].lines().any(|l| l == times), "{:?}", attrs["label"]);
            let handed = out.handed.iter().filter(|h| h.completed.node == n.id).count() as u64;
            prop_assert_eq!(n.times.finalised, handed, "node {}", n.id);
        }
        prop_assert_eq!(out.graph.stats().submissions, submitted.values().sum::<u64>());
    }

    #[test]
    fn once_per_instance_counts_distinct_instances(records in stream(), limits in limits()) {
        // The subscriber numbers instances itself: keep the first Submitted
        // of each (node, instance) only.
        let mut seen = HashSet::new();
        let records: Vec<Record> = records
            .into_iter()
            .filter(|r| match *r {
                Record::Submitted { node, instance, .. } => seen.insert((node, instance)),
                _ => true,
            })
            .collect();
        let out = drive(&records, limits);
        for n in out.graph.nodes() {
            let distinct = seen.iter().filter(|(id, _)| *id == n.id).count() as u64;
            prop_assert_eq!(n.submissions, distinct, "node {}", n.id);
        }
    }
}
