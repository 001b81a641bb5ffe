//! `graph.dot`: the task graph as a Graphviz digraph. The graph is built as a
//! graphviz-rust AST and printed by its printer; every attribute value is a
//! quoted, escaped string (see [`quote`]), node ids are `n<NodeId>`, and no
//! attribute is called `name` (pydot cannot load one).
//!
//! Node attributes: `label`, `kind`, `operation`, `count` (submissions), and
//! when known `file`, `line`, `function`, `device`, `queue`,
//! `memory_object` (the buffer of an allocation, release, map/unmap or
//! copy), `bytes`, `uid` (the runtime's unique_id: not unique, not a key),
//! `device_total_ns` and `timed` (device time of the timed instances), plus
//! `defined="false"` for a node no NodeDefined described; `shape`, `style`,
//! `fillcolor` by kind. Edge attributes: `label`, `kind`, `count`, and when
//! known `access_mode`, `memory_object`, `event`; `style` by kind; a
//! loop-carried edge ([`loop_carried_edges`]) has `loop_carried="true"`,
//! `constraint="false"` and is drawn grey and dashed. Self-loops on
//! allocation/release nodes are left out. The graph's label is a legend.
//! Each SYCL graph is a subgraph `cluster_sycl_graph_<n>` (attribute
//! `sycl_graph`, label `graph <n> (file:line)`, what finalising it cost and
//! how often it was replayed) naming its member commands (declared at the
//! top level with attributes `sycl_graph` and `inside_replay`; the edges
//! between them have `kind` `sycl_graph`); the replays are the node of
//! kind `graph` outside it
//! (attributes `sycl_graph`, `members`: the member node ids, `finalize_ns`).
//! Last, a subgraph `last` with `rank="sink"` names the unconnected nodes
//! seen after every connected one ([`ranked_last`]).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use graphviz_rust::dot_structures::{
    Attribute, Edge as DotEdge, EdgeTy, Graph, GraphAttributes, Id, Node as DotNode,
    NodeId as DotNodeId, Stmt, Subgraph, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::analyses::critical_path::PathReport;
use crate::edge::{Edge, EdgeKind};
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::node::Node;
use crate::record::{EdgeId, NodeId};
use crate::run::Run;
use crate::sycl_graphs::{SyclGraph, INSIDE_REPLAY_UNTIMED};
use crate::timing::format_ns;
use crate::writers::dot_ids::{attr, node_dot_id, unquote};
use crate::writers::node_look::{
    base_name, look, memory_object_of, shorten, CRITICAL_ATTRS, LABEL_MAX_CHARS,
};

/// The readable label of a node: operation, file:line, which memory (buffer
/// or bytes), ×count, device time.
fn node_label(n: &Node, memory: Option<&str>, in_sycl_graph: bool) -> String {
    let mut lines = vec![shorten(&n.operation, LABEL_MAX_CHARS)];
    if let Some(file) = &n.source_file {
        lines.push(match n.source_line {
            Some(line) => format!("{}:{line}", base_name(file)),
            None => base_name(file).to_string(),
        });
    }
    match memory {
        Some(object) => lines.push(format!("buffer {object}")),
        // A release with no edge: the runtime named no memory object.
        None if matches!(n.kind, NodeKind::Alloc | NodeKind::Dealloc) => {
            lines.push("buffer not reported".to_string());
        }
        None => {}
    }
    if let Some(bytes) = n.bytes() {
        lines.push(format!("{bytes} bytes"));
    }
    if n.submissions > 0 || !in_sycl_graph {
        lines.push(format!("×{}", n.submissions));
    } else {
        lines.push("runs in each replay".to_string());
    }
    let d = &n.times.device;
    if d.count > 0 {
        lines.push(format!("device {}", format_ns(d.total_ns)));
    }
    lines.join("\n")
}

