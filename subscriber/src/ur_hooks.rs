//! Following the few UR calls syclgraph needs through hooks in the
//! runtime's table of UR entry points, instead of the UR tracing layer.
//!
//! The tracing layer announces every UR call as XPTI events (a code
//! location, an event, two notifications each): most of what tracing cost
//! per command. syclgraph needs four things from UR, all in the calls
//! [`Hooked`] names: forcing profiling on new queues (`urQueueCreate`), the
//! output event of direct-path USM commands (they send no `signal`), and the
//! wait lists of enqueues (the `depends_on` edges the runtime never sends).
//!
//! How it starts:
//! 1. At start-up the UR tracing layer and `ur.call.debug` do the work
//!    ([`crate::ur_calls`]).
//! 2. Once the runtime made its first UR call, the collector finds the
//!    runtime's table of UR entry points by the tracing layer's functions
//!    in it ([`ze_bridge::entry_table::find_entry_table`]: names from
//!    the runtime's own symbol table, nothing probed) and [`install`]s a
//!    hook in the entry of each [`Hooked`] function. Each hook does its one
//!    thing and calls on to what the entry held, or, when the tracing layer
//!    may go, to what the layer itself would have called. This is the
//!    table every UR call of the application goes through, whether the
//!    loader calls through the handles' tables (several adapters) or its one
//!    adapter directly (`ONEAPI_DEVICE_SELECTOR=opencl:cpu`, no Level Zero).
//!    The calls of SYCL graphs made before that were followed on
//!    `ur.call.debug` ([`crate::graph_ur_calls`]).
//! 3. From then on `ur.call.debug` stands down ([`Counters::ur_hooks_active`]) and the
//!    collector unsubscribes from it, then takes the tracing layer out of
//!    the other entries.
//!
//! The hooks stay in the table for the life of the process, so this library
//! pins itself in memory first; once tracing finished they only call
//! through.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use ur_sys::{
    ur_context_handle_t, ur_device_handle_t, ur_event_handle_t, ur_exp_command_buffer_handle_t,
    ur_exp_command_buffer_sync_point_t, ur_kernel_handle_t, ur_mem_handle_t, ur_queue_handle_t,
    ur_queue_properties_t, ur_result_t, PFN_urCommandBufferAppendKernelLaunchWithArgsExp,
    PFN_urCommandBufferAppendMemBufferCopyExp, PFN_urCommandBufferAppendMemBufferFillExp,
    PFN_urCommandBufferAppendMemBufferReadExp, PFN_urCommandBufferAppendMemBufferWriteExp,
    PFN_urCommandBufferAppendNativeCommandExp, PFN_urCommandBufferAppendUSMFillExp,
    PFN_urCommandBufferAppendUSMMemcpyExp, PFN_urCommandBufferCreateExp,
    PFN_urCommandBufferFinalizeExp, PFN_urEnqueueCommandBufferExp, PFN_urEnqueueEventsWait,
    PFN_urEnqueueEventsWaitWithBarrierExt, PFN_urEnqueueKernelLaunchWithArgsExp,
    PFN_urEnqueueNativeCommandExp, PFN_urEnqueueTimestampRecordingExp, PFN_urEnqueueUSMAdvise,
    PFN_urEnqueueUSMFill, PFN_urEnqueueUSMMemcpy, PFN_urEnqueueUSMMemcpy2D,
    PFN_urEnqueueUSMPrefetch, PFN_urEventWait, PFN_urQueueCreate,
};
use ze_bridge::entry_table::EntryTable;

use crate::counters::Counters;
use crate::thread_state::{self, ThreadState};
use crate::unseen_enqueues::EnqueueFunction;
use crate::ur_calls::{profiling_change, ProfilingChange, PROFILING_PROPERTIES};

