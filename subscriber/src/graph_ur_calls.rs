//! The UR calls of SYCL graphs followed on `ur.call.debug`, before the
//! hooks are in.
//!
//! [`crate::ur_hooks`] follows `urCommandBufferCreateExp`, the
//! `urCommandBufferAppend…Exp` calls, `urCommandBufferFinalizeExp` and
//! `urEnqueueCommandBufferExp` once the collector installed them, which it
//! does on its own thread after the runtime's first UR call. A program
//! that records, finalises or replays a graph right at start-up does so
//! before that; the UR tracing layer is on from the start, so the same
//! calls are read here from their `function_with_args` events and handed
//! to the recorder exactly as the hooks hand them.
//!
//! A call is taken here only when its begin came while the hooks were not
//! in yet (per thread: [`crate::thread_state::ThreadState::pending_graph_call`]): a call that entered the layer before
//! the hand-over is this path's to the end; a call made through a hook
//! that calls on into the layer is the hook's.

use std::ffi::c_void;

use ur_sys::{
    ur_command_buffer_append_kernel_launch_with_args_exp_params_t,
    ur_command_buffer_append_usm_fill_exp_params_t,
    ur_command_buffer_append_usm_memcpy_exp_params_t, ur_command_buffer_create_exp_params_t,
    ur_command_buffer_finalize_exp_params_t, ur_enqueue_command_buffer_exp_params_t, ur_function_t,
    ur_result_t,
};

use crate::sycl_graphs::CommandClass;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ur_sys::{ur_exp_command_buffer_handle_t, ur_exp_command_buffer_sync_point_t};

/// Whether `id` is one of the SYCL graph calls followed here.
#[inline]
pub fn is_graph_call(id: ur_function_t) -> bool {
    matches!(
        id,
        ur_function_t::COMMAND_BUFFER_CREATE_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_USM_FILL_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP
            | ur_function_t::COMMAND_BUFFER_FINALIZE_EXP
            | ur_function_t::ENQUEUE_COMMAND_BUFFER_EXP
    )
}

/// The begin of graph call `id` on `ur.call.debug`, the hooks not in yet.
#[cold]
pub fn begin(id: ur_function_t) {
    let now = crate::clock::monotonic_ns();
    crate::thread_state::with(|t| t.pending_graph_call.set(Some((id, now))));
}

/// The end of graph call `id` on `ur.call.debug`: handed to the recorder
/// if its begin was this path's.
///
/// # Safety
/// `args` is the params struct of function `id` after the call returned;
/// `ret` is null or points at its `ur_result_t`.
#[cold]
pub unsafe fn end(id: ur_function_t, args: *mut c_void, ret: *const c_void) {
    let pending = crate::thread_state::with(|t| {
        let pending = t.pending_graph_call.get();
        if pending.is_some_and(|(begun, _)| begun == id) {
            t.pending_graph_call.set(None);
        }
        pending
    });
    let Some((begun, begin_ns)) = pending else {
        return;
    };
    if begun != id {
        return;
    }
    // SAFETY: `ret` is the call's result, when given.
    let result = (!ret.is_null()).then(|| unsafe { *(ret as *const ur_result_t) });
    if !result.is_some_and(|r| r.is_success()) {
        if id == ur_function_t::COMMAND_BUFFER_FINALIZE_EXP {
            // A failed finalisation ends the building all the same.
            with_recorder(|r| r.graph_finalized(0, false));
        }
        return;
    }
    // SAFETY: guaranteed by the caller: each params field points at the
    // call's argument, and the output arguments are written.
    unsafe { end_of(id, args, begin_ns) }
}

