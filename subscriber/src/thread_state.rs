//! The hot path's per-thread state, in one thread-local block.
//!
//! In a shared library every access to a thread-local variable is a call
//! to the dynamic linker (`__tls_get_addr`). Each piece of per-thread state
//! keeps its own module and functions, but all of them live in this one
//! block: once a callback's helpers are inlined, their accesses share one
//! such call instead of making one per variable.

use std::cell::Cell;

use syclgraph_graph::record::NodeId;

use crate::dependencies::OpenTask;
use crate::identity::{Binding, BoundKey};
use crate::sycl_graphs::{Building, CommandClass};

/// What one application thread's callbacks remember between calls.
pub struct ThreadState {
    /// Its number ([`crate::thread_number`]; 0: not assigned yet).
    pub number: Cell<u32>,
    /// The binding it made last ([`crate::identity::NodeTable::bind_here`]).
    pub last_bound: Cell<Option<(BoundKey, Binding)>>,
    /// The user submission it made last, until its UR enqueue call
    /// ([`crate::dependencies::set_current`]).
    pub current: Cell<Option<(NodeId, u64)>>,
    /// The task it is running ([`crate::dependencies::begin_task`]).
    pub open_task: Cell<Option<OpenTask>>,
    /// The direct-path USM submission whose UR call it is about to make
    /// (memcpy/memset send no `signal`; see the recorder).
    pub direct_submission: Cell<Option<(NodeId, u64)>>,
    /// A direct-path submission not sent yet: it goes out with its task's
    /// end, or on its own at this thread's next other callback.
    pub held: Cell<Option<HeldSubmission>>,
    /// ITT tasks begun on this thread while tracing was stopped and not
    /// ended yet: their ends are not sent ([`crate::recorder::Recorder::user_span`]).
    pub unsent_span_begins: Cell<u32>,
    /// The SYCL graph's command buffer this thread is finalising
    /// ([`crate::sycl_graphs`]).
    pub building: Cell<Option<Building>>,
    /// The graph whose next command's `urCommandBufferAppend…Exp` comes
    /// next on this thread (its node_create was seen).
    pub appending: Cell<Option<u32>>,
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
    /// The in-order queue's previous submission, if any.
    pub after: Option<(NodeId, u64)>,
    /// Its queue (0: unknown).
    pub queue: u64,
    /// What it does, when it may be recorded into a SYCL graph.
    pub class: Option<CommandClass>,
}

thread_local! {
    /// This thread's state (constant-initialised: no lazy set-up, no destructor).
    pub static STATE: ThreadState = const {
        ThreadState {
            number: Cell::new(0),
            last_bound: Cell::new(None),
            current: Cell::new(None),
            open_task: Cell::new(None),
            direct_submission: Cell::new(None),
            held: Cell::new(None),
            unsent_span_begins: Cell::new(0),
            building: Cell::new(None),
            appending: Cell::new(None),
        }
    };
}
