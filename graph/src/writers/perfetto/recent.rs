//! What the trace writer remembers of recent instances: where their
//! slices are, or the flows waiting for them ([`Recent`]: two generations
//! of at most [`RECENT`](super::RECENT) entries).

use std::hash::Hash;

use rustc_hash::FxHashMap;

use super::RECENT;
use crate::instance_graph::InstanceKey;

/// Where a written instance's slice is: the track and its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Anchor {
    pub(super) key: InstanceKey,
    pub(super) track: u64,
    pub(super) ts: u64,
}

/// A map that forgets its oldest entries: two generations of at most
/// [`RECENT`] entries; when the current one is full the older one is
/// emptied and becomes the current one.
///
/// The two tables are allocated once each, at their full size, and
/// reused: a generation that started empty and grew by doubling would
/// hold its old and new tables at once, on top of the other generation,
/// at every rotation.
#[derive(Debug)]
pub(super) struct Recent<K, V> {
    pub(super) current: FxHashMap<K, V>,
    pub(super) older: FxHashMap<K, V>,
}

impl<K: Hash + Eq, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            current: FxHashMap::default(),
            older: FxHashMap::default(),
        }
    }
}

impl<K: Hash + Eq, V> Recent<K, V> {
    // Inlined: called twice per instance (an edge's producer, the slice
    // written), the call costs about a fifth of the lookup.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        // A key is in one generation at most: one probe when it is in the
        // current one (mostly), the older one only when it is not.
        match self.current.get_mut(k) {
            Some(v) => Some(v),
            None if self.older.is_empty() => None,
            None => self.older.get_mut(k),
        }
    }

    /// Makes the current generation the older one, and the emptied older
    /// one current, with room for [`RECENT`] entries (allocated once: the
    /// first generation grows, the second is made at its full size).
    pub(super) fn rotate(&mut self) {
        std::mem::swap(&mut self.current, &mut self.older);
        self.current.clear();
        if self.current.capacity() < RECENT {
            self.current = FxHashMap::with_capacity_and_hasher(RECENT, Default::default());
        }
    }

    /// The entry for `k` (moved into the current generation), made by
    /// `make` when absent.
    // Inlined: called once per edge (its consumer), from one place.
    #[inline(always)]
    pub(super) fn entry(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let older = if self.older.is_empty() {
            None
        } else {
            self.older.remove(&k)
        };
        let v = match older {
            Some(v) => v,
            None => {
                if self.current.len() >= RECENT && !self.current.contains_key(&k) {
                    self.rotate();
                }
                return self.current.entry(k).or_insert_with(make);
            }
        };
        if self.current.len() >= RECENT {
            self.rotate();
        }
        self.current.entry(k).or_insert(v)
    }

    pub(super) fn insert(&mut self, k: K, v: V) {
        // Mostly an instance already waited for: set in place.
        if let Some(at) = self.current.get_mut(&k) {
            *at = v;
            return;
        }
        if !self.older.is_empty() {
            self.older.remove(&k);
        }
        if self.current.len() >= RECENT && !self.current.contains_key(&k) {
            self.rotate();
        }
        self.current.insert(k, v);
    }
}

/// Flow ids, the first two without an allocation (most instances have a
/// dependency or two). 32 bytes: the rare third and later ids are boxed,
/// so that the table of recent instances ([`Recent`]) stays small.
#[derive(Debug, Default)]
pub(super) struct Ids {
    first: [u64; 2],
    len: usize,
    // Boxed on purpose: a thin pointer (8 bytes) where a Vec takes 24.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<u64>>>,
}

impl Ids {
    #[inline]
    pub(super) fn push(&mut self, id: u64) {
        if self.len < 2 {
            self.first[self.len] = id;
        } else {
            self.push_more(id);
        }
        self.len += 1;
    }

    #[cold]
    fn push_more(&mut self, id: u64) {
        self.more.get_or_insert_with(Box::default).push(id);
    }

    /// Takes back `id`, the last one pushed.
    pub(super) fn pop(&mut self, id: u64) {
        if self.len > 2 {
            if let Some(more) = &mut self.more {
                more.pop();
            }
        } else if self.len > 0 {
            debug_assert_eq!(self.first[self.len - 1], id);
        }
        self.len = self.len.saturating_sub(1);
    }

    /// All the ids, when they are the first two at most.
    pub(super) fn inline(&self) -> Option<&[u64]> {
        self.first.get(..self.len)
    }

    /// The ids past the first two.
    pub(super) fn more(&self) -> &[u64] {
        self.more.as_deref().map_or(&[], Vec::as_slice)
    }

    #[inline]
    pub(super) fn contains(&self, id: u64) -> bool {
        // Mostly two ids at most: no look at the boxed ones.
        match self.first.get(..self.len) {
            Some(first) => first.contains(&id),
            None => self.first.contains(&id) || self.more().contains(&id),
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.first[..self.len.min(2)]
            .iter()
            .chain(self.more())
            .copied()
    }
}

/// What the trace knows of a recent instance.
#[derive(Debug)]
pub(super) enum Seen {
    /// Its slices are not written yet: the flows waiting for them.
    Waiting(Waiting),
    /// Written: where its slice is (`None`: it has none).
    Written(Option<Anchor>),
}

/// The flow ids waiting for one instance's slice.
#[derive(Debug, Default)]
pub(super) struct Waiting {
    /// Flows that begin at it (it is the producer).
    pub(super) out: Ids,
    /// Flows that end at it (it is the consumer).
    pub(super) into: Ids,
}