/// The DOT statement of a node.
fn node_stmt(graph: &TaskGraph, n: &Node) -> Stmt {
    let memory = memory_object_of(graph, n);
    let mut a = vec![
        attr(
            "label",
            node_label(
                n,
                memory.as_deref(),
                graph.sycl_graphs().member_of(n.id).is_some(),
            ),
        ),
        attr("kind", n.kind.as_str()),
        attr("operation", &n.operation),
        attr("count", n.submissions.to_string()),
    ];
    if let Some(file) = &n.source_file {
        a.push(attr("file", file));
    }
    if let Some(line) = n.source_line {
        a.push(attr("line", line.to_string()));
    }
    if let Some(function) = &n.function {
        a.push(attr("function", function));
    }
    if let Some(device) = &n.device {
        a.push(attr("device", device));
    }
    if let Some(queue) = n.queue_text() {
        a.push(attr("queue", queue));
    }
    if let Some(object) = &memory {
        a.push(attr("memory_object", object));
    }
    if let Some(bytes) = n.bytes() {
        a.push(attr("bytes", bytes));
    }
    if let Some(uid) = n.uid {
        a.push(attr("uid", uid.to_string()));
    }
    let d = &n.times.device;
    if d.count > 0 {
        a.push(attr("device_total_ns", d.total_ns.to_string()));
        a.push(attr("timed", d.count.to_string()));
    }
    if let Some(g) = graph.sycl_graphs().replayed_by(n.id) {
        let members: Vec<String> = g.members.iter().map(|m| node_dot_id(*m)).collect();
        a.push(attr("sycl_graph", g.number.to_string()));
        a.push(attr("members", members.join(" ")));
        if let Some(ns) = g.finalize_ns() {
            a.push(attr("finalize_ns", ns.to_string()));
        }
    }
    let (shape, style, fill) = look(n.kind);
    a.push(attr("shape", shape));
    if n.defined {
        a.push(attr("style", style));
    } else {
        a.push(attr("defined", "false"));
        a.push(attr("style", "dashed"));
    }
    a.push(attr("fillcolor", fill));
    Stmt::Node(DotNode::new(
        DotNodeId(Id::Plain(node_dot_id(n.id)), None),
        a,
    ))
}

/// The readable label of an edge (` (loop)` after a loop-carried one's).
fn edge_label(e: &Edge, loop_carried: bool) -> String {
    let mut label = match (e.kind, &e.access_mode) {
        (EdgeKind::Memory, Some(mode)) => mode.clone(),
        (kind, _) => kind.as_str().to_string(),
    };
    if e.count > 1 {
        label.push_str(&format!(" ×{}", e.count));
    }
    if loop_carried {
        label.push_str(" (loop)");
    }
    label
}

/// The ids of the loop-carried edges: the self-loops, and the edges that
/// close a cycle when the graph is walked depth first from the nodes
/// nothing else leads to, in the order the nodes were first seen (ids),
/// each node's successors by id. Without them the graph is acyclic, so it
/// is drawn top to bottom in program order; they are where a later
/// iteration of a loop waits for an earlier one (`scale` → next `saxpy`).
pub fn loop_carried_edges(graph: &TaskGraph) -> BTreeSet<EdgeId> {
    let nodes: Vec<NodeId> = graph.nodes().map(|n| n.id).collect();
    let mut out_edges: BTreeMap<NodeId, Vec<(NodeId, EdgeId)>> = BTreeMap::new();
    let mut has_input: BTreeSet<NodeId> = BTreeSet::new();
    let mut carried = BTreeSet::new();
    for e in graph.edges() {
        if e.source == e.target {
            carried.insert(e.id);
            continue;
        }
        out_edges
            .entry(e.source)
            .or_default()
            .push((e.target, e.id));
        has_input.insert(e.target);
    }
    for list in out_edges.values_mut() {
        list.sort_unstable();
    }
    // 0 unseen, 1 on the walk's path, 2 done.
    let mut state: BTreeMap<NodeId, u8> = BTreeMap::new();
    let roots = nodes.iter().filter(|n| !has_input.contains(n));
    for &root in roots.chain(nodes.iter()) {
        if state.get(&root).copied().unwrap_or(0) != 0 {
            continue;
        }
        // Iterative depth-first walk: (node, next successor to look at).
        let mut path: Vec<(NodeId, usize)> = vec![(root, 0)];
        state.insert(root, 1);
        while let Some((node, next)) = path.last_mut() {
            let succ = out_edges.get(node).and_then(|l| l.get(*next)).copied();
            *next += 1;
            match succ {
                None => {
                    state.insert(*node, 2);
                    path.pop();
                }
                Some((target, edge)) => match state.get(&target).copied().unwrap_or(0) {
                    0 => {
                        state.insert(target, 1);
                        path.push((target, 0));
                    }
                    1 => {
                        carried.insert(edge);
                    }
                    _ => {}
                },
            }
        }
    }
    carried
}

