//! The tracing session: the one owner of syclgraph's lifecycle in a
//! process. It starts tracing (on the first `xptiTraceInit`), pauses and
//! resumes it, stops it in a forked child, and finishes it (the exit drain
//! that writes the outputs while the runtime is still whole). It owns the
//! recorder, the inbox to the collector, the toggles, the counters, the
//! callback registrations and the output directory, and it is the only
//! writer of the recorder's lifecycle state byte.
//!
//! There is one session per process, behind [`current`] (a private
//! `OnceLock`, like tracing-core's dispatcher): the entry points (XPTI
//! callbacks, UR hooks, the C API, ITT) fetch it there and hand what is
//! needed down as arguments; nothing below reaches for it. The collector
//! thread reaches it through [`SessionControl`], given at start.
//!
//! The runtime calls `xptiTraceFinish("sycl")` late in its own shutdown, when
//! Unified Runtime calls crash the program. So the real end is an `atexit`
//! handler, registered at start-up and again at the first queue creation
//! (after the runtime registered its own shutdown, so that it runs first:
//! [`register_exit_handler_after_runtime`]): it runs before the runtime
//! releases its contexts, asks the collector to read every device event
//! still in flight and release it, and waits for that (bounded by
//! `SYCLGRAPH_DRAIN_TIMEOUT_MS`). The collector then writes
//! the files while the runtime tears itself down (it frees XPTI's trace
//! points then, about 4 µs a kernel on a CPU), and the library's unload at
//! the process's very end ([`wait_for_outputs`], after the runtime's
//! destructors) waits for them.

use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use xpti_sys::tracepoint_callback_api_t;
use ze_bridge::entry_table::EntryTable;

use crate::clock::monotonic_ns;
use crate::collector::Collector;
use crate::config::Config;
use crate::control::SessionControl;
use crate::counters::Counters;
pub use crate::inbox::Teardown;
use crate::inbox::{FinishRequest, Inbox};
use crate::output_dir::{prepare_output_dir, release_output_dir};
use crate::recorder::{Recorder, FINISHED, FINISHING, PAUSED, RUNNING};
use crate::registrations::{Registrations, UR_TRACE_POINTS};
use crate::timing_slot::TimingSlot;
use crate::toggles::Toggles;
use crate::tracing_layer::{enable_tracing_layer, LayerState};
use crate::warn;
use crate::xpti::Xpti;

/// The name of syclgraph's collector thread.
pub(crate) const COLLECTOR_THREAD: &str = "syclgraph-collector";

/// The entry points a session registers or installs: they sit above it, so
/// it is given them at start ([`start_once`]) instead of naming them.
#[derive(Clone, Copy)]
pub struct EntryPoints {
    /// The callback of the `sycl` and `sycl.debug` streams.
    pub on_sycl: tracepoint_callback_api_t,
    /// The callback of `ur.call.debug`.
    pub on_ur_call: tracepoint_callback_api_t,
    /// Puts the hooks into the runtime's table of UR entry points.
    pub install_ur_hooks: fn(&EntryTable, bool, &Counters) -> Result<usize, String>,
}

/// One process's tracing session.
pub struct Session {
    /// What the callbacks feed (the hot path).
    pub recorder: Recorder,
    inbox: Arc<Inbox>,
    counters: Arc<Counters>,
    toggles: Toggles,
    registrations: Registrations,
    entry_points: EntryPoints,
    output_dir: PathBuf,
    drain_timeout: Duration,
    /// The region captured by name (`SYCLGRAPH_REGION`), when set.
    capture: Option<CaptureSwitch>,
    /// The channel the collector answers the exit's finish request on,
    /// made at start: the exit on the program's thread then allocates
    /// nothing (an allocation there can pay for the heap's consolidation
    /// of the runtime's frees, thousands of instructions, varying by run).
    finish_reply: Mutex<Option<FinishReply>>,
    /// The reply channel's receiving end while the collector writes the
    /// outputs (after the runtime let go): [`wait_for_outputs`] takes it.
    outputs_pending: Mutex<Option<Receiver<()>>>,
}

/// Both ends of a finish request's reply channel.
type FinishReply = (SyncSender<()>, Receiver<()>);

/// The two conditions of tracing while a region is captured by name
/// ([`crate::capture`]): it is on while both hold.
struct CaptureSwitch {
    /// The region's name.
    name: Box<str>,
    /// The other start/stop settings have it on (`SYCLGRAPH_START`, a
    /// delay, ITT pause/resume, the C API, the signal, the control file).
    on: AtomicBool,
    /// Threads with a task of the captured name open.
    threads_inside: AtomicU32,
}

