//! `instances.dot`: the instance graph as a Graphviz digraph — one node per
//! submission (`i<node>_<instance>`), edges between the submissions that
//! depend on each other.
//!
//! Node attributes: `label`, `kind`, `operation`, `node` (the `n<id>` of
//! graph.dot), `instance`, and `file`/`line` when known. Edge attributes:
//! `kind` (`memory`, `event`: the static edge's kind; `queue_order`: the
//! order an in-order queue imposes, not a data dependency), `label`.
//! Graph attributes `submissions` and `shown`, and `cut="true"` plus a
//! visible graph label when the `SYCLGRAPH_MAX_INSTANCES` bound left
//! submissions out.

use std::fmt::Write as _;
use std::io::{self, Write};

use rustc_hash::FxHashMap;

use crate::dot::{base_name, look, node_dot_id, push_quoted, shorten, LABEL_MAX_CHARS};
use crate::edge::EdgeKind;

use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;
use crate::record::NodeId;

/// The DOT id of a submission: `i<node>_<instance>`.
pub fn instance_dot_id((node, instance): InstanceKey) -> String {
    format!("i{node}_{instance}")
}

/// Appends ` key="value"` (value quoted as [`crate::dot::quote`] does).
fn push_attr(out: &mut String, key: &str, value: &str) {
    out.push(' ');
    out.push_str(key);
    out.push('=');
    push_quoted(out, value);
}

/// The text every line about one node's instances shares, so that a line
/// is a few copies and one number (`<n>` the node, `<i>` the instance):
/// `  i<n>_<i>[ label="<op> #<i><rest>" <attrs> instance="<i>"]` for an
/// instance, `  i<n>_<i> -> i<m>_<j> [<edge attrs>]` for an edge.
struct NodeText {
    /// `  i<n>_`: starts an instance's line and an edge's.
    line_start: String,
    /// `[ label="<op> #`: up to the instance number in the label.
    label_head: String,
    /// The rest of the label, the node's attributes and ` instance="`.
    attrs_tail: String,
    /// ` -> i<n>_`: an edge into an instance of this node.
    arrow: String,
}

impl NodeText {
    fn new(graph: &TaskGraph, node: NodeId) -> NodeText {
        let (prefix, rest) = node_parts(graph, node);
        NodeText {
            line_start: format!("  i{node}_"),
            label_head: format!("[ label=\"{prefix} #"),
            attrs_tail: format!("{rest} instance=\""),
            arrow: format!(" -> i{node}_"),
        }
    }
}

/// What all instances of a node share: the start of their label (quoted
/// text without its closing quote, up to ` #<instance>`), and the rest of
/// the label plus the node's attributes, ending with `node=...`.
fn node_parts(graph: &TaskGraph, node: NodeId) -> (String, String) {
    let prefix;
    let mut label_rest = String::new();
    let mut attrs = String::new();
    match graph.node(node) {
        Some(n) => {
            prefix = shorten(&n.operation, LABEL_MAX_CHARS);
            if let (Some(file), Some(line)) = (&n.source_file, n.source_line) {
                let _ = write!(label_rest, "\n{}:{line}", base_name(file));
            }
            push_attr(&mut attrs, "kind", n.kind.as_str());
            push_attr(&mut attrs, "operation", &n.operation);
            if let Some(file) = &n.source_file {
                push_attr(&mut attrs, "file", file);
            }
            if let Some(line) = n.source_line {
                push_attr(&mut attrs, "line", &line.to_string());
            }
            let (shape, style, fill) = look(n.kind);
            push_attr(&mut attrs, "shape", shape);
            push_attr(&mut attrs, "style", style);
            push_attr(&mut attrs, "fillcolor", fill);
        }
        None => prefix = node_dot_id(node),
    }
    push_attr(&mut attrs, "node", &node_dot_id(node));
    // The label is quoted as a whole; its two halves are quoted pieces.
    let quoted = |text: &str| {
        let mut q = String::new();
        push_quoted(&mut q, text);
        q[1..q.len() - 1].to_owned()
    };
    let rest = format!("{}\"{attrs}", quoted(&label_rest));
    (quoted(&prefix), rest)
}

