//! `instances.dot`: the instance graph as a Graphviz digraph — one node per
//! submission (`i<node>_<instance>`), edges between the submissions that
//! depend on each other.
//!
//! Node attributes: `label` (with the buffer of a memory node), `kind`,
//! `operation`, `memory_object` when known, `node_id` (the `n<id>` of
//! graph.dot; not `node`, a DOT keyword that Graphviz rejects as an
//! attribute name), `instance`, and `file`/`line` when known. Edge attributes:
//! `kind` (`memory`, `event`: the static edge's kind; `queue_order`: the
//! order an in-order queue imposes, not a data dependency), `label`.
//! Graph attributes `submissions` and `shown`, and `cut="true"` plus a
//! visible graph label when the `SYCLGRAPH_MAX_INSTANCES` bound left
//! submissions out.

use std::fmt::Write as _;
use std::io::{self, Write};

use rustc_hash::FxHashMap;

use crate::analyses::critical_path::PathReport;
use crate::edge::EdgeKind;
use crate::writers::dot_ids::{node_dot_id, push_quoted};
use crate::writers::node_look::{
    base_name, look, memory_object_of, shorten, CRITICAL_DOT_ATTRS, LABEL_MAX_CHARS,
};

use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;
use crate::record::NodeId;
use crate::run::Run;

/// Appends ` key="value"` (value quoted as [`quote`](crate::writers::dot_ids::quote) does).
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
/// the label plus the node's attributes, ending with `node_id=...`.
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
            let memory = memory_object_of(graph, n);
            if let Some(object) = &memory {
                let _ = write!(label_rest, "\nbuffer {object}");
            }
            push_attr(&mut attrs, "kind", n.kind.as_str());
            push_attr(&mut attrs, "operation", &n.operation);
            if let Some(file) = &n.source_file {
                push_attr(&mut attrs, "file", file);
            }
            if let Some(line) = n.source_line {
                push_attr(&mut attrs, "line", &line.to_string());
            }
            if let Some(object) = &memory {
                push_attr(&mut attrs, "memory_object", object);
            }
            let (shape, style, fill) = look(n.kind);
            push_attr(&mut attrs, "shape", shape);
            push_attr(&mut attrs, "style", style);
            push_attr(&mut attrs, "fillcolor", fill);
        }
        None => prefix = node_dot_id(node),
    }
    push_attr(&mut attrs, "node_id", &node_dot_id(node));
    // The label is quoted as a whole; its two halves are quoted pieces.
    let quoted = |text: &str| {
        let mut q = String::new();
        push_quoted(&mut q, text);
        q[1..q.len() - 1].to_owned()
    };
    let rest = format!("{}\"{attrs}", quoted(&label_rest));
    (quoted(&prefix), rest)
}

/// The per-node texts of one rendering, made on first use: instances of
/// one node usually come in runs, so the last one found is kept at hand.
struct NodeTexts<'g> {
    graph: &'g TaskGraph,
    texts: Vec<NodeText>,
    index: FxHashMap<NodeId, usize>,
    last: Option<(NodeId, usize)>,
}