/// Reads a successful graph call's arguments and tells the recorder.
///
/// # Safety
/// As [`end`], the call succeeded.
unsafe fn end_of(id: ur_function_t, args: *mut c_void, begin_ns: u64) {
    /// The append's (sync point count, list, output sync point) fields.
    macro_rules! append {
        ($ty:ty, $class:expr, |$p:ident| $target:expr, $size:expr) => {{
            let $p = &*(args as *const $ty);
            let buffer = *$p.phCommandBuffer;
            let command = ($class, $target as u64, $size as u64);
            after_append(
                ur_result_t::SUCCESS,
                buffer,
                command,
                *$p.pnumSyncPointsInWaitList,
                *$p.ppSyncPointWaitList,
                *$p.ppSyncPoint,
            );
        }};
    }
    // SAFETY: guaranteed by the caller.
    unsafe {
        match id {
            ur_function_t::COMMAND_BUFFER_CREATE_EXP => {
                let p = &*(args as *const ur_command_buffer_create_exp_params_t);
                let out = *p.pphCommandBuffer;
                if !out.is_null() {
                    let buffer = *out as usize;
                    with_recorder(|r| r.graph_created(buffer, begin_ns));
                }
            }
            ur_function_t::COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP => append!(
                ur_command_buffer_append_usm_memcpy_exp_params_t,
                CommandClass::Copy,
                |p| *p.ppDst,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_USM_FILL_EXP => append!(
                ur_command_buffer_append_usm_fill_exp_params_t,
                CommandClass::Fill,
                |p| *p.ppMemory,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP => append!(
                ur_command_buffer_append_kernel_launch_with_args_exp_params_t,
                CommandClass::Kernel,
                |p| *p.phKernel,
                0
            ),
            ur_function_t::COMMAND_BUFFER_FINALIZE_EXP => {
                let p = &*(args as *const ur_command_buffer_finalize_exp_params_t);
                let buffer = *p.phCommandBuffer as usize;
                with_recorder(|r| r.graph_finalized(buffer, true));
            }
            ur_function_t::ENQUEUE_COMMAND_BUFFER_EXP => {
                let p = &*(args as *const ur_enqueue_command_buffer_exp_params_t);
                let (queue, buffer) = (*p.phQueue as usize, *p.phCommandBuffer as usize);
                let waits = wait_slice(*p.pnumEventsInWaitList, *p.pphEventWaitList);
                let out = *p.pphEvent;
                let out = if out.is_null() { 0 } else { *out as usize };
                with_recorder(|r| {
                    let waits = waits.iter().map(|e| *e as usize);
                    r.graph_replay((buffer, queue), begin_ns, waits, out)
                });
            }
            _ => {}
        }
    }
}

/// The slice a UR wait list (`count` entries at `list`) stands for.
///
/// # Safety
/// `list` holds `count` readable entries (or is null), for the call's
/// duration.
pub(crate) unsafe fn wait_slice<'a, T>(count: u32, list: *const T) -> &'a [T] {
    if count == 0 || list.is_null() {
        &[]
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts(list, count as usize) }
    }
}

/// Runs `f` on the recorder, a panic never crossing into the runtime.
pub(crate) fn with_recorder(f: impl FnOnce(&crate::recorder::Recorder)) {
    if let Some(recorder) = crate::session::recorder() {
        let _ = catch_unwind(AssertUnwindSafe(|| f(recorder)));
    }
}

/// After an append: the sync points it waits for and the one it gives.
///
/// # Safety
/// The arguments are the append call's, as the runtime passed them.
pub(crate) unsafe fn after_append(
    result: ur_result_t,
    buffer: ur_exp_command_buffer_handle_t,
    command: (CommandClass, u64, u64),
    wait_count: u32,
    wait_list: *const ur_exp_command_buffer_sync_point_t,
    sync_point: *mut ur_exp_command_buffer_sync_point_t,
) {
    if !result.is_success() {
        return;
    }
    // SAFETY: the caller's wait list, valid for the call.
    let waits = unsafe { wait_slice(wait_count, wait_list) };
    // SAFETY: on success the call wrote the sync point here (when asked).
    let gives = (!sync_point.is_null()).then(|| unsafe { *sync_point });
    with_recorder(|r| r.graph_append(buffer as usize, command, waits, gives));
}