/// The UR functions syclgraph follows by replacing their table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hooked {
    /// `urQueueCreate`: profiling is turned on for new queues.
    QueueCreate,
    /// `urEnqueueUSMMemcpy`: its output event times a direct-path memcpy.
    UsmMemcpy,
    /// `urEnqueueUSMFill`.
    UsmFill,
    /// `urEnqueueUSMMemcpy2D`.
    UsmMemcpy2D,
    /// `urEnqueueEventsWait`.
    EventsWait,
    /// `urEnqueueEventsWaitWithBarrier`.
    EventsWaitWithBarrier,
    /// `urEnqueueEventsWaitWithBarrierExt`.
    EventsWaitWithBarrierExt,
    /// `urEnqueueUSMPrefetch`: claims its submission (else a later
    /// enqueue without a node would).
    UsmPrefetch,
    /// `urEnqueueUSMAdvise`: the runtime sends no node for `mem_advise`.
    UsmAdvise,
    /// `urEnqueueTimestampRecordingExp`: a native profiling tag, no node.
    TimestampRecording,
    /// `urEnqueueKernelLaunchWithArgsExp`: how DPC++ 2026 launches kernels.
    KernelLaunchWithArgsExp,
    /// `urEnqueueNativeCommandExp`: a native command (its node is told so,
    /// its wait list read, a refusal counted).
    NativeCommand,
    /// `urCommandBufferCreateExp`: a SYCL graph is being finalised.
    CommandBufferCreate,
    /// `urCommandBufferAppendUSMMemcpyExp`: a graph's memcpy and its sync points.
    CommandBufferAppendMemcpy,
    /// `urCommandBufferAppendUSMFillExp`: a graph's memset/fill.
    CommandBufferAppendFill,
    /// `urCommandBufferAppendKernelLaunchWithArgsExp`: a graph's kernel
    /// (how DPC++ 2026 appends kernels).
    CommandBufferAppendKernelWithArgs,
    /// `urCommandBufferAppendMemBufferCopyExp`: a graph's buffer copy.
    CommandBufferAppendBufferCopy,
    /// `urCommandBufferAppendMemBufferWriteExp`.
    CommandBufferAppendBufferWrite,
    /// `urCommandBufferAppendMemBufferReadExp`.
    CommandBufferAppendBufferRead,
    /// `urCommandBufferAppendMemBufferFillExp`.
    CommandBufferAppendBufferFill,
    /// `urCommandBufferAppendNativeCommandExp`: a graph's native command.
    CommandBufferAppendNative,
    /// `urCommandBufferFinalizeExp`: the graph is finalised.
    CommandBufferFinalize,
    /// `urEnqueueCommandBufferExp`: one replay of a SYCL graph.
    EnqueueCommandBuffer,
    /// `urEventWait`: when it returns the host has seen its events
    /// complete, which bounds their device clock's offset (the host clock,
    /// [`ze_bridge::offset_bounds`]).
    EventWait,
}

impl Hooked {
    /// Every hooked function, in [`Hooked::index`] order.
    pub const ALL: [Hooked; 24] = [
        Hooked::QueueCreate,
        Hooked::UsmMemcpy,
        Hooked::UsmFill,
        Hooked::UsmMemcpy2D,
        Hooked::EventsWait,
        Hooked::EventsWaitWithBarrier,
        Hooked::EventsWaitWithBarrierExt,
        Hooked::UsmPrefetch,
        Hooked::UsmAdvise,
        Hooked::TimestampRecording,
        Hooked::KernelLaunchWithArgsExp,
        Hooked::NativeCommand,
        Hooked::CommandBufferCreate,
        Hooked::CommandBufferAppendMemcpy,
        Hooked::CommandBufferAppendFill,
        Hooked::CommandBufferAppendKernelWithArgs,
        Hooked::CommandBufferAppendBufferCopy,
        Hooked::CommandBufferAppendBufferWrite,
        Hooked::CommandBufferAppendBufferRead,
        Hooked::CommandBufferAppendBufferFill,
        Hooked::CommandBufferAppendNative,
        Hooked::CommandBufferFinalize,
        Hooked::EnqueueCommandBuffer,
        Hooked::EventWait,
    ];

