//! libsyclgraph.so: an XPTI subscriber that records the SYCL task graph a
//! DPC++ application builds, and what each command cost on the device.
//!
//! Load it into any DPC++ program, no rebuild:
//! `XPTI_TRACE_ENABLE=1 XPTI_FRAMEWORK_DISPATCHER=.../libxptifw.so
//! XPTI_SUBSCRIBERS=.../libsyclgraph.so ./app`.
//!
//! Where data flows (see docs/architecture.md):
//! 1. [`callbacks`]: XPTI calls our `extern "C"` callbacks on the
//!    application's threads.
//! 2. [`recorder`](mod@recorder): each callback becomes one small record in the bounded
//!    [`inbox`] (node metadata read once per node, see [`identity`]).
//!    [`ur_hooks`] does the same for the few UR calls syclgraph follows,
//!    from the adapter's dispatch table. What a thread remembers between
//!    its callbacks is in one thread-local block ([`thread_state`]).
//! 3. [`collector`]: a background thread builds the task graph
//!    (`syclgraph-graph`), reads device timestamps through `ze-bridge`, and
//!    streams `kernels.csv`.
//! 4. [`shutdown`]: at exit, before the runtime tears down, the collector
//!    drains, and graph.dot / summary.csv are written atomically.
#![warn(missing_docs)]

pub mod callbacks;
pub mod clock;
pub mod collector;
pub mod config;
pub mod control;
pub mod counters;
pub mod dependencies;
pub mod environment;
pub mod identity;
pub mod inbox;
pub mod itt;
pub mod output;
pub mod recorder;
pub mod shutdown;
pub mod sycl_graphs;
pub mod thread_number;
pub mod thread_state;
pub mod timing_slot;
pub mod ur_calls;
pub mod ur_hooks;
pub mod whole_rows;
pub mod xpti;

use std::ffi::c_char;
use std::panic::catch_unwind;
use std::sync::OnceLock;

use recorder::Recorder;

/// The recorder, once tracing started; `None` inside when it could not start.
static RECORDER: OnceLock<Option<Recorder>> = OnceLock::new();

/// The recorder, if tracing is on.
#[inline]
pub fn recorder() -> Option<&'static Recorder> {
    RECORDER.get().and_then(Option::as_ref)
}

/// Prints one line on stderr, prefixed with `syclgraph:`.
pub fn warn(message: impl std::fmt::Display) {
    eprintln!("syclgraph: {message}");
}

/// Called by the XPTI framework once per stream the runtime announces.
///
/// # Safety
/// `stream_name` is null or a NUL-terminated string (the framework's contract).
#[no_mangle]
pub unsafe extern "C" fn xptiTraceInit(
    major: u32,
    minor: u32,
    version: *const c_char,
    stream_name: *const c_char,
) {
    let _ = catch_unwind(|| {
        // SAFETY: guaranteed by the caller.
        let stream = unsafe { xpti::c_str(stream_name) };
        if RECORDER.get().is_none() {
            // SAFETY: null or NUL-terminated, like the stream name.
            let version = unsafe { xpti::c_str(version) };
            match xpti_sys::compat::check_stream(stream, major, minor, version) {
                // UR and experimental streams carry no runtime version, and
                // come before `sycl` on some releases: wait for `sycl`.
                xpti_sys::compat::StreamCheck::Undecided => return,
                xpti_sys::compat::StreamCheck::Refused(why) => {
                    if RECORDER.set(None).is_ok() {
                        warn(format_args!("{why}; tracing is off"));
                    }
                    return;
                }
                xpti_sys::compat::StreamCheck::Supported(_) => {}
            }
        }
        let recorder = RECORDER.get_or_init(shutdown::start);
        if let Some(recorder) = recorder {
            shutdown::register_stream(recorder, stream);
        }
    });
}

/// Called by the XPTI framework when a stream ends. For `sycl` this comes
/// late in the runtime's shutdown: the outputs are normally written already
/// (at exit); if not, they are written now, without touching the runtime.
///
/// # Safety
/// `stream_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xptiTraceFinish(stream_name: *const c_char) {
    let _ = catch_unwind(|| {
        // SAFETY: guaranteed by the caller.
        let stream = unsafe { xpti::c_str(stream_name) };
        if stream == "sycl" {
            shutdown::finish(shutdown::Teardown::RuntimeGone);
        }
    });
}
