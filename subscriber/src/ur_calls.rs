//! What syclgraph takes from the Unified Runtime call stream (`ur.call.debug`).
//!
//! With the UR tracing layer on, every UR call arrives as
//! `function_with_args_begin/end` carrying a pointer to the call's
//! `ur_<fn>_params_t`. Only three things are looked at, by function id, so
//! every other call costs one comparison:
//! - `urQueueCreate` (begin): the profiling flag is or-ed into the queue's
//!   flags, so queues the application made without `enable_profiling` give
//!   device timestamps (`SYCLGRAPH_FORCE_PROFILING=0` turns this off). SYCL
//!   keeps its own record of the property, so the application's
//!   `get_profiling_info` still behaves as for a queue without it.
//! - `urEnqueueUSMMemcpy`/`urEnqueueUSMFill`/`urEnqueueUSMMemcpy2D` (end):
//!   direct-path USM memcpy/memset send no `signal`; their output event is
//!   taken here and attributed to the submission in progress on the thread.
//! - the UR calls of SYCL graphs ([`crate::graph_ur_calls`]).
//! - every followed enqueue (begin): one that no node accompanied is
//!   counted ([`crate::unseen_enqueues`]).
//!
//! The tracing layer is switched on by `UR_ENABLE_LAYERS=UR_LAYER_TRACING`,
//! which the runtime reads when it starts; [`enable_tracing_layer`] sets it
//! from our first `xptiTraceInit` when that is safe.
//!
//! This path only serves until [`crate::ur_hooks`] patched the adapter's
//! dispatch table (the first `urQueueCreate`'s context tells which table):
//! then every call is ignored here, except the end of a call and the begin
//! of a SYCL graph call that entered the layer just before its hook went
//! in, and once no such graph call is under way (10 ms at least, 1 s at
//! most) the collector unsubscribes, so the runtime makes no
//! XPTI event per UR call any more.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use ur_sys::{
    ur_enqueue_usm_fill_params_t, ur_enqueue_usm_memcpy_2d_params_t,
    ur_enqueue_usm_memcpy_params_t, ur_event_handle_t, ur_function_t, ur_queue_create_params_t,
    ur_queue_flags_t, ur_queue_properties_t, ur_structure_type_t,
};
use xpti_sys::{function_with_args_t, trace_event_data_t, trace_point as tp};

use crate::unseen_enqueues::EnqueueFunction;
use crate::xpti::EventRef;

/// Properties handed to `urQueueCreate` calls that had none.
pub(crate) struct StaticProperties(pub(crate) ur_queue_properties_t);
// SAFETY: the value is never written after initialisation; pNext is null.
unsafe impl Sync for StaticProperties {}

pub(crate) static PROFILING_PROPERTIES: StaticProperties =
    StaticProperties(ur_queue_properties_t {
        stype: ur_structure_type_t::QUEUE_PROPERTIES,
        pNext: std::ptr::null_mut(),
        flags: ur_queue_flags_t::PROFILING_ENABLE,
    });