    /// Position in [`Hooked::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The UR function's name (the loader's exported symbol).
    pub const fn name(self) -> &'static str {
        match self {
            Hooked::QueueCreate => "urQueueCreate",
            Hooked::UsmMemcpy => "urEnqueueUSMMemcpy",
            Hooked::UsmFill => "urEnqueueUSMFill",
            Hooked::UsmMemcpy2D => "urEnqueueUSMMemcpy2D",
            Hooked::EventsWait => "urEnqueueEventsWait",
            Hooked::EventsWaitWithBarrier => "urEnqueueEventsWaitWithBarrier",
            Hooked::EventsWaitWithBarrierExt => "urEnqueueEventsWaitWithBarrierExt",
            Hooked::UsmPrefetch => "urEnqueueUSMPrefetch",
            Hooked::UsmAdvise => "urEnqueueUSMAdvise",
            Hooked::TimestampRecording => "urEnqueueTimestampRecordingExp",
            Hooked::KernelLaunchWithArgsExp => "urEnqueueKernelLaunchWithArgsExp",
            Hooked::NativeCommand => "urEnqueueNativeCommandExp",
            Hooked::CommandBufferCreate => "urCommandBufferCreateExp",
            Hooked::CommandBufferAppendMemcpy => "urCommandBufferAppendUSMMemcpyExp",
            Hooked::CommandBufferAppendFill => "urCommandBufferAppendUSMFillExp",
            Hooked::CommandBufferAppendKernelWithArgs => {
                "urCommandBufferAppendKernelLaunchWithArgsExp"
            }
            Hooked::CommandBufferAppendBufferCopy => "urCommandBufferAppendMemBufferCopyExp",
            Hooked::CommandBufferAppendBufferWrite => "urCommandBufferAppendMemBufferWriteExp",
            Hooked::CommandBufferAppendBufferRead => "urCommandBufferAppendMemBufferReadExp",
            Hooked::CommandBufferAppendBufferFill => "urCommandBufferAppendMemBufferFillExp",
            Hooked::CommandBufferAppendNative => "urCommandBufferAppendNativeCommandExp",
            Hooked::CommandBufferFinalize => "urCommandBufferFinalizeExp",
            Hooked::EnqueueCommandBuffer => "urEnqueueCommandBufferExp",
            Hooked::EventWait => "urEventWait",
        }
    }
}

/// What each hooked entry held before (or what the tracing layer would have
/// called): where its hook calls on. Published before the hook is.
static ORIGINALS: [AtomicUsize; Hooked::ALL.len()] =
    [const { AtomicUsize::new(0) }; Hooked::ALL.len()];

/// Puts a hook in `table`'s entry of every [`Hooked`] function it has.
/// With `skip_layer`, a hook calls on to what the tracing layer would have
/// called (the layer is being taken out); otherwise to the layer. Returns
/// how many entries were hooked. Called once, by the collector.
pub fn install(table: &EntryTable, skip_layer: bool, counters: &Counters) -> Result<usize, String> {
    pin_this_library()?;
    let mut hooked = 0;
    for function in Hooked::ALL {
        let Some(at) = table.entry(function.name()) else {
            continue;
        };
        // SAFETY: `at` is an aligned entry of the runtime's table, in a
        // writable mapping (find_entry_table checked it).
        let entry = unsafe { &*(at as *const AtomicUsize) };
        let current = entry.load(Ordering::Acquire);
        if !table.is_layer_function(current) {
            continue;
        }
        let original = match table.next_function(at) {
            Ok(next) if skip_layer => next,
            _ => current,
        };
        ORIGINALS[function.index()].store(original, Ordering::Release);
        if entry
            .compare_exchange(
                current,
                hook_address(function),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            hooked += 1;
        }
    }
    if hooked == 0 {
        return Err("no UR entry point of the runtime could be hooked".into());
    }
    counters.ur_hooks_active.store(true, Ordering::Release);
    Ok(hooked)
}

/// What the entry of `function` held before its hook.
#[inline]
fn original(function: Hooked) -> usize {
    ORIGINALS[function.index()].load(Ordering::Acquire)
}

/// Keeps this library mapped for the life of the process: the hooks stay in
/// the runtime's table after XPTI unloads its subscribers.
fn pin_this_library() -> Result<(), String> {
    static PINNED: OnceLock<Result<(), String>> = OnceLock::new();
    PINNED
        .get_or_init(|| {
            // SAFETY: Dl_info is plain C data (pointers and integers); all
            // zeros is a valid value.
            let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
            // SAFETY: dladdr only reads the address and fills `info`.
            let found = unsafe { libc::dladdr(pin_this_library as *const c_void, &mut info) };
            if found == 0 || info.dli_fname.is_null() {
                return Err("cannot find this library's path to pin it".into());
            }
            // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
            let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
            let flags = libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE;
            // SAFETY: the library is already loaded (RTLD_NOLOAD): this only
            // marks it never to be unloaded; no initialiser runs again.
            let handle = unsafe { libc::dlopen(path.as_ptr(), flags) };
            if handle.is_null() {
                Err("cannot pin this library in memory".into())
            } else {
                Ok(())
            }
        })
        .clone()
}

