//! Start and end of tracing: set-up on the first `xptiTraceInit`, and the
//! exit drain that writes the outputs while the runtime is still whole.
//!
//! The runtime calls `xptiTraceFinish("sycl")` late in its own shutdown, when
//! Unified Runtime calls crash the program. So the real end is an `atexit`
//! handler registered at start-up: it runs before the runtime's library
//! destructors, asks the collector to read every device event still in
//! flight, release it, and write the files, and waits for that (bounded by
//! `SYCLGRAPH_DRAIN_TIMEOUT_MS`).

use std::ffi::CStr;
use std::sync::atomic::Ordering;
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::collector::Collector;
use crate::config::Config;
use crate::counters::Counters;
use crate::inbox::{FinishRequest, Inbox};
use crate::recorder::{Recorder, FINISHED, FINISHING, PAUSED, RUNNING};
use crate::timing_slot::TimingSlot;
use crate::ur_calls::{enable_tracing_layer, on_ur_call, LayerState};
use crate::xpti::Xpti;
use crate::{recorder, warn};
use xpti_sys::trace_point as tp;

/// How the runtime stands when the outputs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Teardown {
    /// At exit, before the runtime's destructors: device events may be read.
    RuntimeAlive,
    /// From `xptiTraceFinish`: the runtime is shutting down, no UR calls.
    RuntimeGone,
}

/// What the exit path needs besides the recorder.
struct Control {
    inbox: Arc<Inbox>,
    drain_timeout: Duration,
}

/// The name of syclgraph's collector thread.
pub(crate) const COLLECTOR_THREAD: &str = "syclgraph-collector";

static CONTROL: OnceLock<Control> = OnceLock::new();

/// The inbox to the collector, once tracing started (to wake it).
pub fn inbox() -> Option<&'static Inbox> {
    CONTROL.get().map(|c| &*c.inbox)
}

/// Sets tracing up. `None` (after one stderr line) when it cannot work:
/// then the program runs untraced, unchanged.
pub fn start() -> Option<Recorder> {
    let mut config = Config::from_env(warn);
    if let Err(e) = prepare_output_dir(&mut config) {
        warn(format_args!(
            "cannot write to SYCLGRAPH_OUTPUT_DIR {} ({e}); tracing is off",
            config.output_dir.display()
        ));
        return None;
    }
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
    let collector = Collector::new(config.clone(), timestamps.clone(), counters.clone());
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
    let _ = CONTROL.set(Control {
        inbox: inbox.clone(),
        drain_timeout: Duration::from_millis(config.drain_timeout_ms),
    });
    if let Err(e) = crate::control::publish_c_api() {
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
    Some(Recorder::new(
        xpti,
        inbox,
        timestamps,
        counters,
        force_profiling,
        config.max_ur_calls,
        crate::control::begins_paused(config.start_paused || !config.delay.is_zero()),
    ))
}

fn prepare_output_dir(config: &mut Config) -> std::io::Result<()> {
    std::fs::create_dir_all(&config.output_dir)?;
    let pid = std::process::id();
    if let Some(owner) = live_owner(&config.output_dir, pid) {
        let own = config.output_dir.join(format!("pid-{pid}"));
        warn(format_args!(
            "{} is in use by process {owner}; writing to {}",
            config.output_dir.display(),
            own.display()
        ));
        config.output_dir = own;
        std::fs::create_dir_all(&config.output_dir)?;
    } else if written_before_exec(&config.output_dir, pid) {
        // This image has not written the owner file yet: the image this
        // process ran before `execve` did. Its files stay as they are.
        let own = (1u32..)
            .map(|n| config.output_dir.join(format!("exec-{n}")))
            .find(|d| !d.exists())
            .expect("a free exec-<n> name");
        warn(format_args!(
            "{} holds this process's outputs from before it called exec; writing to {}",
            config.output_dir.display(),
            own.display()
        ));
        config.output_dir = own;
        std::fs::create_dir_all(&config.output_dir)?;
    }
    std::fs::write(config.output_dir.join(OWNER_FILE), pid.to_string())
}

/// Gives the output directory up (at the end of the exit drain).
pub fn release_output_dir(dir: &std::path::Path) {
    let owner = dir.join(OWNER_FILE);
    if std::fs::read_to_string(&owner).ok().as_deref() == Some(&std::process::id().to_string()) {
        let _ = std::fs::remove_file(owner);
    }
}

/// Names the process writing into an output directory.
const OWNER_FILE: &str = ".syclgraph-owner";

/// The pid in `dir`'s owner file, if that process is alive and not us.
fn live_owner(dir: &std::path::Path, pid: u32) -> Option<u32> {
    let owner: u32 = std::fs::read_to_string(dir.join(OWNER_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let alive = std::path::Path::new(&format!("/proc/{owner}")).exists();
    (owner != pid && alive).then_some(owner)
}

/// True when `dir`'s owner file names this very process: called before this
/// image wrote it, that is an earlier image of the process (`execve`
/// without exit leaves the file behind, as no exit handler ran).
fn written_before_exec(dir: &std::path::Path, pid: u32) -> bool {
    std::fs::read_to_string(dir.join(OWNER_FILE))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        == Some(pid)
}

/// In a child made by fork (without exec) nothing is traced: it has no
/// collector thread, and the parent owns the outputs.
extern "C" fn in_forked_child() {
    if let Some(recorder) = recorder() {
        recorder.state.store(FINISHED, Ordering::Relaxed);
    }
}

/// Registers our callbacks on a stream the runtime announced.
pub fn register_stream(recorder: &Recorder, stream: &str) {
    let name: &'static CStr = match stream {
        "sycl" => c"sycl",
        "sycl.debug" => c"sycl.debug",
        "ur.call.debug" => {
            for trace_type in [tp::FUNCTION_WITH_ARGS_BEGIN, tp::FUNCTION_WITH_ARGS_END] {
                recorder
                    .xpti
                    .register(c"ur.call.debug", trace_type, on_ur_call);
            }
            recorder
                .counters
                .ur_stream_registered
                .store(true, Ordering::Relaxed);
            return;
        }
        _ => return,
    };
    crate::control::REGISTRATIONS.add_stream(recorder, name);
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| finish(Teardown::RuntimeAlive));
}

/// Drains the collector and writes the outputs, once. Later calls return at once.
pub fn finish(teardown: Teardown) {
    let (Some(recorder), Some(control)) = (recorder(), CONTROL.get()) else {
        return;
    };
    // From on or stopped (a start/stop racing with this retries).
    loop {
        let state = recorder.state.load(Ordering::Acquire);
        if state != RUNNING && state != PAUSED {
            return;
        }
        if recorder
            .state
            .compare_exchange(state, FINISHING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            break;
        }
    }
    // This thread's direct-path submission kept back, if it is mid-call.
    recorder.release_held();
    let (reply, done) = sync_channel(1);
    if control
        .inbox
        .request_finish(FinishRequest { teardown, reply })
    {
        // The collector itself bounds the device drain; this bounds the rest.
        let _ = done.recv_timeout(control.drain_timeout + Duration::from_secs(30));
    }
    recorder.state.store(FINISHED, Ordering::Release);
}
