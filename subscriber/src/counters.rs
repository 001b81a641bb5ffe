//! What could not be recorded, and how Unified Runtime calls were followed:
//! one set of atomic counters and flags, shared by the callbacks, the hooks
//! and the collector, read once at the end through [`Counters::snapshot`].
//!
//! Callbacks only ever add to a counter or set a flag (relaxed, no lock);
//! the collector reads them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::native_commands::{NativeRefusals, RefusedCounts};
use crate::unseen_enqueues::{UnseenCounts, UnseenEnqueues};

/// Every counter and flag of one tracing session (owned by the session,
/// handed to the recorder and the collector).
#[derive(Default)]
pub struct Counters {
    /// Records dropped because the queue to the collector was full.
    pub queue_full: AtomicU64,
    /// Events that arrived after the exit drain had started.
    pub after_finish: AtomicU64,
    /// Callbacks without an event to attribute them to.
    pub without_event: AtomicU64,
    /// Signalled device events that could not be retained.
    pub not_retained: AtomicU64,
    /// Signalled device events not kept while the collector was behind.
    pub behind: AtomicU64,
    /// Signalled device events that came before the timestamp source was ready.
    pub before_timing_ready: AtomicU64,
    /// Edges whose ends were submitted before tracing started (or are unknown).
    pub unknown_edge_end: AtomicU64,
    /// UR enqueues no XPTI node accompanied, by function.
    pub unseen_enqueues: UnseenEnqueues,
    /// Native commands the adapter refused ([`crate::native_commands`]).
    pub native_refused: NativeRefusals,
    /// Submissions (node_create) made while tracing was stopped: counted,
    /// not recorded.
    pub while_stopped: AtomicU64,
    /// Edges with an end submitted while tracing was stopped.
    pub edges_while_stopped: AtomicU64,
    /// Starts/stops that found the toggle queue full (the windows then miss
    /// a bound).
    pub toggles_lost: AtomicU64,
    /// `urQueueCreate` calls seen (on `ur.call.debug` or through the
    /// hooks): the collector tells the timestamp source when it changed.
    pub queue_creations: AtomicU64,
    /// Queues whose profiling flag syclgraph turned on.
    pub queues_forced: AtomicU64,
    /// UR calls seen on `ur.call.debug` (begin and end count once each).
    pub ur_calls_seen: AtomicU64,
    /// Set when `SYCLGRAPH_MAX_UR_CALLS` is reached; the collector then
    /// unsubscribes from `ur.call.debug`, outside any callback.
    pub ur_limit_reached: AtomicBool,
    /// Set when the runtime announced `ur.call.debug` and we registered on it.
    pub ur_stream_registered: AtomicBool,
    /// Set at the first UR call seen on `ur.call.debug`: the runtime's own
    /// UR loader has finished its initialisation (the collector starts its
    /// own loader only then, never alongside it).
    pub runtime_ur_called: AtomicBool,
    /// Set when syclgraph turned the UR tracing layer on (not the user):
    /// then it may be taken out again once the hooks are in.
    pub tracing_layer_turned_on: AtomicBool,
    /// Set when `UR_ENABLE_LAYERS` named other layers before ours: the
    /// tracing layer then stays in the call chain.
    pub other_ur_layers: AtomicBool,
    /// Set once the hooks in the adapter's dispatch table are in: from then
    /// on `ur.call.debug` stands down.
    pub ur_hooks_active: AtomicBool,
    /// SYCL graph calls that entered the tracing layer (not a hook) and
    /// have not ended yet ([`crate::graph_ur_calls`]): the collector keeps
    /// listening on `ur.call.debug` while any is under way.
    pub graph_calls_in_layer: AtomicU64,
    /// Set the first time a thread entered the region `SYCLGRAPH_REGION`
    /// names (the collector says at exit when it never was).
    pub captured_region_entered: AtomicBool,
}

