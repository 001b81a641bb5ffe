//! The records the subscriber's hot path hands to the background builder.
//!
//! Records are small and `Copy` where they happen per instance (submission,
//! task begin/end, signal, device times); the ones that carry strings
//! ([`NodeInfo`], [`EdgeInfo`]) are sent once per node or edge. Every record
//! names nodes by the [`NodeId`] the subscriber assigned, never by the
//! runtime's `unique_id` alone (unique_ids can collide; see intel/llvm#7860).

/// Our identifier for one distinct node (code location + payload), assigned by
/// the subscriber in order of first sight, starting at 0.
pub type NodeId = u32;

/// Our identifier for one distinct edge, assigned like [`NodeId`].
pub type EdgeId = u32;

/// Index of a string in the subscriber's interner (see [`Record::String`]).
pub type StrId = u32;

/// A key/value pair of XPTI metadata, both rendered as text.
pub type Metadata = Vec<(String, String)>;

/// Everything the runtime tells about a node, read once when it is first seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeInfo {
    /// Our id for the node.
    pub id: NodeId,
    /// The runtime's unique_id of the node event.
    pub uid: u64,
    /// The node_create user_data string, e.g. `command_group_node`,
    /// `memory_transfer_node::memcpy`.
    pub kind_hint: String,
    /// The payload name (often the kernel name or the operation).
    pub name: String,
    /// Source file, when the runtime knew it (not `<unknown-file>`).
    pub source_file: Option<String>,
    /// Source line, when known (non-zero).
    pub source_line: Option<u32>,
    /// Source column, when known.
    pub source_column: Option<u32>,
    /// Every metadata pair the event carried (merged from `sycl` and `sycl.debug`).
    pub metadata: Metadata,
}

/// Everything the runtime tells about an edge, read once when first seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeInfo {
    /// Our id for the edge.
    pub id: EdgeId,
    /// The runtime's unique_id of the edge event.
    pub uid: u64,
    /// The node the dependency comes from (the producer).
    pub source: NodeId,
    /// The node that depends on `source`.
    pub target: NodeId,
    /// Every metadata pair of the edge event (`access_mode`, `memory_object`, `event`).
    pub metadata: Metadata,
}

/// Which host-side blocking span a [`Record::SpanBegin`]/[`Record::SpanEnd`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// `wait_begin`/`wait_end`: the host waited on an event or queue.
    Wait,
    /// `barrier_begin`/`barrier_end`.
    Barrier,
    /// An ITT task range (`__itt_task_begin`/`__itt_task_end`) the
    /// application marked; its label is the task's name.
    Task,
}

/// How far a device command could be timed (see `kernels.csv`'s `timing` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimingStatus {
    /// Device start and end are known.
    Ok,
    /// The queue was created without profiling; the device gave no times.
    NoProfiling,
    /// The device's timestamps failed the sanity checks.
    Invalid,
    /// The event could not be read before the runtime tore down.
    Lost,
    /// The runtime gave no way to time it: no timestamp source in this
    /// process, or no device event.
    Unavailable,
    /// syclgraph had the device event but its timestamp source was not
    /// ready yet (start-up), so the event was not kept for reading.
    NotReady,
    /// syclgraph had the device event but could not retain it (the
    /// runtime's `urEventRetain` failed).
    NotRetained,
    /// The device's times are those of a marker the backend signals after
    /// the command's work, not of the work (a SYCL graph replay on
    /// OpenCL): only the end is kept, the moment the work had finished by.
    Marker,
    /// syclgraph had the device event but did not keep it: its collector
    /// was behind the program (the queue to it a quarter full), and every
    /// event kept alive until read holds the runtime's memory.
    Behind,
}

impl TimingStatus {
    /// The word written in `kernels.csv`'s `timing` column.
    pub fn as_str(self) -> &'static str {
        match self {
            TimingStatus::Ok => "ok",
            TimingStatus::NoProfiling => "no_profiling",
            TimingStatus::Invalid => "invalid",
            TimingStatus::Lost => "lost",
            TimingStatus::Unavailable => "unavailable",
            TimingStatus::NotReady => "not_ready",
            TimingStatus::NotRetained => "not_retained",
            TimingStatus::Marker => "marker",
            TimingStatus::Behind => "behind",
        }
    }

    /// Every status, in the order the guide's table lists them.
    pub const ALL: [TimingStatus; 9] = [
        TimingStatus::Ok,
        TimingStatus::NoProfiling,
        TimingStatus::Invalid,
        TimingStatus::Lost,
        TimingStatus::Unavailable,
        TimingStatus::NotReady,
        TimingStatus::NotRetained,
        TimingStatus::Marker,
        TimingStatus::Behind,
    ];

    /// The status a `kernels.csv` `timing` word stands for ([`Self::as_str`]
    /// backwards); `None` for any other text.
    pub fn from_name(word: &str) -> Option<TimingStatus> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

