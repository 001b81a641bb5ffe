//! Starting and stopping tracing while the program runs.
//!
//! Tracing is on ([`RUNNING`]) or stopped ([`PAUSED`]): one byte, the
//! recorder's `state`, which every callback already reads first (one
//! relaxed load, as before). A start or stop is a compare-and-swap on it,
//! from any thread, and never waits:
//!
//! - the C API [`syclgraph_start`] / [`syclgraph_stop`] /
//!   [`syclgraph_is_active`] (found at run time by `include/syclgraph.h`);
//! - the ITT API `__itt_pause` / `__itt_resume` ([`crate::itt`]);
//! - `SYCLGRAPH_START=paused`, `SYCLGRAPH_DELAY`, `SYCLGRAPH_DURATION`
//!   (timed by the collector thread, [`Timers`]);
//! - from outside: a signal named by `SYCLGRAPH_TOGGLE_SIGNAL` (its
//!   handler only counts, in an atomic) and the control file
//!   `<output dir>/.syclgraph-control` (`start` or `stop`), both applied by
//!   the collector thread (which looks every 100 ms, and for the file every
//!   500 ms).
//!
//! While stopped, submissions are counted, not recorded; those made while
//! tracing was on are followed to their end (task end, signal, device
//! times). Once none of those awaits its task end, the collector removes
//! the callbacks of every trace point but node_create (counting) and the
//! rare queue ones, so the runtime neither builds nor sends those events
//! ([`Registrations::quiesce`]); a start puts them back before it returns
//! (or, when the collector is changing them at that instant, the collector
//! does on its next look, within 100 ms).

use std::ffi::{c_int, CStr};
use std::panic::catch_unwind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;

use crate::callbacks::{on_sycl, TRACE_POINTS};
use crate::clock::monotonic_ns;
use crate::recorder::{Recorder, PAUSED, RUNNING};
use xpti_sys::trace_point as tp;

/// Starts and stops kept for the collector (it turns them into
/// [`Record::Tracing`](syclgraph_graph::record::Record::Tracing)); full:
/// the caller counts it (`Counters::toggles_lost`).
pub struct Toggles {
    queue: ArrayQueue<(bool, u64)>,
}

impl Default for Toggles {
    fn default() -> Self {
        Toggles {
            queue: ArrayQueue::new(4096),
        }
    }
}

impl Toggles {
    /// Notes a start (`on`) or stop at `ns`; false when the queue is full.
    #[must_use]
    pub fn push(&self, on: bool, ns: u64) -> bool {
        self.queue.push((on, ns)).is_ok()
    }

    /// The next start/stop noted, oldest first.
    pub fn pop(&self) -> Option<(bool, u64)> {
        self.queue.pop()
    }
}

