//! Instances still waiting for records: a bounded table that pushes out its
//! oldest entry when full, plus a memory of finalised keys so that a record
//! arriving after its instance was finalised is recognised as late instead
//! of starting a new instance: per node, the run of instances 1, 2, 3, …
//! finalised so far (one number), and the recent keys finalised out of that
//! order (a bounded set).

use std::collections::VecDeque;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::instance::Instance;
use crate::per_node::PerNode;
use crate::record::NodeId;

/// An instance's identity.
pub(crate) type Key = (NodeId, u64);

/// The pending instances, oldest first.
#[derive(Debug)]
pub(crate) struct PendingTable {
    /// Instance and its age (insertion sequence number) by key.
    entries: HashMap<Key, (u64, Instance)>,
    /// (age, key), oldest first. An entry whose age is not the one `entries`
    /// has for its key is stale: that instance left the table.
    by_age: VecDeque<(u64, Key)>,
    /// Stale entries in `by_age`.
    stale: usize,
    /// Next sequence number.
    next_seq: u64,
    /// Most entries kept.
    capacity: usize,
    /// Recently finalised keys outside their node's run: the newer
    /// generation, filled up to half of `recent_capacity`, then it becomes
    /// the older one (see [`PendingTable::remember`]).
    recent: HashSet<Key>,
    /// The older generation of recently finalised keys.
    older: HashSet<Key>,
    /// Most recent keys remembered.
    recent_capacity: usize,
    /// Pending instances per node.
    per_node: PerNode<usize>,
    /// What each node has finalised, besides `recent`/`older`.
    finalised: PerNode<Finalised>,
}

/// The finalised instances of one node that need no set: instances are
/// numbered 1, 2, 3, … per node and usually finish in that order.
#[derive(Clone, Copy, Debug, Default)]
struct Finalised {
    /// Instances `1..=through` were all finalised (kept for good: one
    /// number per node).
    through: u64,
    /// The highest instance put in `recent`/`older` (finalised out of
    /// order): a key above it and above `through` was never finalised, and
    /// needs no set lookup (new instances are usually there).
    highest_out_of_order: u64,
}

// `PerNode<usize>`: how many instances of each node are pending.
impl PerNode<usize> {
    fn add(&mut self, node: NodeId) {
        *self.slot(node) += 1;
    }

    fn remove_one(&mut self, node: NodeId) {
        let n = self.slot(node);
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.clear(node);
        }
    }

    fn has(&self, node: NodeId) -> bool {
        self.get(node).is_some_and(|&n| n > 0)
    }
}

