//! Helpers shared by the integration tests: record builders that read like
//! the runtime's own event sequences, and a DOT reader.
#![allow(dead_code)]

use std::collections::HashMap;

use graphviz_rust::dot_structures::{EdgeTy, Graph, Id, Stmt, Vertex};
use syclgraph_graph::dot_ids::unquote;
use syclgraph_graph::record::{
    DeviceTimes, EdgeInfo, Metadata, NodeId, NodeInfo, Record, SpanKind, TimingStatus,
};
use syclgraph_graph::{Completed, Run};

/// Metadata from pairs.
pub fn md(pairs: &[(&str, &str)]) -> Metadata {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A NodeDefined record.
pub fn node(
    id: NodeId,
    hint: &str,
    name: &str,
    file: Option<(&str, u32)>,
    pairs: &[(&str, &str)],
) -> Record {
    Record::NodeDefined(Box::new(NodeInfo {
        id,
        uid: 1000 + u64::from(id),
        kind_hint: hint.to_string(),
        name: name.to_string(),
        source_file: file.map(|(f, _)| f.to_string()),
        source_line: file.map(|(_, l)| l),
        source_column: None,
        metadata: md(pairs),
    }))
}

/// A kernel node as the runtime describes a command group.
pub fn kernel(id: NodeId, mangled: &str, file: &str, line: u32) -> Record {
    node(
        id,
        "command_group_node",
        mangled,
        Some((file, line)),
        &[
            ("kernel_name", mangled),
            ("sycl_device_name", "Intel(R) Core(TM) CPU"),
            ("queue_id", "1"),
        ],
    )
}

/// An EdgeDefined record.
pub fn edge(id: u32, source: NodeId, target: NodeId, pairs: &[(&str, &str)]) -> Record {
    Record::EdgeDefined(Box::new(EdgeInfo {
        id,
        uid: 5000 + u64::from(id),
        source,
        target,
        metadata: md(pairs),
    }))
}

/// An EdgeInstance record.
pub fn edge_again(id: u32, instance: u64) -> Record {
    Record::EdgeInstance { edge: id, instance }
}

/// A Submitted record.
pub fn submitted(node: NodeId, instance: u64, thread: u32, ns: u64) -> Record {
    Record::Submitted {
        node,
        instance,
        thread,
        ns,
    }
}

/// A TaskBegin record.
pub fn begin(node: NodeId, instance: u64, thread: u32, ns: u64) -> Record {
    Record::TaskBegin {
        node,
        instance,
        thread,
        ns,
    }
}

/// A TaskEnd record.
pub fn end(node: NodeId, instance: u64, thread: u32, ns: u64) -> Record {
    Record::TaskEnd {
        node,
        instance,
        thread,
        ns,
    }
}

/// A Signal record.
pub fn signal(node: NodeId, instance: u64, event: u64) -> Record {
    Record::Signal {
        node,
        instance,
        event,
    }
}

/// A Device record with times.
pub fn device_ok(node: NodeId, instance: u64, start_ns: u64, end_ns: u64) -> Record {
    Record::Device(DeviceTimes {
        node,
        instance,
        status: TimingStatus::Ok,
        start_ns,
        end_ns,
    })
}

/// A Device record without times.
pub fn device_untimed(node: NodeId, instance: u64, status: TimingStatus) -> Record {
    Record::Device(DeviceTimes {
        node,
        instance,
        status,
        start_ns: 0,
        end_ns: 0,
    })
}

/// The records of one device command run: submitted at `t`, enqueued at
/// `t+10..t+30` on the same thread with event `0xe0000 + instance`, then the
/// device times (`duration` ns from `t+100`).
pub fn device_run(node: NodeId, instance: u64, thread: u32, t: u64, duration: u64) -> Vec<Record> {
    vec![
        submitted(node, instance, thread, t),
        begin(node, instance, thread, t + 10),
        signal(node, instance, 0xe0000 + instance),
        end(node, instance, thread, t + 30),
        device_ok(node, instance, t + 100, t + 100 + duration),
    ]
}

/// The records of one host-side run (host task, alloc, ...): no device times.
pub fn host_run(node: NodeId, instance: u64, thread: u32, t: u64, took: u64) -> Vec<Record> {
    vec![
        submitted(node, instance, thread, t),
        begin(node, instance, thread, t + 10),
        signal(node, instance, 0),
        end(node, instance, thread, t + 10 + took),
    ]
}

/// A wait span begin.
pub fn wait_begin(label: u32, thread: u32, ns: u64) -> Record {
    Record::SpanBegin {
        kind: SpanKind::Wait,
        label,
        thread,
        ns,
    }
}

/// A wait span end.
pub fn wait_end(thread: u32, ns: u64) -> Record {
    Record::SpanEnd {
        kind: SpanKind::Wait,
        thread,
        ns,
    }
}

/// An interned string.
pub fn string(id: u32, text: &str) -> Record {
    Record::String {
        id,
        text: text.into(),
    }
}

/// Apply all records, then finish; returns the graph and every finalised
/// instance in order.
pub fn build(records: impl IntoIterator<Item = Record>) -> (Run, Vec<Completed>) {
    let mut g = Run::new();
    let mut done = g.apply_all(records);
    g.finish(&mut done);
    (g, done)
}

/// Attributes by key, decoded.
pub type Attrs = HashMap<String, String>;

/// A DOT file read back with graphviz-rust's parser.
pub struct ParsedDot {
    /// Node id → attributes.
    pub nodes: HashMap<String, Attrs>,
    /// (source, target, attributes), in file order.
    pub edges: Vec<(String, String, Attrs)>,
    /// Every attribute key used on nodes and edges.
    pub keys: Vec<String>,
}

fn id_text(id: &Id) -> String {
    unquote(id)
}

fn attrs(list: &[graphviz_rust::dot_structures::Attribute]) -> Attrs {
    list.iter()
        .map(|a| (id_text(&a.0), id_text(&a.1)))
        .collect()
}

/// Parse DOT text; panics (failing the test) when it does not parse.
pub fn parse_dot(text: &str) -> ParsedDot {
    let graph = graphviz_rust::parse(text).unwrap_or_else(|e| panic!("bad DOT: {e}\n{text}"));
    let stmts = match graph {
        Graph::DiGraph { stmts, .. } => stmts,
        Graph::Graph { .. } => panic!("not a digraph"),
    };
    let mut out = ParsedDot {
        nodes: HashMap::new(),
        edges: Vec::new(),
        keys: Vec::new(),
    };
    for s in stmts {
        match s {
            Stmt::Node(n) => {
                out.keys.extend(n.attributes.iter().map(|a| id_text(&a.0)));
                out.nodes.insert(id_text(&n.id.0), attrs(&n.attributes));
            }
            Stmt::Edge(e) => {
                out.keys.extend(e.attributes.iter().map(|a| id_text(&a.0)));
                let (a, b) = match e.ty {
                    EdgeTy::Pair(Vertex::N(a), Vertex::N(b)) => (id_text(&a.0), id_text(&b.0)),
                    other => panic!("unexpected edge form {other:?}"),
                };
                out.edges.push((a, b, attrs(&e.attributes)));
            }
            _ => {}
        }
    }
    out
}

/// Run `dot -Tsvg` on the text when graphviz is installed; returns false
/// (after printing a note) when it is not.
pub fn check_with_dot_binary(text: &str) -> bool {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("note: graphviz `dot` not available ({e}); skipping the render check");
            return false;
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dot failed: {stderr}\n{text}");
    assert!(
        !stderr.contains("Error") && !stderr.contains("Warning"),
        "dot complained: {stderr}"
    );
    let svg = String::from_utf8_lossy(&out.stdout);
    assert!(svg.contains("<svg"), "no svg output");
    true
}

/// Strings that CSV quoting must get right: commas, quotes, CR, LF, empty.
pub const CSV_TRICKY: [&str; 12] = [
    "",
    "plain",
    "a,b",
    "say \"hi\"",
    "\"",
    "\"\"",
    "line\nbreak",
    "cr\rlf\r\n",
    ",",
    " ",
    "tab\there",
    "é, \"ü\"\n",
];

/// kernels.csv as the subscriber's live model streams it during a timed
/// run: the model alone ([`Run::apply_to_graph`]), a row per instance as it
/// is finalised, the rest at the end ([`Run::finish_graph`]).
pub fn streamed_rows(records: &[Record], limits: syclgraph_graph::Limits) -> Vec<u8> {
    let mut live = Run::with_limits(limits);
    let mut rows = syclgraph_graph::KernelRowWriter::new(Vec::new()).unwrap();
    let mut done = Vec::new();
    for record in records {
        live.apply_to_graph(record.clone(), &mut done);
        for c in done.drain(..) {
            rows.write(&live, &c).unwrap();
        }
    }
    live.finish_graph(&mut done);
    for c in done.drain(..) {
        rows.write(&live, &c).unwrap();
    }
    rows.into_inner().unwrap()
}
