//! The task graph: [`TaskGraph::apply`] turns [`Record`]s, in arrival order,
//! into nodes, edges, instances and exact aggregates.
//!
//! Records may arrive in any order across threads: an edge or an instance can
//! name a node before its NodeDefined (a placeholder node stands in until the
//! definition arrives, or for good), an EdgeInstance can come before its
//! EdgeDefined, a Device record before the Signal. Nothing panics on any
//! order; oddities are counted in [`Stats`].
//!
//! # Instances
//!
//! Records sharing a (node, instance) key are merged into one [`Instance`] in
//! a bounded pending table. An instance is *complete*, and leaves the table,
//! once its node is defined and it has a Submitted record and
//! - a virtual node: nothing more (virtual nodes never run);
//! - a device command (kernel, memcpy, memset, fill, copy): a TaskEnd and a
//!   Device record (with any [`TimingStatus`]);
//! - anything else: a TaskEnd.
//!
//! The subscriber should therefore send a Device record for every device
//! command, with a final status. An instance that never completes is
//! *flushed* when the pending table is full (oldest first) or at
//! [`TaskGraph::finish`]; its timing is then `lost` if the signal gave an
//! event and `unavailable` if not (see [`Instance::timing`]).
//!
//! A [`Record::TimedTask`] (after its [`Record::SubmissionAnnounced`])
//! brings every part of an instance at once: when nothing else named the
//! instance meanwhile it is finalised without entering the table.
//!
//! Every finalised (complete or flushed) instance is handed back as a
//! [`Completed`] exactly once, so the subscriber can stream it to
//! `kernels.csv`; then it is folded into its node's exact aggregates and kept
//! in memory while fewer than [`Limits::max_instances`] are kept in the whole
//! graph (the rest are counted as dropped).

use std::cell::Cell;

use rustc_hash::FxHashMap as HashMap;

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};

use crate::devices::{Device, DeviceTable};
use crate::edge::Edge;
use crate::instance::{Completed, Instance, InstanceStatus};
use crate::instance_graph::InstanceGraph;
use crate::node::Node;
use crate::pending::{Key, PendingTable};
use crate::queues::{Queue, QueueTable};
use crate::record::{
    DeviceTimes, EdgeId, EdgeInfo, InstanceEdge, NodeId, NodeInfo, Record, SpanKind, StrId,
    TimingStatus,
};
use crate::regions::{ClosedEntry, Region, RegionId, RegionRef, RegionTracker, PATH_SEPARATOR};
use crate::spans::{HostSpan, SpanRecord, SpanTracker};
use crate::sycl_graphs::SyclGraphs;
use crate::timing::UntimedCounts;
use crate::windows::{Window, Windows};

/// How much the graph keeps in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Finalised instances kept in memory over the whole graph; the rest are
    /// only counted (their aggregates stay exact, their rows were streamed).
    pub max_instances: usize,
    /// Instances waiting for records; when full, the oldest is flushed.
    pub max_pending: usize,
    /// Finalised instance keys remembered to recognise late records, of
    /// those finalised out of their node's order: at least the last half
    /// of this many, at most this many (with 1: the last one or two). The
    /// instances finalised in order (1, 2, 3, … per node) take one number
    /// per node and are remembered for good; with 0 nothing is remembered.
    pub recent_finalised: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_instances: 5000,
            max_pending: 65_536,
            recent_finalised: 8192,
        }
    }
}

/// Counts describing a graph and how its records went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Records applied.
    pub records: u64,
    /// Nodes (defined or not).
    pub nodes: usize,
    /// Nodes named by records but never defined.
    pub undefined_nodes: usize,
    /// Edges.
    pub edges: usize,
    /// Submitted records (instances created by the runtime).
    pub submissions: u64,
    /// Instances finalised (complete + flushed).
    pub instances: u64,
    /// Instances finalised without all their records.
    pub instances_flushed: u64,
    /// Finalised instances kept in memory.
    pub instances_kept: usize,
    /// Finalised instances not kept in memory (beyond `max_instances`).
    pub instances_dropped: u64,
    /// Instances still waiting for records.
    pub instances_pending: usize,
    /// Instances flushed because the pending table was full.
    pub pending_evicted: u64,
    /// Device commands that could not be timed, by reason.
    pub untimed: UntimedCounts,
    /// Records that named a node not defined (yet) when they arrived.
    pub unknown_node_records: u64,
    /// EdgeInstance records for an edge not defined (yet).
    pub unknown_edge_records: u64,
    /// NodeDefined records for a node already defined.
    pub duplicate_node_definitions: u64,
    /// EdgeDefined records for an edge already defined.
    pub duplicate_edge_definitions: u64,
    /// Instance records repeating a value the instance already had.
    pub duplicate_instance_records: u64,
    /// Instance records arriving after their instance was finalised.
    pub late_records: u64,
    /// Span ends with no open begin.
    pub unmatched_span_ends: u64,
    /// Spans begun and not ended.
    pub open_spans: usize,
    /// Queues seen.
    pub queues: usize,
    /// Interned strings received.
    pub strings: usize,
}