/// The hook of `function`, as an address.
fn hook_address(function: Hooked) -> usize {
    match function {
        Hooked::QueueCreate => queue_create as PFN_urQueueCreate as usize,
        Hooked::UsmMemcpy => usm_memcpy as PFN_urEnqueueUSMMemcpy as usize,
        Hooked::UsmFill => usm_fill as PFN_urEnqueueUSMFill as usize,
        Hooked::UsmMemcpy2D => usm_memcpy_2d as PFN_urEnqueueUSMMemcpy2D as usize,
        Hooked::EventsWait => events_wait as PFN_urEnqueueEventsWait as usize,
        Hooked::EventsWaitWithBarrier => {
            events_wait_with_barrier as PFN_urEnqueueEventsWait as usize
        }
        Hooked::EventsWaitWithBarrierExt => {
            events_wait_with_barrier_ext as PFN_urEnqueueEventsWaitWithBarrierExt as usize
        }
        Hooked::UsmPrefetch => usm_prefetch as PFN_urEnqueueUSMPrefetch as usize,
        Hooked::UsmAdvise => usm_advise as PFN_urEnqueueUSMAdvise as usize,
        Hooked::TimestampRecording => {
            timestamp_recording as PFN_urEnqueueTimestampRecordingExp as usize
        }
        Hooked::KernelLaunchWithArgsExp => {
            kernel_launch_with_args_exp as PFN_urEnqueueKernelLaunchWithArgsExp as usize
        }
        Hooked::NativeCommand => enqueue_native_command as PFN_urEnqueueNativeCommandExp as usize,
        Hooked::CommandBufferCreate => {
            command_buffer_create as PFN_urCommandBufferCreateExp as usize
        }
        Hooked::CommandBufferAppendMemcpy => {
            command_buffer_append_memcpy as PFN_urCommandBufferAppendUSMMemcpyExp as usize
        }
        Hooked::CommandBufferAppendFill => {
            command_buffer_append_fill as PFN_urCommandBufferAppendUSMFillExp as usize
        }
        Hooked::CommandBufferAppendKernelWithArgs => {
            command_buffer_append_kernel_with_args
                as PFN_urCommandBufferAppendKernelLaunchWithArgsExp as usize
        }
        Hooked::CommandBufferAppendBufferCopy => {
            command_buffer_append_buffer_copy as PFN_urCommandBufferAppendMemBufferCopyExp as usize
        }
        Hooked::CommandBufferAppendBufferWrite => {
            command_buffer_append_buffer_write as PFN_urCommandBufferAppendMemBufferWriteExp
                as usize
        }
        Hooked::CommandBufferAppendBufferRead => {
            command_buffer_append_buffer_read as PFN_urCommandBufferAppendMemBufferReadExp as usize
        }
        Hooked::CommandBufferAppendBufferFill => {
            command_buffer_append_buffer_fill as PFN_urCommandBufferAppendMemBufferFillExp as usize
        }
        Hooked::CommandBufferAppendNative => {
            command_buffer_append_native as PFN_urCommandBufferAppendNativeCommandExp as usize
        }
        Hooked::CommandBufferFinalize => {
            command_buffer_finalize as PFN_urCommandBufferFinalizeExp as usize
        }
        Hooked::EnqueueCommandBuffer => {
            enqueue_command_buffer as PFN_urEnqueueCommandBufferExp as usize
        }
        Hooked::EventWait => event_wait as PFN_urEventWait as usize,
    }
}

/// Records an enqueue's wait list (before the call); an enqueue of
/// `function` that no node accompanied is counted. `t` is this thread's
/// state, reached once for the whole hook.
///
/// # Safety
/// `list` holds `count` event handles (or is null), as the caller passed them.
#[inline(always)]
unsafe fn before_enqueue(
    t: &ThreadState,
    function: EnqueueFunction,
    count: u32,
    list: *const ur_event_handle_t,
) {
    let Some(recorder) = crate::session::recorder() else {
        return;
    };
    let events: &[ur_event_handle_t] = if count == 0 || list.is_null() {
        &[]
    } else {
        // SAFETY: guaranteed by the caller; the list outlives this call.
        unsafe { std::slice::from_raw_parts(list, count as usize) }
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        recorder.enqueue_wait_list_here(t, function, events.iter().map(|e| *e as usize))
    }));
}

/// Records the output event of a direct-path USM command (after the call).
///
/// # Safety
/// `ph_event` is the call's output argument (null or written on success).
#[inline(always)]
unsafe fn after_usm(t: &ThreadState, result: ur_result_t, ph_event: *mut ur_event_handle_t) {
    if !result.is_success() {
        return;
    }
    // An eventless submission (no `phEvent`) ran too: it is told as having
    // no device event, not mistaken for a command recorded into a graph.
    let event = if ph_event.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: on success the call wrote its output event here.
        unsafe { *ph_event }
    };
    if let Some(recorder) = crate::session::recorder() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            recorder.direct_command_event_here(t, event as usize)
        }));
    }
}

