//! A value per node, for the tables the graph updates once per instance:
//! in a vector indexed by id for the small, dense ids the subscriber
//! assigns (no hashing on the hot path), in a map for any other id. The
//! subscriber's thread numbers are small and dense the same way, and the
//! trace keeps its per-thread table in one too.

use rustc_hash::FxHashMap as HashMap;

use crate::record::NodeId;

/// Ids below this have their value in the vector.
const DENSE_IDS: NodeId = 1 << 16;

/// A `T` per node, [`Default`] for a node never written.
#[derive(Debug, Default)]
pub(crate) struct PerNode<T> {
    dense: Vec<T>,
    sparse: HashMap<NodeId, T>,
}

impl<T: Default> PerNode<T> {
    /// The value of `node`, made (as the default) if it has none.
    #[inline]
    pub(crate) fn slot(&mut self, node: NodeId) -> &mut T {
        if node < DENSE_IDS {
            let i = node as usize;
            if i >= self.dense.len() {
                self.dense.resize_with(i + 1, T::default);
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(node).or_default()
        }
    }

    /// The value of `node`, if one was made.
    pub(crate) fn get(&self, node: NodeId) -> Option<&T> {
        if node < DENSE_IDS {
            self.dense.get(node as usize)
        } else {
            self.sparse.get(&node)
        }
    }

    /// Forgets `node`'s value (a dense slot goes back to the default).
    pub(crate) fn clear(&mut self, node: NodeId) {
        if node < DENSE_IDS {
            if let Some(v) = self.dense.get_mut(node as usize) {
                *v = T::default();
            }
        } else {
            self.sparse.remove(&node);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_ids_keep_their_values() {
        let mut p: PerNode<u64> = PerNode::default();
        for node in [0, 5, DENSE_IDS, DENSE_IDS + 9] {
            assert_eq!(p.get(node), None);
            *p.slot(node) += u64::from(node) + 1;
        }
        for node in [0, 5, DENSE_IDS, DENSE_IDS + 9] {
            assert_eq!(p.get(node), Some(&(u64::from(node) + 1)));
        }
        assert_eq!(
            p.get(3),
            Some(&0),
            "a dense id below a written one reads the default"
        );
        p.clear(5);
        p.clear(DENSE_IDS + 9);
        assert_eq!(p.get(5), Some(&0));
        assert_eq!(p.get(DENSE_IDS + 9), None);
    }
}
