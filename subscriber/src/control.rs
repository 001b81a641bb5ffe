//! Starting and stopping tracing while the program runs.
//!
//! Tracing is on or stopped: one byte, the recorder's `state`, which every
//! callback already reads first (one relaxed load, as before). A start or
//! stop is a compare-and-swap on it, made by the session
//! ([`crate::session::Session::resume`] / `pause`), from any thread, and
//! never waits. They come from:
//!
//! - the C API `syclgraph_start` / `syclgraph_stop` /
//!   `syclgraph_is_active` ([`crate::c_api`], found at run time by
//!   `include/syclgraph.h`);
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
//! ([`crate::registrations::Registrations::quiesce`]); a start puts them back before it returns
//! (or, when the collector is changing them at that instant, the collector
//! does on its next look, within 100 ms).

use std::ffi::c_int;
use std::panic::catch_unwind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ze_bridge::entry_table::EntryTable;

use crate::recorder::Recorder;

/// What the collector may ask of the session it serves (implemented by
/// [`crate::session::Session`], which owns the lifecycle: the collector
/// only asks, it never writes the state itself).
pub trait SessionControl: Sync {
    /// The recorder the callbacks feed.
    fn recorder(&self) -> &Recorder;
    /// Starts tracing if it is stopped; true when it was.
    fn resume(&self) -> bool;
    /// Stops tracing if it is on; true when it was.
    fn pause(&self) -> bool;
    /// The next start/stop noted, oldest first.
    fn next_toggle(&self) -> Option<(bool, u64)>;
    /// True while the callbacks of stopped tracing are removed.
    fn callbacks_removed(&self) -> bool;
    /// Removes the callbacks not needed while stopped.
    fn remove_callbacks(&self);
    /// Puts the removed callbacks back.
    fn restore_callbacks(&self);
    /// Stops following UR calls on `ur.call.debug`: from then on the
    /// runtime keeps no trace event per UR call for us. Forcing profiling
    /// on queues made later, direct-path USM timing and wait-list edges
    /// stop with it (unless the hooks took over).
    fn unsubscribe_ur_calls(&self);
    /// Hooks the runtime's table of UR entry points ([`crate::ur_hooks`]).
    fn install_ur_hooks(&self, table: &EntryTable, skip_layer: bool) -> Result<usize, String>;
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
    pub fn tick(&mut self, session: &dyn SessionControl, awaiting_task_end: impl FnOnce() -> bool) {
        let now = Instant::now();
        if let Some(delay) = self.delay {
            if now >= self.began + delay {
                self.delay = None;
                session.resume();
            }
        }
        if self.stop_at.is_none() && !self.duration_done && session.recorder().running() {
            self.stop_at = self.duration.map(|d| now + d);
        }
        if let Some(at) = self.stop_at {
            if now >= at {
                self.stop_at = None;
                self.duration_done = true;
                session.pause();
            }
        }
        let signals = SIGNALS.load(Ordering::Relaxed);
        while self.signals_seen != signals {
            self.signals_seen += 1;
            if !session.resume() {
                session.pause();
            }
        }
        if now.duration_since(self.last_control_check) >= CONTROL_FILE_EVERY {
            self.last_control_check = now;
            self.read_control_file(session);
        }
        self.registrations(session, now, awaiting_task_end);
    }

    fn read_control_file(&self, session: &dyn SessionControl) {
        let Ok(text) = std::fs::read_to_string(&self.control_file) else {
            return;
        };
        // Consumed: a command is applied once.
        let _ = std::fs::remove_file(&self.control_file);
        match text.trim() {
            "start" | "resume" | "on" => {
                session.resume();
            }
            "stop" | "pause" | "off" => {
                session.pause();
            }
            other => crate::warn(format_args!(
                "{}: {other:?} is neither start nor stop; ignored",
                self.control_file.display()
            )),
        }
    }

    fn registrations(
        &mut self,
        session: &dyn SessionControl,
        now: Instant,
        awaiting_task_end: impl FnOnce() -> bool,
    ) {
        let recorder = session.recorder();
        if recorder.running() {
            self.stopped_since = None;
            if session.callbacks_removed() {
                session.restore_callbacks();
            }
            return;
        }
        if !recorder.paused() || session.callbacks_removed() {
            return;
        }
        let since = *self.stopped_since.get_or_insert(now);
        let waited = now.duration_since(since);
        if waited >= QUIESCE_AT_LEAST && (waited >= QUIESCE_AT_MOST || !awaiting_task_end()) {
            session.remove_callbacks();
        }
    }
}