/// True for an edge graph.dot leaves out: a self-loop on an allocation or
/// release node (one memory object's allocation on a second context, or
/// its second release, waiting for the first), which says nothing about
/// the program's flow; instances.dot keeps it.
fn hidden(graph: &TaskGraph, e: &Edge) -> bool {
    e.source == e.target
        && graph
            .node(e.source)
            .is_some_and(|n| matches!(n.kind, NodeKind::Alloc | NodeKind::Dealloc))
}

/// The nodes without any drawn edge that were first seen after every node
/// with one (the demo's final download): Graphviz would put an unconnected
/// node on the top rank; these are ranked last, where the program ran them.
pub fn ranked_last(graph: &TaskGraph, drawn: &[&Edge]) -> Vec<NodeId> {
    let connected: BTreeSet<NodeId> = drawn.iter().flat_map(|e| [e.source, e.target]).collect();
    let Some(&latest) = connected.last() else {
        return Vec::new();
    };
    graph
        .nodes()
        .map(|n| n.id)
        .filter(|id| *id > latest && !connected.contains(id))
        .filter(|id| graph.sycl_graphs().member_of(*id).is_none())
        .collect()
}

/// The DOT statement of an edge.
fn edge_stmt(e: &Edge, loop_carried: bool) -> Stmt {
    let mut a = vec![
        attr("label", edge_label(e, loop_carried)),
        attr("kind", e.kind.as_str()),
        attr("count", e.count.to_string()),
    ];
    if let Some(mode) = &e.access_mode {
        a.push(attr("access_mode", mode));
    }
    if let Some(obj) = &e.memory_object {
        a.push(attr("memory_object", obj));
    }
    if let Some(event) = &e.event {
        a.push(attr("event", event));
    }
    if loop_carried {
        a.push(attr("loop_carried", "true"));
        a.push(attr("constraint", "false"));
        a.push(attr("color", LOOP_COLOR));
        a.push(attr("fontcolor", LOOP_COLOR));
        a.push(attr("style", "dashed"));
    } else {
        a.push(attr(
            "style",
            match e.kind {
                EdgeKind::Memory => "solid",
                EdgeKind::Event => "dashed",
                EdgeKind::QueueOrder => "dotted",
            },
        ));
    }
    let end = |id| Vertex::N(DotNodeId(Id::Plain(node_dot_id(id)), None));
    Stmt::Edge(DotEdge {
        ty: EdgeTy::Pair(end(e.source), end(e.target)),
        attributes: a,
    })
}

/// The colour of loop-carried edges.
const LOOP_COLOR: &str = "#888888";

/// What each kind looks like and is, for the legend.
fn kind_meaning(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Kernel => "kernel",
        NodeKind::Memcpy | NodeKind::Memset | NodeKind::Fill | NodeKind::Copy => {
            "copy, memcpy, memset, fill (rounded box)"
        }
        NodeKind::HostTask => "host task (hexagon)",
        NodeKind::Alloc | NodeKind::Dealloc => "buffer allocation / release (cylinder)",
        NodeKind::Barrier => "barrier (octagon)",
        NodeKind::Virtual => "event of an untraced command (dashed ellipse)",
        NodeKind::Other => "other (ellipse)",
        NodeKind::Graph => "replays of a SYCL graph (3-D box)",
        NodeKind::Native => "native command (component)",
    }
}

