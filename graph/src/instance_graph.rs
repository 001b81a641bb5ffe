//! The instance graph: submissions (node, instance) and the dependencies
//! between them — the 3rd saxpy → the 3rd scale — for `instances.dot`.
//!
//! It keeps the first `limit` submissions in the order they were made (the
//! `SYCLGRAPH_MAX_INSTANCES` bound) and the edges among them; later ones are
//! only counted, and `instances.dot` says where it was cut.

use crate::per_node::PerNode;
use crate::record::{InstanceEdge, NodeId};

/// One submission.
pub type InstanceKey = (NodeId, u64);

/// Most submissions (and edges) the tables are sized for up front.
pub const PRESIZE_MAX: usize = 1 << 16;

/// Kept edge entries (counting repeats) below which repeated pairs are
/// only merged when [`InstanceGraph::edges`] is asked; past it, and past
/// four per kept submission, they are merged in place.
const MERGE_AT: usize = 1024;

/// Submissions and the dependencies between them, bounded.
#[derive(Debug, Default)]
pub struct InstanceGraph {
    limit: usize,
    order: Vec<InstanceKey>,
    members: Members,
    /// The kept dependencies (from, to, is queue order), in arrival order;
    /// a pair may be there more than once (merged by [`InstanceGraph::edges`],
    /// and in place once there are many more entries than submissions).
    edges: Vec<(InstanceKey, InstanceKey, bool)>,
    submissions: u64,
    edges_seen: u64,
    /// A submission was not kept (the bound was reached).
    left_out: bool,
    /// The last two kept submissions, newest first: most dependencies join
    /// them (queue order), and these need no lookup in `members`.
    recent: [Option<InstanceKey>; 2],
}

/// The kept submissions, by node: each node's instance numbers in a sorted
/// list. They come in increasing order, so adding one is a push (no
/// hashing).
#[derive(Debug, Default)]
struct Members(PerNode<Vec<u64>>);

impl Members {
    /// Adds a submission; `false` when it was there already.
    fn insert(&mut self, (node, instance): InstanceKey) -> bool {
        let list = self.0.slot(node);
        match list.last() {
            Some(&last) if last >= instance => match list.binary_search(&instance) {
                Ok(_) => false,
                Err(at) => {
                    list.insert(at, instance);
                    true
                }
            },
            _ => {
                list.push(instance);
                true
            }
        }
    }

    fn contains(&self, (node, instance): InstanceKey) -> bool {
        // Above the last one kept (a submission past the bound): no search.
        self.0.get(node).is_some_and(|list| {
            list.last().is_some_and(|&last| instance <= last)
                && list.binary_search(&instance).is_ok()
        })
    }
}

impl InstanceGraph {
    /// An empty instance graph keeping at most `limit` submissions. Room
    /// for them (up to [`PRESIZE_MAX`]) is taken at once: growing the
    /// tables one rehash at a time cost about as much per submission as
    /// keeping it.
    pub fn new(limit: usize) -> InstanceGraph {
        let room = limit.min(PRESIZE_MAX);
        InstanceGraph {
            limit,
            order: Vec::with_capacity(room),
            members: Members::default(),
            edges: Vec::with_capacity(room),
            ..InstanceGraph::default()
        }
    }

    /// One more submission (inlined: the model calls it for each one).
    #[inline(always)]
    pub fn submitted(&mut self, key: InstanceKey) {
        self.submissions += 1;
        if self.order.len() < self.limit {
            if self.members.insert(key) {
                self.order.push(key);
                self.recent = [Some(key), self.recent[0]];
            }
            // else: the same submission again (bad input)
        } else if !self.left_out && !self.members.contains(key) {
            self.left_out = true;
        }
    }

    /// Whether `key` is a kept submission.
    #[inline]
    fn is_member(&self, key: InstanceKey) -> bool {
        self.recent.contains(&Some(key)) || self.members.contains(key)
    }

    /// A dependency between two submissions; kept when both are kept
    /// (inlined: the model calls it for most submissions, their queue
    /// order).
    #[inline(always)]
    pub fn depends(&mut self, edge: InstanceEdge) {
        self.edges_seen += 1;
        let from = (edge.source, edge.source_instance);
        let to = (edge.target, edge.target_instance);
        if from != to && self.is_member(to) && self.is_member(from) {
            if self.edges.len() >= MERGE_AT.max(4 * self.order.len()) {
                // Repeated pairs (bad input) must not grow it without bound.
                self.edges = self.edges();
            }
            self.edges.push((from, to, edge.queue_order));
        }
    }