// The hooks. Each has the prototype of the UR function it replaces (from
// ur_api.h), is only reachable through a hooked entry, and calls on to what
// that entry held (or what the tracing layer would have called) with the
// arguments unchanged (urQueueCreate's properties aside). SAFETY of each
// body: the runtime's arguments are passed on as received; `original`
// returns a function of that prototype, published before the hook.

unsafe extern "C" fn queue_create(
    context: ur_context_handle_t,
    device: ur_device_handle_t,
    properties: *const ur_queue_properties_t,
    queue: *mut ur_queue_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    let next: PFN_urQueueCreate = unsafe { std::mem::transmute(original(Hooked::QueueCreate)) };
    let recorder = crate::session::recorder();
    if let Some(r) = recorder {
        r.counters.queue_creations.fetch_add(1, Ordering::Relaxed);
    }
    // Also while tracing is stopped: a queue made then gives device times
    // once tracing starts again, without being made anew.
    let forcing = recorder.is_some_and(|r| r.force_profiling && (r.running() || r.paused()));
    let change = if forcing {
        // SAFETY: the runtime's properties (or null), valid for this call.
        unsafe { profiling_change(properties) }
    } else {
        ProfilingChange::Keep
    };
    let copy;
    let forced = !matches!(change, ProfilingChange::Keep);
    let properties = match change {
        ProfilingChange::Keep => properties,
        ProfilingChange::UseProfilingProperties => &PROFILING_PROPERTIES.0,
        ProfilingChange::Flagged(flagged) => {
            copy = flagged;
            &copy as *const ur_queue_properties_t
        }
    };
    // SAFETY: see above.
    let result = unsafe { next(context, device, properties, queue) };
    if forced && result.is_success() {
        if let Some(r) = recorder {
            r.counters.queues_forced.fetch_add(1, Ordering::Relaxed);
        }
    }
    result
}

/// Defines the hook of an enqueue function (`$function` when counted
/// without a node): its prototype is
/// `(hQueue, <args>, numEventsInWaitList, phEventWaitList, phEvent)`; the
/// hook reads the wait list before the call and, for `usm`, hands the
/// output event of a direct-path USM command to the recorder after it.
macro_rules! enqueue_hook {
    ($name:ident, $hooked:expr, $function:expr, $pfn:ty, ($($arg:ident: $ty:ty),*), $after:ident) => {
        #[allow(clippy::too_many_arguments)]
        unsafe extern "C" fn $name(
            queue: ur_queue_handle_t,
            $($arg: $ty,)*
            wait_count: u32,
            wait_list: *const ur_event_handle_t,
            event: *mut ur_event_handle_t,
        ) -> ur_result_t {
            // SAFETY: see above.
            unsafe {
                let next: $pfn = std::mem::transmute(original($hooked));
                // One thread-local access for the call's before and after
                // (the runtime's callbacks on this thread in between reach
                // the same state: its cells are not borrowed across).
                thread_state::with(|t| {
                    before_enqueue(t, $function, wait_count, wait_list);
                    let result = next(queue, $($arg,)* wait_count, wait_list, event);
                    enqueue_hook!(@after $after, t, result, event);
                    result
                })
            }
        }
    };
    (@after usm, $t:ident, $result:ident, $event:ident) => {
        after_usm($t, $result, $event)
    };
    (@after none, $t:ident, $result:ident, $event:ident) => {};
}

