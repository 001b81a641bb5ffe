//! The queues the runtime created and destroyed.

use std::collections::BTreeMap;

use crate::last_hit::LastHit;
use crate::record::StrId;

/// One queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queue {
    /// The runtime's queue id.
    pub id: u64,
    /// Its device's name, when a QueueCreated named one.
    pub device: Option<String>,
    /// Its device's index in the run's [`DeviceTable`](crate::devices::DeviceTable).
    pub device_index: Option<usize>,
    /// Creation time, host ns.
    pub created_ns: Option<u64>,
    /// Destruction time, host ns.
    pub destroyed_ns: Option<u64>,
}

/// Queue records as they arrive; device names stay interned ids until read
/// (the String record may arrive after the QueueCreated that uses it).
#[derive(Debug, Default)]
pub(crate) struct QueueTable {
    queues: BTreeMap<u64, QueueEntry>,
    /// The queue [`device_index`](QueueTable::device_index) found a
    /// device for last (a queue's device, once known, stays).
    last: LastHit,
}

/// What the records said about one queue.
#[derive(Clone, Copy, Debug, Default)]
struct QueueEntry {
    device: Option<StrId>,
    device_index: Option<usize>,
    created_ns: Option<u64>,
    destroyed_ns: Option<u64>,
}

impl QueueTable {
    /// A queue was created on the device at `device_index` (a second
    /// creation of the same id keeps the first).
    pub fn created(&mut self, id: u64, device: StrId, device_index: Option<usize>, ns: u64) {
        let q = self.queues.entry(id).or_default();
        q.device.get_or_insert(device);
        if q.device_index.is_none() {
            q.device_index = device_index;
        }
        q.created_ns.get_or_insert(ns);
    }

    /// The index of the device the queue `id` was created on.
    #[inline]
    pub fn device_index(&self, id: u64) -> Option<usize> {
        self.last.get(id, || self.queues.get(&id)?.device_index)
    }

    /// A queue was destroyed.
    pub fn destroyed(&mut self, id: u64, ns: u64) {
        self.queues
            .entry(id)
            .or_default()
            .destroyed_ns
            .get_or_insert(ns);
    }

    /// How many queues are known.
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// The queues by id, device names resolved with `resolve`.
    pub fn queues(&self, resolve: impl Fn(StrId) -> String) -> Vec<Queue> {
        self.queues
            .iter()
            .map(|(&id, q)| Queue {
                id,
                device: q.device.map(&resolve),
                device_index: q.device_index,
                created_ns: q.created_ns,
                destroyed_ns: q.destroyed_ns,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_and_destroy_in_any_order() {
        let mut t = QueueTable::default();
        t.destroyed(2, 50);
        t.created(1, 7, Some(0), 10);
        t.created(2, 8, None, 5);
        t.created(1, 9, Some(1), 11);
        let q = t.queues(|id| format!("dev{id}"));
        assert_eq!(q.len(), 2);
        assert_eq!(q[0].device.as_deref(), Some("dev7"));
        assert_eq!((q[0].device_index, t.device_index(1)), (Some(0), Some(0)));
        assert_eq!(t.device_index(2), None);
        assert_eq!((q[0].created_ns, q[0].destroyed_ns), (Some(10), None));
        assert_eq!((q[1].created_ns, q[1].destroyed_ns), (Some(5), Some(50)));
    }
}