    /// The kept submissions, in submission order.
    pub fn instances(&self) -> &[InstanceKey] {
        &self.order
    }

    /// The kept dependencies: (from, to, is queue order), each pair once,
    /// sorted. A data dependency wins over the queue's order on the same
    /// pair.
    pub fn edges(&self) -> Vec<(InstanceKey, InstanceKey, bool)> {
        let mut v = self.edges.clone();
        // (from, to, false) sorts before (from, to, true): the first of a
        // pair is a data dependency if there is one.
        v.sort_unstable();
        v.dedup_by(|later, first| (later.0, later.1) == (first.0, first.1));
        v
    }

    /// All submissions seen, kept or not.
    pub fn submissions(&self) -> u64 {
        self.submissions
    }

    /// True when some submissions were left out.
    pub fn cut(&self) -> bool {
        self.left_out
    }

    /// Dependencies seen, kept or not.
    pub fn edges_seen(&self) -> u64 {
        self.edges_seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(a: InstanceKey, b: InstanceKey, queue_order: bool) -> InstanceEdge {
        InstanceEdge {
            source: a.0,
            source_instance: a.1,
            target: b.0,
            target_instance: b.1,
            queue_order,
        }
    }

    #[test]
    fn keeps_the_first_submissions_and_the_edges_among_them() {
        let mut g = InstanceGraph::new(3);
        for key in [(0, 1), (1, 1), (0, 2), (1, 2)] {
            g.submitted(key);
        }
        g.depends(dep((0, 1), (1, 1), false));
        g.depends(dep((0, 2), (1, 2), false)); // (1, 2) was cut
        assert_eq!(g.instances(), &[(0, 1), (1, 1), (0, 2)]);
        assert_eq!(g.edges(), vec![((0, 1), (1, 1), false)]);
        assert!(g.cut());
        assert_eq!(g.submissions(), 4);
        assert_eq!(g.edges_seen(), 2);
    }

    #[test]
    fn a_repeated_submission_is_not_a_cut() {
        // Found by tests/property_instance_graph.rs: a second Submitted of a
        // kept instance made instances.dot claim submissions were left out.
        let mut g = InstanceGraph::new(1);
        g.submitted((2, 1));
        g.submitted((2, 1));
        assert_eq!(g.instances(), &[(2, 1)]);
        assert_eq!(g.submissions(), 2);
        assert!(!g.cut());
        g.submitted((3, 1));
        assert!(g.cut());
    }

    #[test]
    fn a_data_dependency_outranks_queue_order_on_the_same_pair() {
        let mut g = InstanceGraph::new(10);
        g.submitted((0, 1));
        g.submitted((1, 1));
        g.depends(dep((0, 1), (1, 1), true));
        g.depends(dep((0, 1), (1, 1), false));
        assert_eq!(g.edges(), vec![((0, 1), (1, 1), false)]);
        let mut g = InstanceGraph::new(10);
        g.submitted((0, 1));
        g.submitted((1, 1));
        g.depends(dep((0, 1), (1, 1), false));
        g.depends(dep((0, 1), (1, 1), true));
        assert_eq!(g.edges(), vec![((0, 1), (1, 1), false)]);
    }

    #[test]
    fn members_in_any_order_and_any_id_are_found_once() {
        let mut m = Members::default();
        let ids = [3, (1 << 16) + 7, 0];
        for node in ids {
            for instance in [5, 1, 9, 5, 2, 9, 0, 7] {
                m.insert((node, instance));
            }
        }
        for node in ids {
            assert_eq!(m.0.get(node).unwrap(), &vec![0, 1, 2, 5, 7, 9]);
            assert!(m.contains((node, 7)) && !m.contains((node, 3)));
        }
        assert!(!m.contains((4, 0)) && !m.contains(((1 << 16) + 8, 0)));
        assert!(!m.insert((3, 9)) && m.insert((3, 10)));
    }

    #[test]
    fn a_pair_sent_again_and_again_is_kept_once() {
        let mut g = InstanceGraph::new(10);
        g.submitted((0, 1));
        g.submitted((1, 1));
        g.submitted((1, 2));
        for i in 0..100_000 {
            g.depends(dep((0, 1), (1, 1), i % 3 == 0));
            g.depends(dep((1, 1), (1, 2), true));
        }
        assert!(g.edges.len() <= MERGE_AT + 1, "{}", g.edges.len());
        assert_eq!(
            g.edges(),
            vec![((0, 1), (1, 1), false), ((1, 1), (1, 2), true)]
        );
        assert_eq!(g.edges_seen(), 200_000);
    }
}
