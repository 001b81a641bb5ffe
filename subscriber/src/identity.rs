//! Our ids for nodes, edges and strings, assigned on first sight.
//!
//! The runtime makes a new event (with a new unique_id, a heap address that
//! is reused later) for every submission, and counts `instance_id` per code
//! location. So a node is a code location: the event's payload (name, file,
//! line, column). The framework interns payload strings, so the payload is
//! compared by string address on every instance (no string read); only an
//! unseen set of addresses costs a comparison of the text. Edges name their
//! ends by unique_id: [`NodeTable::bind`] remembers which submission each
//! live unique_id stands for.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use dashmap::DashMap;
use syclgraph_graph::record::{EdgeId, NodeId, StrId};

use crate::xpti::{EventRef, PayloadKey};

/// What [`NodeTable::resolve`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A node seen before.
    Known(NodeId),
    /// A node seen for the first time: its metadata must be read now.
    New(NodeId),
}

/// A payload by content, for the rare first sight of new string addresses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PayloadText {
    name: Box<str>,
    file: Box<str>,
    line: u32,
    column: u32,
}

/// Most payload addresses remembered beyond the number of nodes; past it,
/// unseen addresses are compared by text every time instead of remembered.
const MAX_EXTRA_ADDRESSES: usize = 65_536;

/// A node's id and its submission counter (our instance numbers: the
/// runtime's `instance_id` also counts UR calls made at the same code
/// location when the UR tracing layer is on).
type Entry = (NodeId, Arc<AtomicU64>);

/// Code location → [`NodeId`], and live unique_id → submission.
#[derive(Default)]
pub struct NodeTable {
    by_address: DashMap<PayloadKey, Entry>,
    by_text: DashMap<PayloadText, Entry>,
    extra_addresses: AtomicUsize,
    live: DashMap<u64, (NodeId, u64)>,
    next: AtomicU32,
}

impl NodeTable {
    /// The node of `event`'s code location, assigning a new id on first sight.
    #[inline]
    pub fn resolve(&self, event: EventRef<'_>) -> Resolved {
        self.lookup(event, false).0
    }

    /// Like [`NodeTable::resolve`], and counts one more submission of the
    /// node: returns its instance number (1, 2, ...).
    #[inline]
    pub fn submit(&self, event: EventRef<'_>) -> (Resolved, u64) {
        self.lookup(event, true)
    }

    #[inline]
    fn lookup(&self, event: EventRef<'_>, count: bool) -> (Resolved, u64) {
        let key = event.payload_key();
        if let Some(entry) = self.by_address.get(&key) {
            return (Resolved::Known(entry.0), next_instance(&entry, count));
        }
        let (resolved, entry) = self.resolve_by_text(event, key);
        (resolved, next_instance(&entry, count))
    }

    #[cold]
    fn resolve_by_text(&self, event: EventRef<'_>, key: PayloadKey) -> (Resolved, Entry) {
        let (name, file) = event
            .payload()
            .map(|p| (p.name, p.source_file))
            .unwrap_or(("", ""));
        let text = PayloadText {
            name: name.into(),
            file: file.into(),
            line: key.line,
            column: key.column,
        };
        let mut new = false;
        let entry = self
            .by_text
            .entry(text)
            .or_insert_with(|| {
                new = true;
                (self.next.fetch_add(1, Ordering::Relaxed), Arc::default())
            })
            .clone();
        if new || self.extra_addresses.fetch_add(1, Ordering::Relaxed) < MAX_EXTRA_ADDRESSES {
            self.by_address.insert(key, entry.clone());
        }
        let resolved = if new {
            Resolved::New(entry.0)
        } else {
            Resolved::Known(entry.0)
        };
        (resolved, entry)
    }

    /// Remembers that the event with `uid` is instance `instance` of `node`.
    #[inline]
    pub fn bind(&self, uid: u64, node: NodeId, instance: u64) {
        self.live.insert(uid, (node, instance));
    }

    /// The submission the event with `uid` stands for, if it was bound.
    #[inline]
    pub fn submission(&self, uid: u64) -> Option<(NodeId, u64)> {
        self.live.get(&uid).map(|v| *v)
    }

    /// How many distinct nodes were seen.
    pub fn len(&self) -> u32 {
        self.next.load(Ordering::Relaxed)
    }

    /// True when no node was seen.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn next_instance(entry: &Entry, count: bool) -> u64 {
    if count {
        entry.1.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    }
}

/// (source node, target node) → [`EdgeId`]: one edge per pair of code
/// locations, counted once per submission that created it again.
#[derive(Default)]
pub struct EdgeTable {
    ids: DashMap<(NodeId, NodeId), EdgeId>,
    next: AtomicU32,
}

impl EdgeTable {
    /// The id of this edge, and whether it is new.
    pub fn resolve(&self, source: NodeId, target: NodeId) -> (EdgeId, bool) {
        if let Some(id) = self.ids.get(&(source, target)) {
            return (*id, false);
        }
        let mut new = false;
        let id = *self.ids.entry((source, target)).or_insert_with(|| {
            new = true;
            self.next.fetch_add(1, Ordering::Relaxed)
        });
        (id, new)
    }
}

/// Interned strings for per-instance labels (wait reasons, device names).
#[derive(Default)]
pub struct Interner {
    ids: DashMap<Box<str>, StrId>,
    next: AtomicU32,
}

impl Interner {
    /// The id of `text`, and whether it is new (then it must be announced).
    pub fn intern(&self, text: &str) -> (StrId, bool) {
        if let Some(id) = self.ids.get(text) {
            return (*id, false);
        }
        let mut new = false;
        let id = *self.ids.entry(text.into()).or_insert_with(|| {
            new = true;
            self.next.fetch_add(1, Ordering::Relaxed)
        });
        (id, new)
    }
}
