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
//! - **Sync points** are handed out only by a command buffer made out of
//!   order. The runtime (`exec_graph_impl::createCommandBuffers`) makes it
//!   in order (`ur_exp_command_buffer_desc_t::isInOrder`) when the graph
//!   is a single path (one root, no command with two successors) and was
//!   not finalised with `enable_profiling`; it then appends the path's
//!   commands in their order and passes no sync point at all. So in an
//!   in-order buffer each appended command waits for the one appended
//!   before it ([`GraphBook::in_order_previous`]); in any other, for the
//!   commands that gave the sync points it names.
//! - **Child command buffers**: for a native command
//!   (`ext_codeplay_enqueue_native_command`) on CUDA and HIP the runtime
//!   creates a second command buffer while it builds the graph's, hands it
//!   to `urCommandBufferAppendNativeCommandExp` as the node's contents and
//!   never replays it: a buffer created while this thread builds another
//!   is that one's child ([`GraphBook::child_created`]), no graph of its
//!   own. The OpenCL and Level Zero adapters make none.
//! - **Nested graphs** (a graph replayed while another is recorded, or
//!   `add`ed to it) are copied into the graph that holds them: their
//!   commands are appended to its buffer like its own.
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
    /// The buffer was made in order: its commands run in the order they
    /// were appended (and it hands out no sync points).
    pub in_order: bool,
    /// The command appended last.
    pub last_appended: Option<NodeId>,
}

impl ExecGraph {
    fn new(graph: u32, in_order: bool) -> ExecGraph {
        ExecGraph {
            graph,
            node: None,
            replays: 0,
            in_order,
            last_appended: None,
        }
    }
}

/// An appended command as its `urCommandBufferAppend…Exp` call gives it:
/// what it does, the memory it writes (destination pointer, or the kernel
/// or buffer handle) and how many bytes, and the name of its node when no
/// node_create announced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    /// What it does.
    pub class: CommandClass,
    /// The destination pointer (or handle).
    pub ptr: u64,
    /// Bytes (0 when not a memory command).
    pub size: u64,
    /// Its node's name when no node_create announced it.
    pub name: &'static str,
}

/// A node_create announced while a command buffer was built whose append
/// syclgraph never saw (a `urCommandBufferAppend…Exp` it does not follow):
/// the next node_create found it still waiting.
#[derive(Debug, PartialEq, Eq)]
pub enum Unappended {
    /// Its node (its code location).
    Node(NodeId),
    /// The definition of a node of its own.
    Info(Box<NodeInfo>),
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
    /// Its recorded commands, oldest first (at most [`MAX_RECORDED`]),
    /// each with whether a graph claimed it already.
    recorded: VecDeque<(RecordedCommand, bool)>,
    /// The recorded commands the graph being finalised claimed.
    claimed: Vec<NodeId>,
    /// Those the graph finalised before it on this thread claimed.
    previous_claimed: Vec<NodeId>,
    /// The node definition of the appended command whose append call
    /// comes next (sent only if no recorded command matches it).
    appended: Option<Box<NodeInfo>>,
    /// The node of the appended command whose append call comes next,
    /// when its node_create named its code location (a kernel).
    appended_node: Option<NodeId>,
}

impl ThreadGraphs {
    /// What was kept for the next append, taken.
    fn take_unappended(&mut self) -> Option<Unappended> {
        match (self.appended_node.take(), self.appended.take()) {
            (Some(node), _) => Some(Unappended::Node(node)),
            (None, Some(info)) => Some(Unappended::Info(info)),
            (None, None) => None,
        }
    }
}

/// Every command buffer and recorded command seen.
#[derive(Default)]
pub struct GraphBook {
    next_graph: AtomicU32,
    buffers: FastMap<usize, ExecGraph>,
    /// Child command buffers (made while another was built) → the graph
    /// of the buffer they belong to.
    children: FastMap<usize, u32>,
    /// Command buffers created while recording was stopped.
    unrecorded: FastMap<usize, ()>,
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
    /// Executable graphs first seen at a replay that were finalised while
    /// recording was stopped (`SYCLGRAPH_START`, the C API, ITT).
    pub finalised_while_stopped: AtomicU64,
    /// Commands announced while a buffer was built whose append call is
    /// not one syclgraph follows: members without their edges.
    pub unfollowed_appends: AtomicU64,
    /// Commands appended to a child command buffer (not drawn).
    pub child_appends: AtomicU64,
}

