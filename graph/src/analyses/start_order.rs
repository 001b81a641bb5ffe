//! [`StartOrder`]: a queue that hands entries out smallest key first, for
//! the reorder buffers of the critical path and the idle gaps. Entries
//! arrive nearly in order (commands are finalised roughly in the order they
//! started), so an entry is usually appended at the back and taken from the
//! front, both O(1); one that arrives late is inserted in its place.
//! A binary heap paid a sift of log2(4096) = 12 levels on every push and
//! pop for the same result.

use std::collections::VecDeque;

/// `(key, value)` entries in ascending key order; entries with equal keys
/// leave in the order they came. Values are not compared.
#[derive(Clone, Debug)]
pub struct StartOrder<K, V> {
    entries: VecDeque<(K, V)>,
}

impl<K, V> Default for StartOrder<K, V> {
    fn default() -> Self {
        StartOrder {
            entries: VecDeque::new(),
        }
    }
}

impl<K: Ord, V> StartOrder<K, V> {
    /// Adds an entry after every entry whose key is not greater.
    #[inline(always)]
    pub fn push(&mut self, key: K, value: V) {
        if self.entries.back().is_none_or(|(last, _)| *last <= key) {
            self.entries.push_back((key, value));
        } else {
            let at = self.entries.partition_point(|(k, _)| *k <= key);
            self.entries.insert(at, (key, value));
        }
    }

    /// Takes the entry with the smallest key (the first of equal ones).
    #[inline]
    pub fn pop(&mut self) -> Option<(K, V)> {
        self.entries.pop_front()
    }

    /// The entry with the largest key (the last of equal ones).
    #[inline]
    pub fn last(&self) -> Option<&(K, V)> {
        self.entries.back()
    }

    /// The last entry whose key is at most `bound`, if any.
    #[inline]
    pub fn last_at_or_below(&self, bound: &K) -> Option<&(K, V)> {
        // Mostly asked for a bound past every entry: the last one.
        let last = self.entries.back()?;
        if last.0 <= *bound {
            return Some(last);
        }
        let at = self.entries.partition_point(|(k, _)| k <= bound);
        self.entries.get(at.checked_sub(1)?)
    }

    /// The entries, largest key first.
    pub fn iter_rev(&self) -> impl Iterator<Item = &(K, V)> + '_ {
        self.entries.iter().rev()
    }

    /// The values, in key order.
    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.entries.iter().map(|(_, v)| v)
    }

    /// How many entries it holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_entries_out_smallest_first_and_equal_keys_in_arrival_order() {
        let mut q = StartOrder::default();
        for (k, tag) in [(5, 'a'), (7, 'b'), (6, 'c'), (5, 'd'), (9, 'e'), (1, 'f')] {
            q.push(k, tag);
        }
        assert_eq!(q.last_at_or_below(&6), Some(&(6, 'c')));
        assert_eq!(q.last_at_or_below(&5), Some(&(5, 'd')));
        assert_eq!(q.last_at_or_below(&0), None);
        assert_eq!(q.last_at_or_below(&9), Some(&(9, 'e')));
        assert_eq!(q.last_at_or_below(&100), Some(&(9, 'e')));
        let mut out = Vec::new();
        while let Some(entry) = q.pop() {
            out.push(entry);
        }
        assert_eq!(
            out,
            [(1, 'f'), (5, 'a'), (5, 'd'), (6, 'c'), (7, 'b'), (9, 'e')]
        );
    }
}
