//! `libempty_subscriber.so`: the calibration subscriber of syclgraph's
//! overhead benchmark (`scripts/bench.sh`, `docs/performance.md`).
//!
//! It asks XPTI for exactly the trace points syclgraph registers, on the same
//! two streams (`sycl`, `sycl.debug`), and does nothing when they fire. With
//! it loaded, the runtime builds and sends every event syclgraph would see, so
//! "syclgraph − empty subscriber" is the cost of syclgraph's own work, and
//! "empty subscriber − no XPTI" is what the runtime spends on tracing.
//!
//! The XPTI framework is not linked: its two registration functions are looked
//! up at run time, with `libloading`, in the dispatcher library the runtime has
//! already loaded (`XPTI_FRAMEWORK_DISPATCHER`).

use std::ffi::{c_char, c_void, CStr};
use std::panic::catch_unwind;
use std::sync::OnceLock;

use xpti_sys::trace_point as tp;

/// The trace points syclgraph registers on both streams (values are
/// `n << 1 | end`, as `trace_point_type_t` in `xpti/xpti_data_types.h`).
pub const TRACE_POINTS: [u16; 12] = [
    tp::GRAPH_CREATE,  // 2
    tp::NODE_CREATE,   // 4
    tp::EDGE_CREATE,   // 6
    tp::TASK_BEGIN,    // 10
    tp::TASK_END,      // 11
    tp::BARRIER_BEGIN, // 12
    tp::BARRIER_END,   // 13
    tp::SIGNAL,        // 16
    tp::WAIT_BEGIN,    // 22
    tp::WAIT_END,      // 23
    tp::QUEUE_CREATE,  // 42
    tp::QUEUE_DESTROY, // 43
];

/// The streams registered on; every other stream is left alone.
pub const STREAMS: [&CStr; 2] = [c"sycl", c"sycl.debug"];

/// The two framework functions used, found once.
struct Framework {
    /// Keeps the dispatcher mapped while the pointers below are in use.
    _library: libloading::Library,
    register_stream: xpti_sys::XptiRegisterStreamFn,
    register_callback: xpti_sys::XptiRegisterCallbackFn,
}

static FRAMEWORK: OnceLock<Option<Framework>> = OnceLock::new();

/// Opens the already-loaded dispatcher (by `XPTI_FRAMEWORK_DISPATCHER`, then
/// by soname) and looks up `xptiRegisterStream` / `xptiRegisterCallback`.
fn load_framework() -> Option<Framework> {
    let mut names: Vec<std::ffi::OsString> = Vec::new();
    if let Some(path) = std::env::var_os("XPTI_FRAMEWORK_DISPATCHER") {
        names.push(path);
    }
    names.push("libxptifw.so.1".into());
    names.push("libxptifw.so".into());
    for name in &names {
        // SAFETY: the dispatcher is already loaded by the runtime (it is the
        // one calling us): opening it again only takes a reference.
        let Ok(library) = (unsafe { libloading::Library::new(name) }) else {
            continue;
        };
        // SAFETY: the pointer types are the declarations of these two
        // functions in xpti_trace_framework.h (mirrored by xpti-sys).
        let found = unsafe {
            (
                library
                    .get::<xpti_sys::XptiRegisterStreamFn>(b"xptiRegisterStream\0")
                    .map(|s| *s),
                library
                    .get::<xpti_sys::XptiRegisterCallbackFn>(b"xptiRegisterCallback\0")
                    .map(|s| *s),
            )
        };
        if let (Ok(register_stream), Ok(register_callback)) = found {
            return Some(Framework {
                _library: library,
                register_stream,
                register_callback,
            });
        }
    }
    eprintln!("empty-subscriber: XPTI framework functions not found; nothing registered");
    None
}

/// The callback: does nothing (inside `catch_unwind`, like every callback of
/// the project, so its cost is the one syclgraph's callbacks also pay).
unsafe extern "C" fn on_event(
    _trace_type: u16,
    _parent: *mut xpti_sys::trace_event_data_t,
    _event: *mut xpti_sys::trace_event_data_t,
    _instance: u64,
    _user_data: *const c_void,
) {
    let _ = catch_unwind(|| {});
}

/// Called by the XPTI framework once per stream the runtime announces;
/// registers [`TRACE_POINTS`] on the streams in [`STREAMS`].
///
/// # Safety
/// `stream_name` is null or a NUL-terminated string (the framework's contract).
#[no_mangle]
pub unsafe extern "C" fn xptiTraceInit(
    _major: u32,
    _minor: u32,
    _version: *const c_char,
    stream_name: *const c_char,
) {
    let _ = catch_unwind(|| {
        if stream_name.is_null() {
            return;
        }
        // SAFETY: non-null and NUL-terminated, guaranteed by the caller.
        let stream = unsafe { CStr::from_ptr(stream_name) };
        let Some(name) = STREAMS.into_iter().find(|s| *s == stream) else {
            return;
        };
        let Some(fw) = FRAMEWORK.get_or_init(load_framework) else {
            return;
        };
        // SAFETY: `name` is a valid C string; `on_event` has the
        // tracepoint_callback_api_t signature and lives as long as this
        // library, which the framework keeps loaded until after the streams end.
        unsafe {
            let id = (fw.register_stream)(name.as_ptr());
            for trace_type in TRACE_POINTS {
                (fw.register_callback)(id, trace_type, on_event);
            }
        }
    });
}

/// Called by the XPTI framework when a stream ends; nothing to do.
///
/// # Safety
/// `stream_name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xptiTraceFinish(_stream_name: *const c_char) {
    let _ = catch_unwind(|| {});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_point_values_are_the_ones_syclgraph_registers() {
        assert_eq!(TRACE_POINTS, [2, 4, 6, 10, 11, 12, 13, 16, 22, 23, 42, 43]);
    }
}