/// Counters kept while applying records.
#[derive(Clone, Debug, Default)]
struct Counters {
    records: u64,
    submissions: u64,
    instances: u64,
    flushed: u64,
    kept: usize,
    dropped: u64,
    evicted: u64,
    unknown_node_records: u64,
    unknown_edge_records: u64,
    duplicate_node_definitions: u64,
    duplicate_edge_definitions: u64,
    duplicate_instance_records: u64,
    late_records: u64,
}

/// The task graph the runtime built, with what each command cost.
#[derive(Debug)]
pub struct TaskGraph {
    graph: DiGraph<Node, Edge>,
    nodes: HashMap<NodeId, NodeIndex>,
    /// The node looked up last: consecutive records mostly name the same
    /// node (nodes are never removed, so an index stays valid).
    last_node: Cell<Option<(NodeId, NodeIndex)>>,
    edges: HashMap<EdgeId, EdgeIndex>,
    /// EdgeInstance counts for edges not defined yet.
    early_edge_instances: HashMap<EdgeId, u64>,
    pending: PendingTable,
    spans: SpanTracker,
    /// When tracing was on (see [`Record::Tracing`]).
    windows: Windows,
    queues: QueueTable,
    /// The devices, by identity (handle).
    devices: DeviceTable,
    strings: HashMap<StrId, Box<str>>,
    limits: Limits,
    counters: Counters,
    instance_graph: InstanceGraph,
    /// SYCL graphs: their members, inner edges and replay nodes.
    sycl_graphs: SyclGraphs,
    /// The program's regions (ITT tasks) and what each cost.
    regions: RegionTracker,
    /// Each region's path as text, made on first use once its names'
    /// strings arrived (index = id − 1).
    region_paths: Vec<std::cell::OnceCell<Box<str>>>,
}

impl Default for TaskGraph {
    fn default() -> TaskGraph {
        TaskGraph::new()
    }
}

/// Whether a pending instance of `node` has every record it needs (see the
/// module docs).
fn is_complete(node: &Node, i: &Instance) -> bool {
    node.defined
        && i.submit_ns.is_some()
        && (!node.kind.expects_task()
            || (i.end_ns.is_some() && (!node.kind.is_device_command() || i.device.is_some())))
}

/// What a `Task` record sets; `true` if it repeated a value.
fn task_parts(i: &mut Instance, thread: u32, begin_ns: u64, end_ns: u64) -> bool {
    let dup = set_once(&mut i.begin_ns, begin_ns);
    i.task_thread = Some(thread);
    set_once(&mut i.end_ns, end_ns) | dup
}

/// Device times as kept: an end before the start makes them `invalid`.
fn checked(mut times: DeviceTimes) -> DeviceTimes {
    if times.status == TimingStatus::Ok && times.end_ns < times.start_ns {
        times.status = TimingStatus::Invalid;
    }
    times
}

/// What a `Submitted` record sets; `true` if it repeated a value.
fn submission_parts(i: &mut Instance, ns: u64, thread: u32) -> bool {
    set_once(&mut i.submit_ns, ns) | set_once(&mut i.thread, thread)
}

/// Set `slot` to `value` unless it already has one; `true` if it had one.
fn set_once<T>(slot: &mut Option<T>, value: T) -> bool {
    if slot.is_some() {
        return true;
    }
    *slot = Some(value);
    false
}

impl TaskGraph {
    /// An empty graph with the default [`Limits`].
    pub fn new() -> TaskGraph {
        TaskGraph::with_limits(Limits::default())
    }

