//! How a node looks in both DOT files (`graph.dot`, `instances.dot`):
//! shape and colours by kind, shortened labels, the memory object of a
//! memory node, and the attributes that mark the critical path.

use crate::edge::MEMORY_OBJECT_KEY;
use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::names::address_text;
use crate::node::Node;

/// Longest operation name shown in a label before it is cut (the full name
/// is in the `operation` attribute).
pub(crate) const LABEL_MAX_CHARS: usize = 60;

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
        NodeKind::Graph => ("box3d", "filled", "#d0e0e3"),
        NodeKind::Native => ("component", "filled", "#cfe2f3"),
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

/// The memory object (buffer) a memory node is about, as hex text: its
/// own `memory_object` metadata (allocations, map/unmap/copy commands),
/// else the `memory_object` of its first memory edge (a release has none
/// of its own, the edge from its allocation names it).
pub(crate) fn memory_object_of(graph: &TaskGraph, n: &Node) -> Option<String> {
    if let Some(raw) = n.metadata_value(MEMORY_OBJECT_KEY) {
        return Some(address_text(raw));
    }
    if !matches!(n.kind, NodeKind::Alloc | NodeKind::Dealloc) {
        return None;
    }
    graph
        .edges_into(n.id)
        .into_iter()
        .chain(graph.edges_from(n.id))
        .find_map(|e| e.memory_object.clone())
}

/// Drawing of the critical path in `graph.dot` and `instances.dot`.
pub(crate) const CRITICAL_ATTRS: [(&str, &str); 3] = [
    ("critical", "true"),
    ("penwidth", "3"),
    ("color", "#cc0000"),
];

/// The attributes (with a leading space) that mark an instance of
/// `instances.dot` on the critical path.
pub const CRITICAL_DOT_ATTRS: &str = " critical=\"true\" penwidth=\"3\" color=\"#cc0000\"";

#[cfg(test)]
mod tests {
    use super::*;

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
