//! The dependencies the runtime never reports as edges.
//!
//! - A kernel that only `depends_on` an event bypasses the scheduler: no
//!   edge_create. Its UR enqueue call's event wait list names the events it
//!   waits for; the collector maps each back to the submission whose
//!   device event it is ([`crate::event_owners`]), from the records for a
//!   timed event, else from [`Dependencies::owner`] (written only for
//!   events no record carries).
//! - A dependency on an event the scheduler does not know becomes a
//!   `virtual_node[<event>]`: its edges are redirected to the submission that
//!   produced that event, and the virtual node is only drawn when no traced
//!   command did ([`Dependencies::hold_virtual`]).
//! - A scheduler command created inside a user submission's task (the
//!   `copy usm` of a memcpy) is merged into that submission
//!   ([`open_task`]).

use syclgraph_graph::record::{NodeId, NodeInfo};

use crate::identity::{FastMap, RecentMap, RECENT_CAPACITY, RECENT_ROOM};
pub use crate::thread_state::OpenTask;
use crate::thread_state::ThreadState;

// The per-thread part: functions of the calling thread's state, which the
// callback reached once ([`crate::thread_state::with`]).

/// Sets the submission this thread just made.
#[inline]
pub fn set_current(t: &ThreadState, submission: (NodeId, u64)) {
    t.current.set(Some(submission));
}

/// The submission this thread made last, if any.
#[inline]
pub fn current(t: &ThreadState) -> Option<(NodeId, u64)> {
    t.current.get()
}

/// The submission this thread made last, forgetting it (a UR enqueue
/// claimed it).
#[inline]
pub fn take_current(t: &ThreadState) -> Option<(NodeId, u64)> {
    t.current.take()
}

/// The task this thread is inside, if any.
#[inline]
pub fn open_task(t: &ThreadState) -> Option<(NodeId, u64)> {
    t.open_task.get().map(|task| task.submission)
}

/// Marks the start of a task on this thread; returns a task this thread
/// began before and never ended (its begin must then be sent on its own).
#[inline]
pub fn begin_task(t: &ThreadState, task: OpenTask) -> Option<OpenTask> {
    t.open_task.replace(Some(task))
}

/// Keeps the device event signalled for `submission` with this thread's
/// open task when it is that submission's and has none yet; false when it
/// must be sent on its own.
#[inline]
pub fn signal_in_task(t: &ThreadState, submission: (NodeId, u64), event: u64) -> bool {
    match t.open_task.get() {
        Some(mut task) if task.submission == submission && task.signalled.is_none() => {
            task.signalled = Some(event);
            t.open_task.set(Some(task));
            true
        }
        _ => false,
    }
}

/// Marks the begin (`open`) or end of a merged scheduler command's task
/// on this thread.
#[inline]
pub fn set_merged_task(t: &ThreadState, open: bool) {
    t.merged_task.set(open);
}

/// Whether this thread is inside a task: its own or a merged one.
#[inline]
pub fn in_any_task(t: &ThreadState) -> bool {
    t.open_task.get().is_some() || t.merged_task.get()
}

/// Marks the end of this thread's task; returns the task that was open.
#[inline]
pub fn end_task(t: &ThreadState) -> Option<OpenTask> {
    t.open_task.take()
}

/// A held-back virtual node.
enum Held {
    /// Not drawn yet: its definition, ready to send.
    Waiting(Box<NodeInfo>),
    /// Already sent to the collector.
    Sent,
}

/// Event owners and held-back virtual nodes.
pub struct Dependencies {
    owners: RecentMap<usize, (NodeId, u64)>,
    held: FastMap<NodeId, Held>,
}

impl Default for Dependencies {
    fn default() -> Self {
        Dependencies {
            // A new device event per command: presized like the node
            // table's bindings, so that the submitting thread never
            // rehashes it while it fills (it did, about once per doubling:
            // ~150 instructions per command on average under callgrind).
            owners: RecentMap::presized(RECENT_ROOM),
            held: FastMap::default(),
        }
    }
}

impl Dependencies {
    /// Remembers that `event` is the device event of `submission`, for an
    /// event no record carries (not retained for timing).
    #[inline]
    pub fn set_owner(&self, event: usize, submission: (NodeId, u64)) {
        self.owners.insert(event, submission);
    }

    /// Forgets every event owner (off the hot path; see
    /// [`crate::control`]).
    pub fn forget_all_owners(&self) {
        self.owners.clear();
    }

    /// Forgets the oldest event owners once there are many (see
    /// [`RecentMap`]).
    pub fn forget_old_owners(&self) {
        self.owners.rotate_if_full(RECENT_CAPACITY);
    }

    /// The submission whose device event `event` is, if traced.
    #[inline]
    pub fn owner(&self, event: usize) -> Option<(NodeId, u64)> {
        self.owners.get(&event)
    }

    /// Holds a virtual node's definition back until an edge needs it.
    pub fn hold_virtual(&self, info: NodeInfo) {
        self.held.insert(info.id, Held::Waiting(Box::new(info)));
    }

    /// The definition of a held virtual node, the first time it is needed.
    pub fn release_virtual(&self, node: NodeId) -> Option<Box<NodeInfo>> {
        let mut held = self.held.get_mut(&node)?;
        match std::mem::replace(&mut *held, Held::Sent) {
            Held::Waiting(info) => Some(info),
            Held::Sent => None,
        }
    }
}
