//! The `extern "C"` callbacks XPTI calls, one per stream.
//!
//! Each wraps its body in `catch_unwind` (a panic crossing into the C++
//! runtime would abort the user's program) and hands the event to the
//! [`Recorder`](crate::recorder::Recorder).

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use syclgraph_graph::record::SpanKind;
use xpti_sys::{trace_event_data_t, trace_point as tp};

use crate::xpti::{c_str, CText, EventRef};

/// The callback registered on the `sycl` and `sycl.debug` streams. The
/// runtime sends each event once: on `sycl.debug` when any subscriber
/// listens there (with more metadata), otherwise on `sycl`.
///
/// # Safety
/// Called by the XPTI framework only, with the arguments its
/// `tracepoint_callback_api_t` contract describes.
pub unsafe extern "C" fn on_sycl(
    trace_type: u16,
    parent: *mut trace_event_data_t,
    event: *mut trace_event_data_t,
    _instance: u64,
    user_data: *const c_void,
) {
    // SAFETY: XPTI passes events alive for this call and user_data as the
    // trace point defines it.
    unsafe { dispatch(trace_type, parent, event, user_data) }
}

/// # Safety
/// `event`/`parent` are null or live for the call; `user_data` is what the
/// trace point documents (a C string for node_create and waits, an event
/// handle for signal).
unsafe fn dispatch(
    trace_type: u16,
    parent: *mut trace_event_data_t,
    event: *mut trace_event_data_t,
    user_data: *const c_void,
) {
    let Some(recorder) = crate::session::recorder() else {
        return;
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: guaranteed by the caller.
        let event = unsafe { EventRef::new(event) }.or_else(|| unsafe { EventRef::new(parent) });
        // SAFETY: for these trace points user_data is a C string or null.
        let text = || unsafe { c_str(user_data as *const c_char) };
        match trace_type {
            tp::NODE_CREATE => match event {
                // SAFETY: user_data is node_create's kind string, alive
                // for this call.
                Some(e) => {
                    recorder.node_create(e, unsafe { CText::new(user_data as *const c_char) })
                }
                None => recorder.count_without_event(),
            },
            tp::EDGE_CREATE => match event {
                Some(e) => recorder.edge_create(e),
                None => recorder.count_without_event(),
            },
            tp::TASK_BEGIN | tp::TASK_END => match event {
                Some(e) => recorder.task(trace_type == tp::TASK_BEGIN, e),
                None => recorder.count_without_event(),
            },
            tp::SIGNAL => match event {
                Some(e) => recorder.signal(e, user_data as usize),
                None => recorder.count_without_event(),
            },
            tp::WAIT_BEGIN | tp::WAIT_END => {
                recorder.span(SpanKind::Wait, trace_type == tp::WAIT_BEGIN, text(), event)
            }
            tp::BARRIER_BEGIN | tp::BARRIER_END => recorder.span(
                SpanKind::Barrier,
                trace_type == tp::BARRIER_BEGIN,
                "barrier",
                event,
            ),
            tp::QUEUE_CREATE | tp::QUEUE_DESTROY => {
                if trace_type == tp::QUEUE_CREATE {
                    crate::session::register_exit_handler_after_runtime();
                }
                recorder.queue(trace_type == tp::QUEUE_CREATE, event)
            }
            _ => {}
        }
    }));
}
