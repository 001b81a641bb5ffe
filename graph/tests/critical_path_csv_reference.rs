//! critical_path.csv is byte for byte what the csv crate writes field by
//! field (the writer formats its rows by hand and escapes a node's columns
//! once per run of steps): on tricky strings (commas, quotes, CR, LF,
//! empty fields) and on random record streams.

use crate::common;
use crate::property_strategies as strategies;

use common::*;
use proptest::prelude::*;
use syclgraph_graph::critical_path_csv::{write_critical_path_csv, CRITICAL_PATH_COLUMNS};
use syclgraph_graph::record::Record;
use syclgraph_graph::Run;

/// The file as the csv crate writes it, one `write_field` per column.
fn reference(graph: &Run) -> String {
    let report = graph.critical_path().report();
    let mut csv = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    csv.write_record(CRITICAL_PATH_COLUMNS).unwrap();
    for (i, s) in report.steps.iter().enumerate() {
        let node = graph.node(s.key.0);
        let fields = [
            (report.folded_steps + i as u64 + 1).to_string(),
            s.kind.as_str().to_string(),
            node.map_or(String::new(), |n| n.operation.clone()),
            format!("n{}", s.key.0),
            s.key.1.to_string(),
            node.and_then(|n| n.source_file.clone()).unwrap_or_default(),
            node.and_then(|n| n.source_line)
                .map_or(String::new(), |l| l.to_string()),
            s.start_ns.to_string(),
            s.end_ns.to_string(),
            s.duration_ns().to_string(),
            s.gap_before_ns.to_string(),
            s.cause.as_str().to_string(),
        ];
        for f in fields {
            csv.write_field(f).unwrap();
        }
        csv.write_record(None::<&[u8]>).unwrap();
    }
    String::from_utf8(csv.into_inner().unwrap()).unwrap()
}

/// Ours and the reference's, for the graph `records` build.
fn both(records: &[Record]) -> (String, String) {
    let (graph, _) = build(records.iter().cloned());
    let mut ours = Vec::new();
    write_critical_path_csv(&mut ours, &graph, &graph.critical_path().report()).unwrap();
    (String::from_utf8(ours).unwrap(), reference(&graph))
}

#[test]
fn tricky_strings_are_quoted_like_the_csv_crate() {
    let tricky = CSV_TRICKY;
    let mut records = Vec::new();
    let mut t = 1_000;
    for (id, text) in tricky.iter().enumerate() {
        let id = id as u32;
        records.push(node(
            id,
            "command_group_node",
            text,
            id.is_multiple_of(2).then_some((text, 7 + id)),
            &[("kernel_name", text), ("queue_id", "1")],
        ));
        // Two steps of each node, one after the other on the device: the
        // path runs through every node, twice in a row.
        for instance in 1..=2 {
            records.extend(device_run(id, instance, 1, t, 50));
            t += 200;
        }
    }
    let (ours, theirs) = both(&records);
    assert_eq!(ours, theirs);
    assert!(ours.lines().count() > tricky.len(), "{ours}");
    assert!(ours.contains("\"a,b\""), "{ours}");
    assert!(ours.contains("\"say \"\"hi\"\"\""), "{ours}");
}

#[test]
fn a_run_without_a_path_has_the_header_alone() {
    let (ours, theirs) = both(&[]);
    assert_eq!(ours, theirs);
    assert_eq!(ours, format!("{}\n", CRITICAL_PATH_COLUMNS.join(",")));
}

proptest! {
    #![proptest_config(strategies::config())]

    #[test]
    fn random_streams_match_the_csv_crate(records in strategies::stream()) {
        let (ours, theirs) = both(&records);
        prop_assert_eq!(ours, theirs);
    }
}