/// The callback registered on `ur.call.debug`.
///
/// # Safety
/// Called by the XPTI framework only; for function_with_args trace points
/// `user_data` points at a `function_with_args_t` whose `args_data` is the
/// params struct of `function_id`.
pub unsafe extern "C" fn on_ur_call(
    trace_type: u16,
    _parent: *mut trace_event_data_t,
    event: *mut trace_event_data_t,
    _instance: u64,
    user_data: *const c_void,
) {
    let Some(recorder) = crate::session::recorder() else {
        return;
    };
    let counters = &*recorder.counters;
    if !counters.runtime_ur_called.load(Ordering::Relaxed) {
        counters.runtime_ur_called.store(true, Ordering::Relaxed);
    }
    if user_data.is_null() || counters.ur_limit_reached.load(Ordering::Relaxed) {
        return;
    }
    // Once the hooks are in they do the work. A call's end still counts: a
    // USM command that entered through the layer just before the hand-over
    // has its output event only here (it is handed over once, whichever
    // of this and its hook sees it first).
    if counters.ur_hooks_active.load(Ordering::Relaxed) && trace_type != tp::FUNCTION_WITH_ARGS_END
    {
        // Except a SYCL graph call that read the layer's entry just before
        // its hook went in: only this stream sees it (a replay, say).
        if trace_type == tp::FUNCTION_WITH_ARGS_BEGIN {
            // SAFETY: see the function's contract.
            let id =
                ur_function_t(unsafe { (*(user_data as *const function_with_args_t)).function_id });
            if crate::graph_ur_calls::is_graph_call(id) {
                graph_call_begins(counters, id);
            }
        }
        return;
    }
    let limit = recorder.max_ur_calls;
    if limit != 0 && counters.ur_calls_seen.fetch_add(1, Ordering::Relaxed) >= limit {
        counters.ur_limit_reached.store(true, Ordering::Relaxed);
        return;
    }
    // SAFETY: see the function's contract.
    let call = unsafe { &*(user_data as *const function_with_args_t) };
    if call.args_data.is_null() {
        return;
    }
    let id = ur_function_t(call.function_id);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match trace_type {
        tp::FUNCTION_WITH_ARGS_BEGIN if id == ur_function_t::QUEUE_CREATE => {
            counters.queue_creations.fetch_add(1, Ordering::Relaxed);
            let params = call.args_data as *mut ur_queue_create_params_t;
            if recorder.force_profiling {
                // SAFETY: args_data is this call's ur_queue_create_params_t.
                if unsafe { force_profiling(params) } {
                    counters.queues_forced.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        tp::FUNCTION_WITH_ARGS_BEGIN if crate::graph_ur_calls::is_graph_call(id) => {
            graph_call_begins(counters, id);
        }
        tp::FUNCTION_WITH_ARGS_END if crate::graph_ur_calls::is_graph_call(id) => {
            // SAFETY: args_data is the params struct of `id` after the call,
            // ret_data its result.
            let ended = unsafe { crate::graph_ur_calls::end(id, call.args_data, call.ret_data) };
            counters
                .graph_calls_in_layer
                .fetch_sub(u64::from(ended), Ordering::Relaxed);
        }
        tp::FUNCTION_WITH_ARGS_BEGIN => {
            let Some(function) = EnqueueFunction::of_function_id(id) else {
                return;
            };
            if id == ur_function_t::ENQUEUE_NATIVE_COMMAND_EXP {
                // SAFETY: args_data is this call's params struct.
                if !unsafe { native_command_has_event(call.args_data) } {
                    // A host task's native work (see crate::native_commands).
                    return;
                }
                crate::thread_state::with(|t| recorder.native_command_here(t));
            }
            // SAFETY: the event XPTI passed is alive for this callback.
            let caller = unsafe { EventRef::new(event) };
            recorder.layer_enqueue(function, caller);
            // SAFETY: args_data is the params struct of `id`, before the call.
            let waits = unsafe { wait_list(id, call.args_data) };
            if !waits.is_empty() {
                recorder.wait_list(caller, waits.iter().map(|e| *e as usize));
            }
        }
        tp::FUNCTION_WITH_ARGS_END if id == ur_function_t::ENQUEUE_NATIVE_COMMAND_EXP => {
            // SAFETY: ret_data points at the call's result, when set.
            if let Some(result) = unsafe { call_result(call.ret_data) } {
                // SAFETY: args_data is this call's params struct.
                if !result.is_success() && unsafe { native_command_has_event(call.args_data) } {
                    counters.native_refused.refused(result);
                }
            }
        }
        tp::FUNCTION_WITH_ARGS_END => {
            // SAFETY: args_data is the params struct of `id`, and after the
            // call its output event (if any) is written.
            let event = unsafe { output_event(id, call.args_data) };
            if let Some(event) = event {
                recorder.direct_command_event(event as usize);
            }
        }
        _ => {}
    }));
}

/// The begin of SYCL graph call `id` on the stream: counted as under way
/// when this path takes it ([`crate::graph_ur_calls::begin`]).
#[cold]
fn graph_call_begins(counters: &crate::counters::Counters, id: ur_function_t) {
    let taken = crate::graph_ur_calls::begin(id);
    counters
        .graph_calls_in_layer
        .fetch_add(u64::from(taken), Ordering::Relaxed);
}

/// What a queue's creation properties must become for it to give device
/// times (decided once for both ways of following `urQueueCreate`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ProfilingChange {
    /// They ask for profiling already.
    Keep,
    /// There are none: pass [`PROFILING_PROPERTIES`].
    UseProfilingProperties,
    /// These: the caller's, with the profiling flag or-ed in.
    Flagged(ur_queue_properties_t),
}

