//! The recorder's part for SYCL graphs (see [`crate::sycl_graphs`]):
//! commands recorded into a graph, the command buffer built at
//! finalisation, and the replays.

use super::*;

/// SYCL graphs (see [`crate::sycl_graphs`]): commands recorded into a graph,
/// the command buffer built at finalisation, and the replays.
impl Recorder {
    /// Whether direct-path USM calls are followed now (through the hooks,
    /// or on `ur.call.debug`): only then does a direct-path command whose
    /// task ended without its UR call show it was recorded, not run.
    pub(super) fn usm_calls_followed(&self) -> bool {
        let c = &self.counters;
        c.ur_hooks_active.load(Ordering::Relaxed)
            || (c.ur_stream_registered.load(Ordering::Relaxed)
                && c.runtime_ur_called.load(Ordering::Relaxed)
                && !c.ur_limit_reached.load(Ordering::Relaxed))
    }

    /// Whether the held direct-path submission `held`, at its task's end
    /// without a device event, may have been recorded into a SYCL graph
    /// rather than run: a command that may be recorded, whose UR call did
    /// not come although UR calls are followed on this thread.
    #[inline]
    pub(super) fn may_be_recorded_into_graph(
        &self,
        t: &ThreadState,
        held: &HeldSubmission,
    ) -> bool {
        held.class.is_some()
            && t.direct_submission.get() == Some(held.submission)
            && self.usm_calls_followed()
    }

    /// At the task end of a held direct-path submission that was not
    /// signalled: true (and nothing is sent) when it made no UR call, so
    /// it was recorded into a SYCL graph. Never sent as a submission, it
    /// takes no place in its in-order queue ([`crate::queue_order`]).
    #[cold]
    pub(super) fn recorded_into_graph(
        &self,
        t: &ThreadState,
        held: &HeldSubmission,
        event: EventRef<'_>,
    ) -> bool {
        let Some(class) = held.class else {
            return false;
        };
        if !self.may_be_recorded_into_graph(t, held) {
            return false;
        }
        t.direct_submission.set(None);
        dependencies::take_current(t);
        let (mut ptr, mut size) = (0, 0);
        self.xpti.for_each_metadata(event, |key, value| match key {
            "dest_memory_ptr" | "memory_ptr" => ptr = metadata_number(&value).unwrap_or(0),
            "memory_size" => size = metadata_number(&value).unwrap_or(0),
            _ => {}
        });
        let command = RecordedCommand {
            node: held.submission.0,
            class,
            ptr,
            size,
        };
        self.graphs.recorded(held.thread, command);
        true
    }

    /// `urCommandBufferCreateExp` returned `buffer` on this thread, made in
    /// order or not: the commands appended until its finalisation are a
    /// new graph's. Created while this thread builds another buffer, it
    /// is that one's child (a native command's contents), no graph.
    pub fn graph_created(&self, buffer: usize, begin_ns: u64, in_order: bool) {
        if !self.running() {
            self.graphs.created_unrecorded(buffer);
            return;
        }
        thread_state::with(|t| {
            if let Some(parent) = t.building.get() {
                self.graphs.child_created(buffer, parent.graph);
                return;
            }
            if !self.recording_here(t) {
                // Outside the captured region: as while stopped.
                self.graphs.created_unrecorded(buffer);
                return;
            }
            self.release_held_here(t);
            let graph = self
                .graphs
                .created(thread_number::current(t), buffer, in_order);
            t.building.set(Some(Building {
                buffer,
                graph,
                begin_ns,
            }))
        });
    }

