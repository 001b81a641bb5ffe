//! The inbox's bounded lock-free ring: many producers, a collector that
//! drains it, no lock and no wait (a full ring gives the value back).
//!
//! The scheme is Dmitry Vyukov's bounded MPMC queue: every slot carries a
//! sequence number that says whose turn it is (the producer of position
//! `pos` when it equals `2 pos`, the consumer when it equals `2 pos + 1`;
//! counted in halves so that a ring of one slot tells full from free), and
//! a position is claimed with one compare-and-swap on the tail (or head).
//!
//! What it adds over `crossbeam_queue::ArrayQueue`, which it replaces on
//! the hot path: after a push it prefetches, for writing, the slot the next
//! push will take. The ring is large (65,536 records by default) and a
//! slot is reused only once per lap, long after the collector read it: it
//! is cold by then, and without the prefetch the submitting thread waits
//! for that cache miss at its next push (most of syclgraph's time on it with
//! device timing off). The prefetch lets the miss overlap the runtime's own
//! work between two submissions.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A value alone on its cache lines (128 bytes: adjacent-line prefetch
/// pairs lines), so that producers and the consumer do not share one.
#[repr(align(128))]
struct Padded<T>(T);

/// One place in the ring: whose turn it is, and the value.
struct Slot<T> {
    /// `2 pos`: free for the producer of position `pos`; `2 pos + 1`:
    /// holds that producer's value, for the consumer of `pos`.
    sequence: AtomicUsize,
    value: UnsafeCell<MaybeUninit<T>>,
}

/// A bounded multi-producer queue (see the module documentation).
pub struct Ring<T> {
    /// The next position a producer claims.
    tail: Padded<AtomicUsize>,
    /// The next position the consumer takes.
    head: Padded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
    /// `capacity - 1` when the capacity is a power of two, else `usize::MAX`
    /// (then a position's slot is found by a division).
    mask: usize,
}

// SAFETY: a value is written by the one producer that claimed its position
// and read by the one consumer that claimed it, in turns ordered by the
// slot's sequence number (Release after the write or read, Acquire before
// it): values of a `Send` type move between threads, never shared.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; every shared field is atomic or guarded by the sequence.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring holding at most `capacity` values (at least 1).
    pub fn new(capacity: usize) -> Ring<T> {
        let capacity = capacity.max(1);
        let slots = (0..capacity)
            .map(|pos| Slot {
                sequence: AtomicUsize::new(free_for(pos)),
                value: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Ring {
            tail: Padded(AtomicUsize::new(0)),
            head: Padded(AtomicUsize::new(0)),
            slots,
            mask: if capacity.is_power_of_two() {
                capacity - 1
            } else {
                usize::MAX
            },
        }
    }

    /// The slot of position `pos`.
    #[inline(always)]
    fn slot(&self, pos: usize) -> &Slot<T> {
        let index = if self.mask != usize::MAX {
            pos & self.mask
        } else {
            pos % self.slots.len()
        };
        &self.slots[index]
    }

    /// Claims the next position of `counter` (the tail or the head) whose
    /// slot's sequence is `turn(pos)`: its turn. None when the slot is a
    /// lap behind (a full ring for producers, an empty one for the consumer).
    #[inline(always)]
    fn claim(&self, counter: &AtomicUsize, turn: fn(usize) -> usize) -> Option<(usize, &Slot<T>)> {
        let mut pos = counter.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let sequence = slot.sequence.load(Ordering::Acquire);
            let lag = sequence.wrapping_sub(turn(pos)) as isize;
            if lag == 0 {
                match counter.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some((pos, slot)),
                    Err(now) => pos = now,
                }
            } else if lag < 0 {
                return None;
            } else {
                // Another thread claimed it first.
                pos = counter.load(Ordering::Relaxed);
            }
        }
    }

    /// Queues `value`, then prefetches the next push's slot; gives the
    /// value back when the ring is full. On success, returns how many
    /// values the ring held just before (an estimate when others push or
    /// pop meanwhile).
    #[inline]
    pub fn push(&self, value: T) -> Result<usize, T> {
        // A slot still holding the value of the previous lap: full.
        let Some((pos, slot)) = self.claim(&self.tail.0, free_for) else {
            return Err(value);
        };
        // SAFETY: the claim made this thread the one producer of `pos`;
        // the sequence (Acquire) says the consumer of the previous lap is
        // done with the slot.
        unsafe { (*slot.value.get()).write(value) };
        slot.sequence.store(full_at(pos), Ordering::Release);
        self.prefetch_for_write(pos.wrapping_add(1));
        let head = self.head.0.load(Ordering::Relaxed);
        Ok(pos.wrapping_sub(head).min(self.slots.len()))
    }

    /// Asks the cache for position `pos`'s slot, for writing, so that the
    /// push that takes it does not wait for memory.
    #[inline(always)]
    fn prefetch_for_write(&self, pos: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
            let first = self.slot(pos) as *const Slot<T> as *const i8;
            let last = first.wrapping_add(std::mem::size_of::<Slot<T>>() - 1);
            // SAFETY: a prefetch is a hint: it reads nothing into the
            // program and never faults; both addresses lie in the slot.
            unsafe {
                _mm_prefetch::<_MM_HINT_ET0>(first);
                _mm_prefetch::<_MM_HINT_ET0>(last);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = pos;
    }

    /// The oldest value, if any.
    #[inline]
    pub fn pop(&self) -> Option<T> {
        // Not written yet: empty (or its producer is mid-push).
        let (pos, slot) = self.claim(&self.head.0, full_at)?;
        // SAFETY: the claim made this thread the one consumer of `pos`; the
        // sequence (Acquire) says its producer wrote the value.
        let value = unsafe { (*slot.value.get()).assume_init_read() };
        let next_lap = pos.wrapping_add(self.slots.len());
        slot.sequence.store(free_for(next_lap), Ordering::Release);
        Some(value)
    }

    /// How many values it holds (an estimate while others push or pop).
    pub fn len(&self) -> usize {
        let head = self.head.0.load(Ordering::Acquire);
        let tail = self.tail.0.load(Ordering::Acquire);
        tail.wrapping_sub(head).min(self.slots.len())
    }

    /// True when it holds nothing (an estimate while others push or pop).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values were popped so far (wrapping at `usize::MAX`).
    pub fn popped(&self) -> usize {
        self.head.0.load(Ordering::Relaxed)
    }
}

