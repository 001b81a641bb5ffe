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

use dashmap::DashMap;
use rustc_hash::FxBuildHasher;
use syclgraph_graph::record::{EdgeId, NodeId, StrId};

use crate::recent_bindings::RecentBindings;
use crate::thread_state::ThreadState;
pub use crate::thread_state::{Binding, BoundKey, LastNode, NodeCell, NodeFlags};
use crate::xpti::{is_known_file, EventRef, PayloadKey};

/// A concurrent map keyed by our own small keys (addresses, ids): Fx
/// hashing, a few instructions, instead of the default SipHash.
pub type FastMap<K, V> = DashMap<K, V, FxBuildHasher>;

/// A [`FastMap`] that forgets its oldest entries: two generations, the
/// current one taking inserts, lookups trying the current one first. Used
/// for keys that keep coming (every submission's unique_id, every device
/// event's address), most of which are never looked up again once their
/// command ran: without a bound they would grow with the run.
///
/// [`RecentMap::rotate_if_full`] (called by the collector thread, never on
/// the hot path) empties the older generation and makes it current once the
/// current one holds `capacity` entries. An entry is therefore kept for at
/// least `capacity` later inserts; one older than two generations is
/// forgotten: a lookup then finds nothing, as for a key never inserted (an
/// edge's end is counted as not seen, a wait-list event as not traced).
pub struct RecentMap<K, V> {
    generations: [FastMap<K, V>; 2],
    current: AtomicUsize,
}

impl<K: std::hash::Hash + Eq, V: Copy> Default for RecentMap<K, V> {
    fn default() -> Self {
        RecentMap {
            generations: [FastMap::default(), FastMap::default()],
            current: AtomicUsize::new(0),
        }
    }
}

impl<K: std::hash::Hash + Eq, V: Copy> RecentMap<K, V> {
    /// A map whose generations have room for `capacity` entries each from
    /// the start, for keys that keep coming: filling a generation then
    /// moves no entry (growing it by doubling moved each about once). Only
    /// the tables' control bytes (one per slot) are written at once; the
    /// entries' pages are used as entries come.
    pub fn presized(capacity: usize) -> Self {
        let generation = || FastMap::with_capacity_and_hasher(capacity, Default::default());
        RecentMap {
            generations: [generation(), generation()],
            current: AtomicUsize::new(0),
        }
    }

    /// Inserts into the current generation.
    #[inline]
    pub fn insert(&self, key: K, value: V) {
        let current = self.current.load(Ordering::Acquire) & 1;
        self.generations[current].insert(key, value);
    }

    /// The newest value for `key` in either generation.
    #[inline]
    pub fn get(&self, key: &K) -> Option<V> {
        let current = self.current.load(Ordering::Acquire) & 1;
        self.generations[current]
            .get(key)
            .map(|v| *v)
            .or_else(|| self.generations[current ^ 1].get(key).map(|v| *v))
    }

    /// Empties the older generation and makes it current, when the current
    /// one holds `capacity` entries or more. Returns whether it did.
    pub fn rotate_if_full(&self, capacity: usize) -> bool {
        let current = self.current.load(Ordering::Acquire);
        if self.generations[current & 1].len() < capacity {
            return false;
        }
        self.generations[(current + 1) & 1].clear();
        self.current
            .store(current.wrapping_add(1), Ordering::Release);
        true
    }

    /// Forgets every entry (off the hot path).
    pub fn clear(&self) {
        for generation in &self.generations {
            generation.clear();
        }
    }

    /// Entries in both generations.
    pub fn len(&self) -> usize {
        self.generations.iter().map(|g| g.len()).sum()
    }