enqueue_hook!(
    usm_memcpy,
    Hooked::UsmMemcpy,
    EnqueueFunction::UsmMemcpy,
    PFN_urEnqueueUSMMemcpy,
    (blocking: bool, dst: *mut c_void, src: *const c_void, size: usize),
    usm
);
enqueue_hook!(
    usm_fill,
    Hooked::UsmFill,
    EnqueueFunction::UsmFill,
    PFN_urEnqueueUSMFill,
    (mem: *mut c_void, pattern_size: usize, pattern: *const c_void, size: usize),
    usm
);
enqueue_hook!(
    usm_memcpy_2d,
    Hooked::UsmMemcpy2D,
    EnqueueFunction::UsmMemcpy2D,
    PFN_urEnqueueUSMMemcpy2D,
    (
        blocking: bool,
        dst: *mut c_void,
        dst_pitch: usize,
        src: *const c_void,
        src_pitch: usize,
        width: usize,
        height: usize
    ),
    usm
);
enqueue_hook!(
    events_wait,
    Hooked::EventsWait,
    EnqueueFunction::EventsWait,
    PFN_urEnqueueEventsWait,
    (),
    none
);
enqueue_hook!(
    events_wait_with_barrier,
    Hooked::EventsWaitWithBarrier,
    EnqueueFunction::EventsWaitWithBarrier,
    PFN_urEnqueueEventsWait,
    (),
    none
);
enqueue_hook!(
    events_wait_with_barrier_ext,
    Hooked::EventsWaitWithBarrierExt,
    EnqueueFunction::EventsWaitWithBarrierExt,
    PFN_urEnqueueEventsWaitWithBarrierExt,
    (properties: *const c_void),
    none
);
enqueue_hook!(
    kernel_launch_with_args_exp,
    Hooked::KernelLaunchWithArgsExp,
    EnqueueFunction::KernelLaunchWithArgsExp,
    PFN_urEnqueueKernelLaunchWithArgsExp,
    (
        kernel: ur_kernel_handle_t,
        work_dim: u32,
        global_offset: *const usize,
        global_size: *const usize,
        local_size: *const usize,
        arg_count: u32,
        args: *const c_void,
        launch_properties: *const c_void
    ),
    none
);

enqueue_hook!(
    usm_prefetch,
    Hooked::UsmPrefetch,
    EnqueueFunction::UsmPrefetch,
    PFN_urEnqueueUSMPrefetch,
    (memory: *const c_void, size: usize, flags: u32),
    none
);
enqueue_hook!(
    timestamp_recording,
    Hooked::TimestampRecording,
    EnqueueFunction::TimestampRecordingExp,
    PFN_urEnqueueTimestampRecordingExp,
    (blocking: bool),
    none
);

/// `urEnqueueNativeCommandExp`: with an output event it is a native
/// command group's enqueue (a host task taking an `interop_handle` makes
/// the same call on CUDA and HIP, without one: it stays a host task, and
/// its call is not followed). The command is told to be native and its
/// wait list read before the call; a refusal is counted after it
/// ([`crate::native_commands`]).
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn enqueue_native_command(
    queue: ur_queue_handle_t,
    function: *mut c_void,
    data: *mut c_void,
    mem_count: u32,
    mem_list: *const ur_mem_handle_t,
    properties: *const c_void,
    wait_count: u32,
    wait_list: *const ur_event_handle_t,
    event: *mut ur_event_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    unsafe {
        let next: PFN_urEnqueueNativeCommandExp =
            std::mem::transmute(original(Hooked::NativeCommand));
        if event.is_null() {
            return next(
                queue, function, data, mem_count, mem_list, properties, wait_count, wait_list,
                event,
            );
        }
        thread_state::with(|t| {
            if let Some(recorder) = crate::session::recorder() {
                let _ = catch_unwind(AssertUnwindSafe(|| recorder.native_command_here(t)));
            }
            before_enqueue(t, EnqueueFunction::NativeCommandExp, wait_count, wait_list);
            let result = next(
                queue, function, data, mem_count, mem_list, properties, wait_count, wait_list,
                event,
            );
            if !result.is_success() {
                if let Some(recorder) = crate::session::recorder() {
                    recorder.counters.native_refused.refused(result);
                }
            }
            result
        })
    }
}

/// `urEnqueueUSMAdvise` has no wait list: only counted when no node
/// accompanied it (the runtime sends none for `mem_advise`).
unsafe extern "C" fn usm_advise(
    queue: ur_queue_handle_t,
    memory: *const c_void,
    size: usize,
    advice: u32,
    event: *mut ur_event_handle_t,
) -> ur_result_t {
    // SAFETY: see above; an empty wait list is read as none.
    unsafe {
        let next: PFN_urEnqueueUSMAdvise = std::mem::transmute(original(Hooked::UsmAdvise));
        thread_state::with(|t| before_enqueue(t, EnqueueFunction::UsmAdvise, 0, std::ptr::null()));
        next(queue, memory, size, advice, event)
    }
}

use crate::graph_ur_calls::{
    after_append, appended, desc_in_order, inside_graph_hook, wait_slice, with_recorder,
};

// SYCL graphs: the command buffer built at finalisation and its replays
// (see crate::sycl_graphs). Same SAFETY as the hooks above; the recorder
// calls only read the arguments the runtime passed, inside catch_unwind.

