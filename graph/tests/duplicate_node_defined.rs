//! A second NodeDefined for the same id keeps the first description, adds
//! metadata keys it did not have, and is counted.

use crate::common;
use common::*;

#[test]
fn second_definition_merges() {
    let first = node(
        0,
        "command_group_node",
        "_ZTS1K",
        None,
        &[("kernel_name", "_ZTS1K"), ("queue_id", "1")],
    );
    let second = node(
        0,
        "memory_transfer_node",
        "something else",
        Some(("/late.cpp", 8)),
        &[
            ("kernel_name", "fill"),
            ("queue_id", "2"),
            ("sycl_device_name", "gpu"),
        ],
    );
    let mut r = vec![first];
    r.extend(device_run(0, 1, 0, 100, 10));
    r.push(second);
    r.extend(device_run(0, 2, 0, 200, 10));
    let (g, done) = build(r);

    let n = g.node(0).unwrap();
    assert_eq!(n.operation, "K");
    assert_eq!(n.kind_hint, "command_group_node");
    assert_eq!(n.metadata_value("kernel_name"), Some("_ZTS1K"));
    assert_eq!(n.device.as_deref(), Some("gpu"), "new key added");
    assert_eq!(n.queue_ids, ["1", "2"]);
    assert_eq!(
        n.source_file.as_deref(),
        Some("/late.cpp"),
        "unknown fields filled"
    );
    assert_eq!(n.submissions, 2);
    assert_eq!(done.len(), 2);
    let s = g.stats();
    assert_eq!((s.nodes, s.duplicate_node_definitions), (1, 1));
}