/// The text of `instances.dot`. Written directly rather than through the
/// graphviz-rust AST: it can hold thousands of instances and is written at
/// exit, so it must cost little per instance.
pub fn render_instances_dot(graph: &TaskGraph) -> String {
    let ig = graph.instance_graph();
    let shown = ig.instances().len();
    let mut out = String::with_capacity(512);
    out.push_str("digraph syclgraph_instances {\n  graph[");
    push_attr(&mut out, "rankdir", "TB");
    push_attr(&mut out, "submissions", &ig.submissions().to_string());
    push_attr(&mut out, "shown", &shown.to_string());
    if ig.cut() {
        push_attr(&mut out, "cut", "true");
        let label = format!(
            "first {shown} of {} submissions (SYCLGRAPH_MAX_INSTANCES)",
            ig.submissions()
        );
        push_attr(&mut out, "label", &label);
    }
    out.push_str("]\n  node[");
    push_attr(&mut out, "fontname", "Helvetica");
    push_attr(&mut out, "fontsize", "10");
    out.push_str("]\n");
    // Per node, once: the text every line about its instances shares. Its
    // lengths bound the whole text, which is reserved at once (growing a
    // string of megabytes by doubling copies it again and again).
    let mut shared: FxHashMap<NodeId, NodeText> = FxHashMap::default();
    let mut bound = 0;
    for &(node, _) in ig.instances() {
        let text = shared
            .entry(node)
            .or_insert_with(|| NodeText::new(graph, node));
        bound += text.line_start.len() + text.label_head.len() + text.attrs_tail.len() + 3 * 20 + 4;
    }
    let edges = ig.edges();
    for (from, to, _) in &edges {
        let length = |node: NodeId| shared.get(&node).map_or(32, |t| t.arrow.len());
        bound += length(from.0) + length(to.0) + 2 * 20 + 96;
    }
    out.reserve(bound);
    let mut num = itoa::Buffer::new();
    for &(node, instance) in ig.instances() {
        let text = shared
            .entry(node)
            .or_insert_with(|| NodeText::new(graph, node));
        let instance = num.format(instance);
        out.push_str(&text.line_start);
        out.push_str(instance);
        out.push_str(&text.label_head);
        out.push_str(instance);
        out.push_str(&text.attrs_tail);
        out.push_str(instance);
        out.push_str("\"]\n");
    }
    // The attributes of an edge depend on its kind only.
    let edge_attrs = |kind: EdgeKind| {
        let style = match kind {
            EdgeKind::Memory => "solid",
            EdgeKind::Event => "dashed",
            EdgeKind::QueueOrder => "dotted",
        };
        let mut attrs = String::from(" [");
        push_attr(&mut attrs, "kind", kind.as_str());
        push_attr(&mut attrs, "label", kind.as_str());
        push_attr(&mut attrs, "style", style);
        attrs.push_str("]\n");
        attrs
    };
    let attrs_of = [
        edge_attrs(EdgeKind::Memory),
        edge_attrs(EdgeKind::Event),
        edge_attrs(EdgeKind::QueueOrder),
    ];
    // The static edge's kind, by (source node, target node).
    let mut static_kinds: FxHashMap<(NodeId, NodeId), EdgeKind> = FxHashMap::default();
    for (from, to, queue_order) in edges {
        let kind = if queue_order {
            EdgeKind::QueueOrder
        } else {
            *static_kinds.entry((from.0, to.0)).or_insert_with(|| {
                graph
                    .edge_between(from.0, to.0)
                    .map_or(EdgeKind::Event, |e| e.kind)
            })
        };
        for (node, instance, piece) in [(from.0, from.1, true), (to.0, to.1, false)] {
            let text = shared
                .entry(node)
                .or_insert_with(|| NodeText::new(graph, node));
            out.push_str(if piece { &text.line_start } else { &text.arrow });
            out.push_str(num.format(instance));
        }
        out.push_str(match kind {
            EdgeKind::Memory => &attrs_of[0],
            EdgeKind::Event => &attrs_of[1],
            EdgeKind::QueueOrder => &attrs_of[2],
        });
    }
    out.push_str("}\n");
    out
}

/// Write `instances.dot` to `w`.
pub fn write_instances_dot(w: &mut impl Write, graph: &TaskGraph) -> io::Result<()> {
    w.write_all(render_instances_dot(graph).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{InstanceEdge, NodeInfo, Record};

    fn submitted(node: u32, instance: u64) -> Record {
        Record::Submitted {
            node,
            instance,
            thread: 1,
            ns: 10 * instance,
        }
    }

    #[test]
    fn instances_and_their_dependencies_are_drawn_and_the_cut_is_said() {
        let mut g = TaskGraph::with_limits(crate::Limits {
            max_instances: 3,
            ..crate::Limits::default()
        });
        let define = |id: u32, name: &str| {
            Record::NodeDefined(Box::new(NodeInfo {
                id,
                name: name.into(),
                kind_hint: "command_group_node".into(),
                metadata: vec![("kernel_name".into(), name.into())],
                source_file: Some("a.cpp".into()),
                source_line: Some(10 + id),
                ..NodeInfo::default()
            }))
        };
        let edge = |s: (u32, u64), t: (u32, u64), queue_order| {
            Record::InstanceEdge(InstanceEdge {
                source: s.0,
                source_instance: s.1,
                target: t.0,
                target_instance: t.1,
                queue_order,
            })
        };
        g.apply_all([
            define(0, "saxpy"),
            define(1, "scale"),
            submitted(0, 1),
            submitted(1, 1),
            edge((0, 1), (1, 1), false),
            submitted(0, 2),
            edge((1, 1), (0, 2), true),
            submitted(1, 2),
            edge((0, 2), (1, 2), false),
        ]);
        let mut out = Vec::new();
        write_instances_dot(&mut out, &g).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("i0_1 -> i1_1"), "{text}");
        assert!(text.contains("i1_1 -> i0_2"), "{text}");
        assert!(!text.contains("i1_2"), "cut after 3 submissions: {text}");
        assert!(text.contains("cut=\"true\""));
        assert!(text.contains("first 3 of 4 submissions"));
        assert!(text.contains("kind=\"queue_order\""));
        assert!(text.contains("label=\"saxpy #2\\na.cpp:10\""), "{text}");
        graphviz_rust::parse(&text).expect("valid DOT");
    }
}
