//! `graph.dot`: the task graph as a Graphviz digraph. The graph is built as a
//! graphviz-rust AST and printed by its printer; every attribute value is a
//! quoted, escaped string (see [`quote`]), node ids are `n<NodeId>`, and no
//! attribute is called `name` (pydot cannot load one).
//!
//! Node attributes: `label`, `kind`, `operation`, `count` (submissions), and
//! when known `file`, `line`, `function`, `device`, `queue`, `uid`,
//! `device_total_ns` and `timed` (device time of the timed instances), plus
//! `defined="false"` for a node no NodeDefined described; `shape`, `style`,
//! `fillcolor` by kind. Edge attributes: `label`, `kind`, `count`, and when
//! known `access_mode`, `memory_object`, `event`; `style` by kind.

use std::io::{self, Write};

use graphviz_rust::dot_structures::{
    Attribute, Edge as DotEdge, EdgeTy, Graph, GraphAttributes, Id, Node as DotNode,
    NodeId as DotNodeId, Stmt, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use crate::edge::{Edge, EdgeKind};
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::node::Node;
use crate::record::NodeId;
use crate::timing::format_ns;

/// Longest operation name shown in a label before it is cut (the full name
/// is in the `operation` attribute).
pub(crate) const LABEL_MAX_CHARS: usize = 60;

/// The DOT id of a node: `n<id>`.
pub fn node_dot_id(id: NodeId) -> String {
    format!("n{id}")
}

/// A DOT quoted string holding `text` exactly: `\` and `"` are escaped, a
/// line break becomes `\n` (a line break in labels), tabs and other control
/// characters become spaces.
pub fn quote(text: &str) -> Id {
    let mut out = String::with_capacity(text.len() + 2);
    push_quoted(&mut out, text);
    Id::Escaped(out)
}

/// Appends `text` to `out` as [`quote`] writes it, quotes included.
pub(crate) fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    if !text
        .chars()
        .any(|c| c.is_control() || c == '\\' || c == '"')
    {
        out.push_str(text);
        out.push('"');
        return;
    }
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("\\n");
                }
            }
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The text of a DOT id as [`quote`] wrote it: quotes removed, `\\`, `\"`
/// and `\n` decoded (other escapes are kept as written). Plain and HTML ids
/// are returned as they are.
pub fn unquote(id: &Id) -> String {
    let raw = match id {
        Id::Escaped(s) => s.as_str(),
        Id::Plain(s) | Id::Html(s) | Id::Anonymous(s) => return s.clone(),
    };
    let inner = raw
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(raw);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('"') => out.push('"'),
            Some('n') => out.push('\n'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One `key="value"` attribute.
pub(crate) fn attr(key: &str, value: impl AsRef<str>) -> Attribute {
    Attribute(Id::Plain(key.to_string()), quote(value.as_ref()))
}

/// Shape, style and fill colour for a kind.
pub(crate) fn look(kind: NodeKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        NodeKind::Kernel => ("box", "filled", "#cfe2f3"),
        NodeKind::Memcpy | NodeKind::Memset | NodeKind::Fill | NodeKind::Copy => {
            ("box", "rounded,filled", "#d9ead3")
        }
        NodeKind::HostTask => ("hexagon", "filled", "#fff2cc"),
        NodeKind::Alloc | NodeKind::Dealloc => ("cylinder", "filled", "#eeeeee"),
        NodeKind::Barrier => ("octagon", "filled", "#f4cccc"),
        NodeKind::Virtual => ("ellipse", "dashed", "#ffffff"),
        NodeKind::Other => ("ellipse", "filled", "#ffffff"),
    }
}

/// `text` cut to `max` characters with an ellipsis.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The file name without its directories, for labels.
pub(crate) fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The readable label of a node: operation, file:line, ×count, device time.
fn node_label(n: &Node) -> String {
    let mut lines = vec![shorten(&n.operation, LABEL_MAX_CHARS)];
    if let Some(file) = &n.source_file {
        lines.push(match n.source_line {
            Some(line) => format!("{}:{line}", base_name(file)),
            None => base_name(file).to_string(),
        });
    }
    lines.push(format!("×{}", n.submissions));
    let d = &n.times.device;
    if d.count > 0 {
        lines.push(format!("device {}", format_ns(d.total_ns)));
    }
    lines.join("\n")
}

/// The DOT statement of a node.
fn node_stmt(n: &Node) -> Stmt {
    let mut a = vec![
        attr("label", node_label(n)),
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
    if let Some(uid) = n.uid {
        a.push(attr("uid", uid.to_string()));
    }
    let d = &n.times.device;
    if d.count > 0 {
        a.push(attr("device_total_ns", d.total_ns.to_string()));
        a.push(attr("timed", d.count.to_string()));
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

/// The readable label of an edge.
fn edge_label(e: &Edge) -> String {
    let mut label = match (e.kind, &e.access_mode) {
        (EdgeKind::Memory, Some(mode)) => mode.clone(),
        (kind, _) => kind.as_str().to_string(),
    };
    if e.count > 1 {
        label.push_str(&format!(" ×{}", e.count));
    }
    label
}

/// The DOT statement of an edge.
fn edge_stmt(e: &Edge) -> Stmt {
    let mut a = vec![
        attr("label", edge_label(e)),
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
    a.push(attr(
        "style",
        match e.kind {
            EdgeKind::Memory => "solid",
            EdgeKind::Event => "dashed",
            EdgeKind::QueueOrder => "dotted",
        },
    ));
    let end = |id| Vertex::N(DotNodeId(Id::Plain(node_dot_id(id)), None));
    Stmt::Edge(DotEdge {
        ty: EdgeTy::Pair(end(e.source), end(e.target)),
        attributes: a,
    })
}

/// The task graph as a graphviz-rust AST: nodes by id, then edges by id.
pub fn to_dot(graph: &TaskGraph) -> Graph {
    let mut stmts = vec![
        Stmt::GAttribute(GraphAttributes::Graph(vec![attr("rankdir", "TB")])),
        Stmt::GAttribute(GraphAttributes::Node(vec![
            attr("fontname", "Helvetica"),
            attr("fontsize", "10"),
        ])),
        Stmt::GAttribute(GraphAttributes::Edge(vec![
            attr("fontname", "Helvetica"),
            attr("fontsize", "9"),
        ])),
    ];
    stmts.extend(graph.nodes().map(node_stmt));
    stmts.extend(graph.edges().map(edge_stmt));
    crate::critical_output::mark_dot(&graph.critical_path().report(), &mut stmts);
    Graph::DiGraph {
        id: Id::Plain("syclgraph".to_string()),
        strict: false,
        stmts,
    }
}

/// The text of `graph.dot`.
pub fn render_dot(graph: &TaskGraph) -> String {
    let mut text = to_dot(graph).print(&mut PrinterContext::default());
    text.push('\n');
    text
}

/// Write `graph.dot` to `w`.
pub fn write_dot(w: &mut impl Write, graph: &TaskGraph) -> io::Result<()> {
    w.write_all(render_dot(graph).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for text in [
            "plain",
            "with \"quotes\"",
            "back\\slash\\",
            "two\nlines",
            "tmpl<int, Foo<\"x\">>",
            "\\n is not a newline",
            "",
            "ünïcödé ×3",
        ] {
            let id = quote(text);
            assert_eq!(unquote(&id), text, "{id:?}");
        }
    }

    #[test]
    fn quoting_escapes_what_dot_needs() {
        assert_eq!(
            quote("a\"b\\c\nd\te"),
            Id::Escaped("\"a\\\"b\\\\c\\nd e\"".into())
        );
        assert_eq!(unquote(&quote("x\r\ny\rz")), "x\ny\nz");
    }

    #[test]
    fn long_operations_are_shortened_in_labels_only() {
        let long = "x".repeat(100);
        let s = shorten(&long, 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…'));
        assert_eq!(shorten("short", 10), "short");
    }

    #[test]
    fn base_names() {
        assert_eq!(base_name("/a/b/c.cpp"), "c.cpp");
        assert_eq!(base_name("c.cpp"), "c.cpp");
        assert_eq!(base_name("C:\\x\\y.cpp"), "y.cpp");
    }
}
