//! Bookkeeping for SYCL graphs (`sycl_ext_oneapi_graph`) on the hot path.
//!
//! What the runtime does (DPC++ 2026, OpenCL CPU device, observed with
//! `SYCL_UR_TRACE=2` and an XPTI dump):
//! - **Recording** a USM memcpy/memset on a queue sends its usual
//!   node_create, task_begin and task_end (with the source location), but
//!   no UR call: nothing is enqueued. Recording a kernel sends nothing.
//!   With the explicit `add` API nothing at all is sent.
//! - **Finalising** calls `urCommandBufferCreateExp`, then per command a
//!   node_create, its task and signal, and `urCommandBufferAppend…Exp`
//!   (`…USMMemcpyExp`, `…USMFillExp`, `…KernelLaunchWithArgsExp`) with the
//!   sync points it waits for and the one it gives, then
//!   `urCommandBufferFinalizeExp`. A memcpy's or memset's node_create there
//!   has no source location (`copy usm`, `fill usm`); a kernel's has its
//!   own (the line that recorded or added it), and its task spans the
//!   append.
//! - **Each replay** is one `urEnqueueCommandBufferExp` with an output
//!   event; XPTI sends nothing.
//!
//! So a direct-path USM submission whose task ended without its UR call,
//! while UR calls are followed, was recorded into a graph: it is kept here
//! per thread ([`GraphBook::recorded`]) instead of being sent as a
//! submission. At finalisation, an appended command whose node_create
//! named a code location (a kernel) is that location's node; any other is
//! the thread's recorded command of the same class (copy or fill),
//! destination pointer and size, or a node of its own (explicit API, or
//! recorded on another thread); the replays become instances of the
//! graph's own node. These UR calls are followed through
//! [`crate::ur_hooks`], and before those are in on `ur.call.debug`
//! ([`crate::graph_ur_calls`]); what still cannot be followed is counted
//! ([`GraphLosses`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use syclgraph_graph::record::{NodeId, NodeInfo};

use crate::identity::FastMap;
pub use crate::thread_state::{Building, CommandClass};

/// Recorded commands kept per thread for finalisations to claim; the
/// oldest beyond are forgotten and counted in [`GraphBook::recorded_dropped`].
const MAX_RECORDED: usize = 4096;

/// One executable graph (one command buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecGraph {
    /// syclgraph's number (from 1).
    pub graph: u32,
    /// The node whose instances are its replays, once defined.
    pub node: Option<NodeId>,
    /// Replays so far.
    pub replays: u64,
}

/// A command recorded into a graph: its node, what it does, the memory it
/// writes (destination pointer) and how many bytes; an appended command
/// with the same three is the same command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedCommand {
    /// Its node (its code location).
    pub node: NodeId,
    /// Copy or fill.
    pub class: CommandClass,
    /// The destination pointer.
    pub ptr: u64,
    /// Bytes.
    pub size: u64,
}

/// What one thread is doing with graphs.
#[derive(Default)]
struct ThreadGraphs {
    /// Its recorded commands, oldest first (at most [`MAX_RECORDED`]).
    recorded: VecDeque<RecordedCommand>,
    /// The recorded commands the graph being finalised claimed.
    claimed: Vec<NodeId>,
    /// The node definition of the appended command whose append call
    /// comes next (sent only if no recorded command matches it).
    appended: Option<Box<NodeInfo>>,
    /// The node of the appended command whose append call comes next,
    /// when its node_create named its code location (a kernel).
    appended_node: Option<NodeId>,
}

/// Every command buffer and recorded command seen.
#[derive(Default)]
pub struct GraphBook {
    next_graph: AtomicU32,
    buffers: FastMap<usize, ExecGraph>,
    sync_points: FastMap<(u32, u32), NodeId>,
    threads: FastMap<u32, ThreadGraphs>,
    /// UR queue handle → SYCL queue id (queue_create's `queue_handle`).
    queues: FastMap<u64, u64>,
    /// Recorded commands forgotten because a thread kept more than
    /// [`MAX_RECORDED`] (their appended commands become nodes of their own).
    pub recorded_dropped: AtomicU64,
    /// Executable graphs first seen at a replay: finalised before
    /// syclgraph followed UR calls, so their members are unknown.
    pub finalised_unseen: AtomicU64,
}