/// Starts tracing, if it is stopped. Returns true when it was stopped.
/// Puts the callbacks removed while stopped back before returning (unless
/// the collector is changing them right now: then it does).
pub fn start(recorder: &Recorder) -> bool {
    if recorder
        .state
        .compare_exchange(PAUSED, RUNNING, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    recorder.note_toggle(true, monotonic_ns());
    REGISTRATIONS.restore_if_free(recorder);
    wake_collector();
    true
}

/// Stops tracing, if it is on. Returns true when it was on.
pub fn stop(recorder: &Recorder) -> bool {
    if recorder
        .state
        .compare_exchange(RUNNING, PAUSED, Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    recorder.note_toggle(false, monotonic_ns());
    wake_collector();
    true
}

fn wake_collector() {
    if let Some(inbox) = crate::shutdown::inbox() {
        inbox.wake();
    }
}

/// A start or stop asked for before tracing was set up (1: start, 2: stop).
static EARLY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Whether tracing should begin stopped: `SYCLGRAPH_START=paused` or a
/// delay, unless the program called start/stop before set-up.
pub fn begins_paused(config_paused: bool) -> bool {
    match EARLY.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => config_paused,
    }
}

/// Starts tracing (C API). Returns 1 when tracing was stopped and is now
/// on, 0 otherwise (already on, finishing, or syclgraph not tracing).
/// Any thread, any time; never blocks.
#[no_mangle]
pub extern "C" fn syclgraph_start() -> c_int {
    catch_unwind(|| match crate::recorder() {
        Some(r) => c_int::from(start(r)),
        None => {
            EARLY.store(1, Ordering::Relaxed);
            0
        }
    })
    .unwrap_or(0)
}

/// Stops tracing (C API). Returns 1 when tracing was on and is now
/// stopped, 0 otherwise. Commands submitted before are still timed.
#[no_mangle]
pub extern "C" fn syclgraph_stop() -> c_int {
    catch_unwind(|| match crate::recorder() {
        Some(r) => c_int::from(stop(r)),
        None => {
            EARLY.store(2, Ordering::Relaxed);
            0
        }
    })
    .unwrap_or(0)
}

/// 1 while tracing is on (new submissions are recorded), else 0.
#[no_mangle]
pub extern "C" fn syclgraph_is_active() -> c_int {
    catch_unwind(|| c_int::from(crate::recorder().is_some_and(|r| r.running()))).unwrap_or(0)
}

/// Makes this library's exported functions visible to
/// `dlsym(RTLD_DEFAULT, ...)` (XPTI loads subscribers with `RTLD_LOCAL`),
/// which is how `include/syclgraph.h` finds [`syclgraph_start`], and keeps
/// it mapped for good: a program may keep those function pointers past
/// XPTI's unloading of its subscribers.
pub fn publish_c_api() -> Result<(), String> {
    // SAFETY: Dl_info is plain C data (pointers and integers); all zeros
    // is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { libc::dladdr(publish_c_api as *const std::ffi::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return Err("cannot find this library's path".into());
    }
    let flags = libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_GLOBAL | libc::RTLD_NODELETE;
    // SAFETY: dli_fname is the loader's NUL-terminated path of this
    // library, already loaded (RTLD_NOLOAD): this only changes its scope
    // and pins it; no initialiser runs again.
    let handle = unsafe { libc::dlopen(info.dli_fname, flags) };
    if handle.is_null() {
        return Err("dlopen(RTLD_NOLOAD | RTLD_GLOBAL) refused".into());
    }
    Ok(())
}

// ---- registrations ---------------------------------------------------------

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
/// takes: by `xptiTraceInit`, by the collector, and by [`start`] (which
/// only tries it).
pub struct Registrations {
    set: Mutex<StreamSet>,
    /// Mirrors `set.removed`, readable without the lock.
    removed: AtomicBool,
}

/// The registrations of this process.
pub static REGISTRATIONS: Registrations = Registrations {
    set: Mutex::new(StreamSet {
        streams: Vec::new(),
        removed: false,
    }),
    removed: AtomicBool::new(false),
};

impl Registrations {
    /// Registers every trace point on `stream` (from `xptiTraceInit`).
    pub fn add_stream(&self, recorder: &Recorder, stream: &'static CStr) {
        let mut set = self.set.lock().unwrap_or_else(PoisonError::into_inner);
        for trace_type in TRACE_POINTS {
            if !set.removed || KEPT_WHILE_STOPPED.contains(&trace_type) {
                recorder.xpti.register(stream, trace_type, on_sycl);
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
    fn restore_if_free(&self, recorder: &Recorder) {
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
                    recorder.xpti.register(stream, trace_type, on_sycl);
                } else {
                    recorder.xpti.unregister(stream, trace_type, on_sycl);
                }
            }
        }
    }
}

// ---- from outside the process ----------------------------------------------

/// Signals received (SYCLGRAPH_TOGGLE_SIGNAL); the collector toggles once
/// per signal it had not seen.
static SIGNALS: AtomicU64 = AtomicU64::new(0);

extern "C" fn on_toggle_signal(_: c_int) {
    // Only an atomic add: async-signal-safe (and it cannot panic; the
    // catch_unwind is the project's rule for every C entry point).
    let _ = catch_unwind(|| SIGNALS.fetch_add(1, Ordering::Relaxed));
}

/// Installs the toggle signal's handler (`SYCLGRAPH_TOGGLE_SIGNAL`), the
/// only signal syclgraph ever touches, and only when asked.
pub fn install_signal(signal: c_int) -> Result<(), String> {
    // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
    // the handler only does an atomic add (async-signal-safe); SA_RESTART
    // keeps the program's interrupted system calls going.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_toggle_signal as extern "C" fn(c_int) as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
    }
    Ok(())
}

