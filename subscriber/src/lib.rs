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
//!    its callbacks is in one thread-local block ([`thread_state`]),
//!    reached once per callback.
//! 3. [`collector`]: a background thread builds the task graph
//!    (`syclgraph-graph`), reads device timestamps through `ze-bridge`, and
//!    streams `kernels.csv`.
//! 4. [`session`]: the one owner of the lifecycle (start, pause/resume,
//!    fork, finish). At exit, before the runtime tears down, it has the
//!    collector drain the device events; the collector writes the outputs
//!    while the runtime tears down, and the library's unload waits for them.
#![warn(missing_docs)]

pub mod c_api;
pub mod callbacks;
pub mod capture;
pub mod clock;
pub mod collector;
pub mod config;
pub mod control;
pub mod counters;
pub mod dependencies;
pub mod environment;
pub mod event_owners;
pub mod exports;
pub mod graph_ur_calls;
pub mod host_clock;
pub mod identity;
pub mod inbox;
pub mod itt;
pub mod job;
pub mod journal_file;
pub mod native_commands;
pub mod output;
pub mod output_dir;
pub mod queue_order;
pub mod recent_bindings;
pub mod recorder;
pub mod registrations;
pub mod release_queue;
pub mod ring;
pub mod session;
pub mod snapshot_pacing;
pub mod stderr;
pub mod sycl_graphs;
pub mod thread_number;
pub mod thread_state;
pub mod timing_slot;
pub mod toggles;
pub mod tracing_layer;
pub mod unseen_enqueues;
pub mod ur_calls;
pub mod ur_hooks;
pub mod whole_rows;
pub mod xpti;

use std::ffi::c_char;
use std::panic::catch_unwind;

/// The entry points the session registers (XPTI callbacks) or installs (UR
/// hooks): they sit above it, so it is handed them.
const ENTRY_POINTS: session::EntryPoints = session::EntryPoints {
    on_sycl: callbacks::on_sycl,
    on_ur_call: ur_calls::on_ur_call,
    install_ur_hooks: ur_hooks::install,
};

pub use stderr::warn;

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
        if !session::decided() {
            // SAFETY: null or NUL-terminated, like the stream name.
            let version = unsafe { xpti::c_str(version) };
            match xpti_sys::compat::check_stream(stream, major, minor, version) {
                // UR and experimental streams carry no runtime version, and
                // come before `sycl` on some releases: wait for `sycl`.
                xpti_sys::compat::StreamCheck::Undecided => return,
                xpti_sys::compat::StreamCheck::Refused(why) => {
                    if session::refuse() {
                        warn(format_args!("{why}; tracing is off"));
                    }
                    return;
                }
                xpti_sys::compat::StreamCheck::Supported(_) => {
                    job::note_runtime_version(major, minor)
                }
            }
        }
        if let Some(session) = session::start_once(ENTRY_POINTS) {
            session.register_stream(stream);
        }
    });
}

/// Run by the dynamic loader at the process's end, after the runtime's own
/// destructors (the library is `NODELETE`: never unloaded before): waits
/// for the outputs the exit left the collector writing.
extern "C" fn at_unload() {
    let _ = catch_unwind(session::wait_for_outputs);
}

/// The loader calls each function of `.fini_array` when it unloads the
/// library. `at_unload` takes nothing and never unwinds.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".fini_array"]
static AT_UNLOAD: extern "C" fn() = at_unload;

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
            session::finish(session::Teardown::RuntimeGone);
        }
    });
}