    /// node_create of a command appended to the command buffer this thread
    /// is building; either way a member of the graph, never a submission,
    /// its task and signal ignored. Without a source location (`copy usm`,
    /// `fill usm`): the recorded command it stands for, or a node of its
    /// own (explicit API). With one (a kernel, a native command, a buffer
    /// command: the runtime sends their node_create at finalisation, not
    /// while recording): the node of its code location.
    #[cold]
    pub(super) fn graph_member(
        &self,
        t: &ThreadState,
        building: Building,
        event: EventRef<'_>,
        kind: CText,
    ) {
        self.release_held_here(t);
        let thread = thread_number::current(t);
        let unappended = if event.has_source_file() {
            let node = self.node(t, event, kind.to_str());
            self.graphs.appending_node(thread, node)
        } else {
            let info = self.node_info(NodeId::MAX, event, kind.to_str());
            self.graphs.appending(thread, Box::new(info))
        };
        self.nodes.bind(event.unique_id(), Binding::UNRECORDED);
        t.appending.set(Some(building.graph));
        if let Some(unappended) = unappended {
            self.graph_member_unappended(building.graph, unappended);
        }
    }

    /// A command announced while graph `graph` was built whose append
    /// syclgraph did not see (a `urCommandBufferAppend…Exp` it does not
    /// follow): a member all the same, without its edges, and counted.
    #[cold]
    pub(super) fn graph_member_unappended(&self, graph: u32, unappended: Unappended) {
        let node = match unappended {
            Unappended::Node(node) => node,
            Unappended::Info(mut info) => {
                info.id = self.nodes.fresh_id();
                let id = info.id;
                self.send(Record::NodeDefined(info));
                id
            }
        };
        self.graphs
            .unfollowed_appends
            .fetch_add(1, Ordering::Relaxed);
        self.send(Record::GraphMember { graph, node });
    }

    /// A `urCommandBufferAppend…Exp` returned: the command appended last
    /// on this thread (`appended`) is the recorded command it matches, or
    /// a node of its own; it waits for the command appended before it in
    /// an in-order buffer, else for the commands that gave `waits_for`;
    /// it gives `gives`. An append to a child buffer is counted, not drawn.
    pub fn graph_append(
        &self,
        buffer: usize,
        appended: Appended,
        waits_for: &[u32],
        gives: Option<u32>,
    ) {
        // Whether or not a node_create announced it (a kernel's did).
        let thread = thread_state::with(|t| {
            t.appending.set(None);
            thread_number::current(t)
        });
        if !self.running() {
            return;
        }
        let Some(graph) = self.graphs.graph_of(buffer) else {
            if self.graphs.is_child(buffer) {
                self.graphs.child_appends.fetch_add(1, Ordering::Relaxed);
            }
            return;
        };
        let Appended {
            class,
            ptr,
            size,
            name,
        } = appended;
        let node = match self.graphs.appended(thread, class, ptr, size) {
            Ok(node) => node,
            Err(info) => {
                let id = self.nodes.fresh_id();
                let mut info = info.unwrap_or_else(|| {
                    Box::new(NodeInfo {
                        name: name.to_owned(),
                        ..NodeInfo::default()
                    })
                });
                info.id = id;
                self.send(Record::NodeDefined(info));
                id
            }
        };
        if name == crate::graph_ur_calls::appended::NATIVE.1 {
            // Its node_create (if any) says nothing of what it is.
            self.send(Record::NodeMetadata {
                node,
                metadata: Box::new(crate::native_commands::native_metadata()),
            });
        }
        self.send(Record::GraphMember { graph, node });
        if let Some(source) = self.graphs.in_order_previous(buffer, node) {
            self.send(Record::GraphEdge {
                graph,
                source,
                target: node,
            });
        }
        for &sync_point in waits_for {
            if let Some(source) = self.graphs.giver(graph, sync_point) {
                if source != node {
                    self.send(Record::GraphEdge {
                        graph,
                        source,
                        target: node,
                    });
                }
            }
        }
        if let Some(sync_point) = gives {
            self.graphs.gives(graph, sync_point, node);
        }
    }

