//! graph.dot parses back (graphviz-rust's parser) to the same attributes,
//! even for names with quotes, backslashes, line breaks and angle brackets;
//! graphviz renders it; no attribute is called `name`.

use crate::common;
use common::*;
use syclgraph_graph::render_dot;
use syclgraph_graph::Run;

const NASTY_KERNEL: &str = "typeinfo name for ns::K<\"q\\\"x\", 3>\nline2 <b>&amp;</b>";
const NASTY_FILE: &str = "C:\\src\\my \"app\".cpp";

fn sample() -> Run {
    let mut r = vec![
        node(
            0,
            "command_group_node",
            "run()",
            Some((NASTY_FILE, 42)),
            &[
                ("kernel_name", NASTY_KERNEL),
                ("sycl_device_name", "Dev <1> \\ \"x\""),
                ("queue_id", "7"),
            ],
        ),
        node(
            1,
            "memory_transfer_node::memcpy",
            "main",
            Some(("/src/a.cpp", 3)),
            &[("memory_size", "64")],
        ),
        node(
            2,
            "command_group_node",
            "host task",
            None,
            &[("kernel_name", "host task")],
        ),
        edge(
            0,
            1,
            0,
            &[("access_mode", "1026"), ("memory_object", "4096")],
        ),
        edge(1, 0, 2, &[("event", "255")]),
    ];
    for i in 1..=3 {
        r.extend(device_run(0, i, 0, i * 1000, 2_000));
    }
    r.push(edge_again(1, 2));
    build(r).0
}

#[test]
fn nodes_parse_back_with_their_attributes() {
    let text = render_dot(&sample());
    let dot = parse_dot(&text);
    assert_eq!(dot.nodes.len(), 3);
    let k = &dot.nodes["n0"];
    assert_eq!(k["kind"], "kernel");
    assert_eq!(k["operation"], "ns::K<\"q\\\"x\", 3>\nline2 <b>&amp;</b>");
    assert_eq!(k["count"], "3");
    assert_eq!(k["file"], NASTY_FILE);
    assert_eq!(k["line"], "42");
    assert_eq!(k["function"], "run()");
    assert_eq!(k["device"], "Dev <1> \\ \"x\"");
    assert_eq!(k["queue"], "7");
    assert_eq!(k["uid"], "1000");
    assert_eq!(k["device_total_ns"], "6000");
    assert_eq!(k["timed"], "3");
    let label = &k["label"];
    assert!(label.starts_with("ns::K<\"q\\\"x\", 3>\nline2"), "{label}");
    assert!(label.contains("my \"app\".cpp:42"), "{label}");
    assert!(label.contains("×3"), "{label}");
    assert!(label.contains("device 6.00 µs"), "{label}");

    let m = &dot.nodes["n1"];
    assert_eq!(
        (m["kind"].as_str(), m["operation"].as_str()),
        ("memcpy", "memcpy")
    );
    assert_eq!(
        (m["file"].as_str(), m["line"].as_str()),
        ("/src/a.cpp", "3")
    );
    assert_eq!(m["count"], "0");
    let h = &dot.nodes["n2"];
    assert_eq!(h["kind"], "host_task");
    assert!(!h.contains_key("file") && !h.contains_key("line") && !h.contains_key("device"));
}

#[test]
fn edges_parse_back_with_their_attributes() {
    let dot = parse_dot(&render_dot(&sample()));
    assert_eq!(dot.edges.len(), 2);
    let (s, t, a) = &dot.edges[0];
    assert_eq!((s.as_str(), t.as_str()), ("n1", "n0"));
    assert_eq!(a["kind"], "memory");
    assert_eq!(a["access_mode"], "read_write");
    assert_eq!(a["memory_object"], "0x1000");
    assert_eq!(a["count"], "1");
    assert_eq!(a["label"], "read_write");
    let (s, t, a) = &dot.edges[1];
    assert_eq!((s.as_str(), t.as_str()), ("n0", "n2"));
    assert_eq!(a["kind"], "event");
    assert_eq!(a["event"], "0xff");
    assert_eq!(a["count"], "2");
    assert_eq!(a["label"], "event ×2");
    assert!(!a.contains_key("access_mode"));
}

#[test]
fn no_attribute_is_called_name() {
    let dot = parse_dot(&render_dot(&sample()));
    assert!(!dot.keys.is_empty());
    assert!(!dot.keys.iter().any(|k| k == "name"), "{:?}", dot.keys);
}

#[test]
fn graphviz_renders_it() {
    let text = render_dot(&sample());
    assert!(text.starts_with("digraph syclgraph {"), "{text}");
    if check_with_dot_binary(&text) {
        // An empty graph renders too.
        assert!(check_with_dot_binary(&render_dot(&Run::new())));
    }
}
