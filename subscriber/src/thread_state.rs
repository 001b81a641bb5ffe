//! The hot path's per-thread state, in one thread-local block.
//!
//! In a shared library every access to a thread-local variable is a call
//! to the dynamic linker (`__tls_get_addr`), and the compiler does not
//! merge two accesses that a call separates. So every piece of per-thread
//! state lives in this one block, reached in one place ([`with`]): a
//! callback reaches it once, at its entry, and hands the [`ThreadState`]
//! down to the helpers (in `dependencies`, `identity`, `thread_number`,
//! `graph_ur_calls`), which take it as an argument.
//!
//! The block is constant-initialised and has no destructor: reaching it
//! never fails and never registers anything, also on threads the runtime
//! makes and ends (host tasks, TBB workers), at any point of their life.
//!
//! The types of what a thread remembers are defined here too (the modules
//! that use them re-export them), so that this block depends on no module
//! that reads it: `dependencies`, `identity` and `sycl_graphs` sit above it.

use std::cell::Cell;

use syclgraph_graph::record::NodeId;

use ur_sys::ur_function_t;

use crate::xpti::{CText, EventRef, PayloadKey};

/// What one application thread's callbacks remember between calls.
pub struct ThreadState {
    /// Its number ([`crate::thread_number`]; 0: not assigned yet).
    pub number: Cell<u32>,
    /// The node it looked up last ([`crate::identity::NodeTable`]).
    pub last_node: Cell<Option<LastNode>>,
    /// The binding it made last ([`crate::identity::NodeTable::bind_here`]).
    pub last_bound: Cell<Option<(BoundKey, Binding)>>,
    /// The user submission it made last, until its UR enqueue call
    /// ([`crate::dependencies::set_current`]).
    pub current: Cell<Option<(NodeId, u64)>>,
    /// The task it is running ([`crate::dependencies::begin_task`]).
    pub open_task: Cell<Option<OpenTask>>,
    /// Inside the task of a scheduler command merged into a user
    /// submission (its UR enqueue has a node: [`crate::unseen_enqueues`]).
    pub merged_task: Cell<bool>,
    /// The direct-path USM submission whose UR call it is about to make
    /// (memcpy/memset send no `signal`; see the recorder).
    pub direct_submission: Cell<Option<(NodeId, u64)>>,
    /// A direct-path submission not sent yet: it goes out with its task's
    /// end, or on its own at this thread's next other callback.
    pub held: Cell<Option<HeldSubmission>>,
    /// Where this thread is in the region `SYCLGRAPH_REGION` names
    /// ([`crate::capture`]; untouched without it).
    pub capture: CaptureState,
    /// The SYCL graph's command buffer this thread is finalising
    /// ([`crate::sycl_graphs`]).
    pub building: Cell<Option<Building>>,
    /// The graph whose next command's `urCommandBufferAppend…Exp` comes
    /// next on this thread (its node_create was seen).
    pub appending: Cell<Option<u32>>,
    /// The SYCL graph call whose begin this thread saw on `ur.call.debug`
    /// before the hooks were in, and when it began (host ns;
    /// [`crate::graph_ur_calls`]).
    pub pending_graph_call: Cell<Option<(ur_function_t, u64)>>,
    /// Inside the hook of a SYCL graph call ([`crate::ur_hooks`]): that
    /// call's events on `ur.call.debug` (a layer the hook calls on) are
    /// the hook's, not [`crate::graph_ur_calls`]'.
    pub in_graph_hook: Cell<bool>,
    /// The node whose native command it enqueued last
    /// ([`crate::native_commands`]): told the collector once.
    pub last_native: Cell<Option<NodeId>>,
}

/// A thread's place in the captured region ([`crate::capture`]): which of
/// its open ITT tasks are tasks of that name.
pub struct CaptureState {
    /// Nested ITT tasks open on this thread (begun while tracing ran).
    pub nested: Cell<u32>,
    /// Bit i: the nested task at depth i (from 0, outermost) is one of
    /// the captured name (depths from 64 on are never captured).
    pub named: Cell<u64>,
    /// Tasks of the captured name open on this thread, nested and
    /// overlapped: its submissions are recorded while this is above 0.
    pub open: Cell<u32>,
    /// The ids of its open overlapped tasks of the captured name (0: a
    /// free slot; a fifth one at once is not captured).
    pub overlapped: [Cell<u64>; 4],
}

impl Default for CaptureState {
    fn default() -> CaptureState {
        CaptureState::new()
    }
}

impl CaptureState {
    /// Nothing open.
    pub const fn new() -> CaptureState {
        CaptureState {
            nested: Cell::new(0),
            named: Cell::new(0),
            open: Cell::new(0),
            overlapped: [const { Cell::new(0) }; 4],
        }
    }
}

/// A submission (node_create) kept back to go out with its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldSubmission {
    /// The submission.
    pub submission: (NodeId, u64),
    /// Its thread number.
    pub thread: u32,
    /// node_create, host CLOCK_MONOTONIC ns.
    pub ns: u64,
    /// What it does, when it may be recorded into a SYCL graph.
    pub class: Option<CommandClass>,
}