    /// True when both generations are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Entries a [`RecentMap`] generation holds before it is rotated: three
/// quarters of [`RECENT_ROOM`], so that a shard the hash fills a little
/// more than the others (a few percent) still fits its table.
pub const RECENT_CAPACITY: usize = 49_152;

/// The room a presized [`RecentMap`] generation is made with: 7/8 of
/// 65,536, so that its shards' tables have 65,536 slots in all (a table
/// holds 7/8 of its slots). Room for 65,536 entries took 131,072 slots:
/// the dependencies' event map was 6.25 MB, now 3.1 (docs/performance.md).
pub const RECENT_ROOM: usize = 57_344;

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

/// A node's entry in the tables: its [`NodeCell`], made once and kept
/// for the life of the process (like the node's table entries).
type Entry = &'static NodeCell;

/// Tells [`NodeTable`]s apart in the threads' [`LastNode`] (tests make
/// several in one process).
static NEXT_TABLE: AtomicU64 = AtomicU64::new(1);

/// Code location → [`NodeId`], and live unique_id → submission.
pub struct NodeTable {
    by_address: FastMap<PayloadKey, Entry>,
    by_text: FastMap<PayloadText, Entry>,
    extra_addresses: AtomicUsize,
    /// Every submission's unique_id: the runtime gives each scheduler
    /// command a new one, so this keeps the newest only.
    live: RecentBindings,
    next: AtomicU32,
    /// This table's number, for [`LastNode::table`].
    id: u64,
}

impl Default for NodeTable {
    fn default() -> Self {
        NodeTable {
            by_address: FastMap::default(),
            by_text: FastMap::default(),
            extra_addresses: AtomicUsize::new(0),
            live: RecentBindings::default(),
            next: AtomicU32::new(0),
            id: NEXT_TABLE.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl NodeTable {
    /// The node of `event`'s code location, assigning a new id on first
    /// sight. `t`: the calling thread's state (its last node).
    #[inline]
    pub fn resolve(&self, t: &ThreadState, event: EventRef<'_>) -> Resolved {
        let (new, _, cell) = self.lookup(t, event, false, 0);
        resolved(new, cell)
    }

    /// The flags of a node seen before by this payload.
    pub fn flags(&self, t: &ThreadState, event: EventRef<'_>) -> NodeFlags {
        self.lookup(t, event, false, 0).2.flags
    }

    /// Like [`NodeTable::resolve`], and counts one more submission of the
    /// node: returns its instance number (1, 2, ...) and flags. `queue` is
    /// the submission's queue (0: unknown), kept as the node's first queue.
    #[inline]
    pub fn submit(
        &self,
        t: &ThreadState,
        event: EventRef<'_>,
        queue: u64,
    ) -> (Resolved, u64, NodeFlags) {
        let (new, instance, cell) = self.lookup(t, event, true, queue);
        (resolved(new, cell), instance, cell.flags)
    }

    /// The node of a payload seen before, by address only; never creates one.
    #[inline]
    pub fn find(&self, event: EventRef<'_>) -> Option<NodeId> {
        self.by_address.get(&event.payload_key()).map(|e| e.node)
    }

    /// Whether the node is new, the instance counted (0 unless `count`)
    /// and the node: three words, so that the two ways below meet in
    /// registers, not through a copy on the stack.
    #[inline]
    fn lookup(
        &self,
        t: &ThreadState,
        event: EventRef<'_>,
        count: bool,
        queue: u64,
    ) -> (bool, u64, &'static NodeCell) {
        let key = event.payload_key();
        // A loop submits the same code location again and again: this
        // thread's last node answers without the shared map (its entries
        // never change once made).
        let (new, cell) = match t.last_node.get() {
            Some(last) if last.key == key && last.table == self.id => (false, last.cell),
            _ => self.lookup_shared(t, event, key, queue),
        };
        (new, next_instance(cell, count), cell)
    }

    /// [`NodeTable::lookup`] when this thread's last node is another one:
    /// the shared map (out of line, so that the common case, a loop
    /// submitting the same code location, stays a comparison inlined into
    /// the callback). Makes the node this thread's last.
    #[inline(never)]
    fn lookup_shared(
        &self,
        t: &ThreadState,
        event: EventRef<'_>,
        key: PayloadKey,
        queue: u64,
    ) -> (bool, &'static NodeCell) {
        let (new, cell) = match self.by_address.get(&key) {
            Some(entry) => (false, *entry),
            None => self.resolve_by_text(event, key, queue),
        };
        let last = LastNode {
            table: self.id,
            key,
            cell,
        };
        t.last_node.set(Some(last));
        (new, cell)
    }

    #[cold]
    fn resolve_by_text(
        &self,
        event: EventRef<'_>,
        key: PayloadKey,
        first_queue: u64,
    ) -> (bool, Entry) {
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
        let flags = NodeFlags {
            virtual_event: virtual_event(name),
            unknown_location: !is_known_file(file),
            first_queue,
        };
        let mut new = false;
        let entry = *self.by_text.entry(text).or_insert_with(|| {
            new = true;
            &*Box::leak(Box::new(NodeCell {
                counter: AtomicU64::new(0),
                node: self.next.fetch_add(1, Ordering::Relaxed),
                flags,
            }))
        });
        if new || self.extra_addresses.fetch_add(1, Ordering::Relaxed) < MAX_EXTRA_ADDRESSES {
            self.by_address.insert(key, entry);
        }
        (new, entry)
    }

    /// A new node id that no code location stands for (the node of a SYCL
    /// graph's replays, a command appended to a command buffer).
    pub fn fresh_id(&self) -> NodeId {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Remembers which submission the event with `uid` stands for.
    #[inline]
    pub fn bind(&self, uid: u64, binding: Binding) {
        self.live.insert(uid, binding);
    }

    /// [`NodeTable::bind`], and keeps the binding at hand for the task and
    /// signal events that follow on this thread ([`NodeTable::own_submission`]).
    #[inline]
    pub fn bind_here(&self, t: &ThreadState, event: EventRef<'_>, binding: Binding) {
        self.bind(event.unique_id(), binding);
        self.keep_here(t, event, binding);
    }

    /// Keeps the binding at hand for the task and signal events that follow
    /// on this thread, without [`NodeTable::bind`]: for a submission no
    /// other thread and no edge will ask about.
    #[inline]
    pub fn keep_here(&self, t: &ThreadState, event: EventRef<'_>, binding: Binding) {
        t.last_bound.set(Some((BoundKey::of(event), binding)));
    }

    /// The submission `event` stands for: from this thread's last
    /// [`NodeTable::bind_here`] when it is the same event (same address,
    /// code location and instance), else from the table.
    #[inline]
    pub fn own_submission(&self, t: &ThreadState, event: EventRef<'_>) -> Option<Binding> {
        bound_here(t, event).or_else(|| self.submission_elsewhere(event.unique_id()))
    }

    /// [`NodeTable::submission`], kept out of line: the rare path of
    /// [`NodeTable::own_submission`], which then stays small enough to
    /// inline into the callbacks.
    #[cold]
    #[inline(never)]
    fn submission_elsewhere(&self, uid: u64) -> Option<Binding> {
        self.submission(uid)
    }

    /// Forgets this thread's kept binding (its task ended).
    #[inline]
    pub fn forget_here(&self, t: &ThreadState) {
        t.last_bound.set(None);
    }

    /// The submission the event with `uid` stands for, if it was bound.
    #[inline]
    pub fn submission(&self, uid: u64) -> Option<Binding> {
        self.live.get(uid)
    }
}

/// The binding this thread made last ([`NodeTable::bind_here`] or
/// [`NodeTable::keep_here`]) when it is `event`'s: what
/// [`NodeTable::own_submission`] tries first.
#[inline(always)]
pub fn bound_here(t: &ThreadState, event: EventRef<'_>) -> Option<Binding> {
    match t.last_bound.get() {
        Some((key, binding)) if key == BoundKey::of(event) => Some(binding),
        _ => None,
    }
}

/// The event address of a `virtual_node[<hex>]` name.
pub fn virtual_event(name: &str) -> Option<usize> {
    let hex = name.strip_prefix("virtual_node[")?.strip_suffix(']')?;
    let hex = hex.strip_prefix("0x").unwrap_or(hex);
    usize::from_str_radix(hex, 16).ok()
}

/// The next instance of `cell`'s node when `count`, else 0.
#[inline]
fn next_instance(cell: &NodeCell, count: bool) -> u64 {
    if count {
        cell.counter.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    }
}

/// What a lookup found: `cell`'s node, `new` or seen before.
#[inline]
fn resolved(new: bool, cell: &NodeCell) -> Resolved {
    if new {
        Resolved::New(cell.node)
    } else {
        Resolved::Known(cell.node)
    }
}

/// Where an edge was first learned from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeOrigin {
    /// The runtime's edge_create.
    Runtime,
    /// A UR enqueue's event wait list (dependencies the runtime never reports).
    WaitList,
}

/// (source node, target node) → [`EdgeId`]: one edge per pair of code
/// locations, counted once per submission that created it again.
#[derive(Default)]
pub struct EdgeTable {
    ids: FastMap<(NodeId, NodeId), (EdgeId, EdgeOrigin)>,
    next: AtomicU32,
}

impl EdgeTable {
    /// The id of this edge, where it was first learned from, and whether it is new.
    pub fn resolve(
        &self,
        source: NodeId,
        target: NodeId,
        origin: EdgeOrigin,
    ) -> (EdgeId, EdgeOrigin, bool) {
        if let Some(id) = self.ids.get(&(source, target)) {
            return (id.0, id.1, false);
        }
        let mut new = false;
        let (id, first) = *self.ids.entry((source, target)).or_insert_with(|| {
            new = true;
            (self.next.fetch_add(1, Ordering::Relaxed), origin)
        });
        (id, first, new)
    }
}

/// Interned strings for per-instance labels (wait reasons, device names).
#[derive(Default)]
pub struct Interner {
    ids: FastMap<Box<str>, StrId>,
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

#[cfg(test)]
mod tests {
    use super::{virtual_event, NodeTable, RecentMap, Resolved, RECENT_CAPACITY, RECENT_ROOM};
    use crate::xpti::EventRef;

    /// An event of the code location `payload` (all else zero).
    fn event(payload: &mut xpti_sys::payload_t) -> xpti_sys::trace_event_data_t {
        // SAFETY: trace_event_data_t is plain C data; all zeros is valid.
        let mut e: xpti_sys::trace_event_data_t = unsafe { std::mem::zeroed() };
        e.unique_id = 1;
        e.reserved.payload = payload;
        e
    }

    fn payload(name: &'static std::ffi::CStr) -> xpti_sys::payload_t {
        // SAFETY: payload_t is plain C data; all zeros is valid.
        let mut p: xpti_sys::payload_t = unsafe { std::mem::zeroed() };
        p.name = name.as_ptr();
        p.source_file = c"app.cpp".as_ptr();
        p.line_no = 7;
        p
    }

    #[test]
    fn a_threads_last_node_counts_like_the_shared_table() {
        let (mut a, mut b) = (payload(c"a"), payload(c"b"));
        let (mut ea, mut eb) = (event(&mut a), event(&mut b));
        // SAFETY: the events and their payloads live for the test.
        let (ea, eb) = unsafe {
            (
                EventRef::new(&mut ea).unwrap(),
                EventRef::new(&mut eb).unwrap(),
            )
        };
        let first = NodeTable::default();
        let second = NodeTable::default();
        let mut seen = Vec::new();
        // Alternating and repeated locations, and a second table (another
        // recorder) on the same thread in between: the thread's last node
        // must never answer for another location or table.
        for (table, e) in [
            (&first, ea),
            (&first, ea),
            (&first, eb),
            (&second, eb),
            (&first, eb),
            (&first, ea),
        ] {
            let (resolved, instance, _) = crate::thread_state::with(|t| table.submit(t, e, 0));
            let node = match resolved {
                Resolved::Known(id) | Resolved::New(id) => id,
            };
            seen.push((node, instance, matches!(resolved, Resolved::New(_))));
        }
        assert_eq!(
            seen,
            [
                (0, 1, true),
                (0, 2, false),
                (1, 1, true),
                (0, 1, true),
                (1, 2, false),
                (0, 3, false)
            ]
        );
        assert_eq!(first.find(ea), Some(0));
        assert_eq!(second.find(ea), None);
    }

    #[test]
    fn a_recent_map_keeps_two_generations_and_the_newest_value() {
        for map in [RecentMap::default(), RecentMap::presized(64)] {
            keeps_two_generations(map);
        }
    }

    fn keeps_two_generations(map: RecentMap<u64, u32>) {
        for k in 0..4 {
            map.insert(k, 1);
        }
        assert!(!map.rotate_if_full(5), "not full yet");
        assert!(map.rotate_if_full(4));
        // Generation 1 is current; 0..4 are still found in generation 0.
        map.insert(2, 2);
        map.insert(9, 2);
        assert_eq!(map.get(&2), Some(2), "the newest value wins");
        assert_eq!(map.get(&0), Some(1));
        assert_eq!(map.len(), 6);
        // Rotating again empties generation 0: 0, 1 and 3 are forgotten.
        assert!(map.rotate_if_full(2));
        assert_eq!(map.get(&0), None);
        assert_eq!(map.get(&3), None);
        assert_eq!(map.get(&2), Some(2));
        assert_eq!(map.get(&9), Some(2));
        map.insert(0, 3);
        assert_eq!(map.get(&0), Some(3));
        assert_eq!(map.len(), 3);
    }

    #[test]
    fn a_presized_generation_fills_to_its_rotation_without_growing() {
        // Heap addresses 64 bytes apart, as the runtime's unique_ids are.
        let map: RecentMap<u64, u32> = RecentMap::presized(RECENT_ROOM);
        let capacity = |m: &RecentMap<u64, u32>| m.generations[0].capacity();
        let made = capacity(&map);
        assert!(made >= RECENT_ROOM, "{made}");
        // Not twice the room (room for 65,536 made 114,688).
        assert!(made < RECENT_ROOM + RECENT_ROOM / 8, "{made}");
        for i in 0..RECENT_CAPACITY as u64 {
            map.insert(0x5555_0000_0000 + i * 64, 1);
        }
        assert_eq!(capacity(&map), made, "a shard grew before the rotation");
        assert!(map.rotate_if_full(RECENT_CAPACITY));
    }

    #[test]
    fn virtual_node_names_give_their_event_address() {
        assert_eq!(virtual_event("virtual_node[0x55e0a1b2]"), Some(0x55e0a1b2));
        assert_eq!(virtual_event("virtual_node[55e0a1b2]"), Some(0x55e0a1b2));
        assert_eq!(virtual_event("saxpy"), None);
        assert_eq!(virtual_event("virtual_node[zz]"), None);
    }
}