/// The counters' values at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountersSnapshot {
    /// See [`Counters::queue_full`].
    pub queue_full: u64,
    /// See [`Counters::after_finish`].
    pub after_finish: u64,
    /// See [`Counters::without_event`].
    pub without_event: u64,
    /// See [`Counters::not_retained`].
    pub not_retained: u64,
    /// See [`Counters::behind`].
    pub behind: u64,
    /// See [`Counters::before_timing_ready`].
    pub before_timing_ready: u64,
    /// See [`Counters::unknown_edge_end`].
    pub unknown_edge_end: u64,
    /// See [`Counters::unseen_enqueues`].
    pub unseen_enqueues: UnseenCounts,
    /// See [`Counters::native_refused`].
    pub native_refused: RefusedCounts,
    /// See [`Counters::while_stopped`].
    pub while_stopped: u64,
    /// See [`Counters::edges_while_stopped`].
    pub edges_while_stopped: u64,
    /// See [`Counters::toggles_lost`].
    pub toggles_lost: u64,
    /// See [`Counters::queue_creations`].
    pub queue_creations: u64,
    /// See [`Counters::queues_forced`].
    pub queues_forced: u64,
    /// See [`Counters::ur_calls_seen`].
    pub ur_calls_seen: u64,
    /// See [`Counters::ur_limit_reached`].
    pub ur_limit_reached: bool,
    /// See [`Counters::ur_stream_registered`].
    pub ur_stream_registered: bool,
    /// See [`Counters::runtime_ur_called`].
    pub runtime_ur_called: bool,
    /// See [`Counters::tracing_layer_turned_on`].
    pub tracing_layer_turned_on: bool,
    /// See [`Counters::other_ur_layers`].
    pub other_ur_layers: bool,
    /// See [`Counters::ur_hooks_active`].
    pub ur_hooks_active: bool,
}

impl Counters {
    /// Adds one to `counter` (relaxed: callbacks never wait on it).
    #[inline]
    pub fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Every counter and flag, read now.
    pub fn snapshot(&self) -> CountersSnapshot {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let b = |f: &AtomicBool| f.load(Ordering::Relaxed);
        CountersSnapshot {
            queue_full: n(&self.queue_full),
            after_finish: n(&self.after_finish),
            without_event: n(&self.without_event),
            not_retained: n(&self.not_retained),
            behind: n(&self.behind),
            before_timing_ready: n(&self.before_timing_ready),
            unknown_edge_end: n(&self.unknown_edge_end),
            unseen_enqueues: self.unseen_enqueues.snapshot(),
            native_refused: self.native_refused.snapshot(),
            while_stopped: n(&self.while_stopped),
            edges_while_stopped: n(&self.edges_while_stopped),
            toggles_lost: n(&self.toggles_lost),
            queue_creations: n(&self.queue_creations),
            queues_forced: n(&self.queues_forced),
            ur_calls_seen: n(&self.ur_calls_seen),
            ur_limit_reached: b(&self.ur_limit_reached),
            ur_stream_registered: b(&self.ur_stream_registered),
            runtime_ur_called: b(&self.runtime_ur_called),
            tracing_layer_turned_on: b(&self.tracing_layer_turned_on),
            other_ur_layers: b(&self.other_ur_layers),
            ur_hooks_active: b(&self.ur_hooks_active),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_each_counter_into_its_own_field() {
        let counters = Counters::default();
        Counters::count(&counters.queue_full);
        Counters::count(&counters.queue_full);
        Counters::count(&counters.toggles_lost);
        counters.queues_forced.fetch_add(5, Ordering::Relaxed);
        counters.ur_limit_reached.store(true, Ordering::Relaxed);
        let s = counters.snapshot();
        assert_eq!((s.queue_full, s.toggles_lost, s.queues_forced), (2, 1, 5));
        assert!(s.ur_limit_reached && !s.ur_hooks_active);
        assert_eq!(
            CountersSnapshot {
                queue_full: 0,
                toggles_lost: 0,
                queues_forced: 0,
                ur_limit_reached: false,
                ..s
            },
            CountersSnapshot::default()
        );
    }
}
