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

use std::io::{self, Write};

use graphviz_rust::dot_structures::{
    Edge as DotEdge, EdgeTy, Graph, GraphAttributes, Id, Node as DotNode, NodeId as DotNodeId,
    Stmt, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::dot::{attr, base_name, look, node_dot_id, shorten, LABEL_MAX_CHARS};
use crate::edge::EdgeKind;
use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;

/// The DOT id of a submission: `i<node>_<instance>`.
pub fn instance_dot_id((node, instance): InstanceKey) -> String {
    format!("i{node}_{instance}")
}

fn vertex(key: InstanceKey) -> Vertex {
    Vertex::N(DotNodeId(Id::Plain(instance_dot_id(key)), None))
}

/// The instance graph as a graphviz-rust AST.
pub fn to_instances_dot(graph: &TaskGraph) -> Graph {
    let ig = graph.instance_graph();
    let shown = ig.instances().len();
    let mut graph_attrs = vec![
        attr("rankdir", "TB"),
        attr("submissions", ig.submissions().to_string()),
        attr("shown", shown.to_string()),
    ];
    if ig.cut() {
        graph_attrs.push(attr("cut", "true"));
        graph_attrs.push(attr(
            "label",
            format!(
                "first {shown} of {} submissions (SYCLGRAPH_MAX_INSTANCES)",
                ig.submissions()
            ),
        ));
    }
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(graph_attrs)),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("fontname", "Helvetica"),
            attr("fontsize", "10"),
        ])),
    ];
    for &key in ig.instances() {
        let mut a = Vec::new();
        match graph.node(key.0) {
            Some(n) => {
                let mut label = format!("{} #{}", shorten(&n.operation, LABEL_MAX_CHARS), key.1);
                if let (Some(file), Some(line)) = (&n.source_file, n.source_line) {
                    label.push_str(&format!("\n{}:{line}", base_name(file)));
                }
                a.push(attr("label", label));
                a.push(attr("kind", n.kind.as_str()));
                a.push(attr("operation", &n.operation));
                if let Some(file) = &n.source_file {
                    a.push(attr("file", file));
                }
                if let Some(line) = n.source_line {
                    a.push(attr("line", line.to_string()));
                }
                let (shape, style, fill) = look(n.kind);
                a.extend([
                    attr("shape", shape),
                    attr("style", style),
                    attr("fillcolor", fill),
                ]);
            }
            None => a.push(attr("label", format!("{} #{}", node_dot_id(key.0), key.1))),
        }
        a.push(attr("node", node_dot_id(key.0)));
        a.push(attr("instance", key.1.to_string()));
        stmts.push(Stmt::Node(DotNode::new(
            DotNodeId(Id::Plain(instance_dot_id(key)), None),
            a,
        )));
    }
    for (from, to, queue_order) in ig.edges() {
        let kind = if queue_order {
            EdgeKind::QueueOrder
        } else {
            graph
                .edge_between(from.0, to.0)
                .map_or(EdgeKind::Event, |e| e.kind)
        };
        let style = match kind {
            EdgeKind::Memory => "solid",
            EdgeKind::Event => "dashed",
            EdgeKind::QueueOrder => "dotted",
        };
        stmts.push(Stmt::Edge(DotEdge {
            ty: EdgeTy::Pair(vertex(from), vertex(to)),
            attributes: vec![
                attr("kind", kind.as_str()),
                attr("label", kind.as_str()),
                attr("style", style),
            ],
        }));
    }
    Graph::DiGraph {
        id: Id::Plain("syclgraph_instances".to_string()),
        strict: false,
        stmts,
    }
}

/// Write `instances.dot` to `w`.
pub fn write_instances_dot(w: &mut impl Write, graph: &TaskGraph) -> io::Result<()> {
    let mut text = to_instances_dot(graph).print(&mut PrinterContext::default());
    text.push('\n');
    w.write_all(text.as_bytes())
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