    /// An empty graph with these limits.
    pub fn with_limits(limits: Limits) -> TaskGraph {
        TaskGraph {
            graph: DiGraph::new(),
            nodes: HashMap::default(),
            last_node: Cell::new(None),
            edges: HashMap::default(),
            early_edge_instances: HashMap::default(),
            pending: PendingTable::new(limits.max_pending, limits.recent_finalised),
            spans: SpanTracker::default(),
            windows: Windows::default(),
            queues: QueueTable::default(),
            devices: DeviceTable::default(),
            strings: HashMap::default(),
            limits,
            counters: Counters::default(),
            instance_graph: InstanceGraph::new(limits.max_instances),
            sycl_graphs: SyclGraphs::default(),
            regions: RegionTracker::default(),
            region_paths: Vec::new(),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Apply one record. Instances it finalises (at most two: its own, and
    /// the oldest pending one when the table was full) are appended to `done`.
    pub fn apply(&mut self, record: Record, done: &mut Vec<Completed>) {
        self.counters.records += 1;
        match record {
            Record::String { id, text } => {
                self.devices.string(id, &text);
                self.strings.entry(id).or_insert(text);
            }
            Record::NodeDefined(info) => self.define_node(*info, done),
            Record::NodeMetadata { node, metadata } => {
                let idx = self.touch(node);
                let n = &mut self.graph[idx];
                n.merge_metadata(*metadata);
                if let Some(handle) = n.device_handle {
                    self.devices
                        .named_text(handle, n.device.as_deref().unwrap_or(""));
                }
                self.recheck(node, done);
            }
            Record::EdgeDefined(info) => self.define_edge(*info),
            Record::EdgeInstance { edge, .. } => match self.edges.get(&edge) {
                Some(&idx) => self.graph[idx].count += 1,
                None => {
                    self.counters.unknown_edge_records += 1;
                    *self.early_edge_instances.entry(edge).or_default() += 1;
                }
            },
            Record::Submitted {
                node,
                instance,
                thread,
                ns,
            } => self.submitted((node, instance), thread, ns, None, done),
            Record::SubmittedAfter {
                node,
                instance,
                thread,
                ns,
                after,
            } => {
                self.counters.records += 1;
                self.submitted((node, instance), thread, ns, Some(after), done);
            }
            Record::TaskBegin {
                node,
                instance,
                thread,
                ns,
            } => {
                let idx = self.touch(node);
                self.update(idx, node, instance, done, |i| {
                    let dup = set_once(&mut i.begin_ns, ns);
                    i.task_thread = Some(thread);
                    dup
                });
            }
            Record::TaskEnd {
                node,
                instance,
                thread,
                ns,
            } => {
                let idx = self.touch(node);
                self.update(idx, node, instance, done, |i| {
                    i.task_thread.get_or_insert(thread);
                    set_once(&mut i.end_ns, ns)
                });
            }
            Record::Task {
                node,
                instance,
                thread,
                begin_ns,
                end_ns,
            } => self.signal_and_task((node, instance), thread, (begin_ns, end_ns), None, done),
            Record::SubmittedTask {
                node,
                instance,
                thread,
                submit_ns,
                after,
                begin_ns,
                end_ns,
                event,
            } => self.submitted_task(
                (node, instance),
                thread,
                submit_ns,
                after,
                (begin_ns, end_ns),
                event,
                done,
            ),
            Record::SignalledTask {
                node,
                instance,
                thread,
                begin_ns,
                end_ns,
                event,
            } => {
                self.counters.records += 1;
                self.signal_and_task(
                    (node, instance),
                    thread,
                    (begin_ns, end_ns),
                    Some(event),
                    done,
                );
            }
            Record::Signal {
                node,
                instance,
                event,
            } => {
                let idx = self.touch(node);
                self.update(idx, node, instance, done, |i| set_once(&mut i.event, event));
            }
            Record::Device(times) => {
                let idx = self.touch(times.node);
                self.device(idx, times, done);
            }
            Record::SubmissionAnnounced {
                node,
                instance,
                after,
            } => self.announced((node, instance), after),
            Record::TimedTask {
                node,
                instance,
                thread,
                submit_ns,
                begin_ns,
                end_ns,
                event,
                device_status,
                device_start_ns,
                device_end_ns,
            } => {
                let times = DeviceTimes {
                    node,
                    instance,
                    status: device_status,
                    start_ns: device_start_ns,
                    end_ns: device_end_ns,
                };
                self.timed_task(
                    (node, instance),
                    thread,
                    submit_ns,
                    (begin_ns, end_ns),
                    event,
                    times,
                    done,
                );
            }
            Record::SpanBegin {
                kind,
                label,
                thread,
                ns,
            } => self.spans.begin(kind, label, thread, ns),
            Record::SpanEnd { kind, thread, ns } => self.spans.end(kind, thread, ns),
            Record::RegionBegin {
                thread,
                label,
                ns,
                id,
                shown,
            } => {
                self.regions.begin(thread, label, ns, id, shown);
                self.region_paths
                    .resize_with(self.regions.regions().len(), Default::default);
            }
            Record::RegionEnd { thread, ns, id } => {
                if let Some(ClosedEntry {
                    label,
                    begin_ns,
                    shown: true,
                }) = self.regions.end(thread, ns, id)
                {
                    self.spans
                        .completed(SpanKind::Task, label, thread, begin_ns, ns);
                }
            }
            Record::Tracing { on, ns } => self.windows.tracing(on, ns),
            Record::QueueCreated {
                queue_id,
                device,
                device_handle,
                ns,
            } => {
                let strings = &self.strings;
                let index = (device_handle != 0).then(|| {
                    self.devices.named(device_handle, Some(device), |id| {
                        strings.get(&id).map(|s| s.to_string())
                    })
                });
                self.queues.created(queue_id, device, index, ns)
            }
            Record::DeviceDefined { device, parent } => {
                if device != 0 {
                    self.devices.defined(device, parent);
                }
            }
            Record::QueueDestroyed { queue_id, ns } => self.queues.destroyed(queue_id, ns),
            Record::InstanceEdge(edge) => self.instance_graph.depends(edge),
            Record::InstanceQueue {
                node,
                instance,
                queue_id,
            } => {
                let idx = self.touch(node);
                let queue = queue_id.to_string();
                if !self.graph[idx].queue_ids.contains(&queue) {
                    self.graph[idx].queue_ids.push(queue);
                }
                self.update(idx, node, instance, done, |i| {
                    set_once(&mut i.queue, queue_id)
                });
            }
            Record::GraphMember { graph, node } => {
                self.touch(node);
                self.sycl_graphs.member(graph, node);
            }
            Record::GraphEdge {
                graph,
                source,
                target,
            } => {
                self.touch(source);
                self.touch(target);
                self.sycl_graphs.edge(graph, source, target);
            }
            Record::GraphFinalized {
                graph,
                node,
                thread,
                begin_ns,
                end_ns,
            } => {
                self.touch(node);
                self.sycl_graphs
                    .finalized(graph, node, thread, (begin_ns, end_ns));
            }
        }
    }

    /// The SYCL graphs seen (see [`crate::sycl_graphs`]).
    pub fn sycl_graphs(&self) -> &SyclGraphs {
        &self.sycl_graphs
    }

    /// The instance graph (submissions and the dependencies between them).
    pub fn instance_graph(&self) -> &InstanceGraph {
        &self.instance_graph
    }

    /// The static edge between two nodes, if any.
    pub fn edge_between(&self, source: NodeId, target: NodeId) -> Option<&Edge> {
        let (a, b) = (self.nodes.get(&source)?, self.nodes.get(&target)?);
        self.graph.find_edge(*a, *b).map(|e| &self.graph[e])
    }

    /// Apply records in order and return every instance they finalised.
    pub fn apply_all(&mut self, records: impl IntoIterator<Item = Record>) -> Vec<Completed> {
        let mut done = Vec::new();
        for r in records {
            self.apply(r, &mut done);
        }
        done
    }

    /// Flush every pending instance (oldest first) into `done`: call once the
    /// records have stopped. Calling it again flushes only what came since.
    pub fn finish(&mut self, done: &mut Vec<Completed>) {
        while let Some((key, instance)) = self.pending.pop_oldest() {
            let idx = self.node_index(key.0);
            self.finalise(idx, key, instance, InstanceStatus::Flushed, done);
        }
        let spans = &mut self.spans;
        self.regions.finish(|thread, entry, end_ns| {
            if entry.shown {
                spans.completed(SpanKind::Task, entry.label, thread, entry.begin_ns, end_ns);
            }
        });
    }

    /// Whether a timed `SubmittedTask` of `node` may be applied as a
    /// [`Record::SubmissionAnnounced`] now and a [`Record::TimedTask`] once
    /// its device times are read, with the same outcome: the node is a
    /// defined device command (its instances complete only with their
    /// device times) and none of its instances is pending (none could have
    /// records that complete it early).
    pub fn may_announce(&self, node: NodeId) -> bool {
        self.node(node)
            .is_some_and(|n| n.defined && n.kind.is_device_command() && n.kind.expects_task())
            && !self.pending.has_node(node)
    }

    /// The node with this id.
    #[inline]
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.index_of(id).map(|i| &self.graph[i])
    }

    /// Every node, by id.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        let mut v: Vec<&Node> = self.graph.node_weights().collect();
        v.sort_by_key(|n| n.id);
        v.into_iter()
    }

    /// The edge with this id.
    pub fn edge(&self, id: EdgeId) -> Option<&Edge> {
        self.edges.get(&id).map(|&i| &self.graph[i])
    }

    /// Every edge, by id.
    pub fn edges(&self) -> impl Iterator<Item = &Edge> + '_ {
        let mut v: Vec<&Edge> = self.graph.edge_weights().collect();
        v.sort_by_key(|e| e.id);
        v.into_iter()
    }

