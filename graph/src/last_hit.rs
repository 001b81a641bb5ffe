//! A one-entry memo in front of a lookup whose answer for a key never
//! changes once found (a device handle's index, a queue's device): the
//! next instance mostly asks for its predecessor's key.

use std::cell::Cell;

/// The key found last and what it gave.
#[derive(Debug, Default)]
pub(crate) struct LastHit(Cell<Option<(u64, usize)>>);

impl LastHit {
    /// What `find` gives for `key`, from the memo when `key` is the last
    /// one found. Only an answer found is kept: a key not found yet is
    /// looked up again next time.
    #[inline]
    pub(crate) fn get(&self, key: u64, find: impl FnOnce() -> Option<usize>) -> Option<usize> {
        if let Some((last, at)) = self.0.get() {
            if last == key {
                return Some(at);
            }
        }
        let at = find()?;
        self.0.set(Some((key, at)));
        Some(at)
    }
}
