//! The order of submissions on in-order queues, resolved on the collector.
//!
//! A submission to an in-order queue comes after the queue's previous one
//! (a `queue_order` edge, not a data dependency). The program's threads
//! send each submission without it; the collector fills it in from the
//! record stream, in the order the records arrive: a submission's queue is
//! the one its [`Record::InstanceQueue`] named (sent at its node_create,
//! before the submission itself), else its node's `queue_id` (the node's
//! first queue, from its definition). Which queues are in order comes from
//! queue_create, through the recorder ([`QueueOrder::place`]'s
//! `is_in_order`).
//!
//! A submission recorded into a SYCL graph is never sent as a submission:
//! it never takes a place in its queue. Nor does a buffer's allocation or
//! release: the scheduler makes them on the host, not in the queue's order
//! (the runtime creates a release long before it runs, at exit), so they
//! neither follow nor precede the queue's commands; in the queue's order
//! they made a cycle (kernel -> release -> allocation -> kernel).

use rustc_hash::FxHashMap;
use syclgraph_graph::node::QUEUE_ID_KEY;
use syclgraph_graph::record::{Metadata, NodeId, Record};

/// Instance queues kept for submissions not seen yet, at most; past it the
/// oldest are forgotten (a submission that never came: its record was
/// dropped, or it was recorded into a SYCL graph).
const MAX_WAITING_QUEUES: usize = 1 << 16;

/// The `node_queue` of a node that takes no place in its queue's order.
const HOST_SIDE: u64 = u64::MAX;

/// Whether a node of this node_create kind is a buffer's allocation or
/// release (made on the host by the scheduler).
fn is_host_side(kind_hint: &str) -> bool {
    matches!(
        kind_hint.trim(),
        "memory_allocation_node" | "memory_deallocation_node"
    )
}

/// What the collector knows to place each submission in its queue.
#[derive(Default)]
pub struct QueueOrder {
    /// Each node's `queue_id`, by node id (0: none; [`HOST_SIDE`]: a
    /// buffer's allocation or release, never in a queue's order).
    node_queue: Vec<u64>,
    /// The queue of a submission whose [`Record::InstanceQueue`] came
    /// before it.
    instance_queue: FxHashMap<(NodeId, u64), u64>,
    /// Each queue seen, in the order first seen.
    queues: Vec<QueueState>,
    /// Each queue's index in `queues`.
    queue_index: FxHashMap<u64, usize>,
    /// The index in `queues` of the queue placed last: submissions mostly
    /// come to the queue the last one came to, found without a lookup.
    last_queue: usize,
}

/// What [`QueueOrder`] keeps of a queue.
struct QueueState {
    /// The queue's id.
    id: u64,
    /// Whether it is in order (asked once per queue).
    in_order: bool,
    /// Its last submission, when in order.
    last: Option<(NodeId, u64)>,
}

impl QueueOrder {
    /// Learns from `record` (node definitions, instance queues) and, when
    /// it is a submission, fills in the in-order queue's previous
    /// submission: a `Submitted` becomes a `SubmittedAfter`, a
    /// `SubmittedTask` gets its `after`. `is_in_order(queue)` is asked once
    /// per queue.
    pub fn place(&mut self, record: &mut Record, is_in_order: impl FnOnce(u64) -> bool) {
        match record {
            Record::Submitted {
                node,
                instance,
                thread,
                ns,
            } => {
                if let Some(after) = self.follow(*node, *instance, is_in_order) {
                    *record = Record::SubmittedAfter {
                        node: *node,
                        instance: *instance,
                        thread: *thread,
                        ns: *ns,
                        after,
                    };
                }
            }
            Record::SubmittedTask {
                node,
                instance,
                after,
                ..
            } if after.is_none() => *after = self.follow(*node, *instance, is_in_order),
            Record::InstanceQueue {
                node,
                instance,
                queue_id,
            } => {
                if self.instance_queue.len() >= MAX_WAITING_QUEUES {
                    self.instance_queue.clear();
                }
                self.instance_queue.insert((*node, *instance), *queue_id);
            }
            Record::NodeDefined(info) if is_host_side(&info.kind_hint) => {
                self.set_node_queue(info.id, HOST_SIDE)
            }
            Record::NodeDefined(info) => self.node_metadata(info.id, &info.metadata),
            Record::NodeMetadata { node, metadata } => self.node_metadata(*node, metadata),
            _ => {}
        }
    }