/// The change `properties` (null or the caller's) need.
///
/// # Safety
/// `properties` is null or points at valid queue properties.
pub(crate) unsafe fn profiling_change(properties: *const ur_queue_properties_t) -> ProfilingChange {
    if properties.is_null() {
        return ProfilingChange::UseProfilingProperties;
    }
    // SAFETY: guaranteed by the caller.
    let mut flagged = unsafe { *properties };
    if flagged.flags.contains(ur_queue_flags_t::PROFILING_ENABLE) {
        return ProfilingChange::Keep;
    }
    flagged.flags |= ur_queue_flags_t::PROFILING_ENABLE;
    ProfilingChange::Flagged(flagged)
}

/// Or-s the profiling flag into a `urQueueCreate`'s properties; true when
/// it changed them.
///
/// # Safety
/// `params` is the live params struct of a `urQueueCreate` call that has not
/// run yet.
unsafe fn force_profiling(params: *mut ur_queue_create_params_t) -> bool {
    // SAFETY: guaranteed by the caller: each field points at an argument.
    unsafe {
        let properties = (*params).ppProperties;
        if properties.is_null() {
            return false;
        }
        match profiling_change(*properties) {
            ProfilingChange::Keep => return false,
            // The tracing layer calls on with the argument variable this
            // points at.
            ProfilingChange::UseProfilingProperties => *properties = &PROFILING_PROPERTIES.0,
            ProfilingChange::Flagged(flagged) => {
                // The runtime built these properties for this call only.
                let writable = *properties as *mut ur_queue_properties_t;
                (*writable).flags = flagged.flags;
            }
        }
    }
    true
}

/// The output event of a finished direct-path USM call (null: the call
/// made none, as an eventless submission); `None` for other functions.
///
/// # Safety
/// `args` is the params struct of function `id`, after the call returned.
unsafe fn output_event(id: ur_function_t, args: *mut c_void) -> Option<ur_event_handle_t> {
    // SAFETY: guaranteed by the caller; each params field points at an argument.
    let out: *mut *mut ur_event_handle_t = unsafe {
        match id {
            ur_function_t::ENQUEUE_USM_MEMCPY => {
                (*(args as *mut ur_enqueue_usm_memcpy_params_t)).pphEvent
            }
            ur_function_t::ENQUEUE_USM_FILL => {
                (*(args as *mut ur_enqueue_usm_fill_params_t)).pphEvent
            }
            ur_function_t::ENQUEUE_USM_MEMCPY_2D => {
                (*(args as *mut ur_enqueue_usm_memcpy_2d_params_t)).pphEvent
            }
            _ => return None,
        }
    };
    if out.is_null() {
        return None;
    }
    // SAFETY: `out` points at the call's `phEvent` argument (may be null).
    let ph_event = unsafe { *out };
    if ph_event.is_null() {
        return Some(std::ptr::null_mut());
    }
    // SAFETY: the call wrote its output event through `phEvent`.
    Some(unsafe { *ph_event })
}

/// Whether a `urEnqueueNativeCommandExp` asks for an output event (a
/// native command group does; a host task's interop call does not).
///
/// # Safety
/// `args` is the live params struct of a `urEnqueueNativeCommandExp` call.
unsafe fn native_command_has_event(args: *mut c_void) -> bool {
    // SAFETY: guaranteed by the caller; the field points at the argument.
    unsafe {
        let out = (*(args as *const ur_sys::ur_enqueue_native_command_exp_params_t)).pphEvent;
        !out.is_null() && !(*out).is_null()
    }
}

