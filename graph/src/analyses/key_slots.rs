//! [`KeySlots`]: a map from instance keys for the critical path's tables
//! of recent instances (the window, the dependencies waiting for their
//! target). A key has one slot, chosen from its instance number and node
//! so that the consecutive instances of a node take consecutive slots; a
//! key whose slot is taken by another goes to a hash map beside it, which
//! is empty in the usual case, so that a lookup is then one compare and
//! no hash. A hash map alone paid its hashing and group probe on each of
//! the ~8 lookups, inserts and removes per instance.

use rustc_hash::FxHashMap;

use crate::instance_graph::InstanceKey;

/// The key of a free slot. A slot is free when its instance number is
/// this one's: a real key with that instance number (of any node) lives in
/// the hash map, so that telling a free slot is one compare.
const FREE: InstanceKey = (u32::MAX, u64::MAX);

/// Whether `key` cannot have a slot (its instance number marks free slots).
#[inline(always)]
fn slotless(key: &InstanceKey) -> bool {
    key.1 == FREE.1
}

/// A map from [`InstanceKey`]s; see the module docs.
#[derive(Debug)]
pub struct KeySlots<V> {
    /// `(FREE, V::default())` where free.
    slots: Vec<(InstanceKey, V)>,
    mask: usize,
    /// Keys whose slot was taken when they were inserted (and those with
    /// [`FREE`]'s instance number).
    overflow: FxHashMap<InstanceKey, V>,
    len: usize,
}

impl<V: Default> KeySlots<V> {
    /// Empty, with at least `slots` slots (rounded up to a power of two).
    pub fn new(slots: usize) -> KeySlots<V> {
        let n = slots.max(1).next_power_of_two();
        KeySlots {
            slots: std::iter::repeat_with(|| (FREE, V::default()))
                .take(n)
                .collect(),
            mask: n - 1,
            overflow: FxHashMap::default(),
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: InstanceKey) -> usize {
        // Nodes spread apart, a node's instances side by side.
        let node = u64::from(key.0).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        (key.1.wrapping_add(node) as usize) & self.mask
    }

    /// How many keys it holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &InstanceKey) -> Option<&V> {
        let (k, v) = &self.slots[self.slot(*key)];
        if k == key && !slotless(key) {
            Some(v)
        } else if self.overflow.is_empty() {
            None
        } else {
            self.overflow.get(key)
        }
    }

    /// Whether it holds `key`.
    #[inline]
    pub fn contains_key(&self, key: &InstanceKey) -> bool {
        self.get(key).is_some()
    }

    /// Sets the value of `key`.
    #[inline]
    pub fn insert(&mut self, key: InstanceKey, value: V) {
        *self.get_or_insert_with(key, V::default) = value;
    }

    /// The value of `key`, inserted as `make()` makes it if it has none.
    #[inline]
    pub fn get_or_insert_with(&mut self, key: InstanceKey, make: impl FnOnce() -> V) -> &mut V {
        let at = self.slot(key);
        let here = self.slots[at].0;
        if here == key && !slotless(&key) {
            return &mut self.slots[at].1;
        }
        if slotless(&here)
            && !slotless(&key)
            && (self.overflow.is_empty() || !self.overflow.contains_key(&key))
        {
            self.len += 1;
            self.slots[at] = (key, make());
            return &mut self.slots[at].1;
        }
        let len = &mut self.len;
        self.overflow.entry(key).or_insert_with(|| {
            *len += 1;
            make()
        })
    }

    /// Takes `key` out.
    #[inline]
    pub fn remove(&mut self, key: &InstanceKey) -> Option<V> {
        let at = self.slot(*key);
        let out = if self.slots[at].0 == *key && !slotless(key) {
            self.slots[at].0 = FREE;
            Some(std::mem::take(&mut self.slots[at].1))
        } else if self.overflow.is_empty() {
            None
        } else {
            self.overflow.remove(key)
        };
        if out.is_some() {
            self.len -= 1;
        }
        out
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.slots
            .iter()
            .filter(|(k, _)| !slotless(k))
            .map(|(_, v)| v)
            .chain(self.overflow.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Against a hash map, with few slots so that most keys overflow.
    #[test]
    fn behaves_as_a_map() {
        let mut slots = KeySlots::new(8);
        let mut map = HashMap::new();
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = match (x >> 10) % 50 {
                0 => FREE,
                1 => ((x >> 40) as u32 % 4, u64::MAX),
                _ => ((x >> 60) as u32, (x >> 33) % 40),
            };
            match (x >> 20) % 4 {
                0 | 1 => {
                    slots.insert(key, x);
                    map.insert(key, x);
                }
                2 => assert_eq!(slots.remove(&key), map.remove(&key)),
                _ => {
                    *slots.get_or_insert_with(key, || 7) += 1;
                    *map.entry(key).or_insert(7) += 1;
                }
            }
            assert_eq!(slots.get(&key), map.get(&key));
            assert_eq!(slots.len(), map.len());
        }
        let mut a: Vec<u64> = slots.values().copied().collect();
        let mut b: Vec<u64> = map.values().copied().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