/// The session, once the first `xptiTraceInit` decided; `None` inside when
/// tracing could not start or the runtime was refused.
static SESSION: OnceLock<Option<Session>> = OnceLock::new();

/// The session, if tracing is on (one acquire load).
#[inline]
pub fn current() -> Option<&'static Session> {
    SESSION.get().and_then(Option::as_ref)
}

/// The session's recorder, if tracing is on: what the callbacks use.
#[inline]
pub fn recorder() -> Option<&'static Recorder> {
    current().map(|s| &s.recorder)
}

/// True once the first `xptiTraceInit` decided whether to trace.
pub fn decided() -> bool {
    SESSION.get().is_some()
}

/// Decides that this process is not traced (an unsupported runtime); true
/// the first time (then the caller says why).
pub fn refuse() -> bool {
    SESSION.set(None).is_ok()
}

/// The session, started on the first call.
pub fn start_once(entry_points: EntryPoints) -> Option<&'static Session> {
    SESSION
        .get_or_init(|| Session::start(entry_points))
        .as_ref()
}

/// A start or stop asked for before tracing was set up (1: start, 2: stop).
static ASKED_BEFORE_START: AtomicU8 = AtomicU8::new(0);

/// Notes a start (`true`) or stop asked for before the session exists: it
/// decides whether tracing begins on or stopped.
pub fn asked_before_start(start: bool) {
    ASKED_BEFORE_START.store(if start { 1 } else { 2 }, Ordering::Relaxed);
}

/// Whether tracing should begin stopped: `SYCLGRAPH_START=paused` or a
/// delay, unless the program called start/stop before set-up.
fn begins_paused(config_paused: bool) -> bool {
    match ASKED_BEFORE_START.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => config_paused,
    }
}

impl Session {
    /// Sets tracing up: the one place where start decides. `None` (after
    /// one stderr line) when it cannot work: then the program runs
    /// untraced, unchanged.
    fn start(entry_points: EntryPoints) -> Option<Session> {
        let mut config = Config::from_env(warn);
        if !config.sampled() {
            // A rank outside SYCLGRAPH_RANKS: no callbacks, nothing recorded.
            crate::job::not_sampled(&config);
            return None;
        }
        if let Err(e) = prepare_output_dir(&mut config) {
            warn(format_args!(
                "cannot write to SYCLGRAPH_OUTPUT_DIR {} ({e}); tracing is off",
                config.output_dir.display()
            ));
            return None;
        }
        crate::job::started(&config);
        let xpti = match Xpti::load() {
            Ok(x) => x,
            Err(e) => {
                warn(format_args!("{e}; tracing is off"));
                return None;
            }
        };
        // Before any thread of ours exists: see `enable_tracing_layer`.
        let force_profiling = config.force_profiling && config.device_timing;
        let counters = Arc::new(Counters::default());
        if config.device_timing {
            if let LayerState::Off(why) = enable_tracing_layer(&counters) {
                warn(why);
            }
        }
        let timestamps = TimingSlot::new(Duration::from_millis(config.start_wait_ms));
        let inbox = Arc::new(Inbox::new(config.queue_capacity));
        let collector = Collector::new(
            config.clone(),
            timestamps.clone(),
            counters.clone(),
            control,
        );
        let collector_inbox = inbox.clone();
        let spawned = std::thread::Builder::new()
            .name(COLLECTOR_THREAD.into())
            .spawn(move || collector.run(collector_inbox));
        match spawned {
            Ok(handle) => inbox.collector_started(handle.thread().clone()),
            Err(e) => {
                warn(format_args!(
                    "cannot start the collector thread ({e}); tracing is off"
                ));
                // Nobody writes there: a later process need not check our pid.
                release_output_dir(&config.output_dir);
                return None;
            }
        }
        if let Err(e) = crate::exports::publish_c_api() {
            warn(format_args!(
                "syclgraph_start/stop cannot be found through include/syclgraph.h ({e})"
            ));
        }
        if let Some(signal) = config.toggle_signal {
            if let Err(e) = crate::control::install_signal(signal) {
                warn(format_args!(
                    "cannot install the SYCLGRAPH_TOGGLE_SIGNAL handler ({e})"
                ));
            }
        }
        // SAFETY: `in_forked_child` only stores an atomic (async-signal-safe).
        unsafe { libc::pthread_atfork(None, None, Some(in_forked_child)) };
        // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds.
        if unsafe { libc::atexit(at_exit) } != 0 {
            warn("cannot register the exit handler; outputs are written at runtime shutdown, without device times still in flight");
        }
        let paused = begins_paused(config.start_paused || !config.delay.is_zero());
        // Capturing a region: stopped until a thread enters it.
        let capture = config.region.as_ref().map(|name| CaptureSwitch {
            name: name.as_str().into(),
            on: AtomicBool::new(!paused),
            threads_inside: AtomicU32::new(0),
        });
        let paused = paused || capture.is_some();
        let session = Session {
            recorder: Recorder::new(
                xpti,
                inbox.clone(),
                timestamps,
                counters.clone(),
                force_profiling,
                config.max_ur_calls,
                paused,
            )
            .capturing(capture.is_some()),
            inbox,
            counters,
            toggles: Toggles::default(),
            registrations: Registrations::new(entry_points.on_sycl),
            entry_points,
            output_dir: config.output_dir,
            drain_timeout: Duration::from_millis(config.drain_timeout_ms),
            capture,
            finish_reply: Mutex::new(Some(sync_channel(2))),
            outputs_pending: Mutex::new(None),
        };
        if !paused {
            session.note_toggle(true);
        }
        Some(session)
    }

