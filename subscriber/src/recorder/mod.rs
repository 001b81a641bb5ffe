//! The recorder: the state the callbacks share, and the hot-path work of
//! turning one XPTI callback into one small [`Record`] on the bounded queue.
//!
//! Each public entry reaches the calling thread's state once
//! ([`thread_state::with`]) and hands it down as `t`.
//!
//! Nothing here takes a global lock, does I/O or waits on the device. Node
//! and edge metadata are read once, on first sight; everything per instance
//! is a few integers. When the queue to the collector is full the record is
//! dropped and counted (reported in the summary), never waited for.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use syclgraph_graph::kind::SYCL_GRAPH_HINT;
use syclgraph_graph::record::{
    EdgeInfo, InstanceEdge, Metadata, NodeId, NodeInfo, Record, SpanKind, StrId,
};
use syclgraph_graph::sycl_graphs::INSIDE_REPLAY_UNTIMED;
use ze_bridge::UrEvent;

use crate::clock::monotonic_ns;
use crate::counters::Counters;
use crate::dependencies::{self, Dependencies};
use crate::identity::{
    bound_here, Binding, BoundKey, EdgeOrigin, EdgeTable, FastMap, Interner, NodeFlags, NodeTable,
    Resolved,
};
use crate::inbox::{Inbox, Item};
use crate::sycl_graphs::{
    metadata_number, Appended, Building, CommandClass, GraphBook, RecordedCommand, Unappended,
};
use crate::thread_number;
use crate::thread_state::{self, HeldSubmission, ThreadState};
use crate::timing_slot::{
    is_retained, Timing, TimingSlot, BEHIND_EVENT, NOT_READY_EVENT, NOT_RETAINED_EVENT,
};
use crate::unseen_enqueues::EnqueueFunction;
use crate::xpti::{is_known_file, CText, EventRef, RememberedKey, Xpti};

/// The most events of one `urEventWait` told to the collector
/// ([`Recorder::events_waited`]).
const WAITED_EVENTS_TOLD: usize = 8;

/// The recorder is taking events.
pub const RUNNING: u8 = 0;
/// The exit drain started: new events are counted, not recorded.
pub const FINISHING: u8 = 1;
/// Outputs are written.
pub const FINISHED: u8 = 2;
/// Tracing is stopped (start/stop at run time, [`crate::control`]): new
/// submissions are counted, not recorded; those submitted while it was on
/// are still followed to their end.
pub const PAUSED: u8 = 3;

/// node_create's kind string of a queue's memcpy: in DPC++ (2025.0 and
/// after) the literal `"memory_transfer_node::memcpy"` of `queue_impl`'s
/// memcpy, the only place that passes this text; the scheduler's commands
/// pass other kinds. Told by its address once seen.
static MEMCPY_KIND: RememberedKey = RememberedKey::new(b"memory_transfer_node::memcpy\0");

/// Everything the callbacks share.
pub struct Recorder {
    /// The XPTI framework's functions.
    pub xpti: Xpti,
    nodes: NodeTable,
    edges: EdgeTable,
    strings: Interner,
    inbox: Arc<Inbox>,
    /// Where device timestamps come from, once the collector loaded it.
    pub timestamps: TimingSlot,
    /// [`RUNNING`], [`PAUSED`], [`FINISHING`] or [`FINISHED`]: read here,
    /// written only by the session ([`crate::session`]).
    state: AtomicU8,
    /// What could not be recorded, and how UR calls are followed.
    pub counters: Arc<Counters>,
    /// Turn device profiling on for every queue (`SYCLGRAPH_FORCE_PROFILING`).
    pub force_profiling: bool,
    /// `SYCLGRAPH_MAX_UR_CALLS` (0: no limit).
    pub max_ur_calls: u64,
    /// Event owners and held-back virtual nodes.
    deps: Dependencies,
    /// The queues made in order (`is_inorder` at queue_create): written
    /// at queue_create only, asked by the collector once per queue
    /// ([`Recorder::is_in_order`]; it places each submission in its queue).
    in_order_queues: FastMap<u64, ()>,
    /// SYCL graphs: recorded commands, command buffers, replays.
    pub graphs: GraphBook,
    /// How many times every event owner was forgotten.
    owners_forgotten: AtomicU64,
    /// `SYCLGRAPH_REGION` is set: only threads inside that region record
    /// ([`crate::capture`]).
    capture: bool,
}

impl Recorder {
    /// A recorder sending to `inbox`.
    pub fn new(
        xpti: Xpti,
        inbox: Arc<Inbox>,
        timestamps: TimingSlot,
        counters: Arc<Counters>,
        force_profiling: bool,
        max_ur_calls: u64,
        paused: bool,
    ) -> Recorder {
        Recorder {
            xpti,
            nodes: NodeTable::default(),
            edges: EdgeTable::default(),
            strings: Interner::default(),
            inbox,
            timestamps,
            state: AtomicU8::new(if paused { PAUSED } else { RUNNING }),
            counters,
            force_profiling,
            max_ur_calls,
            deps: Dependencies::default(),
            in_order_queues: FastMap::default(),
            graphs: GraphBook::default(),
            owners_forgotten: AtomicU64::new(0),
            capture: false,
        }
    }

    /// The same recorder, recording only inside the region captured by
    /// name when `capture` (`SYCLGRAPH_REGION`, [`crate::capture`]).
    pub fn capturing(mut self, capture: bool) -> Recorder {
        self.capture = capture;
        self
    }

    /// True when this thread may record now: tracing is on and, when
    /// capturing a region by name, a task of that name is open on it.
    #[inline(always)]
    fn recording_here(&self, t: &ThreadState) -> bool {
        self.running() && (!self.capture || crate::capture::inside(&t.capture))
    }

    /// True while events are recorded; counts the ones that come too late
    /// (not those that come while tracing is stopped).
    #[inline]
    fn accepting(&self) -> bool {
        if self.running() {
            return true;
        }
        self.not_running();
        false
    }

