//! Bookkeeping for SYCL graphs (`sycl_ext_oneapi_graph`) on the hot path.
//!
//! What the runtime does (DPC++ 2026, OpenCL CPU device, observed with
//! `SYCL_UR_TRACE=2` and an XPTI dump):
//! - **Recording** a USM memcpy/memset on a queue sends its usual
//!   node_create, task_begin and task_end (with the source location), but
//!   no UR call: nothing is enqueued. With the explicit `add` API nothing
//!   at all is sent.
//! - **Finalising** calls `urCommandBufferCreateExp`, then per command a
//!   node_create without source location (`copy usm`, `fill usm`), its
//!   task and signal, and `urCommandBufferAppend…Exp` with the sync points
//!   it waits for and the one it gives, then `urCommandBufferFinalizeExp`.
//! - **Each replay** is one `urEnqueueCommandBufferExp` with an output
//!   event; XPTI sends nothing.
//!
//! So a direct-path USM submission whose task ended without its UR call,
//! while UR calls are followed, was recorded into a graph: it is kept here
//! per thread ([`GraphBook::recorded`]) instead of being sent as a
//! submission. At finalisation, the appended commands are matched in order
//! with the thread's recorded ones (same class: copy or fill), or become
//! nodes of their own (explicit API); the replays become instances of the
//! graph's own node.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use syclgraph_graph::record::NodeId;

use crate::identity::FastMap;
use crate::xpti::CText;

/// Recorded commands kept per thread before a finalisation claims them;
/// more are counted in [`GraphBook::recorded_dropped`].
const MAX_RECORDED: usize = 4096;

/// What a recorded or appended command does, to match the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandClass {
    /// memcpy / `copy usm`.
    Copy,
    /// memset, fill / `fill usm`.
    Fill,
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

    /// The class of an appended command from its payload name (`copy usm`,
    /// `fill usm`).
    pub fn of_appended(name: &str) -> Option<CommandClass> {
        match name {
            "copy usm" | "copy 2d usm" => Some(CommandClass::Copy),
            "fill usm" | "fill 2d usm" | "memset usm" => Some(CommandClass::Fill),
            _ => None,
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

/// The recorded commands of one thread.
#[derive(Default)]
struct Recorded {
    /// Recorded since the last finalisation began.
    fresh: Vec<(NodeId, CommandClass)>,
    /// The run the last finalisation used (a graph finalised again uses it
    /// again).
    last: Vec<(NodeId, CommandClass)>,
    /// How far the finalisation in progress matched `last`.
    cursor: usize,
}

/// Every command buffer and recorded command seen.
#[derive(Default)]
pub struct GraphBook {
    next_graph: AtomicU32,
    buffers: FastMap<usize, ExecGraph>,
    sync_points: FastMap<(u32, u32), NodeId>,
    recorded: FastMap<u32, Recorded>,
    /// Recorded commands beyond [`MAX_RECORDED`] on one thread: left
    /// unmatched (their appended commands become nodes of their own).
    pub recorded_dropped: AtomicU64,
}

impl GraphBook {
    /// `node` was recorded into a graph on `thread` (it did not run).
    pub fn recorded(&self, thread: u32, node: NodeId, class: CommandClass) {
        let mut run = self.recorded.entry(thread).or_default();
        if run.fresh.len() < MAX_RECORDED {
            run.fresh.push((node, class));
        } else {
            self.recorded_dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A command buffer was created on `thread`: a new executable graph.
    /// Returns its number.
    pub fn created(&self, thread: u32, buffer: usize) -> u32 {
        let graph = self.new_graph(buffer);
        if let Some(mut run) = self.recorded.get_mut(&thread) {
            if !run.fresh.is_empty() {
                run.last = std::mem::take(&mut run.fresh);
            }
            run.cursor = 0;
        }
        graph
    }

    fn new_graph(&self, buffer: usize) -> u32 {
        let graph = self.next_graph.fetch_add(1, Ordering::Relaxed) + 1;
        self.buffers.insert(
            buffer,
            ExecGraph {
                graph,
                node: None,
                replays: 0,
            },
        );
        graph
    }

    /// The recorded command the next appended command of `class` stands
    /// for on `thread`, if the recorded run goes on with that class.
    pub fn next_recorded(&self, thread: u32, class: Option<CommandClass>) -> Option<NodeId> {
        let mut run = self.recorded.get_mut(&thread)?;
        let at = run.cursor;
        match (run.last.get(at), class) {
            (Some(&(node, recorded)), Some(appended)) if recorded == appended => {
                run.cursor += 1;
                Some(node)
            }
            _ => {
                // The run does not match this graph: no guessing further.
                run.cursor = usize::MAX;
                None
            }
        }
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
        }
        g.replays += 1;
        (*g, new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_run_is_matched_in_order_and_reused_by_a_second_finalisation() {
        let book = GraphBook::default();
        book.recorded(1, 10, CommandClass::Copy);
        book.recorded(1, 11, CommandClass::Fill);
        assert_eq!(book.created(1, 0xa0), 1);
        assert_eq!(book.next_recorded(1, Some(CommandClass::Copy)), Some(10));
        assert_eq!(book.next_recorded(1, Some(CommandClass::Fill)), Some(11));
        assert_eq!(book.next_recorded(1, Some(CommandClass::Fill)), None);
        // Finalised again: the same recorded commands.
        assert_eq!(book.created(1, 0xb0), 2);
        assert_eq!(book.next_recorded(1, Some(CommandClass::Copy)), Some(10));
        // Another thread recorded nothing.
        assert_eq!(book.next_recorded(2, Some(CommandClass::Copy)), None);
    }

    #[test]
    fn a_mismatch_stops_matching() {
        let book = GraphBook::default();
        book.recorded(1, 10, CommandClass::Copy);
        book.recorded(1, 11, CommandClass::Copy);
        book.created(1, 0xa0);
        assert_eq!(book.next_recorded(1, Some(CommandClass::Fill)), None);
        assert_eq!(book.next_recorded(1, Some(CommandClass::Copy)), None);
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
    }
}