/// The control file's name in the output directory.
pub const CONTROL_FILE: &str = ".syclgraph-control";

/// How often the collector looks for the control file (a failed `open`
/// each time: cheap, but callgrind's slow-down would multiply it).
const CONTROL_FILE_EVERY: Duration = Duration::from_millis(500);

/// A stopped tracer removes its callbacks once no command submitted while
/// it was on awaits its task end, or after this long anyway.
const QUIESCE_AT_MOST: Duration = Duration::from_secs(10);
/// ... and not before this long after the stop (a quick stop/start pair
/// changes no registration).
const QUIESCE_AT_LEAST: Duration = Duration::from_millis(200);

/// The collector's side: timed start/stop, the signal and control file,
/// and removing/restoring callbacks.
pub struct Timers {
    began: Instant,
    delay: Option<Duration>,
    duration: Option<Duration>,
    /// When the duration ends (set at the first start).
    stop_at: Option<Instant>,
    duration_done: bool,
    signals_seen: u64,
    control_file: PathBuf,
    last_control_check: Instant,
    /// When tracing was last seen stopped, with callbacks still in.
    stopped_since: Option<Instant>,
}

impl Timers {
    /// From the configuration (`delay`/`duration`: zero = none).
    pub fn new(delay: Duration, duration: Duration, output_dir: PathBuf) -> Timers {
        let some = |d: Duration| (!d.is_zero()).then_some(d);
        Timers {
            began: Instant::now(),
            delay: some(delay),
            duration: some(duration),
            stop_at: None,
            duration_done: false,
            signals_seen: 0,
            control_file: output_dir.join(CONTROL_FILE),
            last_control_check: Instant::now(),
            stopped_since: None,
        }
    }

    /// One pass (the collector calls it every 100 ms).
    /// `awaiting_task_end`: whether a recorded command still awaits its
    /// task end (its callbacks must stay).
    pub fn tick(&mut self, recorder: &Recorder, awaiting_task_end: impl FnOnce() -> bool) {
        let now = Instant::now();
        if let Some(delay) = self.delay {
            if now >= self.began + delay {
                self.delay = None;
                start(recorder);
            }
        }
        if self.stop_at.is_none() && !self.duration_done && recorder.running() {
            self.stop_at = self.duration.map(|d| now + d);
        }
        if let Some(at) = self.stop_at {
            if now >= at {
                self.stop_at = None;
                self.duration_done = true;
                stop(recorder);
            }
        }
        let signals = SIGNALS.load(Ordering::Relaxed);
        while self.signals_seen != signals {
            self.signals_seen += 1;
            if !start(recorder) {
                stop(recorder);
            }
        }
        if now.duration_since(self.last_control_check) >= CONTROL_FILE_EVERY {
            self.last_control_check = now;
            self.read_control_file(recorder);
        }
        self.registrations(recorder, now, awaiting_task_end);
    }

    fn read_control_file(&self, recorder: &Recorder) {
        let Ok(text) = std::fs::read_to_string(&self.control_file) else {
            return;
        };
        // Consumed: a command is applied once.
        let _ = std::fs::remove_file(&self.control_file);
        match text.trim() {
            "start" | "resume" | "on" => {
                start(recorder);
            }
            "stop" | "pause" | "off" => {
                stop(recorder);
            }
            other => crate::warn(format_args!(
                "{}: {other:?} is neither start nor stop; ignored",
                self.control_file.display()
            )),
        }
    }

    fn registrations(
        &mut self,
        recorder: &Recorder,
        now: Instant,
        awaiting_task_end: impl FnOnce() -> bool,
    ) {
        if recorder.running() {
            self.stopped_since = None;
            if REGISTRATIONS.removed() {
                REGISTRATIONS.restore(recorder);
            }
            return;
        }
        if !recorder.paused() || REGISTRATIONS.removed() {
            return;
        }
        let since = *self.stopped_since.get_or_insert(now);
        let waited = now.duration_since(since);
        if waited >= QUIESCE_AT_LEAST && (waited >= QUIESCE_AT_MOST || !awaiting_task_end()) {
            REGISTRATIONS.quiesce(recorder);
        }
    }
}