    /// `urCommandBufferFinalizeExp` returned on this thread: the graph's
    /// node (kind `graph`, whose instances are the replays) is defined,
    /// and the finalisation's host span sent.
    /// A failed finalisation (`finalised` false) only ends the building:
    /// the thread's later node_creates are its own again. A child
    /// buffer's finalisation ends nothing.
    pub fn graph_finalized(&self, buffer: usize, finalised: bool) {
        if self.graphs.is_child(buffer) {
            return;
        }
        let Some((building, thread)) = thread_state::with(|t| {
            let building = t
                .building
                .get()
                .filter(|b| b.buffer == buffer || buffer == 0)?;
            t.building.set(None);
            t.appending.set(None);
            Some((building, thread_number::current(t)))
        }) else {
            return;
        };
        if let Some(unappended) = self.graphs.unappended(thread) {
            if self.running() {
                self.graph_member_unappended(building.graph, unappended);
            }
        }
        if !finalised || !self.running() {
            return;
        }
        let node = self.define_graph_node(building.graph);
        self.graphs.set_node(buffer, node);
        self.send(Record::GraphFinalized {
            graph: building.graph,
            node,
            thread,
            begin_ns: building.begin_ns,
            end_ns: monotonic_ns(),
        });
    }

    /// Defines the node of graph `graph`'s replays.
    #[cold]
    pub(super) fn define_graph_node(&self, graph: u32) -> NodeId {
        let id = self.nodes.fresh_id();
        self.define_graph_node_as(id, graph);
        id
    }

    /// Defines `id` as the node of graph `graph`'s replays.
    #[cold]
    pub(super) fn define_graph_node_as(&self, id: NodeId, graph: u32) {
        let info = NodeInfo {
            id,
            uid: 0,
            kind_hint: SYCL_GRAPH_HINT.to_owned(),
            name: format!("graph {graph}"),
            metadata: vec![
                ("inside_replay".to_owned(), INSIDE_REPLAY_UNTIMED.to_owned()),
                ("sycl_graph".to_owned(), graph.to_string()),
            ],
            ..NodeInfo::default()
        };
        self.send(Record::NodeDefined(Box::new(info)));
    }

    /// `urEnqueueCommandBufferExp` returned: one replay of `buffer`'s
    /// graph, an instance of its node submitted at `begin_ns` on UR queue
    /// `ur_queue` (its SYCL queue from queue_create's `queue_handle`),
    /// after the events of `waits_for`, timed by `device_event` (0: none).
    pub fn graph_replay(
        &self,
        (buffer, ur_queue): (usize, usize),
        begin_ns: u64,
        waits_for: impl Iterator<Item = usize>,
        device_event: usize,
    ) {
        if !self.running() {
            if self.paused() {
                self.counters.while_stopped.fetch_add(1, Ordering::Relaxed);
            }
            return;
        }
        let buffers = (buffer, ur_queue);
        thread_state::with(|t| {
            self.graph_replay_here(t, buffers, begin_ns, waits_for, device_event)
        })
    }

    pub(super) fn graph_replay_here(
        &self,
        t: &ThreadState,
        (buffer, ur_queue): (usize, usize),
        begin_ns: u64,
        waits_for: impl Iterator<Item = usize>,
        device_event: usize,
    ) {
        if !self.recording_here(t) {
            // Outside the captured region: as while stopped.
            self.counters.while_stopped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.release_held_here(t);
        let (exec, new) = self.graphs.replay(buffer, || self.nodes.fresh_id());
        let Some(node) = exec.node else {
            return;
        };
        if new {
            // Finalised before syclgraph followed UR calls: no members known.
            self.define_graph_node_as(node, exec.graph);
        }
        let instance = exec.replays;
        let queue = self.graphs.queue_of(ur_queue).unwrap_or(0);
        let thread = thread_number::current(t);
        let held = HeldSubmission {
            submission: (node, instance),
            thread,
            ns: begin_ns,
            class: None,
        };
        // The node has no first queue: every replay names its queue.
        self.send_instance_queue(node, instance, queue, 0);
        self.send_submitted(held);
        self.wait_list_edges(t, (node, instance), waits_for);
        self.device_event(t, node, instance, device_event);
        self.send(Record::Task {
            node,
            instance,
            thread,
            begin_ns,
            end_ns: monotonic_ns(),
        });
    }
}