thread_local! {
    /// This thread's state (constant-initialised: no lazy set-up, no destructor).
    static STATE: ThreadState = const {
        ThreadState {
            number: Cell::new(0),
            last_node: Cell::new(None),
            last_bound: Cell::new(None),
            current: Cell::new(None),
            open_task: Cell::new(None),
            merged_task: Cell::new(false),
            direct_submission: Cell::new(None),
            held: Cell::new(None),
            capture: CaptureState::new(),
            building: Cell::new(None),
            appending: Cell::new(None),
            pending_graph_call: Cell::new(None),
            in_graph_hook: Cell::new(false),
            last_native: Cell::new(None),
        }
    };
}

/// Runs `f` on this thread's state: one thread-local access. Called once
/// per callback, at its entry; what it calls takes the state as an
/// argument instead of reaching it again.
#[inline(always)]
pub fn with<R>(f: impl FnOnce(&ThreadState) -> R) -> R {
    match STATE.try_with(f) {
        Ok(r) => r,
        // Constant-initialised and without a destructor: reachable for the
        // whole life of every thread.
        Err(_) => unreachable!("the thread state has no destructor"),
    }
}

// ---- the types of what a thread remembers (their functions live in
// dependencies.rs, identity.rs and sycl_graphs.rs) ----

/// A task this thread began and has not ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenTask {
    /// The submission.
    pub submission: (NodeId, u64),
    /// Its task_begin, host CLOCK_MONOTONIC ns.
    pub begin_ns: u64,
    /// The device event signalled for this submission while the task ran
    /// (retained for timing unless 0), sent with the task's end.
    pub signalled: Option<u64>,
}

/// The node a thread looked up last, kept at hand: a loop submits the same
/// code location again and again.
#[derive(Clone, Copy, Debug)]
pub struct LastNode {
    /// The number of the [`crate::identity::NodeTable`] it came from.
    pub table: u64,
    /// Its payload's identity.
    pub key: PayloadKey,
    /// The node: its id, flags and submission counter.
    pub cell: &'static NodeCell,
}

/// A node as the table keeps it: made once, on the node's first sight,
/// and kept for the life of the process (a few dozen bytes per code
/// location), so that a thread can keep a reference at hand ([`LastNode`])
/// without a reference count; aligned so that one cache line holds all a
/// repeated submission reads of it.
#[derive(Debug)]
#[repr(align(64))]
pub struct NodeCell {
    /// Its submission counter (our instance numbers: the runtime's
    /// `instance_id` also counts UR calls made at the same code location
    /// when the UR tracing layer is on).
    pub counter: std::sync::atomic::AtomicU64,
    /// The node.
    pub node: NodeId,
    /// Its flags (never changed once made).
    pub flags: NodeFlags,
}

/// What the table knows about a node besides its id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeFlags {
    /// A `virtual_node[<event>]`: a dependency on an event whose command the
    /// scheduler does not know. Holds that `ur_event_handle_t`'s address.
    pub virtual_event: Option<usize>,
    /// Made by the scheduler, not at a user's source line.
    pub unknown_location: bool,
    /// The queue the node was first submitted to (0: unknown).
    pub first_queue: u64,
}

/// The submission a live event stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The node (for merged commands: the user submission's node).
    pub node: NodeId,
    /// Its instance.
    pub instance: u64,
    /// What the node is.
    pub flags: NodeFlags,
    /// A scheduler command merged into the user submission around it: its
    /// task begin/end are not the submission's own.
    pub merged: bool,
    /// Submitted while tracing was stopped: counted, not recorded; its
    /// later callbacks are ignored (`node` and `instance` mean nothing).
    pub unrecorded: bool,
}

impl Binding {
    /// The binding of a submission made while tracing was stopped.
    pub const UNRECORDED: Binding = Binding {
        node: NodeId::MAX,
        instance: 0,
        flags: NodeFlags {
            virtual_event: None,
            unknown_location: false,
            first_queue: 0,
        },
        merged: false,
        unrecorded: true,
    };
}

/// What tells one event from another that reuses its address: the address
/// (unique_id), the code location's name string and the runtime's instance
/// counter for that location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundKey {
    uid: u64,
    name_ptr: usize,
    instance: u64,
}

impl BoundKey {
    #[inline]
    pub(crate) fn of(event: EventRef<'_>) -> BoundKey {
        BoundKey {
            uid: event.unique_id(),
            name_ptr: event.payload_key().name_ptr,
            instance: event.instance_id(),
        }
    }
}

/// What a recorded or appended command does, to match the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandClass {
    /// memcpy / `copy usm`.
    Copy,
    /// memset, fill / `fill usm`.
    Fill,
    /// A kernel.
    Kernel,
    /// Any other appended command (a native command, a buffer copy,
    /// fill, read or write): only its node_create names it.
    Other,
}

impl CommandClass {
    /// The class of a recorded command from its node_create kind string
    /// (`memory_transfer_node::memcpy`, `…::memset`, `…::fill`).
    #[inline]
    pub fn of_recorded(kind: CText) -> Option<CommandClass> {
        if kind.starts_with(b"memory_transfer_node::memcpy\0") {
            Some(CommandClass::Copy)
        } else if kind.starts_with(b"memory_transfer_node::memset\0")
            || kind.starts_with(b"memory_transfer_node::fill\0")
        {
            Some(CommandClass::Fill)
        } else {
            None
        }
    }
}

/// A command buffer this thread is building (between
/// `urCommandBufferCreateExp` and `urCommandBufferFinalizeExp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Building {
    /// The `ur_exp_command_buffer_handle_t` as an address.
    pub buffer: usize,
    /// Its graph number.
    pub graph: u32,
    /// When its creation began, host CLOCK_MONOTONIC ns.
    pub begin_ns: u64,
}