unsafe extern "C" fn command_buffer_create(
    context: ur_context_handle_t,
    device: ur_device_handle_t,
    desc: *const c_void,
    buffer: *mut ur_exp_command_buffer_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    let next: PFN_urCommandBufferCreateExp =
        unsafe { std::mem::transmute(original(Hooked::CommandBufferCreate)) };
    let begin_ns = crate::clock::monotonic_ns();
    // SAFETY: see above.
    let result = inside_graph_hook(|| unsafe { next(context, device, desc, buffer) });
    if result.is_success() && !buffer.is_null() {
        // SAFETY: on success the call wrote its output handle here.
        let handle = unsafe { *buffer } as usize;
        // SAFETY: the runtime's descriptor (or null), valid for the call.
        let in_order = unsafe { desc_in_order(desc) };
        with_recorder(|r| r.graph_created(handle, begin_ns, in_order));
    }
    result
}

/// Defines the hook of a `urCommandBufferAppend…Exp` function: its
/// prototype is `(hCommandBuffer, <args>, numSyncPointsInWaitList,
/// pSyncPointWaitList, numEventsInWaitList, phEventWaitList, pSyncPoint,
/// phEvent, phCommand)`; after the call the recorder learns the command
/// (`$what`: its class and name, `$target` pointer, `$size` bytes) and its
/// sync points.
macro_rules! append_hook {
    ($name:ident, $hooked:expr, $pfn:ty, $what:expr, $target:ident, $size:expr,
     ($($arg:ident: $ty:ty),*)) => {
        #[allow(clippy::too_many_arguments)]
        unsafe extern "C" fn $name(
            buffer: ur_exp_command_buffer_handle_t,
            $($arg: $ty,)*
            sync_count: u32,
            sync_list: *const ur_exp_command_buffer_sync_point_t,
            event_count: u32,
            event_list: *const ur_event_handle_t,
            sync_point: *mut ur_exp_command_buffer_sync_point_t,
            event: *mut ur_event_handle_t,
            command: *mut c_void,
        ) -> ur_result_t {
            // SAFETY: see above.
            unsafe {
                let next: $pfn = std::mem::transmute(original($hooked));
                let result = inside_graph_hook(|| next(
                    buffer, $($arg,)* sync_count, sync_list, event_count, event_list,
                    sync_point, event, command,
                ));
                let (class, name) = $what;
                let command = appended::command(class, name, $target as u64, $size as u64);
                after_append(result, buffer, command, sync_count, sync_list, sync_point);
                result
            }
        }
    };
}

append_hook!(
    command_buffer_append_memcpy,
    Hooked::CommandBufferAppendMemcpy,
    PFN_urCommandBufferAppendUSMMemcpyExp,
    appended::COPY,
    dst,
    size,
    (dst: *mut c_void, src: *const c_void, size: usize)
);
append_hook!(
    command_buffer_append_fill,
    Hooked::CommandBufferAppendFill,
    PFN_urCommandBufferAppendUSMFillExp,
    appended::FILL,
    memory,
    size,
    (memory: *mut c_void, pattern: *const c_void, pattern_size: usize, size: usize)
);

append_hook!(
    command_buffer_append_kernel_with_args,
    Hooked::CommandBufferAppendKernelWithArgs,
    PFN_urCommandBufferAppendKernelLaunchWithArgsExp,
    appended::KERNEL,
    kernel,
    0,
    (
        kernel: ur_kernel_handle_t,
        work_dim: u32,
        global_offset: *const usize,
        global_size: *const usize,
        local_size: *const usize,
        arg_count: u32,
        args: *const c_void,
        alternative_count: u32,
        alternatives: *mut ur_kernel_handle_t
    )
);