    /// Keeps a node's first `queue_id` (later ones do not change it, as in
    /// the graph's node).
    fn node_metadata(&mut self, node: NodeId, metadata: &Metadata) {
        let Some(queue) = metadata
            .iter()
            .find(|(k, _)| k == QUEUE_ID_KEY)
            .and_then(|(_, v)| v.parse::<u64>().ok())
        else {
            return;
        };
        self.set_node_queue(node, queue);
    }

    /// Keeps `queue` as the node's `queue_id` unless it has one.
    fn set_node_queue(&mut self, node: NodeId, queue: u64) {
        let index = node as usize;
        if index >= self.node_queue.len() {
            if index > u32::MAX as usize / 2 {
                return;
            }
            self.node_queue.resize(index + 1, 0);
        }
        if self.node_queue[index] == 0 {
            self.node_queue[index] = queue;
        }
    }

    /// The submission's queue's previous submission, when the queue is in
    /// order; the submission becomes its last. [`QueueOrder::place`] of a
    /// `SubmittedTask` without its `after`, for the caller that has its
    /// fields at hand.
    #[inline]
    pub fn follow(
        &mut self,
        node: NodeId,
        instance: u64,
        is_in_order: impl FnOnce(u64) -> bool,
    ) -> Option<(NodeId, u64)> {
        let first_queue = self.node_queue.get(node as usize).copied().unwrap_or(0);
        let named = match self.instance_queue.is_empty() {
            true => None,
            false => self.instance_queue.remove(&(node, instance)),
        };
        if first_queue == HOST_SIDE {
            return None;
        }
        let queue = named.unwrap_or(first_queue);
        if queue == 0 {
            return None;
        }
        let index = match self.queues.get(self.last_queue) {
            Some(last) if last.id == queue => self.last_queue,
            _ => self.queue_index(queue, is_in_order),
        };
        let state = &mut self.queues[index];
        if !state.in_order {
            return None;
        }
        state.last.replace((node, instance))
    }

