//! instances.dot, byte for byte, on a small graph with every kind of line:
//! a cut, quoted file names with quotes and line breaks, an undefined node,
//! memory, event and queue-order edges (a data dependency winning over the
//! queue order on the same pair). The text was written by the renderer
//! before it was rewritten without `core::fmt`.

use crate::common;
use common::*;
use syclgraph_graph::record::{InstanceEdge, Record};
use syclgraph_graph::{instances_dot, Limits, Run};

fn records() -> Vec<Record> {
    let dep = |s: (u32, u64), t: (u32, u64), queue_order| {
        Record::InstanceEdge(InstanceEdge {
            source: s.0,
            source_instance: s.1,
            target: t.0,
            target_instance: t.1,
            queue_order,
        })
    };
    let mut r = vec![
        kernel(0, "_ZTSZ4mainE3Mul", "/src/dir/a \"b\".cpp", 12),
        node(
            1,
            "memory_transfer_node::memcpy",
            "main",
            None,
            &[("memory_size", "8")],
        ),
        node(
            2,
            "command_group_node",
            "host task",
            Some(("x\ny.cpp", 3)),
            &[("kernel_name", "host task")],
        ),
        edge(
            0,
            0,
            1,
            &[("access_mode", "read"), ("memory_object", "0x1")],
        ),
        edge(1, 1, 2, &[("event", "0x2")]),
    ];
    for i in 1..=3u64 {
        r.push(submitted(0, i, 0, 10 * i));
        if i > 1 {
            r.push(dep((2, i - 1), (0, i), true));
        }
        r.push(submitted(1, i, 0, 10 * i + 1));
        r.push(dep((0, i), (1, i), false));
        r.push(dep((0, i), (1, i), true));
        r.push(submitted(2, i, 0, 10 * i + 2));
        r.push(dep((1, i), (2, i), false));
        // Node 7 is never defined.
        r.push(submitted(7, i, 0, 10 * i + 3));
        r.push(dep((7, i), (2, i), false));
    }
    r
}

#[test]
fn instances_dot_text_is_unchanged() {
    let mut g = Run::with_limits(Limits {
        max_instances: 10,
        ..Limits::default()
    });
    g.apply_all(records());
    assert_eq!(instances_dot::render_instances_dot(&g), EXPECTED);
}

const EXPECTED: &str = r##"digraph syclgraph_instances {
  graph[ rankdir="TB" submissions="12" shown="10" cut="true" label="first 10 of 12 submissions (SYCLGRAPH_MAX_INSTANCES)"]
  node[ fontname="Helvetica" fontsize="10"]
  edge[ fontname="Helvetica" fontsize="9"]
  i0_1[ label="main::Mul #1\na \"b\".cpp:12" kind="kernel" operation="main::Mul" file="/src/dir/a \"b\".cpp" line="12" shape="box" style="filled" fillcolor="#cfe2f3" node_id="n0" instance="1"]
  i1_1[ label="memcpy #1" kind="memcpy" operation="memcpy" shape="box" style="rounded,filled" fillcolor="#d9ead3" node_id="n1" instance="1"]
  i2_1[ label="host task #1\nx\ny.cpp:3" kind="host_task" operation="host task" file="x\ny.cpp" line="3" shape="hexagon" style="filled" fillcolor="#fff2cc" node_id="n2" instance="1"]
  i7_1[ label="undefined node 7 #1" kind="other" operation="undefined node 7" shape="ellipse" style="filled" fillcolor="#ffffff" node_id="n7" instance="1"]
  i0_2[ label="main::Mul #2\na \"b\".cpp:12" kind="kernel" operation="main::Mul" file="/src/dir/a \"b\".cpp" line="12" shape="box" style="filled" fillcolor="#cfe2f3" node_id="n0" instance="2"]
  i1_2[ label="memcpy #2" kind="memcpy" operation="memcpy" shape="box" style="rounded,filled" fillcolor="#d9ead3" node_id="n1" instance="2"]
  i2_2[ label="host task #2\nx\ny.cpp:3" kind="host_task" operation="host task" file="x\ny.cpp" line="3" shape="hexagon" style="filled" fillcolor="#fff2cc" node_id="n2" instance="2"]
  i7_2[ label="undefined node 7 #2" kind="other" operation="undefined node 7" shape="ellipse" style="filled" fillcolor="#ffffff" node_id="n7" instance="2"]
  i0_3[ label="main::Mul #3\na \"b\".cpp:12" kind="kernel" operation="main::Mul" file="/src/dir/a \"b\".cpp" line="12" shape="box" style="filled" fillcolor="#cfe2f3" node_id="n0" instance="3"]
  i1_3[ label="memcpy #3" kind="memcpy" operation="memcpy" shape="box" style="rounded,filled" fillcolor="#d9ead3" node_id="n1" instance="3"]
  i0_1 -> i1_1 [ kind="memory" label="memory" style="solid"]
  i0_2 -> i1_2 [ kind="memory" label="memory" style="solid"]
  i0_3 -> i1_3 [ kind="memory" label="memory" style="solid"]
  i1_1 -> i2_1 [ kind="event" label="event" style="dashed"]
  i1_2 -> i2_2 [ kind="event" label="event" style="dashed"]
  i2_1 -> i0_2 [ kind="queue_order" label="queue_order" style="dotted"]
  i2_2 -> i0_3 [ kind="queue_order" label="queue_order" style="dotted"]
  i7_1 -> i2_1 [ kind="event" label="event" style="dashed"]
  i7_2 -> i2_2 [ kind="event" label="event" style="dashed"]
}
"##;
