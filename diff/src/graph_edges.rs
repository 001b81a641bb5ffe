//! A run's `graph.dot` read back: its nodes' keys (kind, operation and
//! source location, as [`crate::node_times::NodeKey`]) and its edges
//! between them with their kind, to tell which dependencies a change added
//! or removed. Read with graphviz-rust's DOT parser; the attributes are
//! those `syclgraph_graph::dot` writes.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use graphviz_rust::dot_structures::{EdgeTy, Graph, Stmt, Vertex};
use syclgraph_graph::dot_ids::unquote;

use crate::node_times::NodeKey;

/// An edge between two nodes, by their keys, with its `kind`.
pub type EdgeKey = (NodeKey, NodeKey, String);

/// The edges of `dir/graph.dot`; `Err` is one line saying what is wrong.
pub fn read_edges(path: &Path) -> Result<BTreeSet<EdgeKey>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{shown}: no such file"),
        _ => format!("{shown}: {e}"),
    })?;
    let graph = graphviz_rust::parse(&text).map_err(|e| format!("{shown}: not DOT ({e})"))?;
    let Graph::DiGraph { stmts, .. } = graph else {
        return Err(format!("{shown}: not a digraph"));
    };
    let mut nodes: HashMap<String, NodeKey> = HashMap::new();
    let mut edges: Vec<(String, String, String)> = Vec::new();
    for stmt in stmts {
        match stmt {
            Stmt::Node(n) => {
                let attrs: HashMap<String, String> = n
                    .attributes
                    .iter()
                    .map(|a| (unquote(&a.0), unquote(&a.1)))
                    .collect();
                let Some(kind) = attrs.get("kind") else {
                    continue;
                };
                let get = |k: &str| attrs.get(k).cloned().unwrap_or_default();
                nodes.insert(
                    unquote(&n.id.0),
                    NodeKey {
                        kind: kind.clone(),
                        operation: get("operation"),
                        file: get("file"),
                        line: get("line"),
                    },
                );
            }
            Stmt::Edge(e) => {
                if let EdgeTy::Pair(Vertex::N(a), Vertex::N(b)) = e.ty {
                    let kind = e
                        .attributes
                        .iter()
                        .find(|a| unquote(&a.0) == "kind")
                        .map(|a| unquote(&a.1))
                        .unwrap_or_default();
                    edges.push((unquote(&a.0), unquote(&b.0), kind));
                }
            }
            _ => {}
        }
    }
    Ok(edges
        .into_iter()
        .filter_map(|(a, b, kind)| Some((nodes.get(&a)?.clone(), nodes.get(&b)?.clone(), kind)))
        .collect())
}