/// What syclgraph could not follow of SYCL graphs, for the summary's
/// `lost:` lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphLosses {
    /// [`GraphBook::recorded_dropped`].
    pub recorded_dropped: u64,
    /// [`GraphBook::finalised_unseen`].
    pub finalised_unseen: u64,
    /// [`GraphBook::finalised_while_stopped`].
    pub finalised_while_stopped: u64,
    /// [`GraphBook::unfollowed_appends`].
    pub unfollowed_appends: u64,
    /// [`GraphBook::child_appends`].
    pub child_appends: u64,
}

impl GraphBook {
    /// `command` was recorded into a graph on `thread` (it did not run).
    pub fn recorded(&self, thread: u32, command: RecordedCommand) {
        let mut t = self.threads.entry(thread).or_default();
        if t.recorded.len() == MAX_RECORDED {
            t.recorded.pop_front();
            self.recorded_dropped.fetch_add(1, Ordering::Relaxed);
        }
        t.recorded.push_back((command, false));
    }

    /// A command buffer was created on `thread`: a new executable graph,
    /// made in order or not (its descriptor's `isInOrder`). Returns its
    /// number.
    pub fn created(&self, thread: u32, buffer: usize, in_order: bool) -> u32 {
        let graph = self.next_graph.fetch_add(1, Ordering::Relaxed) + 1;
        self.children.remove(&buffer);
        self.unrecorded.remove(&buffer);
        self.buffers.insert(buffer, ExecGraph::new(graph, in_order));
        let mut t = self.threads.entry(thread).or_default();
        let t = &mut *t;
        std::mem::swap(&mut t.previous_claimed, &mut t.claimed);
        t.claimed.clear();
        t.appended = None;
        t.appended_node = None;
        graph
    }

    /// A command buffer was created while the one of graph `parent` was
    /// being built on the same thread: the contents of one of its
    /// commands (a native command's on CUDA), no graph of its own.
    pub fn child_created(&self, buffer: usize, parent: u32) {
        self.buffers.remove(&buffer);
        self.unrecorded.remove(&buffer);
        self.children.insert(buffer, parent);
    }

    /// Whether `buffer` is a child command buffer.
    pub fn is_child(&self, buffer: usize) -> bool {
        !self.children.is_empty() && self.children.contains_key(&buffer)
    }

    /// A command buffer was created while recording was stopped: its
    /// replays, if recorded, say why its commands are unknown.
    pub fn created_unrecorded(&self, buffer: usize) {
        self.buffers.remove(&buffer);
        self.children.remove(&buffer);
        self.unrecorded.insert(buffer, ());
    }

    /// Keeps the definition of the command appended next on `thread`;
    /// gives back what was kept for a command whose append never came.
    pub fn appending(&self, thread: u32, info: Box<NodeInfo>) -> Option<Unappended> {
        let mut t = self.threads.entry(thread).or_default();
        let before = t.take_unappended();
        t.appended = Some(info);
        before
    }

    /// Keeps the node of the command appended next on `thread`; gives back
    /// what was kept for a command whose append never came.
    pub fn appending_node(&self, thread: u32, node: NodeId) -> Option<Unappended> {
        let mut t = self.threads.entry(thread).or_default();
        let before = t.take_unappended();
        t.appended_node = Some(node);
        before
    }

    /// What was kept on `thread` for a command whose append never came
    /// (called when the buffer is finalised).
    pub fn unappended(&self, thread: u32) -> Option<Unappended> {
        self.threads.get_mut(&thread)?.take_unappended()
    }

    /// `node` was appended to `buffer`: in an in-order buffer, the command
    /// appended before it, which it waits for; `None` in any other (its
    /// sync points say what it waits for) or for the first.
    pub fn in_order_previous(&self, buffer: usize, node: NodeId) -> Option<NodeId> {
        let mut g = self.buffers.get_mut(&buffer)?;
        let previous = g.last_appended.replace(node);
        if g.in_order {
            previous.filter(|p| *p != node)
        } else {
            None
        }
    }