/// The legend, an HTML-like graph label: one line per look of the nodes
/// present, then the edge styles and what a label says.
fn legend(graph: &TaskGraph) -> Id {
    let mut looks: Vec<(&str, &str)> = Vec::new();
    for n in graph.nodes() {
        let fill = look(n.kind).2;
        let meaning = kind_meaning(n.kind);
        if !looks.iter().any(|(_, m)| *m == meaning) {
            looks.push((fill, meaning));
        }
    }
    let mut html = String::from(
        "<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">\
         <tr><td colspan=\"2\"><b>legend</b></td></tr>",
    );
    for (fill, meaning) in looks {
        html.push_str(&format!(
            "<tr><td bgcolor=\"{fill}\">   </td><td align=\"left\">{meaning}</td></tr>"
        ));
    }
    for (line, meaning) in [
        ("solid", "through a buffer (accessor mode)"),
        ("dashed", "through an event (depends_on, host task)"),
        (
            "grey dashed (loop)",
            "loop-carried: a later iteration waits for an earlier one",
        ),
        ("thick red", "on the critical path (critical_path.csv)"),
    ] {
        html.push_str(&format!(
            "<tr><td>{line}</td><td align=\"left\">{meaning}</td></tr>"
        ));
    }
    html.push_str(
        "<tr><td colspan=\"2\" align=\"left\">a node is a code location: \
         ×N submissions, device = total device time</td></tr></table>>",
    );
    Id::Html(html)
}

/// The task graph as a graphviz-rust AST: nodes by id, then edges by id
/// (loop-carried ones marked, allocation self-loops left out), with a
/// legend as the graph's label.
pub fn to_dot(graph: &Run) -> Graph {
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![
            attr("rankdir", "TB"),
            Attribute(Id::Plain("label".to_string()), legend(graph)),
            attr("labelloc", "b"),
            attr("labeljust", "l"),
            attr("fontname", "Helvetica"),
            attr("fontsize", "9"),
        ])),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("fontname", "Helvetica"),
            attr("fontsize", "10"),
        ])),
        Stmt::GAttribute(GraphAttributes::Edge(vec![
            attr("fontname", "Helvetica"),
            attr("fontsize", "9"),
        ])),
    ];
    let sycl_graphs = graph.sycl_graphs();
    stmts.extend(
        graph
            .nodes()
            .filter(|n| sycl_graphs.member_of(n.id).is_none())
            .map(|n| node_stmt(graph, n)),
    );
    for g in sycl_graphs.iter() {
        sycl_graph_cluster(graph, g, &mut stmts);
    }
    let carried = loop_carried_edges(graph);
    let drawn: Vec<&Edge> = graph.edges().filter(|e| !hidden(graph, e)).collect();
    let last = ranked_last(graph, &drawn);
    stmts.extend(drawn.iter().map(|e| edge_stmt(e, carried.contains(&e.id))));
    mark_dot(&graph.critical_path().report(), &mut stmts);
    if !last.is_empty() {
        let mut sub = vec![Stmt::Attribute(attr("rank", "sink"))];
        sub.extend(last.into_iter().map(|id| {
            Stmt::Node(DotNode::new(
                DotNodeId(Id::Plain(node_dot_id(id)), None),
                vec![],
            ))
        }));
        stmts.push(Stmt::Subgraph(Subgraph {
            id: Id::Plain("last".to_string()),
            stmts: sub,
        }));
    }
    Graph::DiGraph {
        id: Id::Plain("syclgraph".to_string()),
        strict: false,
        stmts,
    }
}

/// The nodes on the critical path (time on it, or a kept step) and the
/// (node before, node after) pairs of its kept consecutive steps.
pub fn critical_nodes(report: &PathReport) -> (BTreeSet<NodeId>, BTreeSet<(NodeId, NodeId)>) {
    let mut nodes: BTreeSet<NodeId> = report.node_ns.iter().map(|n| n.0).collect();
    nodes.extend(report.steps.iter().map(|s| s.key.0));
    let pairs = report
        .steps
        .windows(2)
        .map(|w| (w[0].key.0, w[1].key.0))
        .filter(|(a, b)| a != b)
        .collect();
    (nodes, pairs)
}

/// The node id an AST vertex names, as text.
fn vertex_id(v: &Vertex) -> Option<String> {
    match v {
        Vertex::N(DotNodeId(id, _)) => Some(unquote(id)),
        Vertex::S(_) => None,
    }
}

