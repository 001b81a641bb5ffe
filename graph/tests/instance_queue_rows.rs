//! kernels.csv names each instance's own queue: the defining submission's
//! queue (node metadata) unless an InstanceQueue record says otherwise, even
//! when another queue's records reach the graph before the node's definition.

use syclgraph_graph::kernels_csv::KernelRowWriter;
use syclgraph_graph::record::{DeviceTimes, NodeInfo, Record, TimingStatus};
use syclgraph_graph::Run;

fn run(node: u32, instance: u64) -> Vec<Record> {
    vec![
        Record::Submitted {
            node,
            instance,
            thread: 1,
            ns: 100 * instance,
        },
        Record::TaskEnd {
            node,
            instance,
            thread: 1,
            ns: 100 * instance + 10,
        },
        Record::Device(DeviceTimes {
            node,
            instance,
            status: TimingStatus::Ok,
            start_ns: 100 * instance + 20,
            end_ns: 100 * instance + 30,
        }),
    ]
}

#[test]
fn rows_carry_their_own_queue_whatever_the_record_order() {
    let mut records = vec![Record::InstanceQueue {
        node: 0,
        instance: 2,
        queue_id: 7,
    }];
    records.push(Record::NodeDefined(Box::new(NodeInfo {
        id: 0,
        name: "k".into(),
        kind_hint: "command_group_node".into(),
        metadata: vec![
            ("kernel_name".into(), "k".into()),
            ("queue_id".into(), "5".into()),
        ],
        ..NodeInfo::default()
    })));
    records.extend(run(0, 2));
    records.extend(run(0, 1));
    let mut graph = Run::new();
    let done = graph.apply_all(records);
    let mut writer = KernelRowWriter::new(Vec::new()).unwrap();
    for d in &done {
        writer.write(&graph, d).unwrap();
    }
    let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    let queue_of = |instance: &str| {
        text.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[3] == instance)
            .map(|f| f[4].to_owned())
    };
    assert_eq!(queue_of("1").as_deref(), Some("5"), "{text}");
    assert_eq!(queue_of("2").as_deref(), Some("7"), "{text}");
}
