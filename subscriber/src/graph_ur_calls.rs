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
//! A call is taken here when it did not go through a hook: its begin came
//! while this thread was not inside a graph call's hook
//! ([`crate::thread_state::ThreadState::in_graph_hook`]), and its end
//! matches that begin ([`crate::thread_state::ThreadState::pending_graph_call`]).
//! That holds for a call that read the layer's entry just before its hook
//! replaced it, even when its begin comes after the hooks are in (the
//! stream keeps listening for a while after: the collector's hand-over);
//! a call made through a hook that calls on into the layer is the hook's.

use std::ffi::c_void;

use ur_sys::{
    ur_command_buffer_append_kernel_launch_with_args_exp_params_t,
    ur_command_buffer_append_mem_buffer_copy_exp_params_t,
    ur_command_buffer_append_mem_buffer_fill_exp_params_t,
    ur_command_buffer_append_mem_buffer_read_exp_params_t,
    ur_command_buffer_append_mem_buffer_write_exp_params_t,
    ur_command_buffer_append_native_command_exp_params_t,
    ur_command_buffer_append_usm_fill_exp_params_t,
    ur_command_buffer_append_usm_memcpy_exp_params_t, ur_command_buffer_create_exp_params_t,
    ur_command_buffer_finalize_exp_params_t, ur_enqueue_command_buffer_exp_params_t,
    ur_exp_command_buffer_desc_t, ur_function_t, ur_result_t, ur_structure_type_t,
};

use crate::sycl_graphs::Appended;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ur_sys::{ur_exp_command_buffer_handle_t, ur_exp_command_buffer_sync_point_t};

/// The appended command of each followed `urCommandBufferAppend…Exp`
/// whose node_create does not name it: its class and node name.
pub(crate) mod appended {
    use crate::sycl_graphs::{Appended, CommandClass};

    /// A command of `class` named `name`, writing `size` bytes at `ptr`.
    pub(crate) const fn command(
        class: CommandClass,
        name: &'static str,
        ptr: u64,
        size: u64,
    ) -> Appended {
        Appended {
            class,
            ptr,
            size,
            name,
        }
    }

    /// `urCommandBufferAppendUSMMemcpyExp`.
    pub(crate) const COPY: (CommandClass, &str) = (CommandClass::Copy, "copy usm");
    /// `urCommandBufferAppendUSMFillExp`.
    pub(crate) const FILL: (CommandClass, &str) = (CommandClass::Fill, "fill usm");
    /// `urCommandBufferAppendKernelLaunchWithArgsExp`.
    pub(crate) const KERNEL: (CommandClass, &str) = (CommandClass::Kernel, "kernel");
    /// `urCommandBufferAppendMemBufferCopyExp`.
    pub(crate) const BUFFER_COPY: (CommandClass, &str) = (CommandClass::Other, "buffer copy");
    /// `urCommandBufferAppendMemBufferWriteExp`.
    pub(crate) const BUFFER_WRITE: (CommandClass, &str) = (CommandClass::Other, "buffer write");
    /// `urCommandBufferAppendMemBufferReadExp`.
    pub(crate) const BUFFER_READ: (CommandClass, &str) = (CommandClass::Other, "buffer read");
    /// `urCommandBufferAppendMemBufferFillExp`.
    pub(crate) const BUFFER_FILL: (CommandClass, &str) = (CommandClass::Other, "buffer fill");
    /// `urCommandBufferAppendNativeCommandExp`.
    pub(crate) const NATIVE: (CommandClass, &str) = (CommandClass::Other, "native command");
}

/// Whether the command buffer descriptor `desc` (null, or the
/// `ur_exp_command_buffer_desc_t` the runtime passed) makes the buffer in
/// order.
///
/// # Safety
/// `desc` is null or points at a readable descriptor for the call.
pub(crate) unsafe fn desc_in_order(desc: *const c_void) -> bool {
    if desc.is_null() {
        return false;
    }
    // SAFETY: guaranteed by the caller.
    let desc = unsafe { &*(desc as *const ur_exp_command_buffer_desc_t) };
    desc.stype == ur_structure_type_t::EXP_COMMAND_BUFFER_DESC && desc.isInOrder != 0
}

