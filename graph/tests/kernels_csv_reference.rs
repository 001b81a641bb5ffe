//! kernels.csv rows are byte for byte what the csv crate writes field by
//! field (the writer escapes a node's shared columns once and caches them):
//! on tricky strings (commas, quotes, CR, LF, empty fields), on nodes whose
//! metadata or definition changes between two of their rows, and on random
//! record streams.

use crate::common;
use crate::property_strategies as strategies;

use common::*;
use proptest::prelude::*;
use syclgraph_graph::devices::Device;
use syclgraph_graph::node::QUEUE_ID_KEY;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::{Completed, Instance, KernelRowWriter, Node, Run, KERNEL_COLUMNS};

/// The rows as the csv crate writes them, one `write_field` per column.
struct Reference(csv::Writer<Vec<u8>>);

impl Reference {
    fn new() -> Reference {
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        csv.write_record(KERNEL_COLUMNS).unwrap();
        Reference(csv)
    }

    fn write(&mut self, node: &Node, instance: &Instance, device: Option<&Device>, region: &str) {
        if !node.kind.is_device_command() {
            return;
        }
        let w = &mut self.0;
        let num = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let span = instance.device_span();
        let queue = match instance.queue {
            Some(q) => q.to_string(),
            None => node.metadata_value(QUEUE_ID_KEY).unwrap_or("").to_string(),
        };
        let fields = [
            node.operation.clone(),
            node.kind.as_str().to_string(),
            format!("n{}", node.id),
            num(Some(instance.instance)),
            queue,
            match device {
                Some(d) => d.name.clone(),
                None => node.device.clone().unwrap_or_default(),
            },
            device.map(|d| d.label.clone()).unwrap_or_default(),
            num(instance.thread.map(u64::from)),
            num(instance.submit_ns),
            num(span.map(|(s, _)| s)),
            // A marker's end too (timing=marker).
            num(instance.device_end()),
            num(instance.device_ns()),
            instance.timing().as_str().to_string(),
            node.metadata_value("global_size").unwrap_or("").to_string(),
            node.metadata_value("local_size").unwrap_or("").to_string(),
            node.bytes().unwrap_or("").to_string(),
            node.source_file.clone().unwrap_or_default(),
            num(node.source_line.map(u64::from)),
            region.to_string(),
        ];
        for f in fields {
            w.write_field(f).unwrap();
        }
        w.write_record(None::<&[u8]>).unwrap();
    }

    fn into_bytes(self) -> Vec<u8> {
        self.0.into_inner().unwrap()
    }
}

/// Streams `records` through a [`KernelRowWriter`] and the reference; both
/// outputs.
fn both(records: &[Record]) -> (String, String) {
    let mut graph = Run::new();
    let mut rows = KernelRowWriter::new(Vec::new()).unwrap();
    let mut reference = Reference::new();
    let mut done: Vec<Completed> = Vec::new();
    let mut take = |graph: &Run, done: &mut Vec<Completed>| {
        for c in done.drain(..) {
            rows.write(graph, &c).unwrap();
            if let Some(node) = graph.node(c.node) {
                let region = graph.region_path(c.instance.region.map_or(0, |r| r.region));
                let device = graph.instance_device(node, &c.instance);
                reference.write(node, &c.instance, device, &region);
            }
        }
    };
    for r in records {
        graph.apply(r.clone(), &mut done);
        take(&graph, &mut done);
    }
    graph.finish(&mut done);
    take(&graph, &mut done);
    let ours = String::from_utf8(rows.into_inner().unwrap()).unwrap();
    let theirs = String::from_utf8(reference.into_bytes()).unwrap();
    (ours, theirs)
}

#[test]
fn tricky_strings_are_quoted_like_the_csv_crate() {
    let tricky = CSV_TRICKY;
    let mut records = Vec::new();
    for (id, text) in tricky.iter().enumerate() {
        let id = id as u32;
        records.push(node(
            id,
            "command_group_node",
            text,
            Some((text, 7 + id)),
            &[
                ("kernel_name", text),
                ("sycl_device_name", text),
                ("queue_id", text),
                ("global_size", text),
                ("local_size", text),
                ("memory_size", text),
            ],
        ));
        records.extend(device_run(id, 1, 2, 1_000 * u64::from(id), 50));
        records.push(submitted(id, 2, 1, 10));
        records.push(Record::InstanceQueue {
            node: id,
            instance: 2,
            queue_id: 99,
        });
        records.push(end(id, 2, 1, 20));
        records.push(device_untimed(id, 2, TimingStatus::NoProfiling));
        records.push(submitted(id, 3, 1, 30)); // flushed at finish
    }
    let (ours, theirs) = both(&records);
    assert_eq!(ours, theirs);
    assert!(ours.contains("\"a,b\""), "{ours}");
    assert!(ours.contains("\"say \"\"hi\"\"\""), "{ours}");
}

