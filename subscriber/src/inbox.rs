//! The bounded queue from the application's threads to the collector
//! (and, the other way, [`crate::release_queue`]).
//!
//! A submitting thread pushes each [`Record`] into a lock-free ring
//! ([`Ring`], which also prefetches the next push's slot): a few atomic
//! operations, no lock, no system call, and nothing waited for: when the
//! ring is full the record is dropped (the caller counts it). Nobody is
//! woken per record either: the collector drains the ring in batches and
//! sleeps between them ([`Inbox::wait`]): briefly while records come (with
//! device timing off, a fixed longer wait that records do not cut short:
//! [`Inbox::wait_for_batch`]), longer when none do. A producer wakes it
//! only when it is in a long sleep (the first record after a quiet spell,
//! so reading starts at once) or when the ring is a quarter full (a burst
//! cannot fill it while it sleeps). From a quarter full the collector is
//! also behind until it is down to an eighth ([`Inbox::is_behind`]): the
//! submissions meanwhile keep no device event.
//!
//! The exit path asks the collector to finish through
//! [`Inbox::request_finish`], which wakes it at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use syclgraph_graph::record::{Metadata, NodeId, Record};

use crate::release_queue::ReleaseQueue;
use crate::ring::Ring;

/// How the runtime stands when the outputs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Teardown {
    /// At exit, before the runtime's destructors: device events may be read.
    RuntimeAlive,
    /// From `xptiTraceFinish`: the runtime is shutting down, no UR calls.
    RuntimeGone,
}

/// Sleeps from this long on may be cut short by the next record.
pub const LONG_SLEEP: Duration = Duration::from_millis(2);

/// The exit path's request: release the runtime's objects and write the
/// outputs, signalling `reply` after each.
pub struct FinishRequest {
    /// Whether device events may still be read and released.
    pub teardown: Teardown,
    /// Signalled twice (room for both): once nothing of the runtime is
    /// used any more, so that its teardown may go on, and once the outputs
    /// are written.
    pub reply: SyncSender<()>,
}

/// What the program's threads send the collector: a record, or a
/// dependency on a device event, which the collector resolves to the
/// submission that event belongs to ([`crate::event_owners`]).
#[derive(Debug)]
pub enum Item {
    /// A record, applied as it is.
    Record(Record),
    /// An enqueue's wait list names the device event `event`: `target`
    /// depends on the submission whose event it is (none when no traced
    /// command gave it).
    WaitsFor {
        /// The submission enqueued.
        target: (NodeId, u64),
        /// The `ur_event_handle_t` as an address.
        event: u64,
    },
    /// The program's `urEventWait` on `event` returned at `seen_ns`: the
    /// host saw it complete then, which bounds its end on the host clock
    /// (a sighting for [`ze_bridge::TimestampSource::seen_complete`]).
    WaitReturned {
        /// The `ur_event_handle_t` as an address.
        event: u64,
        /// `CLOCK_MONOTONIC` when the wait returned.
        seen_ns: u64,
    },
    /// An edge_create from `virtual_node`, the node of a
    /// `virtual_node[<event>]`: from the submission whose device event
    /// `event` is, when traced, else from the virtual node itself.
    FromVirtual {
        /// The virtual node and its instance.
        virtual_node: (NodeId, u64),
        /// The event it stands for.
        event: u64,
        /// The dependent submission.
        target: (NodeId, u64),
        /// The edge_create's metadata.
        metadata: Box<Metadata>,
    },
}

impl From<Record> for Item {
    #[inline]
    fn from(record: Record) -> Item {
        Item::Record(record)
    }
}