/// Whether `id` is one of the SYCL graph calls followed here.
#[inline]
pub fn is_graph_call(id: ur_function_t) -> bool {
    matches!(
        id,
        ur_function_t::COMMAND_BUFFER_CREATE_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_USM_FILL_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_COPY_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_WRITE_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_READ_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_FILL_EXP
            | ur_function_t::COMMAND_BUFFER_APPEND_NATIVE_COMMAND_EXP
            | ur_function_t::COMMAND_BUFFER_FINALIZE_EXP
            | ur_function_t::ENQUEUE_COMMAND_BUFFER_EXP
    )
}

/// The begin of graph call `id` on `ur.call.debug`: this path's unless
/// the call went through its hook. Returns whether it took the call.
#[cold]
pub fn begin(id: ur_function_t) -> bool {
    let now = crate::clock::monotonic_ns();
    crate::thread_state::with(|t| {
        let taken = !t.in_graph_hook.get();
        if taken {
            t.pending_graph_call.set(Some((id, now)));
        }
        taken
    })
}

/// Runs `call` (a SYCL graph call's hook calling on) marked as inside
/// that hook, so that the layer's events for it are left to the hook.
#[inline]
pub(crate) fn inside_graph_hook<R>(call: impl FnOnce() -> R) -> R {
    crate::thread_state::with(|t| t.in_graph_hook.set(true));
    let result = call();
    crate::thread_state::with(|t| t.in_graph_hook.set(false));
    result
}

/// The end of graph call `id` on `ur.call.debug`: handed to the recorder
/// if its begin was this path's. Returns whether it was (the call taken
/// by [`begin`] has ended).
///
/// # Safety
/// `args` is the params struct of function `id` after the call returned;
/// `ret` is null or points at its `ur_result_t`.
#[cold]
pub unsafe fn end(id: ur_function_t, args: *mut c_void, ret: *const c_void) -> bool {
    let pending = crate::thread_state::with(|t| {
        let pending = t.pending_graph_call.get();
        if pending.is_some_and(|(begun, _)| begun == id) {
            t.pending_graph_call.set(None);
        }
        pending
    });
    let Some((begun, begin_ns)) = pending else {
        return false;
    };
    if begun != id {
        return false;
    }
    // SAFETY: the caller's contract.
    unsafe { end_taken(id, args, ret, begin_ns) };
    true
}

/// [`end`] of a call this path took, begun at `begin_ns`.
///
/// # Safety
/// As [`end`].
unsafe fn end_taken(id: ur_function_t, args: *mut c_void, ret: *const c_void, begin_ns: u64) {
    // SAFETY: `ret` is the call's result, when given.
    let result = (!ret.is_null()).then(|| unsafe { *(ret as *const ur_result_t) });
    if !result.is_some_and(|r| r.is_success()) {
        if id == ur_function_t::COMMAND_BUFFER_FINALIZE_EXP || is_append(id) {
            // A failed finalisation ends the building all the same, and
            // so does a failed append (the runtime then throws).
            with_recorder(|r| r.graph_finalized(0, false));
        }
        return;
    }
    // SAFETY: guaranteed by the caller: each params field points at the
    // call's argument, and the output arguments are written.
    unsafe { end_of(id, args, begin_ns) }
}

/// Whether `id` appends a command to a command buffer.
fn is_append(id: ur_function_t) -> bool {
    is_graph_call(id)
        && !matches!(
            id,
            ur_function_t::COMMAND_BUFFER_CREATE_EXP
                | ur_function_t::COMMAND_BUFFER_FINALIZE_EXP
                | ur_function_t::ENQUEUE_COMMAND_BUFFER_EXP
        )
}