    /// The recorder's lifecycle state byte, which only this module writes.
    fn state(&self) -> &AtomicU8 {
        self.recorder.lifecycle_state()
    }

    /// Starts tracing, if it is stopped. Returns true when it was stopped.
    /// Puts the callbacks removed while stopped back before returning
    /// (unless the collector is changing them right now: then it does).
    /// While a region is captured by name, tracing is on only while a
    /// thread is inside it too: this turns the other condition on.
    pub fn resume(&self) -> bool {
        if let Some(capture) = &self.capture {
            let was_on = capture.on.swap(true, Ordering::SeqCst);
            self.follow_capture(capture);
            return !was_on;
        }
        if self
            .state()
            .compare_exchange(PAUSED, RUNNING, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.note_toggle(true);
        self.registrations.restore_if_free(&self.recorder);
        self.inbox.wake();
        true
    }

    /// Stops tracing, if it is on. Returns true when it was on.
    pub fn pause(&self) -> bool {
        if let Some(capture) = &self.capture {
            let was_on = capture.on.swap(false, Ordering::SeqCst);
            self.follow_capture(capture);
            return was_on;
        }
        if self
            .state()
            .compare_exchange(RUNNING, PAUSED, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.note_toggle(false);
        self.inbox.wake();
        true
    }

    /// The name of the region captured (`SYCLGRAPH_REGION`), if any.
    pub fn captured_region(&self) -> Option<&str> {
        self.capture.as_ref().map(|c| &*c.name)
    }

    /// A thread entered the region captured by name (its first open task
    /// of that name began): tracing starts if the other settings have it
    /// on and it was stopped.
    pub fn entered_captured_region(&self) {
        if let Some(capture) = &self.capture {
            self.counters
                .captured_region_entered
                .store(true, Ordering::Relaxed);
            capture.threads_inside.fetch_add(1, Ordering::SeqCst);
            self.follow_capture(capture);
        }
    }

    /// A thread left the region captured by name: tracing stops when no
    /// thread is inside it any more.
    pub fn left_captured_region(&self) {
        if let Some(capture) = &self.capture {
            // Never below 0 (a thread that entered before the session
            // existed is not counted, nor is its leaving).
            let _ = capture
                .threads_inside
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
            self.follow_capture(capture);
        }
    }

    /// Brings the state byte to what the capture's two conditions say,
    /// again after each change it makes (another thread may have entered
    /// or left meanwhile: whoever changed the state last looks again).
    fn follow_capture(&self, capture: &CaptureSwitch) {
        loop {
            let on = capture.on.load(Ordering::SeqCst)
                && capture.threads_inside.load(Ordering::SeqCst) > 0;
            let (from, to) = if on {
                (PAUSED, RUNNING)
            } else {
                (RUNNING, PAUSED)
            };
            if self
                .state()
                .compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                // Already so, or finishing.
                return;
            }
            self.note_toggle(on);
            if on {
                self.registrations.restore_if_free(&self.recorder);
            }
            self.inbox.wake();
        }
    }

    /// Notes a start (`on`) or stop for the collector; counts it when the
    /// toggle queue is full.
    fn note_toggle(&self, on: bool) {
        if !self.toggles.push(on, monotonic_ns()) {
            Counters::count(&self.counters.toggles_lost);
        }
    }

    /// Registers our callbacks on a stream the runtime announced.
    pub fn register_stream(&self, stream: &str) {
        let name: &'static CStr = match stream {
            "sycl" => c"sycl",
            "sycl.debug" => c"sycl.debug",
            "ur.call.debug" => {
                for trace_type in UR_TRACE_POINTS {
                    self.recorder.xpti.register(
                        c"ur.call.debug",
                        trace_type,
                        self.entry_points.on_ur_call,
                    );
                }
                self.counters
                    .ur_stream_registered
                    .store(true, Ordering::Relaxed);
                return;
            }
            _ => return,
        };
        self.registrations.add_stream(&self.recorder, name);
    }