    /// The index of `queue` in `queues`, added when new; it becomes the
    /// last queue placed.
    #[cold]
    #[inline(never)]
    fn queue_index(&mut self, queue: u64, is_in_order: impl FnOnce(u64) -> bool) -> usize {
        let queues = &mut self.queues;
        let index = *self.queue_index.entry(queue).or_insert_with(|| {
            queues.push(QueueState {
                id: queue,
                in_order: is_in_order(queue),
                last: None,
            });
            queues.len() - 1
        });
        self.last_queue = index;
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syclgraph_graph::record::NodeInfo;

    fn defined(id: NodeId, queue: Option<u64>) -> Record {
        Record::NodeDefined(Box::new(NodeInfo {
            id,
            metadata: queue
                .map(|q| vec![(QUEUE_ID_KEY.to_owned(), q.to_string())])
                .unwrap_or_default(),
            ..NodeInfo::default()
        }))
    }

    fn submitted(node: NodeId, instance: u64) -> Record {
        Record::Submitted {
            node,
            instance,
            thread: 1,
            ns: 10 * instance,
        }
    }

    fn task(node: NodeId, instance: u64) -> Record {
        Record::SubmittedTask {
            node,
            instance,
            thread: 1,
            submit_ns: 1,
            after: None,
            begin_ns: 2,
            end_ns: 3,
            event: Some(7),
        }
    }

    /// A submission as placed: node, instance, the queue's previous one.
    type Placed = (NodeId, u64, Option<(NodeId, u64)>);

    /// Each submission of `records` as placed.
    fn place_all(records: Vec<Record>, in_order: &[u64]) -> Vec<Placed> {
        let mut order = QueueOrder::default();
        let mut asked = Vec::new();
        let mut placed = Vec::new();
        for mut record in records {
            order.place(&mut record, |q| {
                asked.push(q);
                in_order.contains(&q)
            });
            match record {
                Record::Submitted { node, instance, .. } => placed.push((node, instance, None)),
                Record::SubmittedAfter {
                    node,
                    instance,
                    after,
                    ..
                } => placed.push((node, instance, Some(after))),
                Record::SubmittedTask {
                    node,
                    instance,
                    after,
                    ..
                } => placed.push((node, instance, after)),
                _ => {}
            }
        }
        asked.sort();
        let before = asked.len();
        asked.dedup();
        assert_eq!(before, asked.len(), "each queue is asked once");
        placed
    }

    #[test]
    fn submissions_on_an_in_order_queue_follow_each_other_in_arrival_order() {
        let placed = place_all(
            vec![
                defined(0, Some(5)),
                defined(1, Some(5)),
                task(0, 1),
                submitted(1, 1),
                task(0, 2),
            ],
            &[5],
        );
        assert_eq!(
            placed,
            [(0, 1, None), (1, 1, Some((0, 1))), (0, 2, Some((1, 1)))]
        );
    }

    #[test]
    fn a_buffers_allocation_and_release_take_no_place_in_the_queue() {
        let host_side = |id, kind: &str| {
            Record::NodeDefined(Box::new(NodeInfo {
                id,
                kind_hint: kind.to_owned(),
                metadata: vec![(QUEUE_ID_KEY.to_owned(), "5".to_owned())],
                ..NodeInfo::default()
            }))
        };
        let placed = place_all(
            vec![
                defined(0, Some(5)),
                host_side(1, "memory_allocation_node"),
                host_side(2, "memory_deallocation_node"),
                task(0, 1),
                submitted(2, 1),
                submitted(1, 1),
                // Even when a submission names the queue itself.
                Record::InstanceQueue {
                    node: 1,
                    instance: 2,
                    queue_id: 5,
                },
                submitted(1, 2),
                task(0, 2),
            ],
            &[5],
        );
        assert_eq!(
            placed,
            [
                (0, 1, None),
                (2, 1, None),
                (1, 1, None),
                (1, 2, None),
                (0, 2, Some((0, 1)))
            ]
        );
    }

    #[test]
    fn an_instance_queue_overrides_the_nodes_and_out_of_order_queues_give_none() {
        let placed = place_all(
            vec![
                defined(0, Some(5)),
                defined(1, None),
                task(0, 1),
                // Instance 2 of node 0 goes to queue 6 (out of order).
                Record::InstanceQueue {
                    node: 0,
                    instance: 2,
                    queue_id: 6,
                },
                task(0, 2),
                task(0, 3),
                // Node 1 names no queue: nothing to follow.
                submitted(1, 1),
                Record::InstanceQueue {
                    node: 1,
                    instance: 2,
                    queue_id: 5,
                },
                submitted(1, 2),
            ],
            &[5],
        );
        assert_eq!(
            placed,
            [
                (0, 1, None),
                (0, 2, None),
                (0, 3, Some((0, 1))),
                (1, 1, None),
                (1, 2, Some((0, 3)))
            ]
        );
    }

    #[test]
    fn the_first_queue_id_of_a_node_stays() {
        let placed = place_all(
            vec![
                defined(0, None),
                Record::NodeMetadata {
                    node: 0,
                    metadata: Box::new(vec![(QUEUE_ID_KEY.to_owned(), "5".to_owned())]),
                },
                Record::NodeMetadata {
                    node: 0,
                    metadata: Box::new(vec![(QUEUE_ID_KEY.to_owned(), "6".to_owned())]),
                },
                task(0, 1),
                task(0, 2),
            ],
            &[5],
        );
        assert_eq!(placed, [(0, 1, None), (0, 2, Some((0, 1)))]);
    }
}