/// What syclgraph could not follow of SYCL graphs, for the summary's
/// `lost:` lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphLosses {
    /// [`GraphBook::recorded_dropped`].
    pub recorded_dropped: u64,
    /// [`GraphBook::finalised_unseen`].
    pub finalised_unseen: u64,
}

impl GraphBook {
    /// `command` was recorded into a graph on `thread` (it did not run).
    pub fn recorded(&self, thread: u32, command: RecordedCommand) {
        let mut t = self.threads.entry(thread).or_default();
        if t.recorded.len() == MAX_RECORDED {
            t.recorded.pop_front();
            self.recorded_dropped.fetch_add(1, Ordering::Relaxed);
        }
        t.recorded.push_back(command);
    }

    /// A command buffer was created on `thread`: a new executable graph.
    /// Returns its number.
    pub fn created(&self, thread: u32, buffer: usize) -> u32 {
        let graph = self.next_graph.fetch_add(1, Ordering::Relaxed) + 1;
        self.buffers.insert(
            buffer,
            ExecGraph {
                graph,
                node: None,
                replays: 0,
            },
        );
        let mut t = self.threads.entry(thread).or_default();
        t.claimed.clear();
        t.appended = None;
        t.appended_node = None;
        graph
    }

    /// Keeps the definition of the command appended next on `thread`.
    pub fn appending(&self, thread: u32, info: Box<NodeInfo>) {
        self.threads.entry(thread).or_default().appended = Some(info);
    }

    /// Keeps the node of the command appended next on `thread`.
    pub fn appending_node(&self, thread: u32, node: NodeId) {
        self.threads.entry(thread).or_default().appended_node = Some(node);
    }

    /// The command appended on `thread` (a copy or fill of `size` bytes to
    /// `ptr`, or a kernel): the node kept by [`GraphBook::appending_node`],
    /// else the newest recorded command that matches and the graph did not
    /// claim yet (`Ok`), else the definition kept by
    /// [`GraphBook::appending`] (`Err`; `None` if there was none).
    pub fn appended(
        &self,
        thread: u32,
        class: CommandClass,
        ptr: u64,
        size: u64,
    ) -> Result<NodeId, Option<Box<NodeInfo>>> {
        let mut t = self.threads.entry(thread).or_default();
        let info = t.appended.take();
        if let Some(node) = t.appended_node.take() {
            return Ok(node);
        }
        let claimed = &t.claimed;
        let found = t
            .recorded
            .iter()
            .rev()
            .find(|c| {
                c.class == class && c.ptr == ptr && c.size == size && !claimed.contains(&c.node)
            })
            .map(|c| c.node);
        match found {
            Some(node) => {
                t.claimed.push(node);
                Ok(node)
            }
            None => Err(info),
        }
    }

    /// What could not be followed so far.
    pub fn losses(&self) -> GraphLosses {
        GraphLosses {
            recorded_dropped: self.recorded_dropped.load(Ordering::Relaxed),
            finalised_unseen: self.finalised_unseen.load(Ordering::Relaxed),
        }
    }

    /// The SYCL queue `queue_id` is the UR queue `handle`.
    pub fn queue_created(&self, handle: u64, queue_id: u64) {
        self.queues.insert(handle, queue_id);
    }

    /// The SYCL queue of a UR queue handle.
    pub fn queue_of(&self, handle: usize) -> Option<u64> {
        self.queues.get(&(handle as u64)).map(|q| *q)
    }

    /// The graph of a command buffer.
    pub fn graph_of(&self, buffer: usize) -> Option<u32> {
        self.buffers.get(&buffer).map(|g| g.graph)
    }

    /// `node` gives `sync_point` in `graph`.
    pub fn gives(&self, graph: u32, sync_point: u32, node: NodeId) {
        self.sync_points.insert((graph, sync_point), node);
    }

    /// The command that gave `sync_point` in `graph`.
    pub fn giver(&self, graph: u32, sync_point: u32) -> Option<NodeId> {
        self.sync_points.get(&(graph, sync_point)).map(|n| *n)
    }

    /// The replays of `buffer` are the instances of `node`.
    pub fn set_node(&self, buffer: usize, node: NodeId) {
        if let Some(mut g) = self.buffers.get_mut(&buffer) {
            g.node = Some(node);
        }
    }