impl PendingTable {
    /// An empty table holding at most `capacity` (at least 1) instances and
    /// remembering the last `recent_capacity` finalised keys.
    pub fn new(capacity: usize, recent_capacity: usize) -> PendingTable {
        PendingTable {
            entries: HashMap::default(),
            by_age: VecDeque::new(),
            stale: 0,
            next_seq: 0,
            capacity: capacity.max(1),
            // Sized once: growing by doubling would move every key again.
            recent: HashSet::with_capacity_and_hasher(recent_capacity / 2 + 1, Default::default()),
            older: HashSet::with_capacity_and_hasher(recent_capacity / 2 + 1, Default::default()),
            recent_capacity,
            per_node: PerNode::default(),
            finalised: PerNode::default(),
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
        self.by_age.push_back((seq, key));
        match self.entries.insert(key, (seq, instance)) {
            Some(_) => self.stale += 1,
            None => self.per_node.add(key.0),
        }
        evicted
    }

    /// Whether a `by_age` entry stands for a pending instance.
    fn is_live(&self, &(seq, key): &(u64, Key)) -> bool {
        self.entries.get(&key).is_some_and(|&(s, _)| s == seq)
    }

    /// Take an instance out.
    pub fn remove(&mut self, key: Key) -> Option<Instance> {
        let (seq, instance) = self.entries.remove(&key)?;
        self.forget_one(key.0);
        if self.by_age.front().is_some_and(|&(s, _)| s == seq) {
            // The usual case: instances leave about in the order they came.
            self.by_age.pop_front();
        } else {
            self.stale += 1;
            if self.stale > self.entries.len() + 64 {
                // Drop the stale entries: amortised O(1) per removal, and
                // `by_age` stays within twice the table plus a little.
                let mut by_age = std::mem::take(&mut self.by_age);
                by_age.retain(|e| self.is_live(e));
                self.by_age = by_age;
                self.stale = 0;
            }
        }
        Some(instance)
    }

    /// One instance of `node` left the table.
    fn forget_one(&mut self, node: NodeId) {
        self.per_node.remove_one(node);
    }

    /// Take the oldest instance out.
    pub fn pop_oldest(&mut self) -> Option<(Key, Instance)> {
        while let Some(entry) = self.by_age.pop_front() {
            if !self.is_live(&entry) {
                self.stale -= 1;
                continue;
            }
            let key = entry.1;
            let (_, instance) = self.entries.remove(&key)?;
            self.forget_one(key.0);
            return Some((key, instance));
        }
        None
    }

    /// The pending keys of one node, oldest first.
    pub fn keys_of(&self, node: NodeId) -> Vec<Key> {
        if !self.per_node.has(node) {
            return Vec::new();
        }
        self.by_age
            .iter()
            .filter(|e| e.1 .0 == node && self.is_live(e))
            .map(|e| e.1)
            .collect()
    }

    /// Every pending instance, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (Key, &Instance)> + '_ {
        self.by_age
            .iter()
            .filter_map(|&(seq, key)| match self.entries.get(&key) {
                Some((s, i)) if *s == seq => Some((key, i)),
                _ => None,
            })
    }

    /// Whether an instance of `node` is pending.
    pub fn has_node(&self, node: NodeId) -> bool {
        self.per_node.has(node)
    }

    /// How many instances are pending.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Remember that this key was finalised (nothing is remembered with a
    /// `recent_capacity` of 0). The next instance of its node's run
    /// (`through + 1`) only moves the run on, taking in the instances
    /// finalised earlier out of order that now follow it. Any other key goes
    /// in two generations of half the capacity each: when the newer one is
    /// full the older one is forgotten and the newer one takes its place. So
    /// of the keys outside the runs, at least the last `recent_capacity / 2`
    /// and at most the last `recent_capacity` are known (with a capacity of
    /// 1: the last one or two), for one set insertion per key (no removal
    /// one by one).
    #[inline]
    pub fn remember(&mut self, key: Key) {
        if self.recent_capacity == 0 {
            return;
        }
        let finalised = self.finalised.slot(key.0);
        if key.1 == finalised.through + 1 && finalised.highest_out_of_order <= key.1 {
            // The run's next instance, none finalised out of order after it.
            finalised.through = key.1;
            return;
        }
        self.remember_past_run(key);
    }

    /// [`remember`](PendingTable::remember) for a key that is not its
    /// run's next one, or that others finalised out of order follow.
    #[inline(never)]
    fn remember_past_run(&mut self, key: Key) {
        let finalised = self.finalised.slot(key.0);
        if key.1 == finalised.through + 1 {
            finalised.through = key.1;
            if finalised.highest_out_of_order > key.1 {
                let mut through = key.1;
                while self.out_of_order((key.0, through + 1)) {
                    through += 1;
                }
                self.finalised.slot(key.0).through = through;
            }
            return;
        }
        finalised.highest_out_of_order = finalised.highest_out_of_order.max(key.1);
        if self.recent.len() >= (self.recent_capacity / 2).max(1) {
            std::mem::swap(&mut self.recent, &mut self.older);
            self.recent.clear();
        }
        self.recent.insert(key);
    }

    /// Whether this key was finalised (in its node's run, or recently).
    #[inline]
    pub fn was_finalised(&self, key: Key) -> bool {
        let finalised = self.finalised.get(key.0).copied().unwrap_or_default();
        if (1..=finalised.through).contains(&key.1) {
            return true;
        }
        if key.1 > finalised.highest_out_of_order {
            return false;
        }
        self.out_of_order(key)
    }

