//! Which submission each device event belongs to, resolved on the collector.
//!
//! An enqueue's wait list and a `virtual_node[<event>]` name device events;
//! the dependency is on the submission whose event it is. The program's
//! threads send the event as it is ([`crate::inbox::Item`]); the collector
//! learns each timed event's owner from the records that carry it, in the
//! order they arrive (a command's record, pushed when its submitting call
//! returns, comes before any later enqueue that names its event), and
//! resolves the event here. Events the records do not carry (device timing
//! off, an event not retained) are written by the submitting thread into
//! the recorder's shared map instead ([`crate::dependencies`]), which the
//! collector asks second.

use rustc_hash::FxHashMap;
use syclgraph_graph::record::{NodeId, Record};

use crate::identity::RECENT_CAPACITY;
use crate::timing_slot::is_retained;

/// Device event → its submission, on the collector: two generations like
/// [`crate::identity::RecentMap`] (an owner is kept for at least
/// [`RECENT_CAPACITY`] later events), no lock.
#[derive(Default)]
pub struct EventOwners {
    generations: [FxHashMap<u64, (NodeId, u64)>; 2],
    current: usize,
}

impl EventOwners {
    /// Remembers the owner of the device event `record` carries, if it
    /// carries a retained one.
    #[inline]
    pub fn learn(&mut self, record: &Record) {
        let (node, instance, event) = match *record {
            Record::SubmittedTask {
                node,
                instance,
                event: Some(event),
                ..
            }
            | Record::SignalledTask {
                node,
                instance,
                event,
                ..
            }
            | Record::Signal {
                node,
                instance,
                event,
            } => (node, instance, event),
            _ => return,
        };
        if is_retained(event) {
            self.insert(event, (node, instance));
        }
    }

    fn insert(&mut self, event: u64, owner: (NodeId, u64)) {
        let mut generation = &mut self.generations[self.current];
        if generation.len() >= RECENT_CAPACITY {
            self.current ^= 1;
            generation = &mut self.generations[self.current];
            generation.clear();
        }
        if generation.capacity() == 0 {
            // A new event per command: room for a whole generation at
            // once, never rehashed while it fills.
            generation.reserve(RECENT_CAPACITY);
        }
        generation.insert(event, owner);
    }

    /// The submission whose device event `event` is, if a record carried it.
    pub fn owner(&self, event: u64) -> Option<(NodeId, u64)> {
        self.generations[self.current]
            .get(&event)
            .or_else(|| self.generations[self.current ^ 1].get(&event))
            .copied()
    }

    /// Forgets every owner (the callbacks were out: addresses reused since
    /// would name the wrong owner).
    pub fn clear(&mut self) {
        for generation in &mut self.generations {
            generation.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing_slot::{NOT_READY_EVENT, NOT_RETAINED_EVENT};

    fn signal(node: NodeId, event: u64) -> Record {
        Record::Signal {
            node,
            instance: 1,
            event,
        }
    }

    #[test]
    fn retained_events_name_their_newest_owner_and_stand_ins_name_none() {
        let mut owners = EventOwners::default();
        owners.learn(&signal(1, 0x1000));
        owners.learn(&Record::SubmittedTask {
            node: 2,
            instance: 4,
            thread: 1,
            submit_ns: 1,
            after: None,
            begin_ns: 2,
            end_ns: 3,
            event: Some(0x2000),
        });
        for stand_in in [0, NOT_READY_EVENT, NOT_RETAINED_EVENT] {
            owners.learn(&signal(3, stand_in));
            assert_eq!(owners.owner(stand_in), None);
        }
        assert_eq!(owners.owner(0x1000), Some((1, 1)));
        assert_eq!(owners.owner(0x2000), Some((2, 4)));
        // The address reused by a later command: the newer owner.
        owners.learn(&signal(5, 0x1000));
        assert_eq!(owners.owner(0x1000), Some((5, 1)));
        owners.clear();
        assert_eq!(owners.owner(0x2000), None);
    }

    #[test]
    fn an_owner_is_kept_for_a_generation_of_later_events() {
        let mut owners = EventOwners::default();
        owners.learn(&signal(1, 0x10));
        for i in 0..RECENT_CAPACITY as u64 {
            owners.learn(&signal(2, 0x1_0000 + i * 8));
        }
        assert_eq!(owners.owner(0x10), Some((1, 1)), "in the older generation");
        for i in 0..RECENT_CAPACITY as u64 {
            owners.learn(&signal(2, 0x100_0000 + i * 8));
        }
        assert_eq!(owners.owner(0x10), None, "two generations later");
    }
}
