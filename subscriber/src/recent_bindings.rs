//! The live unique_id → [`Binding`] table of the node table: every
//! scheduler submission writes one entry, on the submitting thread, and
//! edges and other threads' task events read a few of them.
//!
//! A lock-free ring of the newest [`RING_SLOTS`] bindings, in insertion
//! order, with an open-addressed index from the unique_id to its place in
//! the ring. An insert takes the next place with one `fetch_add`, writes
//! the slot as a seqlock (odd while written, even once whole) and claims
//! one index entry with a compare-exchange: no lock, no allocation, and
//! the ring's stores go to consecutive lines. A lock-sharded hash map took
//! about 190 instructions and three cache misses per submission here
//! (docs/performance.md).
//!
//! What it keeps: a binding stays readable until [`RING_SLOTS`] − 1 later
//! inserts, as the two-generation map it replaces kept one for at least
//! its generation's size. An index entry whose ring place was written
//! again is stale and taken by the next insert that probes it. Should
//! [`PROBES`] entries in a row all be live (the index is four times the
//! ring, so at most a quarter is live), the oldest of them is given up:
//! its unique_id is then not found, as one forgotten; lookups that miss
//! are counted by their callers (an edge's unknown end, an event not
//! traced). A slot two inserts meet in (one of them stalled for a whole
//! turn of the ring) is kept by the first: the other binding is not
//! kept, and never a mix of both.

use std::sync::atomic::{fence, AtomicU64, Ordering};

use syclgraph_graph::record::NodeId;

use crate::thread_state::{Binding, NodeFlags};

/// Bindings the ring holds: a power of two.
pub const RING_SLOTS: usize = 1 << 16;

/// Index entries: four per ring slot, so that linear probing stays short.
const INDEX_ENTRIES: usize = RING_SLOTS * 4;

/// Index entries an insert or a lookup looks at, from the unique_id's own.
const PROBES: usize = 16;

/// Bits of an index entry holding the ring sequence number (plus one; 0 is
/// an empty entry); the rest is a tag from the unique_id's hash.
const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// Words of one binding's place in the ring: its version (2·seq + 1 while
/// insert `seq` writes it, 2·seq + 2 once whole, 0 never written), its
/// unique_id and the [`Binding`] in four words ([`encode`]).
const SLOT_WORDS: usize = 6;

/// See the module documentation.
pub struct RecentBindings {
    /// [`RING_SLOTS`] places of [`SLOT_WORDS`] words each.
    ring: Box<[AtomicU64]>,
    index: Box<[AtomicU64]>,
    /// The next insert's sequence number.
    next: AtomicU64,
}

impl Default for RecentBindings {
    fn default() -> Self {
        RecentBindings {
            ring: zeroed_atomics(RING_SLOTS * SLOT_WORDS),
            index: zeroed_atomics(INDEX_ENTRIES),
            next: AtomicU64::new(0),
        }
    }
}

/// `n` atomics at zero in zeroed memory (calloc): the pages the kernel
/// hands out stay untouched, so a run that binds little (memcpys keep
/// their bindings on their thread) does not pay the table's 5 MB.
fn zeroed_atomics(n: usize) -> Box<[AtomicU64]> {
    let zeroed: Box<[std::mem::MaybeUninit<AtomicU64>]> = Box::new_zeroed_slice(n);
    // SAFETY: an `AtomicU64` has the in-memory representation of a `u64`,
    // and all-zero bits are `AtomicU64::new(0)`.
    unsafe { zeroed.assume_init() }
}

/// One binding's place in the ring: its words ([`SLOT_WORDS`]).
struct Slot<'a>(&'a [AtomicU64]);

impl Slot<'_> {
    fn version(&self) -> &AtomicU64 {
        &self.0[0]
    }

    fn uid(&self) -> &AtomicU64 {
        &self.0[1]
    }

    fn words(&self) -> &[AtomicU64] {
        &self.0[2..SLOT_WORDS]
    }
}