/// Records on their way to the collector, and the exit path's request.
pub struct Inbox {
    records: Ring<Item>,
    /// Producers wake the collector from this many queued records on.
    wake_at: usize,
    /// Set by a producer that found `wake_at` records queued, cleared by
    /// the collector once fewer than half that many are left
    /// ([`Inbox::catch_up`]): while set, new records carry no device
    /// event ([`Inbox::is_behind`]).
    behind: AtomicBool,
    finish_requested: AtomicBool,
    /// The collector sleeps for long ([`LONG_SLEEP`] or more).
    sleeping_long: AtomicBool,
    finish: Mutex<Option<FinishRequest>>,
    collector: OnceLock<Thread>,
    collector_alive: AtomicBool,
    /// The other way: events the collector read, for the submitting
    /// threads to release.
    to_release: ReleaseQueue,
}

impl Inbox {
    /// An inbox holding at most `capacity` records (at least 1).
    pub fn new(capacity: usize) -> Inbox {
        let capacity = capacity.max(1);
        Inbox {
            records: Ring::new(capacity),
            wake_at: (capacity / 4).max(1),
            behind: AtomicBool::new(false),
            finish_requested: AtomicBool::new(false),
            sleeping_long: AtomicBool::new(false),
            finish: Mutex::new(None),
            collector: OnceLock::new(),
            collector_alive: AtomicBool::new(false),
            to_release: ReleaseQueue::default(),
        }
    }

    /// Queues `item`; gives it back when the inbox is full.
    #[inline]
    pub fn push(&self, item: Item) -> Result<(), Item> {
        let before = self.records.push(item)?;
        if before + 1 >= self.wake_at {
            self.fell_behind();
        } else if self.sleeping_long.load(Ordering::Relaxed)
            && self.sleeping_long.swap(false, Ordering::AcqRel)
        {
            self.wake();
        }
        Ok(())
    }

    /// A quarter of the inbox is queued: the collector is woken, and is
    /// behind until it catches up.
    #[cold]
    #[inline(never)]
    fn fell_behind(&self) {
        if !self.behind.load(Ordering::Relaxed) {
            self.behind.store(true, Ordering::Relaxed);
        }
        self.wake();
    }

    /// Whether the collector is behind: a quarter of the inbox was queued
    /// and it has not yet brought that down to an eighth. A submission
    /// keeps no device event for it meanwhile (`timing=behind`): each
    /// event kept until read holds the runtime's memory (about 1.3 KB on
    /// the OpenCL CPU device), and a collector behind would hold one per
    /// queued record; without them it also catches up sooner.
    #[inline]
    pub fn is_behind(&self) -> bool {
        self.behind.load(Ordering::Relaxed)
    }

    /// Called by the collector after a batch: ends [`Inbox::is_behind`]
    /// once fewer than an eighth of the inbox's records are queued.
    pub fn catch_up(&self) {
        if self.behind.load(Ordering::Relaxed) && self.records.len() < self.wake_at / 2 {
            self.behind.store(false, Ordering::Relaxed);
        }
    }

    /// The events read by the collector, for the submitting threads to
    /// release ([`crate::release_queue`]).
    #[inline]
    pub fn to_release(&self) -> &ReleaseQueue {
        &self.to_release
    }

    /// The oldest queued item.
    #[inline]
    pub fn pop(&self) -> Option<Item> {
        self.records.pop()
    }

    /// Called once the collector thread is spawned: it is the one woken,
    /// and from now on the exit path may wait for it.
    pub fn collector_started(&self, collector: Thread) {
        let _ = self.collector.set(collector);
        self.collector_alive.store(true, Ordering::Release);
    }

