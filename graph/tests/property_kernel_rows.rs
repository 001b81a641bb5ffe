//! kernels.csv as the subscriber streams it: exactly one row per handed-out
//! instance of a device command (kernel, memcpy, memset, fill, copy), which
//! is also the number of instances the nodes' aggregates timed or counted as
//! untimed; the rows parse back as CSV with the header, the instance, the
//! timing word and times only when timed (end never before start).

use crate::property_strategies as strategies;

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::TimingStatus;
use syclgraph_graph::KERNEL_COLUMNS;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn one_row_per_device_command_instance(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let device: Vec<&Handed> = out.handed.iter().filter(|h| h.kind.is_device_command()).collect();
        for h in &out.handed {
            prop_assert_eq!(h.wrote_row, h.kind.is_device_command(), "{:?}", h);
        }
        prop_assert_eq!(out.rows, device.len() as u64);
        let accounted: u64 = out
            .graph
            .nodes()
            .map(|n| n.times.device.count + n.times.untimed.total())
            .sum();
        prop_assert_eq!(out.rows, accounted, "rows vs timed + untimed in the aggregates");
        let s = out.graph.stats();
        let untimed_rows = device
            .iter()
            .filter(|h| h.completed.instance.timing() != TimingStatus::Ok)
            .count() as u64;
        prop_assert_eq!(s.untimed.total(), untimed_rows);

        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(out.kernels_csv.as_slice());
        let parsed: Vec<csv::StringRecord> = reader
            .records()
            .collect::<Result<_, _>>()
            .map_err(|e| TestCaseError::fail(format!("kernels.csv does not parse: {e}")))?;
        prop_assert_eq!(parsed.len(), device.len() + 1);
        let header: Vec<&str> = parsed[0].iter().collect();
        prop_assert_eq!(&header[..], &KERNEL_COLUMNS[..]);
        let col = |name: &str| KERNEL_COLUMNS.iter().position(|c| *c == name).unwrap();
        for (row, h) in parsed[1..].iter().zip(&device) {
            let i = &h.completed.instance;
            prop_assert_eq!(row.len(), KERNEL_COLUMNS.len());
            prop_assert_eq!(&row[col("name")], h.operation.as_str());
            prop_assert_eq!(&row[col("kind")], h.kind.as_str());
            prop_assert_eq!(row[col("instance")].to_string(), i.instance.to_string());
            let timing = i.timing();
            prop_assert_eq!(&row[col("timing")], timing.as_str());
            let (start, end, dur) = (&row[col("start_ns")], &row[col("end_ns")], &row[col("duration_ns")]);
            if timing == TimingStatus::Ok {
                let start: u64 = start.parse().unwrap();
                let end: u64 = end.parse().unwrap();
                let dur: u64 = dur.parse().unwrap();
                prop_assert!(start <= end, "ok timing with end before start: {:?}", row);
                prop_assert_eq!(dur, end - start);
            } else {
                prop_assert_eq!((start, end, dur), ("", "", ""));
            }
        }
    }
}