impl RecentBindings {
    /// Ring place `seq`.
    #[inline]
    fn slot(&self, seq: u64) -> Slot<'_> {
        let at = (seq as usize % RING_SLOTS) * SLOT_WORDS;
        Slot(&self.ring[at..at + SLOT_WORDS])
    }

    /// Remembers `binding` for `uid`; the newest binding of a unique_id is
    /// the one found.
    #[inline]
    pub fn insert(&self, uid: u64, binding: Binding) {
        let seq = self.next.fetch_add(1, Ordering::Relaxed) & SEQ_MASK;
        let slot = self.slot(seq);
        let before = slot.version().load(Ordering::Relaxed);
        let writing = 2 * seq + 1;
        // An odd version: another insert is writing this slot (a whole turn
        // of the ring ago). Newer than ours: it came after. Either way,
        // that one keeps the slot.
        if before & 1 == 1
            || before > writing
            || slot
                .version()
                .compare_exchange(before, writing, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // Orders the odd version before the data (a seqlock's writer).
        fence(Ordering::Release);
        slot.uid().store(uid, Ordering::Relaxed);
        for (word, value) in slot.words().iter().zip(encode(&binding)) {
            word.store(value, Ordering::Relaxed);
        }
        slot.version().store(writing + 1, Ordering::Release);
        self.index_insert(uid, seq);
    }

    /// The newest binding of `uid` still kept, if any.
    #[inline]
    pub fn get(&self, uid: u64) -> Option<Binding> {
        let (start, tag) = place(uid);
        let newest = self.next.load(Ordering::Acquire);
        let mut found: Option<(u64, Binding)> = None;
        for probe in 0..PROBES {
            let entry = self.index[(start + probe) % INDEX_ENTRIES].load(Ordering::Acquire);
            if entry == 0 {
                break;
            }
            if entry >> SEQ_BITS != tag {
                continue;
            }
            let seq = (entry & SEQ_MASK) - 1;
            if !is_kept(seq, newest) || found.is_some_and(|(s, _)| s > seq) {
                continue;
            }
            if let Some(binding) = self.read(seq, uid) {
                found = Some((seq, binding));
            }
        }
        found.map(|(_, binding)| binding)
    }

    /// Inserts begun, up to the ring's size (the tests' check of a full ring).
    #[cfg(test)]
    fn len(&self) -> usize {
        (self.next.load(Ordering::Relaxed) as usize).min(RING_SLOTS)
    }

    /// Points an index entry at ring place `seq`: the first empty or stale
    /// one of the probed, else the oldest of them.
    fn index_insert(&self, uid: u64, seq: u64) {
        let (start, tag) = place(uid);
        let entry = (tag << SEQ_BITS) | (seq + 1);
        loop {
            let newest = self.next.load(Ordering::Relaxed);
            let mut oldest: Option<(usize, u64)> = None;
            for probe in 0..PROBES {
                let at = (start + probe) % INDEX_ENTRIES;
                let current = self.index[at].load(Ordering::Relaxed);
                let current_seq = (current & SEQ_MASK).wrapping_sub(1);
                let free = current == 0 || !is_kept(current_seq, newest);
                if free {
                    if self.index[at]
                        .compare_exchange(current, entry, Ordering::Release, Ordering::Relaxed)
                        .is_ok()
                    {
                        return;
                    }
                    // Taken meanwhile: look on.
                    continue;
                }
                if oldest.is_none_or(|(_, s)| current_seq < s) {
                    oldest = Some((at, current_seq));
                }
            }
            // Every probed entry live (about never: the index is at most a
            // quarter live): the oldest is given up.
            let Some((at, old_seq)) = oldest else {
                return;
            };
            let current = self.index[at].load(Ordering::Relaxed);
            if (current & SEQ_MASK).wrapping_sub(1) == old_seq
                && self.index[at]
                    .compare_exchange(current, entry, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
        }
    }

    /// Ring place `seq`'s binding when it is still `uid`'s, read whole.
    fn read(&self, seq: u64, uid: u64) -> Option<Binding> {
        let slot = self.slot(seq);
        let whole = 2 * seq + 2;
        if slot.version().load(Ordering::Acquire) != whole {
            return None;
        }
        let found_uid = slot.uid().load(Ordering::Relaxed);
        let w = slot.words();
        let words = [0, 1, 2, 3].map(|i| w[i].load(Ordering::Relaxed));
        // Orders the data reads before the version's second read.
        fence(Ordering::Acquire);
        if slot.version().load(Ordering::Relaxed) != whole || found_uid != uid {
            return None;
        }
        Some(decode(words))
    }
}

/// Whether ring place `seq` still holds insert `seq`'s binding, `newest`
/// being the next insert's number.
#[inline]
fn is_kept(seq: u64, newest: u64) -> bool {
    // Insert seq + RING_SLOTS, the next to write its place, has not begun.
    seq >= newest || newest - seq <= RING_SLOTS as u64
}

/// The first index entry and the tag of `uid` (Fx-style multiplicative
/// hash: its high bits).
#[inline]
fn place(uid: u64) -> (usize, u64) {
    let hash = uid.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let start = (hash >> (64 - INDEX_ENTRIES.trailing_zeros())) as usize;
    let tag = (hash >> 8) & ((1 << (64 - SEQ_BITS)) - 1);
    (start, tag)
}

/// Flag bits of the first word, above the node id.
const MERGED: u64 = 1 << 32;
const UNRECORDED: u64 = 1 << 33;
const UNKNOWN_LOCATION: u64 = 1 << 34;
const VIRTUAL_EVENT: u64 = 1 << 35;

/// A binding as four words: node and flags, instance, virtual event, first
/// queue.
fn encode(b: &Binding) -> [u64; 4] {
    let mut first = u64::from(b.node);
    first |= if b.merged { MERGED } else { 0 };
    first |= if b.unrecorded { UNRECORDED } else { 0 };
    first |= if b.flags.unknown_location {
        UNKNOWN_LOCATION
    } else {
        0
    };
    first |= if b.flags.virtual_event.is_some() {
        VIRTUAL_EVENT
    } else {
        0
    };
    [
        first,
        b.instance,
        b.flags.virtual_event.unwrap_or(0) as u64,
        b.flags.first_queue,
    ]
}

/// [`encode`]'s inverse.
fn decode([first, instance, virtual_event, first_queue]: [u64; 4]) -> Binding {
    Binding {
        node: first as NodeId,
        instance,
        flags: NodeFlags {
            virtual_event: (first & VIRTUAL_EVENT != 0).then_some(virtual_event as usize),
            unknown_location: first & UNKNOWN_LOCATION != 0,
            first_queue,
        },
        merged: first & MERGED != 0,
        unrecorded: first & UNRECORDED != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn binding(node: NodeId, instance: u64) -> Binding {
        Binding {
            node,
            instance,
            flags: NodeFlags {
                virtual_event: node.is_multiple_of(3).then_some(0x1000 + node as usize),
                unknown_location: node.is_multiple_of(2),
                first_queue: u64::from(node) * 7,
            },
            merged: instance % 2 == 1,
            unrecorded: false,
        }
    }

    #[test]
    fn a_binding_reads_back_whole_and_the_newest_of_a_uid_wins() {
        let table = RecentBindings::default();
        assert_eq!(table.get(42), None);
        table.insert(42, binding(3, 1));
        table.insert(43, binding(4, 2));
        assert_eq!(table.get(42), Some(binding(3, 1)));
        assert_eq!(table.get(43), Some(binding(4, 2)));
        table.insert(42, binding(5, 9));
        assert_eq!(table.get(42), Some(binding(5, 9)));
        assert_eq!(table.get(44), None);
        let unrecorded = Binding::UNRECORDED;
        table.insert(7, unrecorded);
        assert_eq!(table.get(7), Some(unrecorded));
    }

    #[test]
    fn a_binding_is_kept_for_a_ring_of_later_inserts_then_forgotten() {
        let table = RecentBindings::default();
        // Unique_ids like heap addresses.
        let uid = |i: u64| 0x5555_0000_0000 + i * 0x60;
        let total = RING_SLOTS as u64 * 3;
        for i in 0..total {
            table.insert(uid(i), binding((i % 1000) as NodeId, i));
            // The binding made a whole ring ago minus one is still there.
            if i >= RING_SLOTS as u64 - 1 {
                let old = i + 1 - RING_SLOTS as u64;
                assert_eq!(
                    table.get(uid(old)),
                    Some(binding((old % 1000) as NodeId, old)),
                    "insert {old} after {i}"
                );
            }
        }
        // One more turn forgot the oldest.
        let forgotten = total - RING_SLOTS as u64 - 1;
        assert_eq!(table.get(uid(forgotten)), None);
        assert_eq!(table.len(), RING_SLOTS);
    }

    #[test]
    fn a_full_probe_window_gives_up_its_oldest_entry_only() {
        let table = RecentBindings::default();
        let start = place(1).0;
        let same_start: Vec<u64> = (2..u64::MAX)
            .filter(|&uid| place(uid).0 == start)
            .take(PROBES)
            .collect();
        let uids: Vec<u64> = std::iter::once(1).chain(same_start).collect();
        for (i, &uid) in uids.iter().enumerate() {
            table.insert(uid, binding(i as NodeId, i as u64));
        }
        assert_eq!(table.get(uids[0]), None, "the oldest is given up");
        for (i, &uid) in uids.iter().enumerate().skip(1) {
            assert_eq!(table.get(uid), Some(binding(i as NodeId, i as u64)));
        }
    }

    #[test]
    fn concurrent_inserts_and_lookups_never_read_a_mix() {
        let table = Arc::new(RecentBindings::default());
        let writers: Vec<_> = (0..4u64)
            .map(|w| {
                let table = table.clone();
                std::thread::spawn(move || {
                    for i in 0..200_000u64 {
                        let uid = (w << 40) | i;
                        // Every word derived from the uid: a torn read shows.
                        table.insert(uid, binding((uid % 100_000) as NodeId, uid));
                        if i > 10 {
                            let back = uid - 7;
                            if let Some(b) = table.get(back) {
                                assert_eq!(b, binding((back % 100_000) as NodeId, back));
                            }
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
    }
}