    /// Taken by the collector thread: marks the collector gone when dropped
    /// (also when it panics), so the exit path does not wait for it.
    pub fn collector_guard(&self) -> CollectorGuard<'_> {
        CollectorGuard(self)
    }

    /// Sleeps the collector until woken or `timeout` passed.
    pub fn wait(&self, timeout: Duration) {
        if self.finish_requested.load(Ordering::Acquire) {
            return;
        }
        let long = timeout >= LONG_SLEEP;
        if long {
            self.sleeping_long.store(true, Ordering::Release);
            // A record pushed just before the flag was set would otherwise
            // wait the whole sleep.
            if !self.records.is_empty() {
                self.sleeping_long.store(false, Ordering::Release);
                return;
            }
        }
        std::thread::park_timeout(timeout);
        if long {
            self.sleeping_long.store(false, Ordering::Release);
        }
    }

    /// Sleeps the collector until `timeout` passed, the inbox is a quarter
    /// full or the exit path asks it to finish: unlike [`Inbox::wait`], the
    /// next record does not wake it, however long the sleep.
    pub fn wait_for_batch(&self, timeout: Duration) {
        if self.finish_requested.load(Ordering::Acquire) {
            return;
        }
        std::thread::park_timeout(timeout);
    }

    /// Asks the collector to finish; false when no collector runs (then
    /// nobody will answer).
    pub fn request_finish(&self, request: FinishRequest) -> bool {
        if !self.collector_alive.load(Ordering::Acquire) {
            return false;
        }
        *self.finish.lock().unwrap_or_else(PoisonError::into_inner) = Some(request);
        self.finish_requested.store(true, Ordering::Release);
        self.wake();
        true
    }

    /// The exit path's request, once made.
    #[inline]
    pub fn take_finish(&self) -> Option<FinishRequest> {
        if !self.finish_requested.load(Ordering::Acquire) {
            return None;
        }
        self.finish
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Wakes the collector now (a start or stop to apply).
    pub fn wake(&self) {
        if let Some(collector) = self.collector.get() {
            collector.unpark();
        }
    }
}

/// Marks the collector gone when dropped (see [`Inbox::collector_guard`]).
pub struct CollectorGuard<'a>(&'a Inbox);

impl Drop for CollectorGuard<'_> {
    fn drop(&mut self) {
        self.0.collector_alive.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syclgraph_graph::record::Record;

    fn record(ns: u64) -> Record {
        Record::QueueDestroyed { queue_id: 1, ns }
    }

    #[test]
    fn a_full_inbox_gives_the_record_back_and_keeps_the_order() {
        let inbox = Inbox::new(2);
        assert!(inbox.push(record(1).into()).is_ok());
        assert!(inbox.push(record(2).into()).is_ok());
        assert!(inbox.push(record(3).into()).is_err());
        for want in [1, 2] {
            match inbox.pop() {
                Some(Item::Record(Record::QueueDestroyed { ns, .. })) => assert_eq!(ns, want),
                other => panic!("{other:?}"),
            }
        }
        assert!(inbox.pop().is_none());
    }

    #[test]
    fn behind_from_a_quarter_queued_until_below_an_eighth() {
        let inbox = Inbox::new(16);
        for ns in 0..3 {
            assert!(inbox.push(record(ns).into()).is_ok());
        }
        assert!(!inbox.is_behind(), "3 of 16 queued");
        assert!(inbox.push(record(3).into()).is_ok());
        assert!(inbox.is_behind(), "4 of 16 queued");
        inbox.pop();
        inbox.pop();
        inbox.catch_up();
        assert!(inbox.is_behind(), "2 of 16 queued: not below an eighth yet");
        inbox.pop();
        inbox.catch_up();
        assert!(!inbox.is_behind(), "1 of 16 queued");
    }

    #[test]
    fn finish_is_refused_without_a_collector_and_taken_once_with_one() {
        let inbox = Inbox::new(4);
        let (reply, _done) = std::sync::mpsc::sync_channel(1);
        let request = |reply| FinishRequest {
            teardown: Teardown::RuntimeAlive,
            reply,
        };
        assert!(!inbox.request_finish(request(reply.clone())));
        inbox.collector_started(std::thread::current());
        let guard = inbox.collector_guard();
        assert!(inbox.take_finish().is_none());
        assert!(inbox.request_finish(request(reply.clone())));
        assert!(inbox.take_finish().is_some());
        assert!(inbox.take_finish().is_none());
        drop(guard);
        assert!(!inbox.request_finish(request(reply)));
    }
}
