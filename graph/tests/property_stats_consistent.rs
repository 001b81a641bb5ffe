//! `stats()` agrees with the records applied and with the graph: kept +
//! dropped = finalised instances, kept instances are the first
//! `max_instances` handed out, and every counter (records, nodes, undefined
//! nodes, edges and their counts, duplicate definitions, records for unknown
//! nodes and edges, submissions, strings, queues, unmatched and open spans)
//! equals what a plain replay of the stream counts.

use crate::property_strategies as strategies;

use std::collections::{BTreeMap, HashMap, HashSet};

use proptest::prelude::*;
use strategies::*;
use syclgraph_graph::record::{Record, SpanKind};
use syclgraph_graph::timing::UntimedCounts;

/// A queue as the records describe it: device string id, created, destroyed.
type QueueSeen = (Option<u32>, Option<u64>, Option<u64>);

/// What a plain replay of the stream counts.
#[derive(Default)]
struct Replay {
    nodes: HashSet<u32>,
    defined: HashSet<u32>,
    node_definitions: u64,
    edges: HashMap<u32, (u32, u32)>,
    edge_definitions: u64,
    /// EdgeInstance records per edge id, before or after its definition.
    edge_counts: HashMap<u32, u64>,
    unknown_node_records: u64,
    unknown_edge_records: u64,
    submissions: u64,
    strings: HashMap<u32, String>,
    queues: BTreeMap<u64, QueueSeen>,
    open: HashMap<(u32, bool), Vec<u64>>,
    unmatched_ends: u64,
}

impl Replay {
    fn touch(&mut self, id: u32) {
        self.nodes.insert(id);
        if !self.defined.contains(&id) {
            self.unknown_node_records += 1;
        }
    }

