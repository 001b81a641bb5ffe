//! SYCL graphs (`sycl_ext_oneapi_graph`): which commands make up each
//! executable graph, the edges between them, what finalising it cost, and
//! the node whose instances are its replays.
//!
//! A command recorded into a graph (queue recording or the explicit `add`
//! API) does not run where it was recorded: it runs inside every replay
//! (`queue::ext_oneapi_graph`). Its node is a *member* of the graph
//! ([`crate::record::Record::GraphMember`]) and has no instances of its
//! own; the replays are the instances of the graph's own node, of kind
//! `graph`. On the Unified Runtime (OpenCL, Level Zero through UR) a replay
//! is one command-buffer enqueue, timed as a whole: the times of the
//! members inside a replay are not given by the backend
//! ([`INSIDE_REPLAY_UNTIMED`]).

use std::collections::BTreeMap;

use crate::record::NodeId;

/// What `graph.dot` and the user guide say about member times inside a
/// replay when the backend does not time them.
pub const INSIDE_REPLAY_UNTIMED: &str = "not timed by this backend";

/// One executable graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyclGraph {
    /// syclgraph's number of the executable graph (from 1, in order of
    /// finalisation).
    pub number: u32,
    /// The node whose instances are the replays, once finalised.
    pub node: Option<NodeId>,
    /// Member commands, in the order they were appended.
    pub members: Vec<NodeId>,
    /// Edges between members (source, target), each once.
    pub edges: Vec<(NodeId, NodeId)>,
    /// Finalisation host span (begin, end ns), when seen.
    pub finalized: Option<(u64, u64)>,
    /// The thread that finalised it.
    pub thread: Option<u32>,
}

impl SyclGraph {
    /// What finalising the graph cost on the host, ns.
    pub fn finalize_ns(&self) -> Option<u64> {
        self.finalized.map(|(b, e)| e.saturating_sub(b))
    }
}

/// Every SYCL graph seen, by number.
#[derive(Clone, Debug, Default)]
pub struct SyclGraphs {
    graphs: BTreeMap<u32, SyclGraph>,
    member_of: BTreeMap<NodeId, u32>,
    replay_of: BTreeMap<NodeId, u32>,
}

impl SyclGraphs {
    fn entry(&mut self, graph: u32) -> &mut SyclGraph {
        self.graphs.entry(graph).or_insert_with(|| SyclGraph {
            number: graph,
            ..SyclGraph::default()
        })
    }

    /// `node` is a command of `graph` (a second graph claiming the same
    /// node leaves it in the first one's drawing, and in both lists).
    pub fn member(&mut self, graph: u32, node: NodeId) {
        let g = self.entry(graph);
        if !g.members.contains(&node) {
            g.members.push(node);
        }
        self.member_of.entry(node).or_insert(graph);
    }

    /// `target` waits for `source` inside `graph`.
    pub fn edge(&mut self, graph: u32, source: NodeId, target: NodeId) {
        self.member(graph, source);
        self.member(graph, target);
        let g = self.entry(graph);
        if !g.edges.contains(&(source, target)) {
            g.edges.push((source, target));
        }
    }

    /// `graph` was finalised; its replays are the instances of `node`.
    pub fn finalized(&mut self, graph: u32, node: NodeId, thread: u32, span: (u64, u64)) {
        let g = self.entry(graph);
        g.node = Some(node);
        g.thread = Some(thread);
        g.finalized = Some(span);
        self.replay_of.insert(node, graph);
    }

    /// Every graph, by number.
    pub fn iter(&self) -> impl Iterator<Item = &SyclGraph> {
        self.graphs.values()
    }

    /// The graph `node` is drawn in, when it is a member of one.
    pub fn member_of(&self, node: NodeId) -> Option<u32> {
        self.member_of.get(&node).copied()
    }

    /// The graph whose replays are the instances of `node`.
    pub fn replayed_by(&self, node: NodeId) -> Option<&SyclGraph> {
        self.replay_of.get(&node).and_then(|g| self.graphs.get(g))
    }

    /// How many graphs were seen.
    pub fn len(&self) -> usize {
        self.graphs.len()
    }

    /// No graph was seen.
    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_edges_and_replay_nodes_are_kept_per_graph() {
        let mut g = SyclGraphs::default();
        g.member(1, 10);
        g.member(1, 11);
        g.edge(1, 10, 11);
        g.edge(1, 10, 11);
        g.member(2, 12);
        g.finalized(1, 20, 0, (100, 350));
        g.finalized(2, 21, 0, (400, 410));
        let one = g.iter().next().unwrap();
        assert_eq!(one.members, vec![10, 11]);
        assert_eq!(one.edges, vec![(10, 11)]);
        assert_eq!(one.finalize_ns(), Some(250));
        assert_eq!(g.member_of(12), Some(2));
        assert_eq!(g.replayed_by(21).map(|s| s.number), Some(2));
        assert_eq!(g.replayed_by(10), None);
        assert_eq!(g.len(), 2);
    }
}