impl<'g> NodeTexts<'g> {
    fn new(graph: &'g TaskGraph) -> NodeTexts<'g> {
        NodeTexts {
            graph,
            texts: Vec::new(),
            index: FxHashMap::default(),
            last: None,
        }
    }

    #[inline]
    fn of(&mut self, node: NodeId) -> &NodeText {
        let at = match self.last {
            Some((id, at)) if id == node => at,
            _ => {
                let (texts, graph) = (&mut self.texts, self.graph);
                let at = *self.index.entry(node).or_insert_with(|| {
                    texts.push(NodeText::new(graph, node));
                    texts.len() - 1
                });
                self.last = Some((node, at));
                at
            }
        };
        &self.texts[at]
    }
}

/// The instances of the kept steps, and the (before, after) pairs of
/// consecutive kept steps.
#[allow(clippy::type_complexity)]
pub fn step_keys(
    report: &PathReport,
) -> (
    rustc_hash::FxHashSet<InstanceKey>,
    rustc_hash::FxHashSet<(InstanceKey, InstanceKey)>,
) {
    let keys = report.steps.iter().map(|s| s.key).collect();
    let pairs = report
        .steps
        .windows(2)
        .map(|w| (w[0].key, w[1].key))
        .collect();
    (keys, pairs)
}

/// The text of `instances.dot` (see [`write_instances_dot`]).
pub fn render_instances_dot(graph: &Run) -> String {
    let mut out = Vec::new();
    write_instances_dot(&mut out, graph).expect("writing to memory does not fail");
    String::from_utf8(out).expect("made of str pieces")
}

/// Write `instances.dot` to `w` (buffered: it is written in small pieces).
/// Written directly rather than through the graphviz-rust AST: it can hold
/// thousands of instances and is written at exit, so it must cost little
/// per instance: a line is a few copies of its node's shared text and the
/// instance number.
pub fn write_instances_dot(w: &mut impl Write, graph: &Run) -> io::Result<()> {
    let ig = graph.instance_graph();
    let shown = ig.instances().len();
    let mut head = String::with_capacity(512);
    head.push_str("digraph syclgraph_instances {\n  graph[");
    push_attr(&mut head, "rankdir", "TB");
    push_attr(&mut head, "submissions", &ig.submissions().to_string());
    push_attr(&mut head, "shown", &shown.to_string());
    if ig.cut() {
        push_attr(&mut head, "cut", "true");
        let label = format!(
            "first {shown} of {} submissions (SYCLGRAPH_MAX_INSTANCES)",
            ig.submissions()
        );
        push_attr(&mut head, "label", &label);
    }
    head.push_str("]\n  node[");
    push_attr(&mut head, "fontname", "Helvetica");
    push_attr(&mut head, "fontsize", "10");
    head.push_str("]\n  edge[");
    push_attr(&mut head, "fontname", "Helvetica");
    push_attr(&mut head, "fontsize", "9");
    head.push_str("]\n");
    w.write_all(head.as_bytes())?;
    let critical = graph.critical_path().report();
    let (on_path, on_path_edges) = step_keys(&critical);
    let mut texts = NodeTexts::new(graph);
    let mut num = itoa::Buffer::new();
    // Instances of one node usually come in runs: one text lookup per run.
    for run in ig.instances().chunk_by(|a, b| a.0 == b.0) {
        let text = texts.of(run[0].0);
        for &(_, instance_number) in run {
            let instance = num.format(instance_number).as_bytes();
            w.write_all(text.line_start.as_bytes())?;
            w.write_all(instance)?;
            w.write_all(text.label_head.as_bytes())?;
            w.write_all(instance)?;
            w.write_all(text.attrs_tail.as_bytes())?;
            w.write_all(instance)?;
            w.write_all(b"\"")?;
            if on_path.contains(&(run[0].0, instance_number)) {
                w.write_all(CRITICAL_DOT_ATTRS.as_bytes())?;
            }
            w.write_all(b"]\n")?;
        }
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
    for (from, to, queue_order) in ig.edges() {
        let kind = if queue_order {
            EdgeKind::QueueOrder
        } else {
            *static_kinds.entry((from.0, to.0)).or_insert_with(|| {
                graph
                    .edge_between(from.0, to.0)
                    .map_or(EdgeKind::Event, |e| e.kind)
            })
        };
        w.write_all(texts.of(from.0).line_start.as_bytes())?;
        w.write_all(num.format(from.1).as_bytes())?;
        w.write_all(texts.of(to.0).arrow.as_bytes())?;
        w.write_all(num.format(to.1).as_bytes())?;
        let attrs = match kind {
            EdgeKind::Memory => &attrs_of[0],
            EdgeKind::Event => &attrs_of[1],
            EdgeKind::QueueOrder => &attrs_of[2],
        };
        if on_path_edges.contains(&(from, to)) {
            // The same attributes, marked before their closing "]\n".
            w.write_all(&attrs.as_bytes()[..attrs.len() - 2])?;
            w.write_all(CRITICAL_DOT_ATTRS.as_bytes())?;
            w.write_all(b"]\n")?;
        } else {
            w.write_all(attrs.as_bytes())?;
        }
    }
    w.write_all(b"}\n")
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
        let mut g = Run::with_limits(crate::Limits {
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