    fn apply(&mut self, r: &Record) {
        match r {
            Record::String { id, text } => {
                self.strings.entry(*id).or_insert_with(|| text.to_string());
            }
            Record::NodeDefined(info) => {
                self.node_definitions += 1;
                self.nodes.insert(info.id);
                self.defined.insert(info.id);
            }
            Record::NodeMetadata { node, .. } => self.touch(*node),
            Record::EdgeDefined(info) => {
                self.edge_definitions += 1;
                if !self.edges.contains_key(&info.id) {
                    self.touch(info.source);
                    self.touch(info.target);
                    self.edges.insert(info.id, (info.source, info.target));
                }
            }
            Record::EdgeInstance { edge, .. } => {
                if !self.edges.contains_key(edge) {
                    self.unknown_edge_records += 1;
                }
                *self.edge_counts.entry(*edge).or_default() += 1;
            }
            Record::Submitted { node, .. } | Record::SubmittedAfter { node, .. } => {
                self.submissions += 1;
                self.touch(*node);
            }
            // A Signal and a Task.
            Record::SignalledTask { node, .. } => {
                self.touch(*node);
                self.touch(*node);
            }
            // A Submitted, a Signal (if any) and a Task.
            Record::SubmittedTask { node, event, .. } => {
                self.submissions += 1;
                for _ in 0..2 + usize::from(event.is_some()) {
                    self.touch(*node);
                }
            }
            // A Submitted and the edge (if any).
            Record::SubmissionAnnounced { node, .. } => {
                self.submissions += 1;
                self.touch(*node);
            }
            // A Signal, a Task and a Device record.
            Record::TimedTask { node, .. } => {
                for _ in 0..3 {
                    self.touch(*node);
                }
            }
            Record::TaskBegin { node, .. }
            | Record::TaskEnd { node, .. }
            | Record::Task { node, .. }
            | Record::Signal { node, .. } => self.touch(*node),
            Record::Device(d) => self.touch(d.node),
            Record::SpanBegin {
                kind, thread, ns, ..
            } => self
                .open
                .entry((*thread, *kind == SpanKind::Wait))
                .or_default()
                .push(*ns),
            Record::SpanEnd { kind, thread, .. } => {
                let popped = self
                    .open
                    .get_mut(&(*thread, *kind == SpanKind::Wait))
                    .and_then(Vec::pop);
                if popped.is_none() {
                    self.unmatched_ends += 1;
                }
            }
            Record::QueueCreated {
                queue_id,
                device,
                ns,
                ..
            } => {
                let q = self.queues.entry(*queue_id).or_default();
                q.0.get_or_insert(*device);
                q.1.get_or_insert(*ns);
            }
            Record::DeviceDefined { .. } => {}
            Record::QueueDestroyed { queue_id, ns } => {
                self.queues
                    .entry(*queue_id)
                    .or_default()
                    .2
                    .get_or_insert(*ns);
            }
            // property_instance_graph covers these; windows.rs the windows;
            // the regions' own tests the regions.
            Record::InstanceEdge(_)
            | Record::Tracing { .. }
            | Record::RegionBegin { .. }
            | Record::RegionEnd { .. } => {}
            Record::InstanceQueue { node, .. } => self.touch(*node),
            Record::GraphMember { node, .. } | Record::GraphFinalized { node, .. } => {
                self.touch(*node)
            }
            Record::GraphEdge { source, target, .. } => {
                self.touch(*source);
                self.touch(*target);
            }
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn stats_agree_with_a_replay(records in stream(), limits in limits()) {
        let out = drive(&records, limits);
        let g = &out.graph;
        let s = g.stats();
        let mut replay = Replay::default();
        for r in &records {
            replay.apply(r);
        }

        // Instances.
        let handed = out.handed.len() as u64;
        prop_assert_eq!(s.instances, handed);
        prop_assert_eq!(s.instances_kept as u64 + s.instances_dropped, s.instances);
        prop_assert_eq!(s.instances_kept, out.handed.len().min(limits.max_instances));
        let kept: usize = g.nodes().map(|n| n.instances.len()).sum();
        prop_assert_eq!(kept, s.instances_kept);
        let mut first: Vec<(u32, u64)> = out.handed.iter().take(limits.max_instances).map(Handed::key).collect();
        let mut in_memory: Vec<(u32, u64)> = g
            .nodes()
            .flat_map(|n| n.instances.iter().map(move |i| (n.id, i.instance)))
            .collect();
        first.sort_unstable();
        in_memory.sort_unstable();
        prop_assert_eq!(first, in_memory, "kept are the first handed out");
        prop_assert_eq!(s.instances_pending, 0);
        prop_assert!(s.pending_evicted <= s.instances_flushed);
        prop_assert!(s.instances_flushed <= s.instances);
        prop_assert_eq!(g.nodes().map(|n| n.times.finalised).sum::<u64>(), s.instances);
        let mut untimed = UntimedCounts::default();
        for n in g.nodes() {
            untimed.merge(&n.times.untimed);
        }
        prop_assert_eq!(s.untimed, untimed);

        // Records, nodes, edges.
        prop_assert_eq!(s.records, records.len() as u64);
        prop_assert_eq!(s.nodes, replay.nodes.len());
        prop_assert_eq!(s.nodes, g.nodes().count());
        prop_assert_eq!(s.undefined_nodes, replay.nodes.difference(&replay.defined).count());
        prop_assert_eq!(s.undefined_nodes, g.nodes().filter(|n| !n.defined).count());
        prop_assert_eq!(s.duplicate_node_definitions, replay.node_definitions - replay.defined.len() as u64);
        prop_assert_eq!(s.edges, replay.edges.len());
        prop_assert_eq!(s.duplicate_edge_definitions, replay.edge_definitions - replay.edges.len() as u64);
        for e in g.edges() {
            prop_assert_eq!(Some(&(e.source, e.target)), replay.edges.get(&e.id));
            let again = replay.edge_counts.get(&e.id).copied().unwrap_or(0);
            prop_assert_eq!(e.count, 1 + again, "edge {}", e.id);
            prop_assert!(g.edges_from(e.source).iter().any(|x| x.id == e.id));
            prop_assert!(g.edges_into(e.target).iter().any(|x| x.id == e.id));
        }
        prop_assert_eq!(s.unknown_node_records, replay.unknown_node_records);
        prop_assert_eq!(s.unknown_edge_records, replay.unknown_edge_records);
        prop_assert_eq!(s.submissions, replay.submissions);

        // Strings, queues, spans.
        prop_assert_eq!(s.strings, replay.strings.len());
        for (id, text) in &replay.strings {
            prop_assert_eq!(g.string(*id), Some(text.as_str()));
        }
        prop_assert_eq!(s.queues, replay.queues.len());
        let queues = g.queues();
        prop_assert_eq!(queues.len(), replay.queues.len());
        for (q, (id, (device, created, destroyed))) in queues.iter().zip(&replay.queues) {
            prop_assert_eq!(q.id, *id);
            prop_assert_eq!((q.created_ns, q.destroyed_ns), (*created, *destroyed));
            let name = device.map(|d| replay.strings.get(&d).cloned().unwrap_or(format!("<string {d}>")));
            prop_assert_eq!(&q.device, &name);
        }
        prop_assert_eq!(s.unmatched_span_ends, replay.unmatched_ends);
        prop_assert_eq!(s.open_spans, replay.open.values().map(Vec::len).sum::<usize>());
        let ends = records.iter().filter(|r| matches!(r, Record::SpanEnd { .. })).count() as u64;
        // ITT tasks (regions, paired by the region tracker) aside.
        let closed: u64 = g
            .host_spans()
            .iter()
            .filter(|h| h.kind != SpanKind::Task)
            .map(|h| h.count)
            .sum();
        prop_assert_eq!(closed + s.unmatched_span_ends, ends);
    }
}