    /// One more replay of `buffer`: its graph and the replay's instance
    /// number (from 1), and whether the graph's node is still to be
    /// defined (a buffer finalised before the hooks were in gets a new
    /// graph number here). `make_node` gives the node id when it is.
    pub fn replay(&self, buffer: usize, make_node: impl FnOnce() -> NodeId) -> (ExecGraph, bool) {
        let mut g = self.buffers.entry(buffer).or_insert_with(|| ExecGraph {
            graph: self.next_graph.fetch_add(1, Ordering::Relaxed) + 1,
            node: None,
            replays: 0,
        });
        let new = g.node.is_none();
        if new {
            g.node = Some(make_node());
            self.finalised_unseen.fetch_add(1, Ordering::Relaxed);
        }
        g.replays += 1;
        (*g, new)
    }
}

/// A pointer or size in XPTI metadata text (decimal, or hex with `0x`).
pub fn metadata_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(node: NodeId, class: CommandClass, ptr: u64) -> RecordedCommand {
        RecordedCommand {
            node,
            class,
            ptr,
            size: 64,
        }
    }

    #[test]
    fn appended_commands_match_recorded_ones_by_class_pointer_and_size() {
        let book = GraphBook::default();
        book.recorded(1, cmd(10, CommandClass::Copy, 0xa));
        book.recorded(1, cmd(11, CommandClass::Fill, 0xb));
        book.recorded(1, cmd(12, CommandClass::Copy, 0xc));
        assert_eq!(book.created(1, 0x100), 1);
        // A second graph finalised first: its own commands.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xc, 64), Ok(12));
        assert_eq!(book.created(1, 0x200), 2);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(11));
        // Claimed once per graph; another size or class is not the same.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Err(None));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xa, 64), Err(None));
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 32), Err(None));
        // Finalised again: the same commands.
        book.created(1, 0x300);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        // Another thread recorded nothing: the kept definition comes back.
        let info = Box::new(NodeInfo {
            name: "copy usm".into(),
            ..NodeInfo::default()
        });
        book.appending(2, info.clone());
        assert_eq!(
            book.appended(2, CommandClass::Copy, 0xa, 64),
            Err(Some(info))
        );
    }

    #[test]
    fn a_located_appended_command_is_its_own_node() {
        // A recorded kernel's node_create comes at finalisation with its
        // code location: its append is that node, whatever was recorded.
        let book = GraphBook::default();
        book.recorded(1, cmd(10, CommandClass::Copy, 0xa));
        book.created(1, 0x100);
        book.appending_node(1, 42);
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Ok(42));
        // Used once; the next append matches as before.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Err(None));
        // A new graph forgets a node kept for an append that never came.
        book.appending_node(1, 43);
        book.created(1, 0x200);
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Err(None));
    }

    #[test]
    fn losses_are_counted() {
        let book = GraphBook::default();
        assert_eq!(book.losses(), GraphLosses::default());
        // A buffer first seen at its replays: one graph, counted once.
        book.replay(0xa0, || 1);
        book.replay(0xa0, || unreachable!());
        for n in 0..MAX_RECORDED as u32 + 2 {
            book.recorded(1, cmd(n, CommandClass::Copy, u64::from(n)));
        }
        let losses = book.losses();
        assert_eq!((losses.finalised_unseen, losses.recorded_dropped), (1, 2));
    }

    #[test]
    fn replays_count_per_buffer_and_define_the_node_once() {
        let book = GraphBook::default();
        book.created(1, 0xa0);
        book.set_node(0xa0, 7);
        let (g, new) = book.replay(0xa0, || unreachable!());
        assert_eq!((g.graph, g.node, g.replays, new), (1, Some(7), 1, false));
        assert_eq!(book.replay(0xa0, || unreachable!()).0.replays, 2);
        // A buffer never seen created: a graph of its own.
        let (g, new) = book.replay(0xc0, || 9);
        assert_eq!((g.graph, g.node, g.replays, new), (2, Some(9), 1, true));
        book.gives(1, 5, 10);
        assert_eq!(book.giver(1, 5), Some(10));
        assert_eq!(book.giver(2, 5), None);
        assert_eq!(book.graph_of(0xc0), Some(2));
        book.queue_created(0x55, 3);
        assert_eq!(book.queue_of(0x55), Some(3));
        assert_eq!(book.queue_of(0x56), None);
    }

    #[test]
    fn metadata_numbers_in_both_renderings() {
        assert_eq!(metadata_number("262144"), Some(262_144));
        assert_eq!(metadata_number("0x7f97d867f000"), Some(0x7f97_d867_f000));
        assert_eq!(metadata_number("(null)"), None);
    }
}