append_hook!(
    command_buffer_append_buffer_copy,
    Hooked::CommandBufferAppendBufferCopy,
    PFN_urCommandBufferAppendMemBufferCopyExp,
    appended::BUFFER_COPY,
    dst,
    size,
    (
        src: ur_mem_handle_t,
        dst: ur_mem_handle_t,
        src_offset: usize,
        dst_offset: usize,
        size: usize
    )
);
append_hook!(
    command_buffer_append_buffer_write,
    Hooked::CommandBufferAppendBufferWrite,
    PFN_urCommandBufferAppendMemBufferWriteExp,
    appended::BUFFER_WRITE,
    memory,
    size,
    (memory: ur_mem_handle_t, offset: usize, size: usize, src: *const c_void)
);
append_hook!(
    command_buffer_append_buffer_read,
    Hooked::CommandBufferAppendBufferRead,
    PFN_urCommandBufferAppendMemBufferReadExp,
    appended::BUFFER_READ,
    dst,
    size,
    (memory: ur_mem_handle_t, offset: usize, size: usize, dst: *mut c_void)
);
append_hook!(
    command_buffer_append_buffer_fill,
    Hooked::CommandBufferAppendBufferFill,
    PFN_urCommandBufferAppendMemBufferFillExp,
    appended::BUFFER_FILL,
    memory,
    size,
    (
        memory: ur_mem_handle_t,
        pattern: *const c_void,
        pattern_size: usize,
        offset: usize,
        size: usize
    )
);

/// `urCommandBufferAppendNativeCommandExp` has no event arguments: its
/// own hook. The runtime's function runs inside the call (on CUDA and HIP
/// adding to `child`, a buffer made for it while the graph's was built).
unsafe extern "C" fn command_buffer_append_native(
    buffer: ur_exp_command_buffer_handle_t,
    function: *mut c_void,
    data: *mut c_void,
    child: ur_exp_command_buffer_handle_t,
    sync_count: u32,
    sync_list: *const ur_exp_command_buffer_sync_point_t,
    sync_point: *mut ur_exp_command_buffer_sync_point_t,
) -> ur_result_t {
    // SAFETY: see above.
    unsafe {
        let next: PFN_urCommandBufferAppendNativeCommandExp =
            std::mem::transmute(original(Hooked::CommandBufferAppendNative));
        let result = inside_graph_hook(|| {
            next(
                buffer, function, data, child, sync_count, sync_list, sync_point,
            )
        });
        let (class, name) = appended::NATIVE;
        let command = appended::command(class, name, 0, 0);
        after_append(result, buffer, command, sync_count, sync_list, sync_point);
        result
    }
}

unsafe extern "C" fn command_buffer_finalize(
    buffer: ur_exp_command_buffer_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    let next: PFN_urCommandBufferFinalizeExp =
        unsafe { std::mem::transmute(original(Hooked::CommandBufferFinalize)) };
    // SAFETY: see above.
    let result = inside_graph_hook(|| unsafe { next(buffer) });
    with_recorder(|r| r.graph_finalized(buffer as usize, result.is_success()));
    result
}

unsafe extern "C" fn enqueue_command_buffer(
    queue: ur_queue_handle_t,
    buffer: ur_exp_command_buffer_handle_t,
    wait_count: u32,
    wait_list: *const ur_event_handle_t,
    event: *mut ur_event_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    let next: PFN_urEnqueueCommandBufferExp =
        unsafe { std::mem::transmute(original(Hooked::EnqueueCommandBuffer)) };
    let begin_ns = crate::clock::monotonic_ns();
    // SAFETY: see above.
    let result = inside_graph_hook(|| unsafe { next(queue, buffer, wait_count, wait_list, event) });
    if result.is_success() {
        // SAFETY: the caller's wait list, valid for the call.
        let waits = unsafe { wait_slice(wait_count, wait_list) };
        // SAFETY: on success the call wrote its output event here.
        let out = if event.is_null() {
            0
        } else {
            (unsafe { *event }) as usize
        };
        with_recorder(|r| {
            let waits = waits.iter().map(|e| *e as usize);
            r.graph_replay((buffer as usize, queue as usize), begin_ns, waits, out)
        });
    }
    result
}

/// `urEventWait` (how `event::wait` and the runtime's own waits end): the
/// moment it returns, the host had seen each of its events complete. That
/// moment is told to the collector, where it bounds the device clock's
/// offset from above as tightly as the program's own clock can
/// ([`crate::recorder::Recorder::events_waited`]).
unsafe extern "C" fn event_wait(count: u32, list: *const ur_event_handle_t) -> ur_result_t {
    // SAFETY: see above.
    let next: PFN_urEventWait = unsafe { std::mem::transmute(original(Hooked::EventWait)) };
    // SAFETY: see above.
    let result = unsafe { next(count, list) };
    if result.is_success() && count > 0 {
        let seen_ns = crate::clock::monotonic_ns();
        // SAFETY: the caller's wait list, valid for the call.
        let events = unsafe { wait_slice(count, list) };
        with_recorder(|r| r.events_waited(events.iter().map(|e| *e as usize), seen_ns));
    }
    result
}
