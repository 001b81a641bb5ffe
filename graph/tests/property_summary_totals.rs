//! summary.csv adds up: each (kind, name) group's count is its nodes'
//! finalised instances, its total is the (saturating) sum of the `ok` device
//! durations of the instances handed out for those nodes as device commands,
//! min/max/p50/p95 are those of the same durations (nearest rank), untimed
//! counts are by the handed-out timing words, shares add up to 1, and the
//! CSV reads back with the same fields.

use crate::property_strategies as strategies;

use std::collections::HashSet;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::summary::NODE_SUMMARY_COLUMNS;
use syclgraph_graph::timing::UntimedCounts;
use syclgraph_graph::{node_summary_rows, summary_rows, write_summary_csv};

fn nearest_rank(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    // Smallest value with at least p% of the values at or below it.
    (0..sorted.len())
        .find(|&i| (i + 1) as f64 * 100.0 >= p * sorted.len() as f64)
        .map(|i| sorted[i])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn totals_are_the_sum_of_ok_durations(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let rows = summary_rows(&out.graph);
        let groups: HashSet<_> = rows.iter().map(|r| (r.kind, r.name.clone())).collect();
        prop_assert_eq!(groups.len(), rows.len(), "a (kind, name) twice");

        let mut grouped_nodes = 0;
        for row in &rows {
            let nodes: Vec<_> = out
                .graph
                .nodes()
                .filter(|n| n.kind == row.kind && n.operation == row.name && n.times.finalised > 0)
                .collect();
            prop_assert!(!nodes.is_empty());
            prop_assert!(row.kind.is_device_command());
            grouped_nodes += nodes.len();
            let ids: HashSet<u32> = nodes.iter().map(|n| n.id).collect();
            prop_assert_eq!(row.count, nodes.iter().map(|n| n.times.finalised).sum::<u64>());

            let mine: Vec<&Handed> = out
                .handed
                .iter()
                .filter(|h| ids.contains(&h.completed.node) && h.kind.is_device_command())
                .collect();
            let mut durations: Vec<u64> =
                mine.iter().filter_map(|h| h.completed.instance.device_ns()).collect();
            durations.sort_unstable();
            let total = durations.iter().map(|&d| u128::from(d)).sum::<u128>();
            let total = u64::try_from(total).unwrap_or(u64::MAX);
            prop_assert_eq!(row.device.total_ns, total);
            prop_assert_eq!(row.device.count, durations.len() as u64);
            if let (Some(&min), Some(&max)) = (durations.first(), durations.last()) {
                prop_assert_eq!((row.device.min_ns, row.device.max_ns), (min, max));
            }
            prop_assert_eq!(row.p50_ns, nearest_rank(&durations, 50.0));
            prop_assert_eq!(row.p95_ns, nearest_rank(&durations, 95.0));
            let mut untimed = UntimedCounts::default();
            for h in &mine {
                untimed.add(h.completed.instance.timing());
            }
            prop_assert_eq!(row.untimed, untimed);
            prop_assert!(row.device.count + row.untimed.total() <= row.count);
        }
        // Every device command with finalised instances is in some group.
        let device_nodes = out
            .graph
            .nodes()
            .filter(|n| n.kind.is_device_command() && n.times.finalised > 0)
            .count();
        prop_assert_eq!(grouped_nodes, device_nodes);

        let shares: f64 = rows.iter().map(|r| r.device_share).sum();
        if rows.iter().any(|r| r.device.total_ns > 0) {
            prop_assert!((shares - 1.0).abs() < 1e-9, "shares add up to {}", shares);
        } else {
            prop_assert_eq!(shares, 0.0);
        }
        prop_assert!(rows.windows(2).all(|w| w[0].device.total_ns >= w[1].device.total_ns));

        // summary.csv: one row per device command node, keyed by node_id.
        let node_rows = node_summary_rows(&out.graph);
        prop_assert_eq!(node_rows.len(), device_nodes);
        let node_ids: HashSet<_> = node_rows.iter().map(|r| r.node_id.clone()).collect();
        prop_assert_eq!(node_ids.len(), node_rows.len(), "a node_id twice");
        for r in &node_rows {
            let node = out
                .graph
                .nodes()
                .find(|n| format!("n{}", n.id) == r.node_id)
                .expect("node_id names a node");
            prop_assert_eq!(r.count, node.times.finalised);
            prop_assert_eq!(r.device, node.times.device);
            prop_assert_eq!(r.steady_total_ns + r.first_ns.unwrap_or(0), r.device.total_ns);
            prop_assert_eq!(r.steady_count + u64::from(r.first_ns.is_some()), r.device.count);
        }
        let node_shares: f64 = node_rows.iter().map(|r| r.device_share).sum();
        prop_assert!((node_shares - shares).abs() < 1e-9);

        let mut csv_bytes = Vec::new();
        write_summary_csv(&mut csv_bytes, &out.graph).unwrap();
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(csv_bytes.as_slice());
        let parsed: Vec<csv::StringRecord> = reader
            .records()
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("summary.csv does not parse: {e}")))?;
        prop_assert_eq!(parsed.len(), node_rows.len() + 1);
        prop_assert_eq!(parsed[0].iter().collect::<Vec<_>>(), NODE_SUMMARY_COLUMNS.to_vec());
        for (line, row) in parsed[1..].iter().zip(&node_rows) {
            let read: Vec<String> = line.iter().map(String::from).collect();
            prop_assert_eq!(read, row.fields().to_vec());
            prop_assert_eq!(&line[0], row.node_id.as_str());
            prop_assert_eq!(line[6].parse::<u64>().unwrap(), row.device.total_ns);
        }
    }
}