/// Marks the critical nodes and edges of `graph.dot`'s statements
/// (`critical="true"`, thick and red): the nodes with time on the path and
/// the edges between the nodes of consecutive kept steps (a `host` gap
/// between two nodes with no edge is not drawn).
pub fn mark_dot(report: &PathReport, stmts: &mut [Stmt]) {
    let (nodes, pairs) = critical_nodes(report);
    let ids: BTreeSet<String> = nodes.iter().map(|&n| node_dot_id(n)).collect();
    let marks = || CRITICAL_ATTRS.iter().map(|(k, v)| attr(k, v));
    for stmt in stmts.iter_mut() {
        match stmt {
            Stmt::Node(n) if ids.contains(&unquote(&n.id.0)) => n.attributes.extend(marks()),
            Stmt::Edge(e) => {
                let EdgeTy::Pair(a, b) = &e.ty else { continue };
                let pair = (vertex_id(a), vertex_id(b));
                if pairs
                    .iter()
                    .any(|&(x, y)| pair == (Some(node_dot_id(x)), Some(node_dot_id(y))))
                {
                    e.attributes.extend(marks());
                }
            }
            _ => {}
        }
    }
}

/// The subgraph `cluster_sycl_graph_<n>` of one SYCL graph: its member
/// commands (those it claimed first) and the edges between them, labelled
/// with the graph's name, the source location of its first located member,
/// what finalising it cost and how often it was replayed; none when all its
/// commands are drawn in an earlier graph's (the same modifiable graph
/// finalised again): its replay node's `members` attribute names them.
/// The member nodes and edges are declared at the top level, the cluster
/// only names them: networkx (through pydot) reads no subgraph contents.
fn sycl_graph_cluster(graph: &TaskGraph, g: &SyclGraph, out: &mut Vec<Stmt>) {
    let replay = g.node.and_then(|id| graph.node(id));
    let mut label = format!("graph {}", g.number);
    let located = g
        .members
        .iter()
        .filter_map(|id| graph.node(*id))
        .find(|n| n.source_file.is_some());
    if let Some(n) = located {
        let file = base_name(n.source_file.as_deref().unwrap_or_default());
        match n.source_line {
            Some(line) => label.push_str(&format!(" ({file}:{line})")),
            None => label.push_str(&format!(" ({file})")),
        }
    }
    if let Some(ns) = g.finalize_ns() {
        label.push_str(&format!("\nfinalised in {}", format_ns(ns)));
    }
    if let Some(r) = replay {
        label.push_str(&format!(", replayed ×{}", r.submissions));
    }
    let mut stmts = vec![
        Stmt::Attribute(attr("label", label)),
        Stmt::Attribute(attr("style", "rounded,dashed")),
        Stmt::Attribute(attr("sycl_graph", g.number.to_string())),
    ];
    let number = g.number.to_string();
    for id in &g.members {
        let Some(n) = graph.node(*id) else { continue };
        if graph.sycl_graphs().member_of(*id) != Some(g.number) {
            continue;
        }
        if let Stmt::Node(mut node) = node_stmt(graph, n) {
            node.attributes.push(attr("sycl_graph", &number));
            node.attributes
                .push(attr("inside_replay", INSIDE_REPLAY_UNTIMED));
            out.push(Stmt::Node(node));
            stmts.push(Stmt::Node(DotNode::new(
                DotNodeId(Id::Plain(node_dot_id(*id)), None),
                vec![],
            )));
        }
    }
    if !stmts.iter().any(|s| matches!(s, Stmt::Node(_))) {
        return;
    }
    for (source, target) in &g.edges {
        out.push(Stmt::Edge(DotEdge {
            ty: EdgeTy::Pair(
                Vertex::N(DotNodeId(Id::Plain(node_dot_id(*source)), None)),
                Vertex::N(DotNodeId(Id::Plain(node_dot_id(*target)), None)),
            ),
            attributes: vec![
                attr("kind", "sycl_graph"),
                attr("sycl_graph", &number),
                attr("label", "in graph"),
            ],
        }));
    }
    out.push(Stmt::Subgraph(Subgraph {
        id: Id::Plain(format!("cluster_sycl_graph_{}", g.number)),
        stmts,
    }));
}

/// The text of `graph.dot`.
pub fn render_dot(graph: &Run) -> String {
    let mut text = to_dot(graph).print(&mut PrinterContext::default());
    text.push('\n');
    text
}

/// Write `graph.dot` to `w`.
pub fn write_dot(w: &mut impl Write, graph: &Run) -> io::Result<()> {
    w.write_all(render_dot(graph).as_bytes())
}