/// Device times of one command instance, on the host CLOCK_MONOTONIC timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceTimes {
    /// Node of the command.
    pub node: NodeId,
    /// Instance of the node.
    pub instance: u64,
    /// Whether `start_ns`/`end_ns` hold real values.
    pub status: TimingStatus,
    /// Device start, host ns (0 unless `status` is `Ok`).
    pub start_ns: u64,
    /// Device end, host ns (0 unless `status` is `Ok`).
    pub end_ns: u64,
}

/// One thing that happened, in the order the subscriber saw it on one thread.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A string interned by the subscriber, sent once before its first use.
    String {
        /// The id later records use.
        id: StrId,
        /// The text.
        text: Box<str>,
    },
    /// A node seen for the first time.
    NodeDefined(Box<NodeInfo>),
    /// Extra metadata for a known node (e.g. from the `sycl.debug` stream).
    NodeMetadata {
        /// The node.
        node: NodeId,
        /// Pairs to merge (existing keys keep their value).
        metadata: Box<Metadata>,
    },
    /// An edge seen for the first time.
    EdgeDefined(Box<EdgeInfo>),
    /// One more submission created the edge again.
    EdgeInstance {
        /// The edge.
        edge: EdgeId,
        /// The instance of the edge event.
        instance: u64,
    },
    /// node_create: one submission of a node.
    Submitted {
        /// The node.
        node: NodeId,
        /// The runtime's instance number.
        instance: u64,
        /// Submitting thread (our small per-process thread number).
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// task_begin of an instance.
    TaskBegin {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// task_end of an instance.
    TaskEnd {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// task_begin and task_end of an instance in one record, sent at
    /// task_end when both came on the same thread (the usual case): the same
    /// as a `TaskBegin` followed by a `TaskEnd`, in one update instead of two
    /// (a repeat of either counts as one duplicate).
    Task {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number (of both).
        thread: u32,
        /// task_begin, host CLOCK_MONOTONIC ns.
        begin_ns: u64,
        /// task_end, host CLOCK_MONOTONIC ns.
        end_ns: u64,
    },
    /// A task whose signal came while it ran, on its thread (the usual case
    /// for a device command): the same as a `Signal` followed by a `Task`,
    /// in one record.
    SignalledTask {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number (of the begin, the signal and the end).
        thread: u32,
        /// task_begin, host CLOCK_MONOTONIC ns.
        begin_ns: u64,
        /// task_end, host CLOCK_MONOTONIC ns.
        end_ns: u64,
        /// The signalled `ur_event_handle_t` as an address (0: none).
        event: u64,
    },
    /// node_create on an in-order queue whose previous submission is known:
    /// the same as a `Submitted` followed by an `InstanceEdge` in queue
    /// order from `after` to this instance, in one record.
    SubmittedAfter {
        /// The node.
        node: NodeId,
        /// The runtime's instance number.
        instance: u64,
        /// Submitting thread.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
        /// The queue's previous submission (node, instance).
        after: (NodeId, u64),
    },
    /// A submission and its whole task from one thread, in one record (a
    /// direct-path USM command: node_create, task_begin, the UR call and
    /// task_end all happen inside the submitting call): the same as a
    /// `Submitted`, a queue-order `InstanceEdge` from `after` (when set), a
    /// `Signal` (when `event` is set) and a `Task`, in that order.
    SubmittedTask {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number (of the submission and the task).
        thread: u32,
        /// node_create, host CLOCK_MONOTONIC ns.
        submit_ns: u64,
        /// The queue's previous submission, on an in-order queue.
        after: Option<(NodeId, u64)>,
        /// task_begin, host CLOCK_MONOTONIC ns.
        begin_ns: u64,
        /// task_end, host CLOCK_MONOTONIC ns.
        end_ns: u64,
        /// The device event as an address, when one was signalled.
        event: Option<u64>,
    },
    /// The counting half of a `SubmittedTask` whose device event is being
    /// timed, applied when the collector receives it: the submission is
    /// counted and enters the instance graph (with the queue-order edge
    /// from `after`) at once, so that later edges naming it find it. Its
    /// instance follows in one `TimedTask` once the device times are read,
    /// and never waits in the pending table. The pair is the same as that
    /// `SubmittedTask` (with `event` set) here and its `Device` record at
    /// the `TimedTask`, when [`crate::TaskGraph::may_announce`] said so at
    /// the announcement, no other record names the instance or changes the
    /// node in between, and the pending table does not fill up meanwhile.
    /// Only a submission made outside any region is announced (the
    /// announcement names no thread, so the instance gets no region).
    SubmissionAnnounced {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// The queue's previous submission, on an in-order queue.
        after: Option<(NodeId, u64)>,
    },
    /// The instance half of a [`Record::SubmissionAnnounced`] submission,
    /// with its device times: the submission's thread and time, its task,
    /// its signalled event and what reading that event gave.
    TimedTask {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// Thread number (of the submission and the task).
        thread: u32,
        /// node_create, host CLOCK_MONOTONIC ns.
        submit_ns: u64,
        /// task_begin, host CLOCK_MONOTONIC ns.
        begin_ns: u64,
        /// task_end, host CLOCK_MONOTONIC ns.
        end_ns: u64,
        /// The signalled `ur_event_handle_t` as an address (not 0).
        event: u64,
        /// Whether the device times hold real values.
        device_status: TimingStatus,
        /// Device start, host ns (0 unless `device_status` is `Ok`).
        device_start_ns: u64,
        /// Device end, host ns (0 unless `device_status` is `Ok`).
        device_end_ns: u64,
    },
    /// signal: the instance's device event handle (0 for host tasks).
    Signal {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// The `ur_event_handle_t` as an address.
        event: u64,
    },
    /// Begin of a host wait or barrier.
    SpanBegin {
        /// Wait or barrier.
        kind: SpanKind,
        /// What the runtime said it waits for (interned).
        label: StrId,
        /// Thread number.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// End of a host wait or barrier.
    SpanEnd {
        /// Wait or barrier.
        kind: SpanKind,
        /// Thread number.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// Tracing was switched on (`on`) or off at `ns` (host
    /// CLOCK_MONOTONIC): the bounds of the recorded windows.
    Tracing {
        /// True: a window starts; false: it ends.
        on: bool,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// A queue was created.
    QueueCreated {
        /// The runtime's queue id.
        queue_id: u64,
        /// Device name (interned).
        device: StrId,
        /// The device's identity: the runtime's device handle (metadata
        /// `sycl_device`, a `ur_device_handle_t`; 0 when not given).
        device_handle: u64,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// A device and its parent device (a sub-device, a GPU's tile), sent
    /// before the first record that names the device.
    DeviceDefined {
        /// The runtime's device handle (`sycl_device`).
        device: u64,
        /// The parent device's handle; 0 for a root device.
        parent: u64,
    },
    /// A queue was destroyed.
    QueueDestroyed {
        /// The runtime's queue id.
        queue_id: u64,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
    },
    /// Device times for a command instance, from the timestamp collector.
    Device(DeviceTimes),
    /// A dependency between two instances (for `instances.dot`).
    InstanceEdge(InstanceEdge),
    /// The queue of one submission, sent when it differs from the queue its
    /// node was first submitted to (one code location, several queues).
    InstanceQueue {
        /// The node.
        node: NodeId,
        /// The instance.
        instance: u64,
        /// The runtime's queue id.
        queue_id: u64,
    },
    /// A command of a SYCL graph (`sycl_ext_oneapi_graph`): recorded on a
    /// queue or added with the explicit API, and appended to the graph's
    /// command buffer at finalisation. Never a submission that ran: it
    /// runs inside each replay of `graph`.
    GraphMember {
        /// The executable graph (syclgraph's number, from 1).
        graph: u32,
        /// The command's node.
        node: NodeId,
    },
    /// An edge inside a SYCL graph: `target` waits for `source` in every
    /// replay (the command buffer's sync points).
    GraphEdge {
        /// The executable graph.
        graph: u32,
        /// The command depended on.
        source: NodeId,
        /// The dependent command.
        target: NodeId,
    },
    /// A SYCL graph was finalised into an executable graph: its replays
    /// are the instances of `node` (kind `graph`). The host span is the
    /// command buffer's creation, appends and finalisation.
    GraphFinalized {
        /// The executable graph.
        graph: u32,
        /// The node whose instances are the replays.
        node: NodeId,
        /// Thread number.
        thread: u32,
        /// Start of the finalisation, host CLOCK_MONOTONIC ns.
        begin_ns: u64,
        /// End of the finalisation, host CLOCK_MONOTONIC ns.
        end_ns: u64,
    },
    /// An ITT task began on `thread` (`__itt_task_begin`, or
    /// `__itt_task_begin_overlapped` when `id` is not 0): sent whether
    /// tracing is on or not, so that every command's region (the tasks
    /// open on its thread, [`crate::regions`]) is known.
    RegionBegin {
        /// Thread number.
        thread: u32,
        /// The task's name (interned; qualified by its domain when another
        /// domain used the name first).
        label: StrId,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
        /// 0 for a nested task; an overlapped task's id.
        id: u64,
        /// Tracing was on: the task is a slice on the timeline.
        shown: bool,
    },
    /// An ITT task ended on `thread` (`__itt_task_end`, or
    /// `__itt_task_end_overlapped` of the task `id` when not 0).
    RegionEnd {
        /// Thread number.
        thread: u32,
        /// Host CLOCK_MONOTONIC ns.
        ns: u64,
        /// 0 for a nested task; an overlapped task's id.
        id: u64,
    },
}

impl Record {
    /// The latest host CLOCK_MONOTONIC time the record carries (a device
    /// end included), if it carries any: where a run read back from its
    /// journal ends when the process did not say (it was killed).
    pub fn latest_ns(&self) -> Option<u64> {
        match *self {
            Record::Submitted { ns, .. }
            | Record::TaskBegin { ns, .. }
            | Record::TaskEnd { ns, .. }
            | Record::SubmittedAfter { ns, .. }
            | Record::SpanBegin { ns, .. }
            | Record::SpanEnd { ns, .. }
            | Record::Tracing { ns, .. }
            | Record::QueueCreated { ns, .. }
            | Record::QueueDestroyed { ns, .. }
            | Record::RegionBegin { ns, .. }
            | Record::RegionEnd { ns, .. } => Some(ns),
            Record::Task { end_ns, .. }
            | Record::SignalledTask { end_ns, .. }
            | Record::SubmittedTask { end_ns, .. }
            | Record::GraphFinalized { end_ns, .. } => Some(end_ns),
            Record::TimedTask {
                end_ns,
                device_status,
                device_end_ns,
                ..
            } => Some(if device_status == TimingStatus::Ok {
                end_ns.max(device_end_ns)
            } else {
                end_ns
            }),
            Record::Device(d) => (d.status == TimingStatus::Ok).then_some(d.end_ns),
            Record::String { .. }
            | Record::NodeDefined(_)
            | Record::NodeMetadata { .. }
            | Record::EdgeDefined(_)
            | Record::EdgeInstance { .. }
            | Record::SubmissionAnnounced { .. }
            | Record::Signal { .. }
            | Record::DeviceDefined { .. }
            | Record::InstanceEdge(_)
            | Record::InstanceQueue { .. }
            | Record::GraphMember { .. }
            | Record::GraphEdge { .. } => None,
        }
    }

    /// The order of an in-order queue that a submission record names: from
    /// the queue's previous submission (`after`) to this one; `None` for
    /// any other record.
    pub fn queue_order_edge(&self) -> Option<InstanceEdge> {
        match *self {
            Record::SubmittedAfter {
                node,
                instance,
                after,
                ..
            }
            | Record::SubmittedTask {
                node,
                instance,
                after: Some(after),
                ..
            }
            | Record::SubmissionAnnounced {
                node,
                instance,
                after: Some(after),
            } => Some(InstanceEdge {
                source: after.0,
                source_instance: after.1,
                target: node,
                target_instance: instance,
                queue_order: true,
            }),
            _ => None,
        }
    }
}

/// A dependency between two submissions (instances), not only between their
/// code locations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InstanceEdge {
    /// The producer's node.
    pub source: NodeId,
    /// The producer's instance.
    pub source_instance: u64,
    /// The dependent node.
    pub target: NodeId,
    /// The dependent instance.
    pub target_instance: u64,
    /// True for the order an in-order queue imposes between consecutive
    /// submissions (not a data dependency); false for a data or event
    /// dependency (its kind is the static edge's).
    pub queue_order: bool,
}