#[test]
fn region_paths_are_quoted_like_the_csv_crate() {
    // Each tricky name is an ITT task inside the one before it; a command
    // is submitted at every depth, one thread, and one more outside.
    let mut records = vec![node(
        0,
        "command_group_node",
        "k",
        None,
        &[("kernel_name", "k")],
    )];
    let mut instance = 1;
    for (id, text) in CSV_TRICKY.iter().enumerate() {
        let label = 100 + id as u32;
        records.push(Record::String {
            id: label,
            text: (*text).into(),
        });
        records.push(Record::RegionBegin {
            thread: 1,
            label,
            ns: 10 * instance,
            id: 0,
            shown: true,
        });
        records.extend(device_run(0, instance, 1, 100 * instance, 5));
        instance += 1;
    }
    for _ in CSV_TRICKY {
        records.push(Record::RegionEnd {
            thread: 1,
            ns: 10_000,
            id: 0,
        });
    }
    records.extend(device_run(0, instance, 1, 20_000, 5));
    let (ours, theirs) = both(&records);
    assert_eq!(ours, theirs);
    let rows: Vec<&str> = ours.lines().collect();
    // The third command: inside "", "plain" and "a,b".
    assert!(rows[3].ends_with(",\"/plain/a,b\""), "{ours}");
    // The row outside every task has an empty region.
    assert!(rows.last().unwrap().ends_with(','), "{ours}");
}

#[test]
fn rows_follow_a_node_that_changes_between_them() {
    let mut records = vec![node(
        0,
        "command_group_node",
        "main",
        None,
        &[("queue_id", "1")],
    )];
    records.extend(device_run(0, 1, 0, 1_000, 10));
    // New metadata reclassifies the node and adds sizes and a device.
    records.push(Record::NodeMetadata {
        node: 0,
        metadata: Box::new(md(&[
            ("kernel_name", "fill"),
            ("global_size", "8,1,1"),
            ("sycl_device_name", "gpu, \"big\""),
        ])),
    });
    records.extend(device_run(0, 2, 0, 2_000, 10));
    // A second definition fills the source location.
    records.push(node(
        0,
        "command_group_node",
        "main",
        Some(("/x,y.cpp", 3)),
        &[("memory_size", "4")],
    ));
    records.extend(device_run(0, 3, 0, 3_000, 10));
    // Rows of a node defined after its instance's records arrived.
    records.extend(device_run(1, 1, 0, 4_000, 10));
    records.push(node(1, "memory_transfer_node::memcpy", "copy", None, &[]));
    let (ours, theirs) = both(&records);
    assert_eq!(ours, theirs);
    assert_eq!(ours.lines().count(), 5, "{ours}");
}

#[test]
fn one_writer_for_two_graphs_with_the_same_node_ids() {
    let graph = |device: &str| {
        let (g, _) = build({
            let mut r = vec![node(
                0,
                "memory_transfer_node::memcpy",
                "main",
                None,
                &[("sycl_device_name", device)],
            )];
            r.extend(device_run(0, 1, 0, 1_000, 10));
            r
        });
        g
    };
    let (a, b) = (graph("cpu"), graph("gpu"));
    let mut rows = KernelRowWriter::new(Vec::new()).unwrap();
    let mut reference = Reference::new();
    for g in [&a, &b, &a] {
        let node = g.node(0).unwrap();
        rows.write_instance(node, &node.instances[0], None, "")
            .unwrap();
        reference.write(node, &node.instances[0], None, "");
    }
    assert_eq!(rows.into_inner().unwrap(), reference.into_bytes());
}

#[test]
fn dropping_the_writer_flushes_its_rows() {
    let (g, _) = build({
        let mut r = vec![kernel(0, "_ZTS1K", "k.cpp", 1)];
        r.extend(device_run(0, 1, 0, 1_000, 10));
        r
    });
    let node = g.node(0).unwrap();
    let mut out = Vec::new();
    {
        let mut rows = KernelRowWriter::new(&mut out).unwrap();
        assert!(rows
            .write_instance(node, &node.instances[0], None, "")
            .unwrap());
    }
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 2);
}

proptest! {
    #![proptest_config(strategies::config())]

    #[test]
    fn random_streams_match_the_csv_crate(records in strategies::stream()) {
        let (ours, theirs) = both(&records);
        prop_assert_eq!(ours, theirs);
    }
}