    /// The edges into a node (its dependencies), by edge id.
    pub fn edges_into(&self, id: NodeId) -> Vec<&Edge> {
        self.edges_dir(id, petgraph::Direction::Incoming)
    }

    /// The edges out of a node (what waits for it), by edge id.
    pub fn edges_from(&self, id: NodeId) -> Vec<&Edge> {
        self.edges_dir(id, petgraph::Direction::Outgoing)
    }

    fn edges_dir(&self, id: NodeId, dir: petgraph::Direction) -> Vec<&Edge> {
        let Some(&idx) = self.nodes.get(&id) else {
            return Vec::new();
        };
        let mut v: Vec<&Edge> = self
            .graph
            .edges_directed(idx, dir)
            .map(|e| e.weight())
            .collect();
        v.sort_by_key(|e| e.id);
        v
    }

    /// The underlying petgraph graph, for analyses (node and edge weights are
    /// [`Node`] and [`Edge`]; indices are not our ids).
    pub fn petgraph(&self) -> &DiGraph<Node, Edge> {
        &self.graph
    }

    /// Instances still waiting for records, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = (NodeId, &Instance)> + '_ {
        self.pending.iter().map(|((node, _), i)| (node, i))
    }

    /// An interned string, if its String record arrived.
    pub fn string(&self, id: StrId) -> Option<&str> {
        self.strings.get(&id).map(|s| &**s)
    }

    /// An interned string, or `<string N>` when it never arrived.
    fn string_or_id(&self, id: StrId) -> String {
        self.string(id)
            .map_or_else(|| format!("<string {id}>"), str::to_string)
    }

    /// Host waits and barriers, aggregated per label, largest total first.
    pub fn host_spans(&self) -> Vec<HostSpan> {
        self.spans.spans(|id| self.string_or_id(id))
    }

    /// The innermost open host span of `kind` on `thread` (label, begin
    /// ns): what a `SpanEnd` record applied now would close.
    pub fn open_span(&self, kind: SpanKind, thread: u32) -> Option<(StrId, u64)> {
        self.spans.innermost(kind, thread)
    }

    /// Each completed host span (waits, barriers, ITT tasks) as it
    /// happened, in the order they ended: the first
    /// [`MAX_KEPT_SPANS`](crate::spans::MAX_KEPT_SPANS), for a timeline.
    pub fn span_records(&self) -> Vec<SpanRecord> {
        self.spans.kept(|id| self.string_or_id(id))
    }

    /// Every region (path of ITT tasks) entered, by id, with its totals
    /// ([`crate::regions`]).
    pub fn regions(&self) -> &[Region] {
        self.regions.regions()
    }

    /// The region tracker itself: its entries' projections and its counts.
    pub fn region_tracker(&self) -> &RegionTracker {
        &self.regions
    }

    /// Whether `thread` is inside a region now (an ITT task is open on it).
    pub fn in_region(&self, thread: u32) -> bool {
        self.regions.in_region(thread)
    }

    /// The region entry a [`Record::RegionEnd`] on `thread` with `id`
    /// applied now would close (what the trace asks before the model
    /// applies it).
    pub fn closing_region(&self, thread: u32, id: u64) -> Option<ClosedEntry> {
        self.regions.closing_entry(thread, id)
    }

    /// A region's path as text, outermost name first, joined by
    /// [`PATH_SEPARATOR`] (`step/backward`); empty for
    /// [`crate::regions::NO_REGION`]. Kept once every name's string
    /// arrived (until then a missing one reads `<string N>`).
    pub fn region_path(&self, id: RegionId) -> std::borrow::Cow<'_, str> {
        let Some(cell) = id
            .checked_sub(1)
            .and_then(|i| self.region_paths.get(i as usize))
        else {
            return std::borrow::Cow::Borrowed("");
        };
        if let Some(text) = cell.get() {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut names = Vec::new();
        let mut complete = true;
        let mut at = id;
        while let Some(region) = self.regions.region(at) {
            match self.string(region.label) {
                Some(s) => names.push(s.to_owned()),
                None => {
                    complete = false;
                    names.push(format!("<string {}>", region.label));
                }
            }
            at = region.parent;
        }
        names.reverse();
        let text = names.join(&PATH_SEPARATOR.to_string());
        if !complete {
            return std::borrow::Cow::Owned(text);
        }
        std::borrow::Cow::Borrowed(cell.get_or_init(|| text.into_boxed_str()))
    }

    /// The windows in which tracing was on, in order (the last one may
    /// still be open).
    pub fn windows(&self) -> &[Window] {
        self.windows.list()
    }

    /// The devices seen, by identity (a parent before its sub-devices).
    pub fn devices(&self) -> &DeviceTable {
        &self.devices
    }

    /// The index (in [`TaskGraph::devices`]) of the device `instance` of
    /// `node` ran on: its queue's device (queue_create's `sycl_device`),
    /// else its node's `sycl_device`. Direct-path USM commands name no
    /// device in their metadata: their queue says it.
    #[inline]
    pub fn device_index(&self, node: &Node, instance: &Instance) -> Option<usize> {
        instance
            .queue
            .or_else(|| node.queue_id())
            .and_then(|q| self.queues.device_index(q))
            .or_else(|| node.device_handle.and_then(|h| self.devices.index(h)))
    }

    /// The device `instance` of `node` ran on (see [`TaskGraph::device_index`]).
    #[inline]
    pub fn instance_device(&self, node: &Node, instance: &Instance) -> Option<&Device> {
        self.device_index(node, instance)
            .and_then(|d| self.devices.get(d))
    }

    /// The queues seen, by id.
    pub fn queues(&self) -> Vec<Queue> {
        self.queues.queues(|id| self.string_or_id(id))
    }

    /// Counts describing the graph and how its records went.
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        let mut untimed = UntimedCounts::default();
        for n in self.graph.node_weights() {
            untimed.merge(&n.times.untimed);
        }
        Stats {
            records: c.records,
            nodes: self.graph.node_count(),
            undefined_nodes: self.graph.node_weights().filter(|n| !n.defined).count(),
            edges: self.graph.edge_count(),
            submissions: c.submissions,
            instances: c.instances,
            instances_flushed: c.flushed,
            instances_kept: c.kept,
            instances_dropped: c.dropped,
            instances_pending: self.pending.len(),
            pending_evicted: c.evicted,
            untimed,
            unknown_node_records: c.unknown_node_records,
            unknown_edge_records: c.unknown_edge_records,
            duplicate_node_definitions: c.duplicate_node_definitions,
            duplicate_edge_definitions: c.duplicate_edge_definitions,
            duplicate_instance_records: c.duplicate_instance_records,
            late_records: c.late_records,
            unmatched_span_ends: self.spans.unmatched_ends,
            open_spans: self.spans.open_count(),
            queues: self.queues.len(),
            strings: self.strings.len(),
        }
    }

    /// The index of a node, creating a placeholder for an unknown id; counts
    /// the record as naming an unknown node when the node is not defined.
    fn touch(&mut self, id: NodeId) -> NodeIndex {
        let idx = self.node_index(id);
        if !self.graph[idx].defined {
            self.counters.unknown_node_records += 1;
        }
        idx
    }

    /// The index of a known node (the last one looked up is remembered).
    #[inline]
    fn index_of(&self, id: NodeId) -> Option<NodeIndex> {
        if let Some((last, idx)) = self.last_node.get() {
            if last == id {
                return Some(idx);
            }
        }
        let idx = *self.nodes.get(&id)?;
        self.last_node.set(Some((id, idx)));
        Some(idx)
    }

    /// The index of a node, creating a placeholder for an unknown id.
    #[inline]
    fn node_index(&mut self, id: NodeId) -> NodeIndex {
        if let Some(idx) = self.index_of(id) {
            return idx;
        }
        let idx = self.graph.add_node(Node::placeholder(id));
        self.nodes.insert(id, idx);
        idx
    }

    fn define_node(&mut self, info: NodeInfo, done: &mut Vec<Completed>) {
        let id = info.id;
        let existed = self.nodes.contains_key(&id);
        let idx = self.node_index(id);
        let node = &mut self.graph[idx];
        if node.defined {
            self.counters.duplicate_node_definitions += 1;
        }
        node.define(info);
        if let Some(handle) = node.device_handle {
            let name = node.device.as_deref().unwrap_or("");
            self.devices.named_text(handle, name);
        }
        if existed {
            self.recheck(id, done);
        }
    }

    fn define_edge(&mut self, info: EdgeInfo) {
        if let Some(&idx) = self.edges.get(&info.id) {
            self.counters.duplicate_edge_definitions += 1;
            self.graph[idx].merge_metadata(info.metadata);
            return;
        }
        let source = self.touch(info.source);
        let target = self.touch(info.target);
        let id = info.id;
        let mut edge = Edge::from_info(info);
        edge.count += self.early_edge_instances.remove(&id).unwrap_or(0);
        let idx = self.graph.add_edge(source, target, edge);
        self.edges.insert(id, idx);
    }

    /// Apply `f` to the instance `(node, instance)` of the node at `idx`: a
    /// pending one, a late record for a recently finalised one, or a new one.
    /// `f` returns whether the record repeated a value the instance already
    /// had.
    /// A [`Record::SubmittedTask`]: when the instance is new and its node
    /// expects a task (so no part alone completes it), one update with
    /// every part; otherwise the records it stands for, one by one.
    #[allow(clippy::too_many_arguments)]
    fn submitted_task(
        &mut self,
        (node, instance): (NodeId, u64),
        thread: u32,
        submit_ns: u64,
        after: Option<(NodeId, u64)>,
        (begin_ns, end_ns): (u64, u64),
        event: Option<u64>,
        done: &mut Vec<Completed>,
    ) {
        let key = (node, instance);
        let parts = 2 + u64::from(after.is_some()) + u64::from(event.is_some());
        let idx = self.node_index(node);
        let fresh = self.graph[idx].kind.expects_task()
            && self.pending.get(key).is_none()
            && !self.pending.was_finalised(key);
        self.counters.records += parts - 1;
        if !fresh {
            self.submitted(key, thread, submit_ns, after, done);
            self.signal_and_task(key, thread, (begin_ns, end_ns), event, done);
            return;
        }
        if !self.graph[idx].defined {
            // Submitted, Signal and Task name the node (the edge does not).
            self.counters.unknown_node_records += 2 + u64::from(event.is_some());
        }
        self.count_submission(idx, key, after);
        let mut fresh = Instance::new(instance);
        submission_parts(&mut fresh, submit_ns, thread);
        fresh.region = self.region_at_submission(key, thread, submit_ns);
        fresh.event = event;
        task_parts(&mut fresh, thread, begin_ns, end_ns);
        self.insert_fresh(idx, key, fresh, done);
    }

    /// A [`Record::SubmissionAnnounced`]: the submission counted and in the
    /// instance graph, as its `SubmittedTask` would have it; the instance
    /// itself comes with the [`Record::TimedTask`].
    fn announced(&mut self, key: Key, after: Option<(NodeId, u64)>) {
        // Stands for a Submitted and the edge; the TimedTask for the
        // Signal, the Task and the Device record.
        self.counters.records += u64::from(after.is_some());
        let idx = self.touch(key.0);
        self.count_submission(idx, key, after);
    }

    /// A [`Record::TimedTask`]: when nothing named the instance since its
    /// announcement (the usual case), the instance is made whole at once
    /// and, once complete, finalised without entering the pending table;
    /// otherwise its parts are applied one by one (the submission's time
    /// and thread, the signal and task, the device times), as if those
    /// records came now.
    #[allow(clippy::too_many_arguments)]
    fn timed_task(
        &mut self,
        key: Key,
        thread: u32,
        submit_ns: u64,
        (begin_ns, end_ns): (u64, u64),
        event: u64,
        times: DeviceTimes,
        done: &mut Vec<Completed>,
    ) {
        // Stands for a Signal, a Task and a Device record.
        self.counters.records += 2;
        let idx = self.node_index(key.0);
        let fresh = self.graph[idx].kind.expects_task()
            && !self.pending.has_node(key.0)
            && !self.pending.was_finalised(key);
        if !fresh {
            self.update(idx, key.0, key.1, done, |i| {
                submission_parts(i, submit_ns, thread)
            });
            self.signal_and_task(key, thread, (begin_ns, end_ns), Some(event), done);
            let idx = self.touch(key.0);
            self.device(idx, times, done);
            return;
        }
        if !self.graph[idx].defined {
            // The Signal, the Task and the Device record name the node.
            self.counters.unknown_node_records += 3;
        }
        let mut whole = Instance::new(key.1);
        submission_parts(&mut whole, submit_ns, thread);
        whole.event = Some(event);
        task_parts(&mut whole, thread, begin_ns, end_ns);
        whole.device = Some(checked(times));
        if is_complete(&self.graph[idx], &whole) {
            self.finalise(idx, key, whole, InstanceStatus::Complete, done);
        } else {
            self.insert_fresh(idx, key, whole, done);
        }
    }

    /// A `Device` record for the node at `idx`.
    fn device(&mut self, idx: NodeIndex, times: DeviceTimes, done: &mut Vec<Completed>) {
        let times = checked(times);
        self.update(idx, times.node, times.instance, done, |i| {
            set_once(&mut i.device, times)
        });
    }

    /// A `Task` record, preceded by a `Signal` record when `event` is set:
    /// in one update when the signal alone cannot complete the instance
    /// (its node expects a task), duplicates and lateness counted as for
    /// the records one by one.
    fn signal_and_task(
        &mut self,
        (node, instance): (NodeId, u64),
        thread: u32,
        (begin_ns, end_ns): (u64, u64),
        event: Option<u64>,
        done: &mut Vec<Completed>,
    ) {
        let idx = self.touch(node);
        let task = move |i: &mut Instance| task_parts(i, thread, begin_ns, end_ns);
        let Some(event) = event else {
            self.update(idx, node, instance, done, task);
            return;
        };
        if !self.graph[idx].defined {
            // The Signal names the node too.
            self.counters.unknown_node_records += 1;
        }
        if self.graph[idx].kind.expects_task() {
            let mut signal_dup = false;
            let late = self.update(idx, node, instance, done, |i| {
                signal_dup = set_once(&mut i.event, event);
                task(i)
            });
            if signal_dup && !late {
                self.counters.duplicate_instance_records += 1;
            }
            if late {
                self.counters.late_records += 1;
            }
        } else {
            self.update(idx, node, instance, done, |i| set_once(&mut i.event, event));
            self.update(idx, node, instance, done, task);
        }
    }

    /// One more submission of the node at `idx`: counted, and in the
    /// instance graph with the order an in-order queue imposes from its
    /// previous submission `after` (not a data dependency). Inlined into
    /// its callers: every submission is counted.
    #[inline(always)]
    fn count_submission(&mut self, idx: NodeIndex, key: Key, after: Option<(NodeId, u64)>) {
        self.graph[idx].submissions += 1;
        self.counters.submissions += 1;
        self.instance_graph.submitted(key);
        if let Some((source, source_instance)) = after {
            let edge = InstanceEdge {
                source,
                source_instance,
                target: key.0,
                target_instance: key.1,
                queue_order: true,
            };
            self.instance_graph.depends(edge);
        }
    }

    /// A submission (node_create) of the instance `key`, after `after` on
    /// an in-order queue.
    fn submitted(
        &mut self,
        key: Key,
        thread: u32,
        ns: u64,
        after: Option<(NodeId, u64)>,
        done: &mut Vec<Completed>,
    ) {
        let idx = self.touch(key.0);
        self.count_submission(idx, key, after);
        let region = self.region_at_submission(key, thread, ns);
        self.update(idx, key.0, key.1, done, |i| {
            let dup = submission_parts(i, ns, thread);
            if !dup {
                i.region = region;
            }
            dup
        });
    }

    /// The region `thread` is in as it submits the instance `key` at
    /// `ns`, counted in it: none when the instance already had its
    /// submission (a duplicate or a late record) or the thread is in no
    /// region.
    fn region_at_submission(&mut self, key: Key, thread: u32, ns: u64) -> Option<RegionRef> {
        let region = self.regions.current(thread)?;
        let had_submission = self.pending.get(key).is_some_and(|i| i.thread.is_some())
            || self.pending.was_finalised(key);
        if had_submission {
            return None;
        }
        self.regions.submitted(region, ns);
        Some(region)
    }

    /// Applies `f` to the instance (pending, new, or kept after it was
    /// finalised: then the record is late) and finalises it when complete.
    /// `f` returns whether it repeated a value (a duplicate). Returns
    /// whether the record was late.
    fn update(
        &mut self,
        idx: NodeIndex,
        node: NodeId,
        instance: u64,
        done: &mut Vec<Completed>,
        f: impl FnOnce(&mut Instance) -> bool,
    ) -> bool {
        let key = (node, instance);
        if let Some(i) = self.pending.get_mut(key) {
            if f(i) {
                self.counters.duplicate_instance_records += 1;
            }
            if is_complete(&self.graph[idx], i) {
                if let Some(i) = self.pending.remove(key) {
                    self.finalise(idx, key, i, InstanceStatus::Complete, done);
                }
            }
            return false;
        }
        if self.pending.was_finalised(key) {
            self.counters.late_records += 1;
            if let Some(&idx) = self.nodes.get(&node) {
                if let Some(kept) = self.graph[idx]
                    .instances
                    .iter_mut()
                    .rev()
                    .find(|i| i.instance == instance)
                {
                    f(kept);
                }
            }
            return true;
        }
        let mut fresh = Instance::new(instance);
        f(&mut fresh);
        self.insert_fresh(idx, key, fresh, done);
        false
    }

    /// Adds an instance not pending and not finalised before, and
    /// finalises it when it is already complete.
    fn insert_fresh(
        &mut self,
        idx: NodeIndex,
        key: Key,
        fresh: Instance,
        done: &mut Vec<Completed>,
    ) {
        let complete = is_complete(&self.graph[idx], &fresh);
        // Inserted even when complete: a full table flushes its oldest first.
        if let Some((old_key, old)) = self.pending.insert(key, fresh) {
            self.counters.evicted += 1;
            let old_idx = self.node_index(old_key.0);
            self.finalise(old_idx, old_key, old, InstanceStatus::Flushed, done);
        }
        if complete {
            if let Some(i) = self.pending.remove(key) {
                self.finalise(idx, key, i, InstanceStatus::Complete, done);
            }
        }
    }

    /// Check every pending instance of a node again (its kind may have changed
    /// or it may have just been defined).
    fn recheck(&mut self, node: NodeId, done: &mut Vec<Completed>) {
        for key in self.pending.keys_of(node) {
            self.try_complete(key, done);
        }
    }

    /// Finalise a pending instance if it has everything it needs.
    fn try_complete(&mut self, key: Key, done: &mut Vec<Completed>) {
        let (Some(&idx), Some(i)) = (self.nodes.get(&key.0), self.pending.get(key)) else {
            return;
        };
        if is_complete(&self.graph[idx], i) {
            if let Some(i) = self.pending.remove(key) {
                self.finalise(idx, key, i, InstanceStatus::Complete, done);
            }
        }
    }

    /// Fold an instance that left the pending table into its node (at
    /// `idx`: every caller has looked it up already), keep it if there is
    /// room, and hand it to `done`. Inlined (always) into its callers:
    /// each finalised instance passes through it, and the instance it is
    /// handed by value need not be copied into a call's arguments.
    #[inline(always)]
    fn finalise(
        &mut self,
        idx: NodeIndex,
        key: Key,
        mut instance: Instance,
        status: InstanceStatus,
        done: &mut Vec<Completed>,
    ) {
        instance.status = status;
        if let Some(region) = instance.region {
            self.regions.finalised(region, instance.device_span());
        }
        let node = &mut self.graph[idx];
        debug_assert_eq!(node.id, key.0);
        node.times.add(node.kind, &instance);
        if self.counters.kept < self.limits.max_instances {
            node.instances.push(instance);
            self.counters.kept += 1;
        } else {
            self.counters.dropped += 1;
        }
        self.counters.instances += 1;
        if status == InstanceStatus::Flushed {
            self.counters.flushed += 1;
        }
        self.pending.remember(key);
        done.push(Completed {
            node: key.0,
            instance,
        });
    }
}