    /// The command appended on `thread` (a copy or fill of `size` bytes to
    /// `ptr`, a kernel, or another command): the node kept by
    /// [`GraphBook::appending_node`], else the recorded command that
    /// matches and the graph did not claim yet (`Ok`), else the definition
    /// kept by [`GraphBook::appending`] (`Err`; `None` if there was none).
    ///
    /// A recorded command is a candidate while no graph claimed it, or
    /// when the graph finalised before on this thread did (one modifiable
    /// graph finalised again, or a graph replayed inside the recording of
    /// this one, whose commands the runtime copies into it); one claimed by
    /// any older graph is not (the explicit API sends nothing while it
    /// adds: its commands are not those recorded for other graphs). Of the
    /// candidates, the first recorded after the one this graph claimed
    /// last (the runtime appends a recorded path in its order, a nested
    /// graph's commands where it was replayed), else the newest (a graph
    /// is finalised after its recording; what was recorded since is
    /// another graph's).
    pub fn appended(
        &self,
        thread: u32,
        class: CommandClass,
        ptr: u64,
        size: u64,
    ) -> Result<NodeId, Option<Box<NodeInfo>>> {
        let mut t = self.threads.entry(thread).or_default();
        let t = &mut *t;
        let info = t.appended.take();
        if let Some(node) = t.appended_node.take() {
            return Ok(node);
        }
        let (claimed, previous) = (&t.claimed, &t.previous_claimed);
        let candidate = |(c, taken): &(RecordedCommand, bool)| {
            c.class == class
                && c.ptr == ptr
                && c.size == size
                && !claimed.contains(&c.node)
                && (!taken || previous.contains(&c.node))
        };
        let after_last_claim = claimed.last().and_then(|last| {
            let at = t.recorded.iter().rposition(|(c, _)| c.node == *last)?;
            t.recorded
                .iter()
                .skip(at + 1)
                .position(candidate)
                .map(|i| at + 1 + i)
        });
        let found = after_last_claim.or_else(|| t.recorded.iter().rposition(candidate));
        match found {
            Some(at) => {
                let (command, taken) = &mut t.recorded[at];
                *taken = true;
                t.claimed.push(command.node);
                Ok(command.node)
            }
            None => Err(info),
        }
    }