    /// Counts an event that came after the exit drain started.
    #[cold]
    fn not_running(&self) {
        if self.finishing() {
            self.counters.after_finish.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// True once the exit drain started (or in a forked child). Asked after
    /// [`Recorder::running`] said no: a start racing with the callback may
    /// have made it `RUNNING` since, which is then taken as stopped.
    #[inline]
    fn finishing(&self) -> bool {
        matches!(self.state.load(Ordering::Relaxed), FINISHING | FINISHED)
    }

    /// The lifecycle state byte, for its one writer, [`crate::session`]
    /// (nothing else may store into it).
    pub(crate) fn lifecycle_state(&self) -> &AtomicU8 {
        &self.state
    }

    /// True while tracing is stopped (not finishing).
    #[inline]
    pub fn paused(&self) -> bool {
        self.state.load(Ordering::Relaxed) == PAUSED
    }

    /// The submission `event` stands for, for a task or signal callback:
    /// while running, as [`Recorder::submission`]; while stopped, only a
    /// submission bound at its node_create (made while tracing was on, or
    /// marked [`Binding::UNRECORDED`]); none after the exit drain started.
    #[inline]
    fn followed_submission(&self, t: &ThreadState, event: EventRef<'_>) -> Option<Binding> {
        if self.running() {
            return Some(self.submission(t, event));
        }
        self.stopped_submission(t, event)
    }

    #[cold]
    fn stopped_submission(&self, t: &ThreadState, event: EventRef<'_>) -> Option<Binding> {
        if self.finishing() {
            self.counters.after_finish.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        self.nodes.own_submission(t, event)
    }

    /// node_create while tracing is stopped: counted, and the event marked
    /// [`Binding::UNRECORDED`], so that its task and signal are ignored
    /// even if tracing starts again before they come. A scheduler command
    /// made inside a recorded submission's task is still merged into it.
    #[cold]
    fn node_create_stopped(&self, t: &ThreadState, event: EventRef<'_>) {
        if self.finishing() {
            self.counters.after_finish.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if let Some((node, instance)) = dependencies::open_task(t) {
            if !event.has_source_file() {
                let binding = Binding {
                    node,
                    instance,
                    flags: NodeFlags::default(),
                    merged: true,
                    unrecorded: false,
                };
                self.nodes.bind(event.unique_id(), binding);
                // The submission ran through the scheduler: it goes out on
                // its own, never taken for one recorded into a SYCL graph.
                self.release_held_here(t);
                return;
            }
        }
        self.release_held_here(t);
        dependencies::take_current(t);
        t.direct_submission.set(None);
        self.counters.while_stopped.fetch_add(1, Ordering::Relaxed);
        self.nodes.bind_here(t, event, Binding::UNRECORDED);
    }

    /// Queues a record; counts it when the queue is full. Returns whether it was queued.
    #[inline]
    fn send(&self, record: Record) -> bool {
        self.send_item(Item::Record(record))
    }

    /// Queues an item; counts it when the queue is full. Returns whether it was queued.
    #[inline]
    fn send_item(&self, item: Item) -> bool {
        match self.inbox.push(item) {
            Ok(()) => true,
            Err(item) => {
                self.drop_unqueued(item);
                false
            }
        }
    }

    /// Counts and drops an item the full queue refused: out of line, so
    /// that [`Recorder::send_item`] stays small enough to inline and the
    /// record is built where it is pushed from.
    #[cold]
    #[inline(never)]
    fn drop_unqueued(&self, item: Item) {
        self.counters.queue_full.fetch_add(1, Ordering::Relaxed);
        drop(item);
    }

    /// The node of `event`'s code location, announcing it (payload +
    /// metadata) on first sight.
    #[inline]
    fn node(&self, t: &ThreadState, event: EventRef<'_>, kind_hint: &str) -> NodeId {
        match self.nodes.resolve(t, event) {
            Resolved::Known(id) => id,
            Resolved::New(id) => {
                self.define_node(id, event, kind_hint);
                id
            }
        }
    }

    /// The submission an event stands for: bound at its node_create, or
    /// (for events we saw no node_create of) its code location and instance.
    #[inline]
    fn submission(&self, t: &ThreadState, event: EventRef<'_>) -> Binding {
        self.nodes
            .own_submission(t, event)
            .unwrap_or_else(|| Binding {
                node: self.node(t, event, ""),
                instance: event.instance_id(),
                flags: self.nodes.flags(t, event),
                merged: false,
                unrecorded: false,
            })
    }

    #[cold]
    fn define_node(&self, id: NodeId, event: EventRef<'_>, kind_hint: &str) {
        let info = self.node_info(id, event, kind_hint);
        if crate::identity::virtual_event(&info.name).is_some() {
            self.deps.hold_virtual(info);
        } else {
            self.send(Record::NodeDefined(Box::new(info)));
        }
    }

    /// What the runtime tells about the node of `event` (payload, metadata).
    #[cold]
    fn node_info(&self, id: NodeId, event: EventRef<'_>, kind_hint: &str) -> NodeInfo {
        let payload = event.payload();
        let mut metadata = self.metadata(event);
        if !metadata.iter().any(|(k, _)| k == "queue_id") {
            if let Some(queue) = self.xpti.stashed_queue_id() {
                metadata.push(("queue_id".to_owned(), queue.to_string()));
            }
        }
        NodeInfo {
            id,
            uid: event.unique_id(),
            kind_hint: kind_hint.to_owned(),
            name: payload.map(|p| p.name.to_owned()).unwrap_or_default(),
            source_file: payload
                .filter(|p| is_known_file(p.source_file))
                .map(|p| p.source_file.to_owned()),
            source_line: payload.map(|p| p.line).filter(|&l| l != 0),
            source_column: payload.map(|p| p.column).filter(|&c| c != 0),
            metadata,
        }
    }

    fn metadata(&self, event: EventRef<'_>) -> Metadata {
        let mut pairs = Metadata::new();
        self.xpti
            .for_each_metadata(event, |k, v| pairs.push((k.to_owned(), v)));
        pairs.sort();
        pairs
    }

    fn intern(&self, text: &str) -> StrId {
        let (id, new) = self.strings.intern(text);
        if new {
            self.send(Record::String {
                id,
                text: text.into(),
            });
        }
        id
    }

    /// node_create: one submission of a code location. `kind` is the
    /// callback's user_data string (`command_group_node`,
    /// `memory_transfer_node::memcpy`, ...): only read as text when the
    /// node is new.
    pub fn node_create(&self, event: EventRef<'_>, kind: CText) {
        thread_state::with(|t| self.node_create_here(t, event, kind))
    }

    #[inline]
    fn node_create_here(&self, t: &ThreadState, event: EventRef<'_>, kind: CText) {
        if !self.recording_here(t) {
            return self.node_create_stopped(t, event);
        }
        if let Some(building) = t.building.get() {
            // The graph's commands; not the scheduler's own (a buffer's
            // allocation made while the graph is built).
            if kind.starts_with(b"command_group_node\0") {
                return self.graph_member(t, building, event, kind);
            }
        }
        if let Some((node, instance)) = dependencies::open_task(t) {
            // Decided from the payload itself: looking the command up in the
            // node table would give it an id that is then never defined.
            if !event.has_source_file() {
                // A scheduler command made inside a user submission's task
                // (a memcpy's `copy usm`): one user operation, one node.
                let flags = NodeFlags::default();
                let binding = Binding {
                    node,
                    instance,
                    flags,
                    merged: true,
                    unrecorded: false,
                };
                self.nodes.bind(event.unique_id(), binding);
                return;
            }
        }
        self.release_held_here(t);
        let queue = self.xpti.stashed_queue_id().unwrap_or(0);
        let (resolved, instance, flags) = self.nodes.submit(t, event, queue);
        let node = match resolved {
            Resolved::Known(id) => id,
            Resolved::New(id) => {
                self.define_node(id, event, kind.to_str());
                id
            }
        };
        // Only the next UR USM call on this thread may be this submission's.
        // A memcpy, the most common, is told by one comparison and takes
        // the short way here; every other command the way out of line.
        let binding = Binding {
            node,
            instance,
            flags,
            merged: false,
            unrecorded: false,
        };
        if kind.is(&MEMCPY_KIND) && flags.virtual_event.is_none() {
            let submission = (node, instance);
            // A direct-path command's task and output event come on this
            // thread inside this call, and no edge_create names its event
            // (it is no scheduler command): the thread keeps the binding,
            // the shared table is not written.
            self.nodes.keep_here(t, event, binding);
            dependencies::set_current(t, submission);
            t.direct_submission.set(Some(submission));
            let held = HeldSubmission {
                submission,
                thread: thread_number::current(t),
                ns: monotonic_ns(),
                class: Some(CommandClass::Copy),
            };
            self.send_instance_queue(node, instance, queue, flags.first_queue);
            // It runs its task on this thread inside this very call: it
            // goes out with the task's end.
            t.held.set(Some(held));
            return;
        }
        self.node_create_other(t, event, kind, binding, queue);
    }

    /// The rest of [`Recorder::node_create_here`] for every submission but
    /// a memcpy's (out of line: the memcpy's way stays short), given its
    /// binding (node, instance, flags) and its queue (0: unknown).
    #[inline(never)]
    fn node_create_other(
        &self,
        t: &ThreadState,
        event: EventRef<'_>,
        kind: CText,
        binding: Binding,
        queue: u64,
    ) {
        let Binding {
            node,
            instance,
            flags,
            ..
        } = binding;
        // Only the next UR USM call on this thread may be this submission's.
        let direct = kind.starts_with(b"memory_transfer_node::");
        if direct && flags.virtual_event.is_none() {
            // As a memcpy's: the thread keeps the binding.
            self.nodes.keep_here(t, event, binding);
        } else {
            self.nodes.bind_here(t, event, binding);
        }
        if flags.virtual_event.is_some() {
            return;
        }
        dependencies::set_current(t, (node, instance));
        let class = if direct {
            CommandClass::of_recorded(kind)
        } else {
            None
        };
        let direct = direct.then_some((node, instance));
        t.direct_submission.set(direct);
        let held = HeldSubmission {
            submission: (node, instance),
            thread: thread_number::current(t),
            ns: monotonic_ns(),
            class,
        };
        self.send_instance_queue(node, instance, queue, flags.first_queue);
        if direct.is_some() {
            // A direct-path command runs its task on this thread inside
            // this very call: it goes out with the task's end.
            t.held.set(Some(held));
        } else {
            self.send_submitted(held);
        }
    }

    /// Sends a submission on its own (the collector fills in its in-order
    /// queue's previous submission, [`crate::queue_order`]).
    fn send_submitted(&self, held: HeldSubmission) {
        let ((node, instance), thread, ns) = (held.submission, held.thread, held.ns);
        self.send(Record::Submitted {
            node,
            instance,
            thread,
            ns,
        });
    }

    /// Sends the submission this thread kept back, if any: called by every
    /// callback that is not that submission's own task or output event,
    /// and by the exit path, so nothing waits past the submitting call.
    pub fn release_held(&self) {
        thread_state::with(|t| self.release_held_here(t))
    }

    /// [`Recorder::release_held`] for the thread whose state `t` is.
    #[inline]
    fn release_held_here(&self, t: &ThreadState) {
        if let Some(held) = t.held.take() {
            self.send_released(held);
        }
    }

    /// [`Recorder::send_submitted`] for [`Recorder::release_held_here`],
    /// out of line: the callbacks that release nothing (a memcpy's
    /// node_create: its task's end sent the one before) stay short.
    #[cold]
    #[inline(never)]
    fn send_released(&self, held: HeldSubmission) {
        self.send_submitted(held);
    }

    /// edge_create: a dependency between two submissions.
    pub fn edge_create(&self, event: EventRef<'_>) {
        if !self.running() && self.finishing() {
            self.not_running();
            return;
        }
        thread_state::with(|t| self.release_held_here(t));
        let ends = (
            self.nodes.submission(event.source_id()),
            self.nodes.submission(event.target_id()),
        );
        let (Some(source), Some(target)) = ends else {
            self.counters
                .unknown_edge_end
                .fetch_add(1, Ordering::Relaxed);
            return;
        };
        if source.unrecorded || target.unrecorded {
            // Kept only when both ends were recorded (in any window).
            self.counters
                .edges_while_stopped
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        if let Some(virtual_event) = source.flags.virtual_event {
            // The command that produced the event the virtual node stands
            // for is the real dependency: the collector knows it
            // ([`crate::event_owners`]).
            self.send_item(Item::FromVirtual {
                virtual_node: (source.node, source.instance),
                event: virtual_event as u64,
                target: (target.node, target.instance),
                metadata: Box::new(self.metadata(event)),
            });
            return;
        }
        if source.node == target.node && source.instance == target.instance {
            return;
        }
        let ends = (
            (source.node, source.instance),
            (target.node, target.instance),
        );
        self.edge(ends, EdgeOrigin::Runtime, || self.metadata(event));
    }

    /// The edge from a `virtual_node[<event>]` to `target`, on the
    /// collector ([`Item::FromVirtual`]): from `owner`, the submission
    /// whose device event it stands for, when known; else from the virtual
    /// node, defined now if it was not yet. Its records go to `emit`.
    pub fn virtual_edge(
        &self,
        (virtual_node, target, metadata): ((NodeId, u64), (NodeId, u64), Metadata),
        owner: Option<(NodeId, u64)>,
        mut emit: impl FnMut(Record),
    ) {
        let mut metadata = metadata;
        let source = match owner {
            Some(owner) => {
                metadata.push(("resolved_from".to_owned(), "virtual_node".to_owned()));
                owner
            }
            None => {
                if let Some(info) = self.deps.release_virtual(virtual_node.0) {
                    emit(Record::NodeDefined(info));
                }
                virtual_node
            }
        };
        if source == target {
            return;
        }
        self.edge_records((source, target), EdgeOrigin::Runtime, || metadata, emit);
    }

    /// Sends a new edge's definition, or one more creation of a known one.
    fn edge(
        &self,
        ends: ((NodeId, u64), (NodeId, u64)),
        origin: EdgeOrigin,
        metadata: impl FnOnce() -> Metadata,
    ) {
        // The edge's ends must reach the instance graph before the edge
        // (released above, in edge_create).
        self.edge_records(ends, origin, metadata, |record| {
            self.send(record);
        });
    }

    /// The records of an edge's instance, and of its definition when new
    /// (or one more creation of a known one), given to `emit`: sent by the
    /// program's threads, applied by the collector for the edges it
    /// resolves ([`crate::event_owners`]).
    pub fn edge_records(
        &self,
        ((source, source_instance), (target, target_instance)): ((NodeId, u64), (NodeId, u64)),
        origin: EdgeOrigin,
        metadata: impl FnOnce() -> Metadata,
        mut emit: impl FnMut(Record),
    ) {
        emit(Record::InstanceEdge(InstanceEdge {
            source,
            source_instance,
            target,
            target_instance,
            queue_order: false,
        }));
        let (edge, first_origin, new) = self.edges.resolve(source, target, origin);
        if new {
            let info = EdgeInfo {
                id: edge,
                uid: 0,
                source,
                target,
                metadata: metadata(),
            };
            emit(Record::EdgeDefined(Box::new(info)));
        } else if first_origin == origin {
            emit(Record::EdgeInstance {
                edge,
                instance: target_instance,
            });
        }
    }

    /// Sends the queue of this submission when it is not its node's first
    /// queue (before the submission: the collector places the submission
    /// in that queue, [`crate::queue_order`]).
    #[inline]
    fn send_instance_queue(&self, node: NodeId, instance: u64, queue: u64, first_queue: u64) {
        if queue != first_queue && queue != 0 {
            self.send(Record::InstanceQueue {
                node,
                instance,
                queue_id: queue,
            });
        }
    }

    /// Whether the queue `queue_id` was made in order (`is_inorder` at its
    /// queue_create): asked by the collector, once per queue.
    pub fn is_in_order(&self, queue_id: u64) -> bool {
        self.in_order_queues.contains_key(&queue_id)
    }

    /// A UR enqueue call's event wait list: dependencies of the submission
    /// this thread made last, when the call is that submission's (same code
    /// location). Events no traced command produced are left out.
    pub fn wait_list(&self, call: Option<EventRef<'_>>, events: impl Iterator<Item = usize>) {
        if !self.accepting() {
            return;
        }
        thread_state::with(|t| {
            let Some((node, instance)) = dependencies::current(t) else {
                return;
            };
            if call.and_then(|c| self.nodes.find(c)) != Some(node) {
                return;
            }
            self.wait_list_edges(t, (node, instance), events);
        })
    }

    /// An enqueue's event wait list, seen by a UR hook
    /// ([`crate::ur_hooks`]): dependencies of the command being enqueued.
    /// That is the task open on this thread (the scheduler enqueues a
    /// command between its task_begin and task_end), else the submission
    /// this thread made last, which only its first enqueue may claim.
    /// An enqueue with neither (no node came for it) is counted under
    /// `function`.
    /// `t` is this thread's state, which the hook reached once for its
    /// whole call.
    #[inline]
    pub fn enqueue_wait_list_here(
        &self,
        t: &ThreadState,
        function: EnqueueFunction,
        events: impl ExactSizeIterator<Item = usize>,
    ) {
        let last_submission = dependencies::take_current(t);
        if last_submission.is_none() {
            self.count_if_unseen(function, !dependencies::in_any_task(t));
        }
        if events.len() == 0 {
            // Nothing to wait for (every command on an in-order queue
            // the runtime orders itself): only the claim above.
            return;
        }
        self.enqueue_wait_list_edges(t, last_submission, events);
    }

    /// The edges of an enqueue's non-empty wait list, to the task open on
    /// this thread or else to `last_submission` (see
    /// [`Recorder::enqueue_wait_list`], whose common case, an empty list,
    /// stays small enough to inline into the UR hooks).
    #[inline(never)]
    fn enqueue_wait_list_edges(
        &self,
        t: &ThreadState,
        last_submission: Option<(NodeId, u64)>,
        events: impl Iterator<Item = usize>,
    ) {
        let Some(submission) = dependencies::open_task(t).or(last_submission) else {
            return;
        };
        if !self.running() {
            return;
        }
        self.wait_list_edges(t, submission, events);
    }

    /// A `urEnqueueNativeCommandExp` with an output event, before it runs
    /// on this thread: the command being enqueued (the task open here,
    /// else the submission this thread made last) is a native command. Its
    /// node is told so once per thread ([`crate::native_commands`]).
    #[cold]
    pub fn native_command_here(&self, t: &ThreadState) {
        if !self.running() {
            return;
        }
        let Some((node, _)) = dependencies::open_task(t).or_else(|| dependencies::current(t))
        else {
            return;
        };
        if t.last_native.replace(Some(node)) != Some(node) {
            self.send(Record::NodeMetadata {
                node,
                metadata: Box::new(crate::native_commands::native_metadata()),
            });
        }
    }

    /// Counts an enqueue of `function` that no node accompanied
    /// (`unseen`), while recording.
    #[cold]
    fn count_if_unseen(&self, function: EnqueueFunction, unseen: bool) {
        if unseen && self.running() {
            self.counters.unseen_enqueues.count(function);
        }
    }

    /// A UR enqueue call seen on `ur.call.debug` (before the hooks, or
    /// without them): counted when no node accompanied it, that is no task
    /// is open on this thread and the submission this thread made last is
    /// not at the call's code location.
    pub fn layer_enqueue(&self, function: EnqueueFunction, call: Option<EventRef<'_>>) {
        let (in_task, current) =
            thread_state::with(|t| (dependencies::in_any_task(t), dependencies::current(t)));
        if in_task {
            return;
        }
        let accompanied =
            current.is_some_and(|(node, _)| call.and_then(|c| self.nodes.find(c)) == Some(node));
        self.count_if_unseen(function, !accompanied);
    }

    /// True while events are recorded (no counting).
    #[inline]
    pub fn running(&self) -> bool {
        self.state.load(Ordering::Relaxed) == RUNNING
    }

    /// Sends each event of a wait list for the collector to resolve to
    /// its submission ([`Item::WaitsFor`]), after the submission itself
    /// (the edge's ends reach the instance graph before the edge).
    fn wait_list_edges(
        &self,
        t: &ThreadState,
        target: (NodeId, u64),
        events: impl Iterator<Item = usize>,
    ) {
        let mut events = events.peekable();
        if events.peek().is_none() {
            return;
        }
        self.release_held_here(t);
        for event in events {
            if event != 0 {
                self.send_item(Item::WaitsFor {
                    target,
                    event: event as u64,
                });
            }
        }
    }

    /// The edge from `owner` (the submission whose device event `event`
    /// is) to `target`, which waits for it: on the collector
    /// ([`Item::WaitsFor`]). Its records go to `emit`.
    pub fn wait_list_edge(
        &self,
        owner: (NodeId, u64),
        target: (NodeId, u64),
        event: u64,
        emit: impl FnMut(Record),
    ) {
        if owner == target {
            return;
        }
        let metadata = || {
            vec![
                ("event".to_owned(), format!("{event:#x}")),
                ("origin".to_owned(), "ur_wait_list".to_owned()),
            ]
        };
        self.edge_records((owner, target), EdgeOrigin::WaitList, metadata, emit);
    }

    /// The submission whose device event `event` is, when that event was
    /// not retained for timing (so no record carries it; see
    /// [`crate::event_owners`]).
    pub fn untimed_owner(&self, event: u64) -> Option<(NodeId, u64)> {
        self.deps.owner(event as usize)
    }

    /// Counts the forgettings of every event owner ([`Recorder::forget_event_owners`]):
    /// the collector forgets its own when this changes.
    pub fn owners_forgotten(&self) -> u64 {
        self.owners_forgotten.load(Ordering::Acquire)
    }

    /// task_begin (`begin`) or task_end of an instance.
    #[inline(always)]
    pub fn task(&self, begin: bool, event: EventRef<'_>) {
        thread_state::with(|t| self.task_here(t, begin, event))
    }

    #[inline(always)]
    fn task_here(&self, t: &ThreadState, begin: bool, event: EventRef<'_>) {
        if self.running() && (self.held_task(t, begin, event) || self.bound_task(t, begin, event)) {
            return;
        }
        self.task_general(t, begin, event);
    }

    /// The task of the submission this thread bound last and holds nothing
    /// back for (a kernel's: node_create, task_begin, the UR launch,
    /// signal, task_end, all on this thread), taken as
    /// [`Recorder::task_general`] takes it, without its general matching:
    /// the binding is this thread's last (no shared table), the begin finds
    /// no task open, the end finds this submission's. Returns false, having
    /// changed nothing, in any other case: the general path then takes it.
    #[inline(always)]
    fn bound_task(&self, t: &ThreadState, begin: bool, event: EventRef<'_>) -> bool {
        let Some(binding) = bound_here(t, event) else {
            return false;
        };
        if binding.merged || binding.unrecorded || t.held.get().is_some() {
            return false;
        }
        let submission = (binding.node, binding.instance);
        let open = t.open_task.get();
        // The general path numbers the thread here when it has no number.
        let thread = thread_number::current(t);
        if begin {
            if open.is_some() {
                return false;
            }
            t.open_task.set(Some(dependencies::OpenTask {
                submission,
                begin_ns: monotonic_ns(),
                signalled: None,
            }));
            return true;
        }
        let Some(open) = open.filter(|o| o.submission == submission) else {
            return false;
        };
        self.bound_task_end(t, open, thread);
        true
    }

    /// The end of [`Recorder::bound_task`]'s task `open` on thread number
    /// `thread`: as the general path's end of a task with no submission
    /// held back (out of line: the begin stays small).
    #[inline(never)]
    fn bound_task_end(&self, t: &ThreadState, open: dependencies::OpenTask, thread: u32) {
        let ns = monotonic_ns();
        self.nodes.forget_here(t);
        dependencies::end_task(t);
        self.send_task(open.submission, thread, (open.begin_ns, ns), open.signalled);
    }

    /// [`Recorder::task`] for every task but the held direct-path
    /// submission's (out of line: the common case stays small).
    #[inline(never)]
    fn task_general(&self, t: &ThreadState, begin: bool, event: EventRef<'_>) {
        let Some(binding) = self.followed_submission(t, event) else {
            return;
        };
        if binding.merged || binding.unrecorded {
            if binding.merged {
                // Its UR enqueue (on a thread of the runtime's, once what
                // it waited for is done) has a node: the merged one.
                dependencies::set_merged_task(t, begin);
            }
            return;
        }
        let (node, instance) = (binding.node, binding.instance);
        let held = t.held.take();
        let held = match held {
            Some(h) if h.submission == (node, instance) => Some(h),
            other => {
                if let Some(h) = other {
                    self.send_submitted(h);
                }
                None
            }
        };
        let (thread, ns) = (thread_number::current(t), monotonic_ns());
        if begin {
            // Its own task begins: the submission stays kept back.
            t.held.set(held);
            // The begin waits for the end, to go out as one record.
            let task = dependencies::OpenTask {
                submission: (node, instance),
                begin_ns: ns,
                signalled: None,
            };
            if let Some(unended) = dependencies::begin_task(t, task) {
                self.send_task_begin(unended, thread);
            }
            return;
        }
        self.nodes.forget_here(t);
        match (dependencies::end_task(t), held) {
            (Some(open), Some(held))
                if open.submission == (node, instance)
                    && open.signalled.is_none()
                    && self.recorded_into_graph(t, &held, event) => {}
            (Some(open), Some(held)) if open.submission == (node, instance) => {
                let record = submitted_task(&held, &open, ns);
                self.send_with_event(record, open.signalled.unwrap_or(0));
            }
            (Some(open), None) if open.submission == (node, instance) => {
                self.send_task(
                    (node, instance),
                    thread,
                    (open.begin_ns, ns),
                    open.signalled,
                );
            }
            (other, held) => {
                if let Some(h) = held {
                    self.send_submitted(h);
                }
                if let Some(unended) = other {
                    self.send_task_begin(unended, thread);
                }
                self.send(Record::TaskEnd {
                    node,
                    instance,
                    thread,
                    ns,
                });
            }
        }
    }

    /// The task of the direct-path submission this thread holds, in the
    /// order the runtime sends it (node_create, task_begin, the USM call,
    /// task_end, all on this thread in one call): one look at the thread's
    /// state per callback, no shared table, a clock read at the task's
    /// begin and end as on the general path. Returns false,
    /// having changed nothing, for any other event or order: the general
    /// path in [`Recorder::task`] then takes it.
    #[inline(always)]
    fn held_task(&self, t: &ThreadState, begin: bool, event: EventRef<'_>) -> bool {
        let Some(held) = held_for(t, event) else {
            return false;
        };
        let open = t.open_task.get();
        if begin {
            if open.is_some() {
                return false;
            }
            t.open_task.set(Some(dependencies::OpenTask {
                submission: held.submission,
                begin_ns: monotonic_ns(),
                signalled: None,
            }));
            return true;
        }
        let Some(open) = open.filter(|o| o.submission == held.submission) else {
            return false;
        };
        // The USM call was made and gave its event: the submission was
        // not recorded into a SYCL graph (see `recorded_into_graph`).
        let Some(event) = open.signalled else {
            return self.held_task_end_without_event(t);
        };
        forget_held(t);
        // Built where it is sent: no intermediate copy of the record.
        self.send_with_event(submitted_task(&held, &open, monotonic_ns()), event);
        true
    }

    /// The end of the held direct-path submission's task when no device
    /// event came (the thread's held submission and open task, which
    /// [`Recorder::held_task`] matched to the event and to each other):
    /// with device timing off (no UR hooks) the submission goes out here,
    /// without an event, as the general path would send it; a command that
    /// may have been recorded into a SYCL graph instead is left to the
    /// general path (false), which alone tells the two apart. Out of line,
    /// so that `held_task`'s timed case stays small enough to inline into
    /// the callback (given only the thread's state: what `held_task` read
    /// would be passed through memory), and not matching them again.
    #[inline(never)]
    fn held_task_end_without_event(&self, t: &ThreadState) -> bool {
        let (Some(held), Some(open)) = (t.held.get(), t.open_task.get()) else {
            return false;
        };
        if self.may_be_recorded_into_graph(t, &held) {
            return false;
        }
        forget_held(t);
        self.send(submitted_task(&held, &open, monotonic_ns()));
        true
    }

    /// The begin of a task whose end did not follow on this thread (and
    /// the signal kept with it).
    fn send_task_begin(&self, task: dependencies::OpenTask, thread: u32) {
        let (node, instance) = task.submission;
        self.send(Record::TaskBegin {
            node,
            instance,
            thread,
            ns: task.begin_ns,
        });
        if let Some(event) = task.signalled {
            let record = Record::Signal {
                node,
                instance,
                event,
            };
            self.send_with_event(record, event);
        }
    }

    /// Sends a record carrying a retained device event (0: none); when the
    /// queue is full the event is released again (nobody will read it).
    #[inline(always)]
    fn send_with_event(&self, record: Record, event: u64) {
        if !self.send(record) && is_retained(event) {
            self.release_unsent(event);
        }
    }

    /// Sends a task that ran from `begin_ns` to `end_ns` on thread number
    /// `thread`: with its submission's device event when it was signalled
    /// (released again if the full queue refuses it).
    #[inline]
    fn send_task(
        &self,
        (node, instance): (NodeId, u64),
        thread: u32,
        (begin_ns, end_ns): (u64, u64),
        signalled: Option<u64>,
    ) {
        match signalled {
            Some(event) => {
                let record = Record::SignalledTask {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns,
                    event,
                };
                self.send_with_event(record, event);
            }
            None => {
                self.send(Record::Task {
                    node,
                    instance,
                    thread,
                    begin_ns,
                    end_ns,
                });
            }
        }
    }

    /// Releases the retained device event of a record the full queue refused.
    #[cold]
    fn release_unsent(&self, event: u64) {
        if let Timing::Ready(source) = self.timestamps.state() {
            source.release(UrEvent(event as usize));
        }
    }

    /// signal: the instance's device event (`ur_event_handle_t`, may be null).
    pub fn signal(&self, event: EventRef<'_>, device_event: usize) {
        thread_state::with(|t| {
            // Mostly the submission this thread bound last, while running:
            // what `followed_submission` would find first, without its call.
            let bound = if self.running() {
                bound_here(t, event)
            } else {
                None
            };
            let Some(binding) = bound.or_else(|| self.followed_submission(t, event)) else {
                return;
            };
            self.release_held_here(t);
            if binding.unrecorded {
                return;
            }
            self.device_event(t, binding.node, binding.instance, device_event);
        })
    }

    /// The output event of a UR USM call: the device event of the
    /// direct-path submission in progress on this thread, if any.
    pub fn direct_command_event(&self, device_event: usize) {
        thread_state::with(|t| self.direct_command_event_here(t, device_event))
    }

    /// [`Recorder::direct_command_event`] with this thread's state `t`,
    /// which the UR hook reached once for its whole call.
    #[inline]
    pub fn direct_command_event_here(&self, t: &ThreadState, device_event: usize) {
        let Some((node, instance)) = t.direct_submission.take() else {
            return;
        };
        // Set only for a recorded submission: followed while stopped too.
        if !self.finishing() {
            self.device_event(t, node, instance, device_event);
        }
    }

    /// `urEventWait` returned at `seen_ns`: the host has seen `events`
    /// complete. Each is told to the collector ([`Item::WaitReturned`]),
    /// after this thread's submission kept back (it may be the one
    /// waited on), so that the event is read with this sighting. At most
    /// the last [`WAITED_EVENTS_TOLD`] of a list: a wait on many events is
    /// the runtime's own (a host task's dependencies, a queue's events),
    /// and the newest of them bound the clock best.
    pub fn events_waited(&self, events: impl ExactSizeIterator<Item = usize>, seen_ns: u64) {
        if self.finishing() || !matches!(self.timestamps.state(), Timing::Ready(_)) {
            return;
        }
        thread_state::with(|t| self.release_held_here(t));
        let skip = events.len().saturating_sub(WAITED_EVENTS_TOLD);
        for event in events.skip(skip) {
            if event != 0 {
                self.send_item(Item::WaitReturned {
                    event: event as u64,
                    seen_ns,
                });
            }
        }
    }

    /// Retains a command's device event for the collector to time, and
    /// tells the collector (a null event: nothing to time). The first
    /// event that comes before the timestamp source is ready waits for it
    /// (once per process, bounded: see [`TimingSlot::wait_until_filled`]).
    ///
    /// The common case, timing ready and the event retained while its
    /// submission's task is open on this thread, is this inline path; every
    /// other case is [`Recorder::device_event_otherwise`].
    #[inline]
    fn device_event(&self, t: &ThreadState, node: NodeId, instance: u64, device_event: usize) {
        if device_event != 0 && !self.inbox.is_behind() {
            if let Timing::Ready(source) = self.timestamps.state() {
                if source.retain(UrEvent(device_event)) {
                    // One in, one out: events the collector has read are
                    // released here, where the runtime would release them
                    // (crate::release_queue).
                    self.inbox.to_release().release_some(source.as_ref());
                    // Usually the signal comes while the submission's task
                    // runs on this thread: it then goes out with the task's
                    // end, one record.
                    if !dependencies::signal_in_task(t, (node, instance), device_event as u64) {
                        self.send_signal((node, instance), device_event, Some(source));
                    }
                    return;
                }
                return self.device_event_otherwise(t, node, instance, device_event, true);
            }
        }
        self.device_event_otherwise(t, node, instance, device_event, false)
    }

    /// [`Recorder::device_event`] for a null event, a timing source not
    /// ready (loading or unavailable), a collector behind
    /// ([`crate::inbox::Inbox::is_behind`]: the event is not kept), or an
    /// event the runtime refused to retain (`retain_failed`: it was tried
    /// once already).
    #[cold]
    #[inline(never)]
    fn device_event_otherwise(
        &self,
        t: &ThreadState,
        node: NodeId,
        instance: u64,
        device_event: usize,
        retain_failed: bool,
    ) {
        let mut retained = None;
        let mut event = 0;
        if device_event != 0 {
            let mut timing = self.timestamps.state();
            if matches!(timing, Timing::Loading) {
                timing = self.timestamps.wait_until_filled(|| self.inbox.wake());
            }
            match timing {
                Timing::Ready(_) if self.inbox.is_behind() => {
                    self.counters.behind.fetch_add(1, Ordering::Relaxed);
                    event = BEHIND_EVENT;
                }
                Timing::Ready(source) if !retain_failed && source.retain(UrEvent(device_event)) => {
                    // Its record carries it: the collector learns its
                    // owner from it (crate::event_owners).
                    retained = Some(source);
                    event = device_event as u64;
                }
                Timing::Ready(_) => {
                    self.counters.not_retained.fetch_add(1, Ordering::Relaxed);
                    event = NOT_RETAINED_EVENT;
                }
                Timing::Loading => {
                    self.counters
                        .before_timing_ready
                        .fetch_add(1, Ordering::Relaxed);
                    event = NOT_READY_EVENT;
                }
                Timing::Unavailable => {}
            }
            if retained.is_none() {
                self.deps.set_owner(device_event, (node, instance));
            }
        }
        if dependencies::signal_in_task(t, (node, instance), event) {
            return;
        }
        self.send_signal((node, instance), event as usize, retained);
    }

    /// Sends a submission's device event (`event`, retained from `retained`
    /// unless `None`) on its own; releases it again when the queue is full.
    #[cold]
    #[inline(never)]
    fn send_signal(
        &self,
        (node, instance): (NodeId, u64),
        event: usize,
        retained: Option<&Arc<dyn ze_bridge::TimestampSource>>,
    ) {
        let queued = self.send(Record::Signal {
            node,
            instance,
            event: event as u64,
        });
        if let (false, Some(source)) = (queued, retained) {
            source.release(UrEvent(event));
        }
    }

    /// wait/barrier begin (`begin`) or end. The label is what the runtime
    /// says it waits on (`queue.wait`, `event.wait`; the address in brackets
    /// is left out) and, when known, where in the source.
    pub fn span(&self, kind: SpanKind, begin: bool, what: &str, event: Option<EventRef<'_>>) {
        if !self.accepting() {
            return;
        }
        let Some(thread) = thread_state::with(|t| {
            if !self.recording_here(t) {
                // Outside the captured region: not this thread's window.
                return None;
            }
            self.release_held_here(t);
            Some(thread_number::current(t))
        }) else {
            return;
        };
        let ns = monotonic_ns();
        if begin {
            let what = what.split('[').next().unwrap_or(what);
            let label = match event.and_then(|e| e.payload()) {
                Some(p) if p.line != 0 && !p.source_file.is_empty() => {
                    format!("{what} {}:{}", p.source_file, p.line)
                }
                _ => what.to_owned(),
            };
            let label = self.intern(&label);
            self.send(Record::SpanBegin {
                kind,
                label,
                thread,
                ns,
            });
        } else {
            self.send(Record::SpanEnd { kind, thread, ns });
        }
    }

    /// Interns an ITT task's name (sent once).
    pub fn intern_label(&self, text: &str) -> StrId {
        self.intern(text)
    }

    /// An ITT task began on this thread (`id`: 0 for a nested task, the
    /// overlapped task's id otherwise): sent whether tracing is on or
    /// not (a command's region is the tasks open on its thread), shown on
    /// the timeline when this thread records now. The thread's submission
    /// kept back goes first: it was made before the task.
    pub fn region_begin(&self, label: StrId, id: u64) {
        if self.finishing() {
            return;
        }
        thread_state::with(|t| {
            self.release_held_here(t);
            let shown = self.recording_here(t);
            self.send(Record::RegionBegin {
                thread: thread_number::current(t),
                label,
                ns: monotonic_ns(),
                id,
                shown,
            });
        })
    }

    /// An ITT task ended on this thread (`id` as for
    /// [`Recorder::region_begin`]).
    pub fn region_end(&self, id: u64) {
        if self.finishing() {
            return;
        }
        thread_state::with(|t| {
            self.release_held_here(t);
            self.send(Record::RegionEnd {
                thread: thread_number::current(t),
                ns: monotonic_ns(),
                id,
            });
        })
    }

    /// Where this thread is in the captured region, after an ITT task
    /// began on it (`named`: the task has the captured name): true when
    /// it just entered it ([`crate::capture::begin`]).
    pub fn capture_begin(&self, named: bool, id: u64) -> bool {
        self.capture && thread_state::with(|t| crate::capture::begin(&t.capture, named, id))
    }

    /// As [`Recorder::capture_begin`] after an ITT task ended: true when
    /// this thread just left the captured region.
    pub fn capture_end(&self, id: u64) -> bool {
        self.capture && thread_state::with(|t| crate::capture::end(&t.capture, id))
    }

    /// Whether a region is captured by name (`SYCLGRAPH_REGION`).
    pub fn captures(&self) -> bool {
        self.capture
    }

    /// queue_create (`created`) or queue_destroy.
    pub fn queue(&self, created: bool, event: Option<EventRef<'_>>) {
        // Followed while stopped too (rare; in-order queues must be known).
        if !self.running() && self.finishing() {
            self.not_running();
            return;
        }
        thread_state::with(|t| self.release_held_here(t));
        let Some(event) = event else {
            self.counters.without_event.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let metadata = self.metadata(event);
        let get = |key: &str| {
            metadata
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let queue_id = get("queue_id").and_then(|v| v.parse().ok()).unwrap_or(0);
        let ns = monotonic_ns();
        if created && get("is_inorder") == Some("true") {
            self.in_order_queues.insert(queue_id, ());
        }
        if let (true, Some(handle)) = (created, get("queue_handle").and_then(metadata_number)) {
            self.graphs.queue_created(handle, queue_id);
        }
        if created {
            let device = self.intern(get("sycl_device_name").unwrap_or(""));
            let device_handle = get("sycl_device")
                .and_then(syclgraph_graph::node::parse_handle)
                .unwrap_or(0);
            self.send(Record::QueueCreated {
                queue_id,
                device,
                device_handle,
                ns,
            });
        } else {
            self.send(Record::QueueDestroyed { queue_id, ns });
            // Its context may go with it, and an event released after its
            // context can crash the program (Level Zero): the read events
            // still queued for release go now.
            if let Timing::Ready(source) = self.timestamps.state() {
                self.inbox.to_release().release_all(source.as_ref());
            }
        }
    }

    /// Bounds the per-submission table of event owners (the unique_id
    /// bindings bound themselves): called by the collector thread, off the
    /// hot path.
    pub fn forget_old_entries(&self) {
        self.deps.forget_old_owners();
    }

    /// Forgets which submission owns each device event (see
    /// [`crate::control`]: events not seen while callbacks were removed).
    pub fn forget_event_owners(&self) {
        self.deps.forget_all_owners();
        self.owners_forgotten.fetch_add(1, Ordering::AcqRel);
    }

    /// Counts a callback that came without the event it needs.
    pub fn count_without_event(&self) {
        self.counters.without_event.fetch_add(1, Ordering::Relaxed);
    }
}

/// Forgets the direct-path submission this thread held back, its open task
/// and its binding: its record is sent now.
#[inline(always)]
fn forget_held(t: &ThreadState) {
    t.open_task.set(None);
    t.held.set(None);
    t.last_bound.set(None);
}

/// The submission this thread holds back when `event` is its own (bound at
/// its node_create on this thread, neither merged nor unrecorded).
#[inline(always)]
fn held_for(t: &ThreadState, event: EventRef<'_>) -> Option<HeldSubmission> {
    let (Some((bound, binding)), Some(held)) = (t.last_bound.get(), t.held.get()) else {
        return None;
    };
    if bound != BoundKey::of(event)
        || binding.merged
        || binding.unrecorded
        || held.submission != (binding.node, binding.instance)
    {
        return None;
    }
    Some(held)
}

/// The one record of a held submission and its task, ended at `end_ns`.
#[inline]
fn submitted_task(held: &HeldSubmission, open: &dependencies::OpenTask, end_ns: u64) -> Record {
    let (node, instance) = held.submission;
    Record::SubmittedTask {
        node,
        instance,
        thread: held.thread,
        submit_ns: held.ns,
        after: None,
        begin_ns: open.begin_ns,
        end_ns,
        event: open.signalled,
    }
}

mod graph_recording;

#[cfg(test)]
mod tests;