    /// Drains the collector and writes the outputs, once. Later calls
    /// return at once.
    fn finish(&self, teardown: Teardown) {
        // From on or stopped (a start/stop racing with this retries).
        loop {
            let state = self.state().load(Ordering::Acquire);
            if state != RUNNING && state != PAUSED {
                return;
            }
            if self
                .state()
                .compare_exchange(state, FINISHING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                break;
            }
        }
        // This thread's direct-path submission kept back, if it is mid-call.
        self.recorder.release_held();
        let made = self
            .finish_reply
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let (reply, done) = made.unwrap_or_else(|| sync_channel(2));
        if self.inbox.request_finish(FinishRequest { teardown, reply }) {
            // The collector itself bounds the device drain; this bounds the
            // rest of its use of the runtime. The outputs come after.
            if done.recv_timeout(self.exit_bound()).is_ok() {
                *self
                    .outputs_pending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(done);
            }
        }
        self.state().store(FINISHED, Ordering::Release);
    }

    /// Waits for the outputs the finish left the collector writing, once.
    fn wait_for_outputs(&self) {
        let pending = self
            .outputs_pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(written) = pending {
            let _ = written.recv_timeout(self.exit_bound());
        }
    }

    /// How long the exit waits for each of the collector's two signals.
    fn exit_bound(&self) -> Duration {
        self.drain_timeout + Duration::from_secs(30)
    }

    /// Where this session writes its outputs.
    pub fn output_dir(&self) -> &std::path::Path {
        &self.output_dir
    }
}

impl SessionControl for Session {
    fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    fn resume(&self) -> bool {
        Session::resume(self)
    }

    fn pause(&self) -> bool {
        Session::pause(self)
    }

    fn next_toggle(&self) -> Option<(bool, u64)> {
        self.toggles.pop()
    }

    fn callbacks_removed(&self) -> bool {
        self.registrations.removed()
    }

    fn remove_callbacks(&self) {
        self.registrations.quiesce(&self.recorder);
    }

    fn restore_callbacks(&self) {
        self.registrations.restore(&self.recorder);
    }

    fn unsubscribe_ur_calls(&self) {
        for trace_type in UR_TRACE_POINTS {
            self.recorder.xpti.unregister(
                c"ur.call.debug",
                trace_type,
                self.entry_points.on_ur_call,
            );
        }
    }

    fn install_ur_hooks(&self, table: &EntryTable, skip_layer: bool) -> Result<usize, String> {
        (self.entry_points.install_ur_hooks)(table, skip_layer, &self.counters)
    }
}

/// The session as the collector sees it, once started.
fn control() -> Option<&'static dyn SessionControl> {
    current().map(|s| s as &dyn SessionControl)
}

/// In a child made by fork (without exec) nothing is traced: it has no
/// collector thread, and the parent owns the outputs.
extern "C" fn in_forked_child() {
    if let Some(session) = current() {
        session.state().store(FINISHED, Ordering::Relaxed);
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| finish(Teardown::RuntimeAlive));
}

/// Registers the exit handler once more, at the first queue creation.
///
/// The runtime registers its own shutdown (its `StaticVarShutdownHandler`,
/// which releases its contexts) when it first lists its platforms, after
/// syclgraph's registration at start-up; exit handlers run last registered
/// first, so the runtime's ran first, and the device events syclgraph
/// still held were released after their context (the Level Zero adapter
/// then reads the freed context: SIGSEGV at exit). A queue is made after
/// the platforms are listed: registered again here, the drain runs while
/// the runtime is whole, and the start-up registration then finds the
/// session finished. Costs one atomic swap per queue creation.
pub fn register_exit_handler_after_runtime() {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if REGISTERED.swap(true, Ordering::Relaxed) {
        return;
    }
    // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds. Should
    // this fail, the registration made at start-up still finishes the run.
    let _ = unsafe { libc::atexit(at_exit) };
}

/// Drains the collector and has it write the outputs, once (at exit, or
/// from `xptiTraceFinish`); returns once nothing of the runtime is used any
/// more, the outputs being written on. Later calls return at once.
pub fn finish(teardown: Teardown) {
    if let Some(session) = current() {
        session.finish(teardown);
    }
}

/// Waits until the outputs a [`finish`] left the collector writing are
/// written (bounded like the finish): called when the library is unloaded
/// at the process's end, after the runtime's own teardown.
pub fn wait_for_outputs() {
    if let Some(session) = current() {
        session.wait_for_outputs();
    }
}
