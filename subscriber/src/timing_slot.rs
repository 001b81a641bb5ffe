//! Where the timestamp source lives once loaded, and the one wait for it.
//!
//! Loading Unified Runtime's second loader instance calls back into the XPTI
//! framework (its tracing layer registers streams), which deadlocks while
//! the framework is still running our `xptiTraceInit`. So the collector
//! thread loads it right after start-up, and the callbacks look it up here:
//! one atomic load.
//!
//! Under load (every rank of an MPI job starting at once) the collector may
//! not have loaded it when the program's first device commands are
//! signalled. The first callback that finds the slot empty with a device
//! event in hand therefore waits for it ([`TimingSlot::wait_until_filled`]),
//! once per process and bounded by `SYCLGRAPH_START_WAIT_MS` from the first
//! such wait on: the runtime's start-up runs alongside the loading, so only
//! what is left of it when the first command comes is waited for. Past the
//! limit nobody waits again; the commands not timed are counted
//! ([`NOT_READY_EVENT`]). This is the only place a callback blocks, and it
//! takes the slot's own lock, never a global one, only while the slot is
//! empty.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use syclgraph_graph::record::TimingStatus;
use ze_bridge::TimestampSource;

/// The state of the timestamp source.
pub enum Timing<'a> {
    /// The collector is still loading it.
    Loading,
    /// Loaded and usable.
    Ready(&'a Arc<dyn TimestampSource>),
    /// Turned off, or it could not be loaded.
    Unavailable,
}

/// The event a record carries for a command whose device event came before
/// the timestamp source was ready (and after the wait gave up). Real
/// `ur_event_handle_t` values are aligned addresses, never 1, 2 or 3.
pub const NOT_READY_EVENT: u64 = 1;
/// The event a record carries for a command whose device event could not
/// be retained.
pub const NOT_RETAINED_EVENT: u64 = 2;
/// The event a record carries for a command whose device event was not
/// kept because the collector was behind ([`crate::inbox::Inbox::is_behind`]).
pub const BEHIND_EVENT: u64 = 3;

/// Why a record's `event` was not kept for reading, when it stands for a
/// device event syclgraph had but could not keep ([`NOT_READY_EVENT`],
/// [`NOT_RETAINED_EVENT`], [`BEHIND_EVENT`]); `None` for a real
/// (retained) event or 0.
pub fn untimed_cause(event: u64) -> Option<TimingStatus> {
    match event {
        NOT_READY_EVENT => Some(TimingStatus::NotReady),
        NOT_RETAINED_EVENT => Some(TimingStatus::NotRetained),
        BEHIND_EVENT => Some(TimingStatus::Behind),
        _ => None,
    }
}

/// True when a record's `event` is a retained device event (to read, and
/// to release if nobody will).
pub fn is_retained(event: u64) -> bool {
    event != 0 && untimed_cause(event).is_none()
}

/// A shared, set-once slot for the timestamp source.
#[derive(Clone, Default)]
pub struct TimingSlot(Arc<Shared>);

#[derive(Default)]
struct Shared {
    source: OnceLock<Option<Arc<dyn TimestampSource>>>,
    start: StartWait,
}

/// The one bounded wait for the source at start-up.
#[derive(Default)]
struct StartWait {
    /// `SYCLGRAPH_START_WAIT_MS`: zero never waits.
    limit: Duration,
    /// Held only to wait on `filled` and to notify it.
    lock: Mutex<()>,
    filled: Condvar,
    /// When waiting stops for good: the first wait's start plus `limit`.
    deadline: OnceLock<Instant>,
    /// Set when a callback asked for the source (the collector then loads
    /// it at once).
    requested: AtomicBool,
    /// Set when the deadline passed with the slot still empty.
    given_up: AtomicBool,
    /// Total time callbacks spent waiting, ns.
    waited_ns: AtomicU64,
}

impl TimingSlot {
    /// An empty slot (state [`Timing::Loading`]) whose callbacks wait for
    /// it at most `start_wait` in all.
    pub fn new(start_wait: Duration) -> TimingSlot {
        TimingSlot(Arc::new(Shared {
            source: OnceLock::new(),
            start: StartWait {
                limit: start_wait,
                ..StartWait::default()
            },
        }))
    }