/// The result a call returned (`ret_data` of its function_with_args_end).
///
/// # Safety
/// `ret_data` is null or points at the call's `ur_result_t`.
unsafe fn call_result(ret_data: *mut c_void) -> Option<ur_sys::ur_result_t> {
    // SAFETY: guaranteed by the caller.
    (!ret_data.is_null()).then(|| unsafe { *(ret_data as *const ur_sys::ur_result_t) })
}

/// The event wait list of an enqueue call, by function id (empty for the
/// functions we do not read).
///
/// # Safety
/// `args` is the live params struct of function `id`.
unsafe fn wait_list<'a>(id: ur_function_t, args: *mut c_void) -> &'a [ur_event_handle_t] {
    /// Reads (count, list) from a params struct with those two fields.
    macro_rules! read {
        ($ty:ty) => {{
            let p = &*(args as *const $ty);
            (p.pnumEventsInWaitList, p.pphEventWaitList)
        }};
    }
    // SAFETY: guaranteed by the caller.
    let (count, list) = unsafe {
        match id {
            ur_function_t::ENQUEUE_KERNEL_LAUNCH_WITH_ARGS_EXP => {
                read!(ur_sys::ur_enqueue_kernel_launch_with_args_exp_params_t)
            }
            ur_function_t::ENQUEUE_USM_MEMCPY => read!(ur_enqueue_usm_memcpy_params_t),
            ur_function_t::ENQUEUE_USM_FILL => read!(ur_enqueue_usm_fill_params_t),
            ur_function_t::ENQUEUE_USM_MEMCPY_2D => read!(ur_enqueue_usm_memcpy_2d_params_t),
            ur_function_t::ENQUEUE_EVENTS_WAIT => read!(ur_sys::ur_enqueue_events_wait_params_t),
            ur_function_t::ENQUEUE_NATIVE_COMMAND_EXP => {
                read!(ur_sys::ur_enqueue_native_command_exp_params_t)
            }
            ur_function_t::ENQUEUE_EVENTS_WAIT_WITH_BARRIER => {
                read!(ur_sys::ur_enqueue_events_wait_with_barrier_params_t)
            }
            ur_function_t::ENQUEUE_EVENTS_WAIT_WITH_BARRIER_EXT => {
                read!(ur_sys::ur_enqueue_events_wait_with_barrier_ext_params_t)
            }
            _ => return &[],
        }
    };
    if count.is_null() || list.is_null() {
        return &[];
    }
    // SAFETY: both point at the call's arguments.
    let (n, events) = unsafe { (*count, *list) };
    if n == 0 || events.is_null() {
        return &[];
    }
    // SAFETY: the call's wait list holds `n` handles and outlives the callback.
    unsafe { std::slice::from_raw_parts(events, n as usize) }
}

#[cfg(test)]
mod tests {
    use super::{profiling_change, ProfilingChange};
    use ur_sys::{ur_queue_flags_t, ur_queue_properties_t, ur_structure_type_t};

    #[test]
    fn profiling_is_added_once_and_other_flags_kept() {
        let props = |flags| ur_queue_properties_t {
            stype: ur_structure_type_t::QUEUE_PROPERTIES,
            pNext: std::ptr::null_mut(),
            flags,
        };
        // SAFETY: null, or pointers at the locals below.
        unsafe {
            assert!(matches!(
                profiling_change(std::ptr::null()),
                ProfilingChange::UseProfilingProperties
            ));
            let on = props(ur_queue_flags_t::PROFILING_ENABLE);
            assert!(matches!(profiling_change(&on), ProfilingChange::Keep));
            let ooo = props(ur_queue_flags_t::OUT_OF_ORDER_EXEC_MODE_ENABLE);
            match profiling_change(&ooo) {
                ProfilingChange::Flagged(p) => assert_eq!(
                    p.flags,
                    ur_queue_flags_t::OUT_OF_ORDER_EXEC_MODE_ENABLE
                        | ur_queue_flags_t::PROFILING_ENABLE
                ),
                other => panic!("{other:?}"),
            }
        }
    }
}
