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

use syclgraph_graph::record::{NodeId, Record};

use crate::timing_slot::is_retained;

/// Device event → its submission, on the collector: two generations like
/// [`crate::identity::RecentMap`] (an owner is kept for at least
/// [`CAPACITY`] later events), no lock.
#[derive(Default)]
pub struct EventOwners {
    generations: [Generation; 2],
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
        self.learn_event(event, (node, instance));
    }

    /// Remembers `owner` as the owner of `event` if it is a retained one
    /// ([`EventOwners::learn`] of a record that carries it).
    #[inline]
    pub fn learn_event(&mut self, event: u64, owner: (NodeId, u64)) {
        if is_retained(event) {
            self.insert(event, owner);
        }
    }

    #[inline(always)]
    fn insert(&mut self, event: u64, owner: (NodeId, u64)) {
        if self.generations[self.current].len >= CAPACITY {
            self.rotate();
        }
        self.generations[self.current].insert(event, owner);
    }

    /// Starts the next generation, forgetting the older one.
    #[cold]
    #[inline(never)]
    fn rotate(&mut self) {
        self.current ^= 1;
        self.generations[self.current].clear();
    }

    /// The submission whose device event `event` is, if a record carried it.
    pub fn owner(&self, event: u64) -> Option<(NodeId, u64)> {
        self.generations[self.current]
            .get(event)
            .or_else(|| self.generations[self.current ^ 1].get(event))
    }

    /// Forgets every owner (the callbacks were out: addresses reused since
    /// would name the wrong owner).
    pub fn clear(&mut self) {
        for generation in &mut self.generations {
            generation.clear();
        }
    }
}

/// Owners a generation holds before the next one starts.
const CAPACITY: usize = 1 << 16;

/// Slots of a generation: twice [`CAPACITY`] (a power of two), so that a
/// full generation is half full.
const SLOTS: usize = 2 * CAPACITY;

/// One generation: event → owner in an open-addressed table (linear
/// probing) that never removes one entry, only all of them. A device event
/// comes per command, so this is the collector's one insert per command:
/// its slot is found with one multiply, where a general hash map spent
/// about 60 instructions. Event 0 (never retained) marks a free slot.
#[derive(Default)]
struct Generation {
    /// `(event, node, instance)`; empty until the first insert, then
    /// [`SLOTS`] long.
    slots: Vec<(u64, NodeId, u64)>,
    /// Events held.
    len: usize,
}

impl Generation {
    /// The first slot to look at for `event` (a Fibonacci hash of the
    /// address: its high bits, so the low alignment bits do not matter).
    #[inline]
    fn home(event: u64) -> usize {
        (event.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// Keeps `owner` for `event` (not 0), replacing an older owner.
    #[inline(always)]
    fn insert(&mut self, event: u64, (node, instance): (NodeId, u64)) {
        debug_assert_ne!(event, 0, "0 marks a free slot");
        if self.slots.is_empty() {
            self.allocate();
        }
        let mut index = Self::home(event);
        loop {
            let slot = &mut self.slots[index];
            if slot.0 == event {
                *slot = (event, node, instance);
                return;
            }
            if slot.0 == 0 {
                *slot = (event, node, instance);
                self.len += 1;
                return;
            }
            index = (index + 1) & (SLOTS - 1);
        }
    }

    /// The slots, at the first insert.
    #[cold]
    #[inline(never)]
    fn allocate(&mut self) {
        self.slots = vec![(0, 0, 0); SLOTS];
    }

    /// The owner kept for `event`.
    fn get(&self, event: u64) -> Option<(NodeId, u64)> {
        if self.slots.is_empty() || event == 0 {
            return None;
        }
        let mut index = Self::home(event);
        loop {
            let (held, node, instance) = self.slots[index];
            if held == event {
                return Some((node, instance));
            }
            if held == 0 {
                return None;
            }
            index = (index + 1) & (SLOTS - 1);
        }
    }

    /// Forgets every owner (keeps the slots).
    fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill((0, 0, 0));
            self.len = 0;
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
        for i in 0..CAPACITY as u64 {
            owners.learn(&signal(2, 0x1_0000 + i * 8));
        }
        assert_eq!(owners.owner(0x10), Some((1, 1)), "in the older generation");
        for i in 0..CAPACITY as u64 {
            owners.learn(&signal(2, 0x100_0000 + i * 8));
        }
        assert_eq!(owners.owner(0x10), None, "two generations later");
    }
}