    /// Fills the slot once, and wakes whoever waits for it; later calls
    /// do nothing.
    pub fn fill(&self, source: Option<Arc<dyn TimestampSource>>) {
        let _ = self.0.source.set(source);
        let start = &self.0.start;
        // Under the lock: a waiter checks the slot and sleeps under it too,
        // so it cannot miss this notification.
        let _guard = start.lock.lock().unwrap_or_else(|e| e.into_inner());
        start.filled.notify_all();
    }

    /// The state of the source.
    #[inline]
    pub fn state(&self) -> Timing<'_> {
        match self.0.source.get() {
            None => Timing::Loading,
            Some(Some(source)) => Timing::Ready(source),
            Some(None) => Timing::Unavailable,
        }
    }

    /// The state once the slot is filled, or once the start-up wait's
    /// deadline passed ([`Timing::Loading`] then). Called by a callback that
    /// holds a device event while the state is [`Timing::Loading`]; `wake`
    /// wakes the collector so that it starts loading at once.
    #[cold]
    pub fn wait_until_filled(&self, wake: impl FnOnce()) -> Timing<'_> {
        let start = &self.0.start;
        if self.0.source.get().is_some()
            || start.limit.is_zero()
            || start.given_up.load(Ordering::Relaxed)
        {
            return self.state();
        }
        start.requested.store(true, Ordering::Release);
        wake();
        let began = Instant::now();
        let deadline = *start.deadline.get_or_init(|| began + start.limit);
        let mut guard = start.lock.lock().unwrap_or_else(|e| e.into_inner());
        while self.0.source.get().is_none() {
            let now = Instant::now();
            if now >= deadline {
                start.given_up.store(true, Ordering::Relaxed);
                break;
            }
            guard = match start.filled.wait_timeout(guard, deadline - now) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        }
        drop(guard);
        let waited = began.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        start.waited_ns.fetch_add(waited, Ordering::Relaxed);
        self.state()
    }

    /// True once a callback waits (or waited) for the source.
    pub fn requested(&self) -> bool {
        self.0.start.requested.load(Ordering::Acquire)
    }

    /// True when a wait reached `SYCLGRAPH_START_WAIT_MS` with no source.
    pub fn given_up(&self) -> bool {
        self.0.start.given_up.load(Ordering::Relaxed)
    }

    /// How long callbacks waited for the source in all.
    pub fn waited(&self) -> Duration {
        Duration::from_nanos(self.0.start.waited_ns.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_the_slot_is_filled() {
        let slot = TimingSlot::new(Duration::from_secs(30));
        let filler = slot.clone();
        let woken = AtomicBool::new(false);
        let handle = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            filler.fill(None);
        });
        let state = slot.wait_until_filled(|| woken.store(true, Ordering::Relaxed));
        assert!(matches!(state, Timing::Unavailable));
        assert!(woken.load(Ordering::Relaxed) && slot.requested());
        assert!(!slot.given_up());
        assert!(
            slot.waited() >= Duration::from_millis(40),
            "{:?}",
            slot.waited()
        );
        handle.join().unwrap();
    }

    #[test]
    fn waits_stop_for_good_at_the_deadline() {
        let slot = TimingSlot::new(Duration::from_millis(30));
        assert!(matches!(slot.wait_until_filled(|| {}), Timing::Loading));
        assert!(slot.given_up());
        let waited = slot.waited();
        assert!(waited >= Duration::from_millis(30), "{waited:?}");
        // Given up: the next caller does not wait at all.
        assert!(matches!(slot.wait_until_filled(|| {}), Timing::Loading));
        assert_eq!(slot.waited(), waited);
    }

    #[test]
    fn a_zero_limit_never_waits() {
        let slot = TimingSlot::new(Duration::ZERO);
        assert!(matches!(slot.wait_until_filled(|| {}), Timing::Loading));
        assert!(!slot.requested() && slot.waited().is_zero());
    }

    #[test]
    fn stand_in_events_are_never_read() {
        assert_eq!(untimed_cause(NOT_READY_EVENT), Some(TimingStatus::NotReady));
        assert_eq!(
            untimed_cause(NOT_RETAINED_EVENT),
            Some(TimingStatus::NotRetained)
        );
        assert_eq!(untimed_cause(BEHIND_EVENT), Some(TimingStatus::Behind));
        assert!(!is_retained(0) && !is_retained(NOT_READY_EVENT) && !is_retained(2));
        assert!(!is_retained(BEHIND_EVENT));
        assert!(is_retained(0x7f00_1000) && untimed_cause(0x7f00_1000).is_none());
    }
}