    /// What could not be followed so far.
    pub fn losses(&self) -> GraphLosses {
        GraphLosses {
            recorded_dropped: self.recorded_dropped.load(Ordering::Relaxed),
            finalised_unseen: self.finalised_unseen.load(Ordering::Relaxed),
            finalised_while_stopped: self.finalised_while_stopped.load(Ordering::Relaxed),
            unfollowed_appends: self.unfollowed_appends.load(Ordering::Relaxed),
            child_appends: self.child_appends.load(Ordering::Relaxed),
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
        let mut g = self.buffers.entry(buffer).or_insert_with(|| {
            ExecGraph::new(self.next_graph.fetch_add(1, Ordering::Relaxed) + 1, false)
        });
        let new = g.node.is_none();
        if new {
            g.node = Some(make_node());
            let stopped = !self.unrecorded.is_empty() && self.unrecorded.remove(&buffer).is_some();
            let count = if stopped {
                &self.finalised_while_stopped
            } else {
                &self.finalised_unseen
            };
            count.fetch_add(1, Ordering::Relaxed);
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
        assert_eq!(book.created(1, 0x100, false), 1);
        // A second graph finalised first: its own commands.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xc, 64), Ok(12));
        assert_eq!(book.created(1, 0x200, false), 2);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(11));
        // Claimed once per graph; another size or class is not the same.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Err(None));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xa, 64), Err(None));
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 32), Err(None));
        // Finalised again: the same commands.
        book.created(1, 0x300, false);
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
        book.created(1, 0x100, false);
        book.appending_node(1, 42);
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Ok(42));
        // Used once; the next append matches as before.
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Err(None));
        // A new graph forgets a node kept for an append that never came.
        book.appending_node(1, 43);
        book.created(1, 0x200, false);
        assert_eq!(book.appended(1, CommandClass::Kernel, 0, 0), Err(None));
    }

    #[test]
    fn an_in_order_buffer_chains_its_commands_in_append_order() {
        let book = GraphBook::default();
        book.created(1, 0xa0, true);
        book.created(1, 0xb0, false);
        assert_eq!(book.in_order_previous(0xa0, 10), None);
        assert_eq!(book.in_order_previous(0xa0, 11), Some(10));
        assert_eq!(book.in_order_previous(0xa0, 12), Some(11));
        // Out of order: its sync points say what each waits for.
        assert_eq!(book.in_order_previous(0xb0, 20), None);
        assert_eq!(book.in_order_previous(0xb0, 21), None);
        // A buffer never seen created, and a child buffer: no graph.
        assert_eq!(book.in_order_previous(0xc0, 30), None);
        book.child_created(0xd0, 1);
        assert!(book.is_child(0xd0) && !book.is_child(0xa0));
        assert_eq!(book.graph_of(0xd0), None);
        assert_eq!(book.in_order_previous(0xd0, 31), None);
        // A new buffer at a freed child's address is a graph again.
        assert_eq!(book.created(1, 0xd0, false), 3);
        assert!(!book.is_child(0xd0));
    }

    #[test]
    fn recorded_commands_of_older_graphs_are_not_claimed_again() {
        let book = GraphBook::default();
        // Graph 1 recorded and finalised: it claims its memcpy.
        book.recorded(1, cmd(10, CommandClass::Copy, 0xa));
        book.created(1, 0x100, false);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        // Graph 2, recorded later with other memory, finalised.
        book.recorded(1, cmd(11, CommandClass::Fill, 0xb));
        book.created(1, 0x200, false);
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(11));
        // Graph 3 made with the explicit API copies the same memory: no
        // recorded command is its, graph 1's memcpy least of all.
        book.created(1, 0x300, false);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Err(None));
        // Graph 2's modifiable graph finalised again, with graph 3 between:
        // only the graph finalised just before may claim again, so its
        // fill is a node of its own (the limit of telling graphs apart).
        book.created(1, 0x400, false);
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Err(None));
    }

    #[test]
    fn a_nested_graphs_commands_are_matched_where_it_was_replayed() {
        // sub records a memcpy to a and a fill of b, and is finalised;
        // main records a fill of a, replays sub, fills b: the runtime
        // appends main's fill of a, sub's two commands, main's fill of b.
        let book = GraphBook::default();
        book.recorded(1, cmd(10, CommandClass::Copy, 0xa));
        book.recorded(1, cmd(11, CommandClass::Fill, 0xb));
        book.created(1, 0x100, true);
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(11));
        book.recorded(1, cmd(20, CommandClass::Fill, 0xa));
        book.recorded(1, cmd(21, CommandClass::Fill, 0xb));
        book.created(1, 0x200, true);
        assert_eq!(book.appended(1, CommandClass::Fill, 0xa, 64), Ok(20));
        assert_eq!(book.appended(1, CommandClass::Copy, 0xa, 64), Ok(10));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(11));
        assert_eq!(book.appended(1, CommandClass::Fill, 0xb, 64), Ok(21));
    }

    #[test]
    fn an_announced_command_whose_append_never_came_is_given_back() {
        let book = GraphBook::default();
        book.created(1, 0x100, false);
        assert_eq!(book.appending_node(1, 40), None);
        // Another node_create before 40's append: 40 comes back.
        assert_eq!(book.appending_node(1, 41), Some(Unappended::Node(40)));
        assert_eq!(book.appended(1, CommandClass::Other, 0, 0), Ok(41));
        let info = Box::new(NodeInfo {
            name: "prefetch".into(),
            ..NodeInfo::default()
        });
        assert_eq!(book.appending(1, info.clone()), None);
        assert_eq!(book.unappended(1), Some(Unappended::Info(info)));
        assert_eq!(book.unappended(1), None);
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
        // Created while recording was stopped: counted under that cause.
        book.created_unrecorded(0xb0);
        book.replay(0xb0, || 2);
        book.replay(0xb0, || unreachable!());
        let losses = book.losses();
        assert_eq!(
            (losses.finalised_unseen, losses.finalised_while_stopped),
            (1, 1)
        );
    }

    #[test]
    fn replays_count_per_buffer_and_define_the_node_once() {
        let book = GraphBook::default();
        book.created(1, 0xa0, false);
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
