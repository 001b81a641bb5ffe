//! For a well-formed stream (each node, edge and string defined once, each
//! instance record sent at most once, no late metadata) with the default
//! limits, the order the records arrive in does not matter: every
//! interleaving writes the same graph.dot and summary.csv, and the same
//! kernels.csv rows (in another order).
//!
//! An interleaving keeps each instance's own records in their order, as
//! they always come: its submission, task begin, signal and task end are
//! sent by one thread in that order, and its device times are read after
//! its signal. Anything else moves freely: definitions, edge instances,
//! and other instances' records. (Fully shuffled, a host task's end could
//! come before its begin; the instance is then finalised without a begin,
//! so the critical path, which takes instances as they are finalised,
//! would not see its span; the counts and rows stay the same, which
//! `record_order_shuffles.rs` and the never-panics property check.)

use crate::property_strategies as strategies;

use std::collections::{HashMap, HashSet, VecDeque};

use proptest::collection::vec;
use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::Record;
use syclgraph_graph::{render_dot, write_summary_csv, Limits};

/// Definitions first, then runs and edge instances, with every repeated
/// definition or instance record left out.
fn well_formed() -> impl Strategy<Value = Vec<Record>> {
    (
        vec(node_info(), 0..6),
        vec(edge_info(), 0..5),
        vec(run(), 0..12),
        vec((0..EDGES, 0..INSTANCES), 0..6),
    )
        .prop_map(|(nodes, edges, runs, again)| {
            let mut out = Vec::new();
            let mut ids = HashSet::new();
            for n in nodes {
                if ids.insert(n.id) {
                    out.push(Record::NodeDefined(Box::new(n)));
                }
            }
            let mut ids = HashSet::new();
            for e in edges {
                if ids.insert(e.id) {
                    out.push(Record::EdgeDefined(Box::new(e)));
                }
            }
            let mut keys = HashSet::new();
            for run in runs {
                let key = run.iter().find_map(instance_key);
                if key.is_some_and(|k| keys.insert(k)) {
                    out.extend(
                        run.into_iter()
                            .filter(|r| !matches!(r, Record::NodeDefined(_))),
                    );
                }
            }
            out.extend(
                again
                    .into_iter()
                    .map(|(edge, instance)| Record::EdgeInstance { edge, instance }),
            );
            out
        })
}

/// `shuffled` (a permutation of `records`) with each instance's records put
/// back in their order in `records`, in the places they took in `shuffled`.
fn each_instance_in_order(records: &[Record], shuffled: Vec<Record>) -> Vec<Record> {
    let mut in_order: HashMap<_, VecDeque<Record>> = HashMap::new();
    for r in records {
        if let Some(key) = instance_key(r) {
            in_order.entry(key).or_default().push_back(r.clone());
        }
    }
    shuffled
        .into_iter()
        .map(|r| match instance_key(&r) {
            Some(key) => in_order
                .get_mut(&key)
                .and_then(VecDeque::pop_front)
                .expect("a permutation has as many records of each instance"),
            None => r,
        })
        .collect()
}

fn outputs(records: &[Record]) -> (String, String, Vec<String>) {
    let out = drive(records, Limits::default());
    let mut summary = Vec::new();
    write_summary_csv(&mut summary, &out.graph).unwrap();
    let csv = String::from_utf8(out.kernels_csv).unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.as_bytes());
    let mut rows: Vec<String> = reader
        .records()
        .map(|r| format!("{:?}", r.unwrap()))
        .collect();
    rows.sort();
    (
        render_dot(&out.graph),
        String::from_utf8(summary).unwrap(),
        rows,
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_order_writes_the_same_files(
        (records, shuffled) in well_formed()
            .prop_flat_map(|r| (Just(r.clone()), Just(r).prop_shuffle()))
    ) {
        let (dot, summary, rows) = outputs(&records);
        let interleaved = each_instance_in_order(&records, shuffled);
        let (dot2, summary2, rows2) = outputs(&interleaved);
        prop_assert_eq!(dot, dot2, "graph.dot");
        prop_assert_eq!(summary, summary2, "summary.csv");
        prop_assert_eq!(rows, rows2, "kernels.csv rows");
    }
}