/// The sequence number of a slot free for the producer of position `pos`.
#[inline(always)]
fn free_for(pos: usize) -> usize {
    pos.wrapping_mul(2)
}

/// The sequence number of a slot holding the value of position `pos`.
#[inline(always)]
fn full_at(pos: usize) -> usize {
    pos.wrapping_mul(2).wrapping_add(1)
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_full_ring_gives_the_value_back_and_keeps_the_order_for_any_capacity() {
        for capacity in [1, 2, 3, 5, 8] {
            let ring = Ring::new(capacity);
            for lap in 0..4 {
                for i in 0..capacity {
                    assert_eq!(ring.push(lap * 100 + i), Ok(i), "capacity {capacity}");
                }
                assert_eq!(ring.push(999), Err(999));
                assert_eq!(ring.len(), capacity);
                for i in 0..capacity {
                    assert_eq!(ring.pop(), Some(lap * 100 + i));
                }
                assert_eq!(ring.pop(), None);
                assert!(ring.is_empty());
            }
        }
    }

    #[test]
    fn values_left_in_the_ring_are_dropped_with_it() {
        let alive = Arc::new(());
        let ring = Ring::new(4);
        for _ in 0..3 {
            ring.push(Arc::clone(&alive)).unwrap();
        }
        drop(ring.pop());
        assert_eq!(Arc::strong_count(&alive), 3);
        drop(ring);
        assert_eq!(Arc::strong_count(&alive), 1);
    }

    /// Four producers push into a small ring while one consumer drains it:
    /// every value queued comes out exactly once, each producer's in its
    /// order, and every refused one was given back to its producer.
    #[test]
    fn many_producers_lose_nothing_and_keep_each_ones_order() {
        const PRODUCERS: usize = 4;
        const EACH: usize = 50_000;
        let ring = Arc::new(Ring::new(100));
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let ring = Arc::clone(&ring);
                std::thread::spawn(move || {
                    let mut refused = 0;
                    for i in 0..EACH {
                        if ring.push((p, i)).is_err() {
                            refused += 1;
                        }
                    }
                    refused
                })
            })
            .collect();
        let mut last = [None::<usize>; PRODUCERS];
        let mut received = 0;
        let mut done = false;
        while !done {
            done = producers.iter().all(|p| p.is_finished());
            while let Some((p, i)) = ring.pop() {
                assert!(
                    last[p].is_none_or(|l| l < i),
                    "producer {p}: {i} after {last:?}"
                );
                last[p] = Some(i);
                received += 1;
            }
        }
        let refused: usize = producers.into_iter().map(|p| p.join().unwrap()).sum();
        assert_eq!(received + refused, PRODUCERS * EACH);
        assert!(received > 0);
    }
}
