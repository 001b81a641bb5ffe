//! Instances still waiting for records: a bounded table that pushes out its
//! oldest entry when full, plus a short memory of recently finalised keys so
//! that a record arriving after its instance was finalised is recognised as
//! late instead of starting a new instance.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::instance::Instance;
use crate::record::NodeId;

/// An instance's identity.
pub(crate) type Key = (NodeId, u64);

/// The pending instances, oldest first.
#[derive(Debug)]
pub(crate) struct PendingTable {
    /// Instance and its age (insertion sequence number) by key.
    entries: HashMap<Key, (u64, Instance)>,
    /// Keys by age.
    by_age: BTreeMap<u64, Key>,
    /// Next sequence number.
    next_seq: u64,
    /// Most entries kept.
    capacity: usize,
    /// Recently finalised keys, oldest first.
    recent: VecDeque<Key>,
    /// The same keys, for lookup.
    recent_set: HashSet<Key>,
    /// Most recent keys remembered.
    recent_capacity: usize,
    /// Pending instances per node (nodes with none are absent).
    per_node: HashMap<NodeId, usize>,
}

impl PendingTable {
    /// An empty table holding at most `capacity` (at least 1) instances and
    /// remembering the last `recent_capacity` finalised keys.
    pub fn new(capacity: usize, recent_capacity: usize) -> PendingTable {
        PendingTable {
            entries: HashMap::default(),
            by_age: BTreeMap::new(),
            next_seq: 0,
            capacity: capacity.max(1),
            recent: VecDeque::new(),
            recent_set: HashSet::default(),
            recent_capacity,
            per_node: HashMap::default(),
        }
    }

    /// The pending instance with this key.
    pub fn get(&self, key: Key) -> Option<&Instance> {
        self.entries.get(&key).map(|(_, i)| i)
    }

    /// The pending instance with this key, to update.
    pub fn get_mut(&mut self, key: Key) -> Option<&mut Instance> {
        self.entries.get_mut(&key).map(|(_, i)| i)
    }

    /// Add a new instance (the key must not be pending); when the table is
    /// full the oldest entry is taken out first and returned.
    pub fn insert(&mut self, key: Key, instance: Instance) -> Option<(Key, Instance)> {
        let evicted = if self.entries.len() >= self.capacity {
            self.pop_oldest()
        } else {
            None
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        self.by_age.insert(seq, key);
        match self.entries.insert(key, (seq, instance)) {
            Some((old_seq, _)) => {
                self.by_age.remove(&old_seq);
            }
            None => *self.per_node.entry(key.0).or_default() += 1,
        }
        evicted
    }

    /// Take an instance out.
    pub fn remove(&mut self, key: Key) -> Option<Instance> {
        let (seq, instance) = self.entries.remove(&key)?;
        self.by_age.remove(&seq);
        self.forget_one(key.0);
        Some(instance)
    }

    /// One instance of `node` left the table.
    fn forget_one(&mut self, node: NodeId) {
        if let Some(n) = self.per_node.get_mut(&node) {
            *n -= 1;
            if *n == 0 {
                self.per_node.remove(&node);
            }
        }
    }

    /// Take the oldest instance out.
    pub fn pop_oldest(&mut self) -> Option<(Key, Instance)> {
        let (_, key) = self.by_age.pop_first()?;
        let (_, instance) = self.entries.remove(&key)?;
        self.forget_one(key.0);
        Some((key, instance))
    }

    /// The pending keys of one node, oldest first.
    pub fn keys_of(&self, node: NodeId) -> Vec<Key> {
        if !self.per_node.contains_key(&node) {
            return Vec::new();
        }
        self.by_age
            .values()
            .filter(|k| k.0 == node)
            .copied()
            .collect()
    }

    /// Every pending instance, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (Key, &Instance)> + '_ {
        self.by_age
            .values()
            .filter_map(|k| self.entries.get(k).map(|(_, i)| (*k, i)))
    }

    /// How many instances are pending.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Remember that this key was finalised.
    pub fn remember(&mut self, key: Key) {
        if self.recent_capacity == 0 || !self.recent_set.insert(key) {
            return;
        }
        self.recent.push_back(key);
        while self.recent.len() > self.recent_capacity {
            if let Some(old) = self.recent.pop_front() {
                self.recent_set.remove(&old);
            }
        }
    }

    /// Whether this key was finalised recently.
    pub fn was_finalised(&self, key: Key) -> bool {
        self.recent_set.contains(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_table_pushes_out_the_oldest() {
        let mut t = PendingTable::new(2, 4);
        assert!(t.insert((0, 1), Instance::new(1)).is_none());
        assert!(t.insert((0, 2), Instance::new(2)).is_none());
        let (key, inst) = t.insert((1, 1), Instance::new(1)).unwrap();
        assert_eq!((key, inst.instance), ((0, 1), 1));
        assert_eq!(t.len(), 2);
        assert_eq!(t.keys_of(0), vec![(0, 2)]);
        assert!(t.remove((0, 2)).is_some());
        assert_eq!(t.iter().map(|(k, _)| k).collect::<Vec<_>>(), vec![(1, 1)]);
    }

    #[test]
    fn recent_keys_are_bounded() {
        let mut t = PendingTable::new(1, 2);
        t.remember((0, 1));
        t.remember((0, 2));
        t.remember((0, 3));
        assert!(!t.was_finalised((0, 1)));
        assert!(t.was_finalised((0, 2)) && t.was_finalised((0, 3)));
    }
}
