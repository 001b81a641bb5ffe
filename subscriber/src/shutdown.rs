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
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ze_bridge::TimestampSource;

use crate::callbacks::{on_sycl, TRACE_POINTS};
use crate::collector::{Collector, Message};
use crate::config::Config;
use crate::recorder::{LossCounters, Recorder, FINISHED, FINISHING, RUNNING};
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
    sender: SyncSender<Message>,
    drain_timeout: Duration,
}

static CONTROL: OnceLock<Control> = OnceLock::new();

/// Sets tracing up. `None` (after one stderr line) when it cannot work:
/// then the program runs untraced, unchanged.
pub fn start() -> Option<Recorder> {
    let config = Config::from_env(warn);
    if let Err(e) = prepare_output_dir(&config) {
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
    if config.device_timing {
        if let LayerState::Off(why) = enable_tracing_layer() {
            warn(why);
        }
    }
    let timestamps = TimingSlot::new();
    let losses = Arc::new(LossCounters::default());
    let (sender, receiver) = sync_channel(config.queue_capacity);
    let collector = Collector::new(config.clone(), timestamps.clone(), losses.clone());
    let spawned = std::thread::Builder::new()
        .name("syclgraph-collector".into())
        .spawn(move || collector.run(receiver));
    if let Err(e) = spawned {
        warn(format_args!(
            "cannot start the collector thread ({e}); tracing is off"
        ));
        return None;
    }
    let _ = CONTROL.set(Control {
        sender: sender.clone(),
        drain_timeout: Duration::from_millis(config.drain_timeout_ms),
    });
    // SAFETY: `at_exit` is an `extern "C" fn()` that never unwinds.
    if unsafe { libc::atexit(at_exit) } != 0 {
        warn("cannot register the exit handler; outputs are written at runtime shutdown, without device times still in flight");
    }
    Some(Recorder::new(
        xpti,
        sender,
        timestamps,
        losses,
        force_profiling,
    ))
}

/// Unified Runtime for every backend, with Level Zero read directly where
/// its loader is present.
pub fn load_timestamps() -> Result<Arc<dyn TimestampSource>, String> {
    let ur = ze_bridge::ur::UnifiedRuntime::load().map_err(|e| e.to_string())?;
    let mut source = ze_bridge::ur_source::UrTimestampSource::new(Arc::new(ur));
    if let Ok(level_zero) = ze_bridge::level_zero::LevelZero::load() {
        source = source.with_level_zero(Arc::new(level_zero));
    }
    Ok(Arc::new(source))
}

fn prepare_output_dir(config: &Config) -> std::io::Result<()> {
    std::fs::create_dir_all(&config.output_dir)?;
    let probe = config.output_dir.join(".syclgraph-probe");
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Registers our callbacks on a stream the runtime announced.
pub fn register_stream(recorder: &Recorder, stream: &str) {
    let name: &CStr = match stream {
        "sycl" => c"sycl",
        "sycl.debug" => c"sycl.debug",
        "ur.call.debug" => {
            for trace_type in [tp::FUNCTION_WITH_ARGS_BEGIN, tp::FUNCTION_WITH_ARGS_END] {
                recorder
                    .xpti
                    .register(c"ur.call.debug", trace_type, on_ur_call);
            }
            return;
        }
        _ => return,
    };
    for trace_type in TRACE_POINTS {
        recorder.xpti.register(name, trace_type, on_sycl);
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| finish(Teardown::RuntimeAlive));
}

/// Drains the collector and writes the outputs, once. Later calls return at once.
pub fn finish(teardown: Teardown) {
    let (Some(recorder), Some(control)) = (recorder(), CONTROL.get()) else {
        return;
    };
    if recorder
        .state
        .compare_exchange(RUNNING, FINISHING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    let (reply, done) = sync_channel(1);
    if control
        .sender
        .send(Message::Finish { teardown, reply })
        .is_ok()
    {
        // The collector itself bounds the device drain; this bounds the rest.
        let _ = done.recv_timeout(control.drain_timeout + Duration::from_secs(30));
    }
    recorder.state.store(FINISHED, Ordering::Release);
}
