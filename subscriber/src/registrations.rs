//! Our XPTI callback registrations on the `sycl` streams, and their removal
//! while tracing is stopped: once no command submitted while it was on
//! awaits its task end, the collector removes the callbacks of every trace
//! point but node_create (counting) and the rare queue ones, so the runtime
//! neither builds nor sends those events ([`Registrations::quiesce`]); a
//! start puts them back before it returns (or, when the collector is
//! changing them at that instant, the collector does on its next look).

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use xpti_sys::{trace_point as tp, tracepoint_callback_api_t};

use crate::recorder::Recorder;

/// The trace points registered on both `sycl` streams.
pub const TRACE_POINTS: [u16; 12] = [
    tp::GRAPH_CREATE,
    tp::NODE_CREATE,
    tp::EDGE_CREATE,
    tp::TASK_BEGIN,
    tp::TASK_END,
    tp::SIGNAL,
    tp::WAIT_BEGIN,
    tp::WAIT_END,
    tp::BARRIER_BEGIN,
    tp::BARRIER_END,
    tp::QUEUE_CREATE,
    tp::QUEUE_DESTROY,
];

/// The trace points syclgraph registers on `ur.call.debug`.
pub const UR_TRACE_POINTS: [u16; 2] = [tp::FUNCTION_WITH_ARGS_BEGIN, tp::FUNCTION_WITH_ARGS_END];

/// Trace points whose callbacks stay while stopped: node_create (to count
/// the submissions, and to mark them so that their later callbacks are
/// ignored), and the rare graph/queue ones (in-order queues must be known).
const KEPT_WHILE_STOPPED: [u16; 4] = [
    tp::NODE_CREATE,
    tp::GRAPH_CREATE,
    tp::QUEUE_CREATE,
    tp::QUEUE_DESTROY,
];

/// The `sycl` streams we registered on, and whether their other callbacks
/// are removed (while stopped).
#[derive(Default)]
struct StreamSet {
    streams: Vec<&'static CStr>,
    removed: bool,
}

/// Our callback registrations, changed under one lock that no callback
/// takes: by `xptiTraceInit`, by the collector, and by a start (which only
/// tries it).
pub struct Registrations {
    set: Mutex<StreamSet>,
    /// Mirrors `set.removed`, readable without the lock.
    removed: AtomicBool,
    /// The callback registered on the `sycl` streams.
    on_sycl: tracepoint_callback_api_t,
}

impl Registrations {
    /// No stream yet; `on_sycl` is the callback to register on each.
    pub fn new(on_sycl: tracepoint_callback_api_t) -> Registrations {
        Registrations {
            set: Mutex::new(StreamSet::default()),
            removed: AtomicBool::new(false),
            on_sycl,
        }
    }

    /// Registers every trace point on `stream` (from `xptiTraceInit`).
    pub fn add_stream(&self, recorder: &Recorder, stream: &'static CStr) {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        for trace_type in TRACE_POINTS {
            if !set.removed || KEPT_WHILE_STOPPED.contains(&trace_type) {
                recorder.xpti.register(stream, trace_type, self.on_sycl);
            }
        }
        set.streams.push(stream);
    }

    /// True while the callbacks of stopped tracing are removed.
    pub fn removed(&self) -> bool {
        self.removed.load(Ordering::Relaxed)
    }

    /// Removes the callbacks not needed while stopped (collector thread,
    /// outside any callback). Puts them back at once if tracing started
    /// meanwhile.
    pub fn quiesce(&self, recorder: &Recorder) {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        if set.removed || !recorder.paused() {
            return;
        }
        self.change(recorder, &set.streams, false);
        set.removed = true;
        self.removed.store(true, Ordering::Relaxed);
        if !recorder.paused() {
            self.put_back(recorder, &mut set);
        }
    }

    /// Puts the removed callbacks back (collector thread).
    pub fn restore(&self, recorder: &Recorder) {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        self.put_back(recorder, &mut set);
    }

    /// [`Registrations::restore`] when nobody else holds the lock; the
    /// collector, which does, checks again when it is done.
    pub fn restore_if_free(&self, recorder: &Recorder) {
        if !self.removed() {
            return;
        }
        if let Ok(mut set) = self.set.try_lock() {
            self.put_back(recorder, &mut set);
        }
    }

    fn put_back(&self, recorder: &Recorder, set: &mut StreamSet) {
        if !set.removed {
            return;
        }
        // Device events of commands submitted while the callbacks were
        // out were never seen: an address reused since would name the
        // wrong owner in a later wait list.
        recorder.forget_event_owners();
        self.change(recorder, &set.streams, true);
        set.removed = false;
        self.removed.store(false, Ordering::Relaxed);
    }

    fn change(&self, recorder: &Recorder, streams: &[&'static CStr], register: bool) {
        for &stream in streams {
            for trace_type in TRACE_POINTS {
                if KEPT_WHILE_STOPPED.contains(&trace_type) {
                    continue;
                }
                if register {
                    recorder.xpti.register(stream, trace_type, self.on_sycl);
                } else {
                    recorder.xpti.unregister(stream, trace_type, self.on_sycl);
                }
            }
        }
    }
}
