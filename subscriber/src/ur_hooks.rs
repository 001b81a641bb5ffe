//! Following the few UR calls syclgraph needs through the adapter's
//! dispatch table, instead of the UR tracing layer.
//!
//! The tracing layer announces every UR call as XPTI events (a code
//! location, an event, two notifications each): most of what tracing cost
//! per command. syclgraph needs four things from UR, all in the calls
//! [`Hooked`] names: forcing profiling on new queues (`urQueueCreate`), the
//! output event of direct-path USM commands (they send no `signal`), and the
//! wait lists of enqueues (the `depends_on` edges the runtime never sends).
//! Each of those entries of the adapter's dispatch table is replaced by a
//! function here that does that one thing and calls the adapter's own.
//!
//! How it starts (see [`ze_bridge::ur_dispatch`]):
//! 1. At start-up the UR tracing layer and `ur.call.debug` do the work
//!    ([`crate::ur_calls`]); they also report the first handle they see
//!    ([`note_handle`]).
//! 2. The collector thread, once it loaded its UR loader, probes the slots
//!    ([`prepare`]) and patches the table of each handle reported
//!    ([`install_noted`]).
//! 3. From then on `ur.call.debug` stands down ([`ACTIVE`]) and the
//!    collector unsubscribes from it: the tracing layer stays in the
//!    runtime's call chain but, with nobody listening, makes no events.
//!
//! The hooks stay in the table for the life of the process (an adapter's
//! table is static), so this library pins itself in memory first; once
//! tracing finished they only call through.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use ur_sys::{
    ur_context_handle_t, ur_device_handle_t, ur_event_handle_t, ur_kernel_handle_t,
    ur_queue_handle_t, ur_queue_properties_t, ur_result_t, PFN_urEnqueueEventsWait,
    PFN_urEnqueueEventsWaitWithBarrierExt, PFN_urEnqueueKernelLaunchWithArgsExp,
    PFN_urEnqueueUSMFill, PFN_urEnqueueUSMMemcpy, PFN_urEnqueueUSMMemcpy2D, PFN_urQueueCreate,
};
use ze_bridge::ur::UnifiedRuntime;
use ze_bridge::ur_dispatch::{table_address, DispatchTable, Hooked, SlotMap};

use crate::ur_calls::{
    profiling_change, ProfilingChange, PROFILING_PROPERTIES, QUEUES_FORCED, QUEUE_CREATIONS,
};

/// Set once a table is patched: `ur.call.debug` then ignores every call.
pub static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The slots of the hooked functions, once probed.
static SLOTS: OnceLock<SlotMap> = OnceLock::new();

/// A table seen on a handle and not patched yet (0: none).
static NOTED: AtomicUsize = AtomicUsize::new(0);

/// Adapters whose tables we patch at most (OpenCL, Level Zero v1/v2, ...).
const MAX_TABLES: usize = 4;

