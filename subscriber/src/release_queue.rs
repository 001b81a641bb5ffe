//! Device events the collector has read, handed back to the submitting
//! threads to release.
//!
//! The release that destroys a device event frees the runtime's objects
//! for it, which the submitting thread allocated. Released on the
//! collector thread, every one of those frees took glibc's slow path (the
//! collector allocates few such blocks, so its thread's cache of free
//! blocks stays full) and the lock of the arena the blocks came from,
//! which the submitting thread's own allocations take too; and that
//! thread's cache was never refilled by them, so its next allocations
//! took the slow path as well (docs/performance.md, "the read events
//! released on the submitting threads": on the H200 the whole process of
//! 200,000 tiny memcpys went from 1.03 to 0.90–0.92 times the program
//! timing itself). So the collector forgets an event it has read
//! ([`ze_bridge::TimestampSource::forget`]) and queues it here, and a
//! submitting thread that has just retained its own command's event
//! releases up to [`PER_SUBMISSION`] queued ones: one in, one out, as the
//! runtime itself would have released them there.
//!
//! Bounded and lock-free ([`Ring`]): when the queue is full the collector
//! releases the event itself, as it does the queued ones when no thread
//! has taken any for [`IDLE_RELEASE`] (a program that stopped submitting)
//! and at the end of the run; the thread that destroys a queue releases
//! them all first (its context may go with it).

use std::time::{Duration, Instant};

use ze_bridge::{TimestampSource, UrEvent};

use crate::ring::Ring;

/// Events the queue holds at most (each holds the runtime's memory for
/// one command, about 1.3 KB on the OpenCL CPU device: 5 MB in all).
pub const CAPACITY: usize = 4096;

/// Queued events a submitting thread releases after retaining its own:
/// more than one, so that the queue empties after a burst of completions.
pub const PER_SUBMISSION: usize = 2;

/// Queued events no thread took for this long are released by the
/// collector.
pub const IDLE_RELEASE: Duration = Duration::from_millis(200);

/// The read events waiting for a submitting thread to release them.
pub struct ReleaseQueue {
    events: Ring<UrEvent>,
}

impl Default for ReleaseQueue {
    fn default() -> ReleaseQueue {
        ReleaseQueue::new(CAPACITY)
    }
}

impl ReleaseQueue {
    /// A queue of at most `capacity` events.
    pub fn new(capacity: usize) -> ReleaseQueue {
        ReleaseQueue {
            events: Ring::new(capacity),
        }
    }

    /// The collector: queues `event`, already forgotten by its source, for
    /// a submitting thread to release; gives it back when the queue is full.
    pub fn hand_over(&self, event: UrEvent) -> Result<(), UrEvent> {
        self.events.push(event).map(|_| ())
    }

    /// A submitting thread, right after it retained its own command's
    /// event from `source`: releases up to [`PER_SUBMISSION`] queued events.
    #[inline]
    pub fn release_some(&self, source: &dyn TimestampSource) {
        for _ in 0..PER_SUBMISSION {
            match self.events.pop() {
                Some(event) => source.release_forgotten(event),
                None => return,
            }
        }
    }

    /// Releases every queued event here (the collector: nobody took them,
    /// or the run ends).
    pub fn release_all(&self, source: &dyn TimestampSource) {
        while let Some(event) = self.events.pop() {
            source.release_forgotten(event);
        }
    }

    /// How many events were taken from the queue so far (wrapping): the
    /// collector's sign that submitting threads still take them.
    pub fn taken(&self) -> usize {
        self.events.popped()
    }

    /// True when no event is queued (an estimate while others push or pop).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// The collector's watch over the queue: it releases the queued events
/// itself once no thread took one for [`IDLE_RELEASE`].
pub struct IdleWatch {
    /// [`ReleaseQueue::taken`] when it last moved (or the queue was empty).
    taken: usize,
    /// When that was.
    since: Instant,
}

impl IdleWatch {
    /// A watch from `now`.
    pub fn new(now: Instant) -> IdleWatch {
        IdleWatch {
            taken: 0,
            since: now,
        }
    }

    /// Called after each of the collector's passes: releases every queued
    /// event from `source` when no thread took one since [`IDLE_RELEASE`]
    /// before `now`.
    pub fn check(&mut self, queue: &ReleaseQueue, source: &dyn TimestampSource, now: Instant) {
        let taken = queue.taken();
        if taken != self.taken || queue.is_empty() {
            (self.taken, self.since) = (taken, now);
        } else if now.saturating_duration_since(self.since) >= IDLE_RELEASE {
            queue.release_all(source);
            (self.taken, self.since) = (queue.taken(), now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use ze_bridge::Readout;

    /// A source that records what was released.
    #[derive(Default)]
    struct Releases(Mutex<Vec<usize>>);

    impl TimestampSource for Releases {
        fn name(&self) -> &'static str {
            "test"
        }
        fn retain(&self, _: UrEvent) -> bool {
            true
        }
        fn read(&self, _: UrEvent) -> Readout {
            unreachable!()
        }
        fn release_forgotten(&self, event: UrEvent) {
            self.0.lock().unwrap().push(event.0);
        }
    }

    #[test]
    fn a_submission_releases_at_most_two_and_a_full_queue_gives_the_event_back() {
        let queue = ReleaseQueue::new(3);
        let source = Releases::default();
        for e in 1..=3 {
            assert!(queue.hand_over(UrEvent(e)).is_ok());
        }
        assert_eq!(queue.hand_over(UrEvent(4)).unwrap_err().0, 4);
        queue.release_some(&source);
        assert_eq!(*source.0.lock().unwrap(), [1, 2]);
        assert_eq!(queue.taken(), 2);
        queue.release_all(&source);
        assert_eq!(*source.0.lock().unwrap(), [1, 2, 3]);
        assert!(queue.is_empty());
        queue.release_some(&source);
        assert_eq!(queue.taken(), 3);
    }

    #[test]
    fn the_collector_releases_the_queued_events_once_no_thread_took_one_for_a_while() {
        let queue = ReleaseQueue::new(8);
        let source = Releases::default();
        let start = Instant::now();
        let mut watch = IdleWatch::new(start);
        let released = || source.0.lock().unwrap().len();
        for e in 1..=4 {
            queue.hand_over(UrEvent(e)).unwrap();
        }
        watch.check(&queue, &source, start);
        assert_eq!(released(), 0);
        // A thread takes some: the watch starts again.
        queue.release_some(&source);
        watch.check(&queue, &source, start + IDLE_RELEASE);
        assert_eq!(released(), 2);
        watch.check(&queue, &source, start + IDLE_RELEASE * 3 / 2);
        assert_eq!(
            released(),
            2,
            "one was taken {:?} ago only",
            IDLE_RELEASE / 2
        );
        // Nobody took any since: the collector releases the rest.
        watch.check(&queue, &source, start + IDLE_RELEASE * 2);
        assert_eq!(*source.0.lock().unwrap(), [1, 2, 3, 4]);
        assert!(queue.is_empty());
    }
}