    /// Whether `key` is in either generation of keys finalised out of order.
    fn out_of_order(&self, key: Key) -> bool {
        self.recent.contains(&key) || self.older.contains(&key)
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
    fn out_of_order_removals_keep_the_age_order() {
        let mut t = PendingTable::new(1000, 0);
        for i in 0..300 {
            assert!(t
                .insert((i % 3, i as u64), Instance::new(i as u64))
                .is_none());
        }
        // Remove all but every 10th, newest first (never the oldest).
        for i in (0..300).rev().filter(|i| i % 10 != 0) {
            assert!(t.remove((i % 3, i as u64)).is_some());
        }
        assert!(t.remove((0, 1)).is_none());
        assert!(t.by_age.len() <= 2 * t.len() + 65, "{}", t.by_age.len());
        let keys: Vec<Key> = t.iter().map(|(k, _)| k).collect();
        let want: Vec<Key> = (0..300).step_by(10).map(|i| (i % 3, i as u64)).collect();
        assert_eq!(keys, want);
        assert_eq!(
            t.keys_of(1),
            want.iter()
                .filter(|k| k.0 == 1)
                .copied()
                .collect::<Vec<_>>()
        );
        assert_eq!(t.pop_oldest().map(|(k, _)| k), Some((0, 0)));
        assert_eq!(t.pop_oldest().map(|(k, _)| k), Some((1, 10)));
        assert_eq!(t.len(), 28);
    }

    #[test]
    fn recent_keys_are_bounded() {
        let mut t = PendingTable::new(1, 2);
        // Instance 1 never finishes: 2, 3, 4 are outside the run.
        t.remember((0, 2));
        t.remember((0, 3));
        t.remember((0, 4));
        assert!(!t.was_finalised((0, 2)));
        assert!(t.was_finalised((0, 3)) && t.was_finalised((0, 4)));
        assert!(!t.was_finalised((0, 1)) && !t.was_finalised((0, 5)));
    }

    #[test]
    fn between_half_and_all_of_the_recent_capacity_is_remembered() {
        let mut t = PendingTable::new(1, 100);
        // Instance 0 is outside every run: 1 is never finalised.
        for i in 2..1000u64 {
            t.remember((7, i));
            let known = (2..=i)
                .rev()
                .take_while(|&j| t.was_finalised((7, j)))
                .count();
            assert!(
                known >= 50.min(i as usize - 1) && known <= 100,
                "{i}: {known}"
            );
            let forgotten = (2..=i).filter(|&j| !t.was_finalised((7, j))).count();
            assert_eq!(known + forgotten, i as usize - 1, "{i}: a gap");
        }
        assert!(t.recent.len() + t.older.len() <= 100);
    }

    #[test]
    fn a_run_in_order_is_remembered_for_good_without_the_sets() {
        let mut t = PendingTable::new(1, 4);
        for i in 1..=1000u64 {
            assert!(!t.was_finalised((3, i)));
            t.remember((3, i));
        }
        assert!((1..=1000).all(|i| t.was_finalised((3, i))));
        assert!(!t.was_finalised((3, 0)) && !t.was_finalised((3, 1001)));
        assert!(t.recent.is_empty() && t.older.is_empty());
        assert!(!t.was_finalised((4, 1)), "another node's run");
    }

    #[test]
    fn the_run_takes_in_what_finished_out_of_order() {
        let mut t = PendingTable::new(1, 100);
        for i in [3, 4, 2, 6] {
            t.remember((1, i));
        }
        assert!(!t.was_finalised((1, 1)) && !t.was_finalised((1, 5)));
        t.remember((1, 1));
        assert_eq!(t.finalised.get(1).unwrap().through, 4);
        assert!((1..=4).chain([6]).all(|i| t.was_finalised((1, i))));
        assert!(!t.was_finalised((1, 5)) && !t.was_finalised((1, 7)));
        t.remember((1, 5));
        assert_eq!(t.finalised.get(1).unwrap().through, 6);
    }

    #[test]
    fn nothing_is_remembered_without_capacity() {
        let mut t = PendingTable::new(1, 0);
        t.remember((0, 1));
        assert!(!t.was_finalised((0, 1)));
    }
}