/// One patched table and the adapter's own functions it held.
struct Patched {
    table: AtomicUsize,
    originals: [AtomicUsize; Hooked::ALL.len()],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Patched = Patched {
    table: AtomicUsize::new(0),
    originals: [const { AtomicUsize::new(0) }; Hooked::ALL.len()],
};

static PATCHED: [Patched; MAX_TABLES] = [EMPTY; MAX_TABLES];

/// How many entries of [`PATCHED`] are filled (published before any slot
/// points at a hook, so a hook always finds its table).
static PATCHED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Probes where the loader keeps the hooked functions, and has `ur` call
/// the adapter directly from then on ([`UnifiedRuntime::dispatch_directly`]).
/// Called once, by the collector, with its loader (the same UR version as
/// the runtime's).
pub fn prepare(ur: &UnifiedRuntime) -> Result<(), String> {
    let slots = ur.probe_slots()?;
    let _ = SLOTS.set(slots);
    // The same design lets the timestamp source skip its loader's layers.
    ur.dispatch_directly()
}

/// Remembers the table of a handle the runtime passed us, if it is not
/// patched yet. Cheap enough for the hot path: one load and a few compares.
///
/// # Safety
/// `handle` is null or a live handle of a UR 0.12+ adapter.
#[inline]
pub unsafe fn note_handle(handle: usize) {
    // SAFETY: guaranteed by the caller.
    let table = unsafe { table_address(handle) };
    if table != 0 && find(table).is_none() && !ze_bridge::ur_dispatch::is_probe_table(table) {
        NOTED.store(table, Ordering::Relaxed);
    }
}

/// True when hooks can be installed: the slots are known.
pub fn prepared() -> bool {
    SLOTS.get().is_some()
}

/// Patches the table last noted, if any; returns true when one was patched
/// now. Called by the collector thread only (one writer).
pub fn install_noted() -> Result<bool, String> {
    let Some(slots) = SLOTS.get() else {
        return Ok(false);
    };
    let table = NOTED.swap(0, Ordering::Relaxed);
    if table == 0 || find(table).is_some() {
        return Ok(false);
    }
    runtime_dispatches_through_handles()?;
    let count = PATCHED_COUNT.load(Ordering::Acquire);
    if count == MAX_TABLES {
        return Err(format!(
            "more than {MAX_TABLES} UR adapters; later ones are not followed"
        ));
    }
    let table = DispatchTable::at(table, slots).ok_or_else(|| {
        format!("the UR dispatch table at {table:#x} failed its checks (writable, entries in code)")
    })?;
    pin_this_library()?;
    let entry = &PATCHED[count];
    entry.table.store(table.address(), Ordering::Relaxed);
    let mut hooked = Vec::new();
    for function in Hooked::ALL {
        let Some(original) = table.get(slots, function) else {
            continue;
        };
        if original == 0 {
            continue;
        }
        entry.originals[function.index()].store(original, Ordering::Relaxed);
        hooked.push(function);
    }
    // Publish the originals before any slot leads to a hook.
    PATCHED_COUNT.store(count + 1, Ordering::Release);
    for function in hooked {
        // SAFETY: the hook has `function`'s prototype and lives as long as
        // the process (this library is pinned above).
        unsafe { table.replace(slots, function, hook_address(function)) };
    }
    ACTIVE.store(true, Ordering::Release);
    Ok(true)
}

/// Succeeds when the runtime's own UR loader (in `libsycl.so`) calls
/// through the handles' tables, so that a patched table is what the
/// application's calls go through; asked once, when the first table is
/// about to be patched (the runtime's loader has made a handle by then).
fn runtime_dispatches_through_handles() -> Result<(), String> {
    static VERDICT: OnceLock<Result<(), String>> = OnceLock::new();
    VERDICT
        .get_or_init(|| {
            let library = ze_bridge::tracing_bypass::find_runtime_library()
                .ok_or("no libsycl.so is loaded")?;
            ze_bridge::loader_dispatch::dispatches_through_handles(&library)
        })
        .clone()
}

/// The index in [`PATCHED`] of `table`, if patched.
#[inline]
fn find(table: usize) -> Option<usize> {
    let count = PATCHED_COUNT.load(Ordering::Acquire);
    PATCHED[..count]
        .iter()
        .position(|p| p.table.load(Ordering::Relaxed) == table)
}

/// The adapter's own `function` for a handle whose table is patched.
#[inline]
fn original(handle: usize, function: Hooked) -> usize {
    // SAFETY: the runtime called a hook with this handle: it is live.
    let table = unsafe { table_address(handle) };
    // A hook is only reached through a patched table; the first entry is a
    // fallback that cannot be needed.
    let entry = &PATCHED[find(table).unwrap_or(0)];
    entry.originals[function.index()].load(Ordering::Relaxed)
}

/// Keeps this library mapped for the life of the process: the hooks stay in
/// the adapter's table after XPTI unloads its subscribers.
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
        Hooked::KernelLaunchWithArgsExp => {
            kernel_launch_with_args_exp as PFN_urEnqueueKernelLaunchWithArgsExp as usize
        }
    }
}