/// Reads a successful graph call's arguments and tells the recorder.
///
/// # Safety
/// As [`end`], the call succeeded.
unsafe fn end_of(id: ur_function_t, args: *mut c_void, begin_ns: u64) {
    /// The append's (sync point count, list, output sync point) fields.
    macro_rules! append {
        ($ty:ty, $what:expr, |$p:ident| $target:expr, $size:expr) => {{
            let $p = &*(args as *const $ty);
            let buffer = *$p.phCommandBuffer;
            let (class, name) = $what;
            let command = appended::command(class, name, $target as u64, $size as u64);
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
                    let in_order = desc_in_order(*p.ppCommandBufferDesc);
                    with_recorder(|r| r.graph_created(buffer, begin_ns, in_order));
                }
            }
            ur_function_t::COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP => append!(
                ur_command_buffer_append_usm_memcpy_exp_params_t,
                appended::COPY,
                |p| *p.ppDst,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_USM_FILL_EXP => append!(
                ur_command_buffer_append_usm_fill_exp_params_t,
                appended::FILL,
                |p| *p.ppMemory,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP => append!(
                ur_command_buffer_append_kernel_launch_with_args_exp_params_t,
                appended::KERNEL,
                |p| *p.phKernel,
                0
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_COPY_EXP => append!(
                ur_command_buffer_append_mem_buffer_copy_exp_params_t,
                appended::BUFFER_COPY,
                |p| *p.phDstMem,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_WRITE_EXP => append!(
                ur_command_buffer_append_mem_buffer_write_exp_params_t,
                appended::BUFFER_WRITE,
                |p| *p.phBuffer,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_READ_EXP => append!(
                ur_command_buffer_append_mem_buffer_read_exp_params_t,
                appended::BUFFER_READ,
                |p| *p.ppDst,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_MEM_BUFFER_FILL_EXP => append!(
                ur_command_buffer_append_mem_buffer_fill_exp_params_t,
                appended::BUFFER_FILL,
                |p| *p.phBuffer,
                *p.psize
            ),
            ur_function_t::COMMAND_BUFFER_APPEND_NATIVE_COMMAND_EXP => append!(
                ur_command_buffer_append_native_command_exp_params_t,
                appended::NATIVE,
                |p| 0usize,
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
/// A failed append ends the building of its buffer (the runtime throws).
///
/// # Safety
/// The arguments are the append call's, as the runtime passed them.
pub(crate) unsafe fn after_append(
    result: ur_result_t,
    buffer: ur_exp_command_buffer_handle_t,
    command: Appended,
    wait_count: u32,
    wait_list: *const ur_exp_command_buffer_sync_point_t,
    sync_point: *mut ur_exp_command_buffer_sync_point_t,
) {
    if !result.is_success() {
        with_recorder(|r| r.graph_finalized(buffer as usize, false));
        return;
    }
    // SAFETY: the caller's wait list, valid for the call.
    let waits = unsafe { wait_slice(wait_count, wait_list) };
    // SAFETY: on success the call wrote the sync point here (when asked).
    let gives = (!sync_point.is_null()).then(|| unsafe { *sync_point });
    with_recorder(|r| r.graph_append(buffer as usize, command, waits, gives));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending() -> Option<ur_function_t> {
        crate::thread_state::with(|t| t.pending_graph_call.get()).map(|(id, _)| id)
    }

    #[test]
    fn a_graph_call_is_this_paths_unless_it_went_through_its_hook() {
        let replay = ur_function_t::ENQUEUE_COMMAND_BUFFER_EXP;
        // Through the hook, which calls on into the layer: the hook's.
        assert!(!inside_graph_hook(|| begin(replay)));
        assert_eq!(pending(), None);
        assert!(!crate::thread_state::with(|t| t.in_graph_hook.get()));
        // Straight into the layer (its entry read before the hook went
        // in): this path's, whenever its begin comes.
        assert!(begin(replay));
        assert_eq!(pending(), Some(replay));
        // Its end takes it (a failed call: nothing reaches the recorder).
        let failed = ur_result_t::ERROR_INVALID_VALUE;
        // SAFETY: a failed call's arguments are not read.
        unsafe {
            end(
                replay,
                std::ptr::null_mut(),
                (&failed as *const ur_result_t).cast(),
            )
        };
        assert_eq!(pending(), None);
    }
}