/// Records an enqueue's wait list (before the call).
///
/// # Safety
/// `list` holds `count` event handles (or is null), as the caller passed them.
#[inline]
unsafe fn before_enqueue(count: u32, list: *const ur_event_handle_t) {
    let Some(recorder) = crate::recorder() else {
        return;
    };
    let events: &[ur_event_handle_t] = if count == 0 || list.is_null() {
        &[]
    } else {
        // SAFETY: guaranteed by the caller; the list outlives this call.
        unsafe { std::slice::from_raw_parts(list, count as usize) }
    };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        recorder.enqueue_wait_list(events.iter().map(|e| *e as usize))
    }));
}

/// Records the output event of a direct-path USM command (after the call).
///
/// # Safety
/// `ph_event` is the call's output argument (null or written on success).
#[inline]
unsafe fn after_usm(result: ur_result_t, ph_event: *mut ur_event_handle_t) {
    if !result.is_success() || ph_event.is_null() {
        return;
    }
    // SAFETY: on success the call wrote its output event here.
    let event = unsafe { *ph_event };
    if event.is_null() {
        return;
    }
    if let Some(recorder) = crate::recorder() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            recorder.direct_command_event(event as usize)
        }));
    }
}

// The hooks. Each has the prototype of the UR function it replaces (from
// ur_api.h), is only reachable through a patched table, and calls the
// adapter's own function with the arguments unchanged (urQueueCreate's
// properties aside). SAFETY of each body: the runtime's arguments are passed
// on as received; `original` returns the adapter's function of that slot.

unsafe extern "C" fn queue_create(
    context: ur_context_handle_t,
    device: ur_device_handle_t,
    properties: *const ur_queue_properties_t,
    queue: *mut ur_queue_handle_t,
) -> ur_result_t {
    // SAFETY: see above.
    let adapter: PFN_urQueueCreate =
        unsafe { std::mem::transmute(original(context as usize, Hooked::QueueCreate)) };
    QUEUE_CREATIONS.fetch_add(1, Ordering::Relaxed);
    let forcing = crate::recorder().is_some_and(|r| r.force_profiling && r.running());
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
    let result = unsafe { adapter(context, device, properties, queue) };
    if forced && result.is_success() {
        QUEUES_FORCED.fetch_add(1, Ordering::Relaxed);
    }
    result
}

/// Defines the hook of an enqueue function: its prototype is
/// `(hQueue, <args>, numEventsInWaitList, phEventWaitList, phEvent)`; the
/// hook reads the wait list before the call and, for `usm`, hands the
/// output event of a direct-path USM command to the recorder after it.
macro_rules! enqueue_hook {
    ($name:ident, $hooked:expr, $pfn:ty, ($($arg:ident: $ty:ty),*), $after:ident) => {
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
                let adapter: $pfn = std::mem::transmute(original(queue as usize, $hooked));
                before_enqueue(wait_count, wait_list);
                let result = adapter(queue, $($arg,)* wait_count, wait_list, event);
                enqueue_hook!(@after $after, result, event);
                result
            }
        }
    };
    (@after usm, $result:ident, $event:ident) => {
        after_usm($result, $event)
    };
    (@after none, $result:ident, $event:ident) => {};
}

enqueue_hook!(
    usm_memcpy,
    Hooked::UsmMemcpy,
    PFN_urEnqueueUSMMemcpy,
    (blocking: bool, dst: *mut c_void, src: *const c_void, size: usize),
    usm
);
enqueue_hook!(
    usm_fill,
    Hooked::UsmFill,
    PFN_urEnqueueUSMFill,
    (mem: *mut c_void, pattern_size: usize, pattern: *const c_void, size: usize),
    usm
);
enqueue_hook!(
    usm_memcpy_2d,
    Hooked::UsmMemcpy2D,
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
    PFN_urEnqueueEventsWait,
    (),
    none
);
enqueue_hook!(
    events_wait_with_barrier,
    Hooked::EventsWaitWithBarrier,
    PFN_urEnqueueEventsWait,
    (),
    none
);
enqueue_hook!(
    events_wait_with_barrier_ext,
    Hooked::EventsWaitWithBarrierExt,
    PFN_urEnqueueEventsWaitWithBarrierExt,
    (properties: *const c_void),
    none
);
enqueue_hook!(
    kernel_launch_with_args_exp,
    Hooked::KernelLaunchWithArgsExp,
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
