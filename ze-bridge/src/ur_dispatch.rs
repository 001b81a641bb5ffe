//! A UR adapter's dispatch table, and the UR functions syclgraph hooks.
//!
//! Since UR 0.12 (DPC++ 2026.x) every handle an adapter makes (platform,
//! context, queue, event, ...) begins with a pointer to that adapter's
//! `ur_dditable_t`, a static table of function pointers, and a loader with
//! several adapters calls `handle->ddi->Event.pfnRetain(...)`. The
//! timestamp source calls the few [`Direct`] functions that way itself,
//! past its own loader's layers ([`UnifiedRuntime::dispatch_directly`]).
//!
//! # Finding the slots
//!
//! The table's layout changes between UR versions, so the slot of each
//! function is not taken from a header:
//! [`UnifiedRuntime::probe_direct_slots`] asks the loader itself. It calls
//! the loader's `urEventRetain` (and the other [`Direct`] functions) with a
//! fake handle whose table is [`PROBE_TABLE`], 512 small functions that
//! each record their index and return: the index that comes back is where
//! that loader (the same version as the runtime's, from the same
//! installation) looks for it. A fake handle is passed only to a loader
//! proven to call through the handles' tables
//! ([`crate::loader_dispatch`]): one that calls its single adapter
//! directly would hand it to real adapter code.
//!
//! [`Hooked`] names the functions whose entries in the runtime's table of
//! UR entry points syclgraph replaces (see
//! [`crate::entry_table::EntryTable`]).

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ur_sys as sys;

use crate::ur::UnifiedRuntime;

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
    /// `urEnqueueKernelLaunchWithArgsExp`: how DPC++ 2026 launches kernels.
    KernelLaunchWithArgsExp,
}

impl Hooked {
    /// Every hooked function, in [`Hooked::index`] order.
    pub const ALL: [Hooked; 8] = [
        Hooked::QueueCreate,
        Hooked::UsmMemcpy,
        Hooked::UsmFill,
        Hooked::UsmMemcpy2D,
        Hooked::EventsWait,
        Hooked::EventsWaitWithBarrier,
        Hooked::EventsWaitWithBarrierExt,
        Hooked::KernelLaunchWithArgsExp,
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
            Hooked::KernelLaunchWithArgsExp => "urEnqueueKernelLaunchWithArgsExp",
        }
    }
}

/// The UR functions the timestamp source calls straight through a handle's
/// table, as the loader would, skipping the loader and any layer in it
/// (the collector's own loader has the tracing layer on when the runtime's
/// has: it reads the same environment).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direct {
    /// `urEventRetain`.
    EventRetain,
    /// `urEventRelease`.
    EventRelease,
    /// `urEventGetInfo`.
    EventGetInfo,
    /// `urEventGetProfilingInfo`.
    EventGetProfilingInfo,
    /// `urQueueGetInfo`.
    QueueGetInfo,
}

impl Direct {
    /// Every direct function, in [`Direct::index`] order.
    pub const ALL: [Direct; 5] = [
        Direct::EventRetain,
        Direct::EventRelease,
        Direct::EventGetInfo,
        Direct::EventGetProfilingInfo,
        Direct::QueueGetInfo,
    ];

    /// Position in [`Direct::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The UR function's name (the loader's exported symbol).
    pub const fn name(self) -> &'static str {
        match self {
            Direct::EventRetain => "urEventRetain",
            Direct::EventRelease => "urEventRelease",
            Direct::EventGetInfo => "urEventGetInfo",
            Direct::EventGetProfilingInfo => "urEventGetProfilingInfo",
            Direct::QueueGetInfo => "urQueueGetInfo",
        }
    }
}

/// Where each [`Direct`] function sits in a handle's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectSlots {
    slots: [u16; Direct::ALL.len()],
}

impl DirectSlots {
    /// The slot of `function`.
    pub fn slot(&self, function: Direct) -> usize {
        usize::from(self.slots[function.index()])
    }
}

/// The function in `function`'s slot of `handle`'s table (0 when empty).
///
/// # Safety
/// `handle` is a live handle of a UR 0.12+ adapter and `slots` were probed
/// from a loader of the same version.
#[inline]
pub unsafe fn direct_function(handle: usize, slots: &DirectSlots, function: Direct) -> usize {
    // SAFETY: guaranteed by the caller: the table is the adapter's, and
    // every slot a loader of this version dispatches through is inside it.
    unsafe {
        let table = table_address(handle) as *const usize;
        if table.is_null() {
            return 0;
        }
        table.add(slots.slot(function)).read()
    }
}

/// How many entries [`PROBE_TABLE`] has (`ur_dditable_t` of UR 0.12 has 241).
pub const PROBE_SLOTS: usize = 512;

/// The index of the probe function called last.
static PROBED: AtomicUsize = AtomicUsize::new(usize::MAX);

/// One probe: records its index and fails the call.
///
/// It is called through a function-pointer type with more arguments than it
/// declares; on the C calling conventions we build for (System V x86-64,
/// AArch64) arguments are passed in registers and on the caller's stack,
/// which the caller cleans up, so a callee that reads none is sound.
unsafe extern "C" fn probe<const I: usize>() -> sys::ur_result_t {
    PROBED.store(I, Ordering::SeqCst);
    sys::ur_result_t::ERROR_UNSUPPORTED_FEATURE
}

type ProbeFn = unsafe extern "C" fn() -> sys::ur_result_t;

macro_rules! probe_row {
    ($row:literal) => {
        [
            probe::<{ $row * 16 }>,
            probe::<{ $row * 16 + 1 }>,
            probe::<{ $row * 16 + 2 }>,
            probe::<{ $row * 16 + 3 }>,
            probe::<{ $row * 16 + 4 }>,
            probe::<{ $row * 16 + 5 }>,
            probe::<{ $row * 16 + 6 }>,
            probe::<{ $row * 16 + 7 }>,
            probe::<{ $row * 16 + 8 }>,
            probe::<{ $row * 16 + 9 }>,
            probe::<{ $row * 16 + 10 }>,
            probe::<{ $row * 16 + 11 }>,
            probe::<{ $row * 16 + 12 }>,
            probe::<{ $row * 16 + 13 }>,
            probe::<{ $row * 16 + 14 }>,
            probe::<{ $row * 16 + 15 }>,
        ]
    };
}

/// A dispatch table of probes: entry `i` records `i` (rows of 16).
pub static PROBE_TABLE: [[ProbeFn; 16]; PROBE_SLOTS / 16] = [
    probe_row!(0),
    probe_row!(1),
    probe_row!(2),
    probe_row!(3),
    probe_row!(4),
    probe_row!(5),
    probe_row!(6),
    probe_row!(7),
    probe_row!(8),
    probe_row!(9),
    probe_row!(10),
    probe_row!(11),
    probe_row!(12),
    probe_row!(13),
    probe_row!(14),
    probe_row!(15),
    probe_row!(16),
    probe_row!(17),
    probe_row!(18),
    probe_row!(19),
    probe_row!(20),
    probe_row!(21),
    probe_row!(22),
    probe_row!(23),
    probe_row!(24),
    probe_row!(25),
    probe_row!(26),
    probe_row!(27),
    probe_row!(28),
    probe_row!(29),
    probe_row!(30),
    probe_row!(31),
];

/// A fake UR handle: its first word is the address of a dispatch table.
#[repr(C)]
struct FakeHandle {
    table: *const c_void,
}
// SAFETY: the handle is never written after initialisation.
unsafe impl Sync for FakeHandle {}

static FAKE_HANDLE: FakeHandle = FakeHandle {
    table: &PROBE_TABLE as *const _ as *const c_void,
};

/// Serialises probing (one [`PROBED`] for the process).
static PROBING: Mutex<()> = Mutex::new(());

impl UnifiedRuntime {
    /// Finds the slot of every [`Direct`] function by asking this loader
    /// (see the module documentation); all must be found, and the loader
    /// must be proven to call through the handles' tables first.
    pub fn probe_direct_slots(&self) -> Result<DirectSlots, String> {
        let _guard = PROBING.lock().unwrap_or_else(|e| e.into_inner());
        self.dispatches_through_handles()?;
        let mut slots = [0u16; Direct::ALL.len()];
        for function in Direct::ALL {
            let slot = self.probe_one(function.name(), |address, handle| {
                // SAFETY: `address` is the loader's exported entry point of
                // `function`; see `call_direct_with_fake_handle`.
                unsafe { call_direct_with_fake_handle(function, address, handle) }
            })?;
            slots[function.index()] =
                slot.ok_or_else(|| format!("{} is not exported", function.name()))?;
        }
        Ok(DirectSlots { slots })
    }

    /// Succeeds when this loader is proven to call through the handles'
    /// tables ([`crate::loader_dispatch`]); a fake handle may be passed to
    /// it only then: otherwise it would reach an adapter's real code.
    fn dispatches_through_handles(&self) -> Result<(), String> {
        // SAFETY: the symbol is only read as an address here.
        let init = unsafe { self.library().get::<*const c_void>(b"urLoaderInit\0") }
            .map(|symbol| *symbol as usize)
            .map_err(|e| e.to_string())?;
        let library = crate::loader_dispatch::library_containing(init)
            .ok_or("our UR loader is not among the loaded objects")?;
        crate::loader_dispatch::dispatches_through_handles(&library)
    }

    /// The slot the loader's `name` dispatches through, found by calling it
    /// with [`FAKE_HANDLE`] (`call(address, handle)` makes the call); `None`
    /// when the loader does not export `name`. The caller holds [`PROBING`].
    fn probe_one(
        &self,
        name: &str,
        call: impl FnOnce(*const c_void, *mut c_void),
    ) -> Result<Option<u16>, String> {
        let symbol = format!("{name}\0");
        // SAFETY: the symbol is only read as an address here.
        let address = match unsafe { self.library().get::<*const c_void>(symbol.as_bytes()) } {
            Ok(symbol) => *symbol,
            Err(_) => return Ok(None),
        };
        if address.is_null() {
            return Ok(None);
        }
        PROBED.store(usize::MAX, Ordering::SeqCst);
        call(address, &FAKE_HANDLE as *const FakeHandle as *mut c_void);
        let index = PROBED.load(Ordering::SeqCst);
        if index >= PROBE_SLOTS {
            return Err(format!(
                "{name} in {} does not dispatch through the handle's table",
                self.path().to_string_lossy()
            ));
        }
        Ok(Some(index as u16))
    }
}

/// Calls the loader's entry point of a [`Direct`] function with the fake
/// handle; the outputs go to a local buffer of the size passed.
///
/// # Safety
/// `address` is the loader's exported `function`; `handle` is a fake handle
/// whose first word points at [`PROBE_TABLE`].
unsafe fn call_direct_with_fake_handle(
    function: Direct,
    address: *const c_void,
    handle: *mut c_void,
) {
    let mut value = [0u8; 8];
    let out = value.as_mut_ptr().cast::<c_void>();
    let none = std::ptr::null_mut();
    // SAFETY: (all arms) `address` is `function`'s entry point, given its
    // prototype from ur_api.h; see the caller for the handle.
    unsafe {
        match function {
            Direct::EventRetain | Direct::EventRelease => {
                let f: sys::PFN_urEventRetain = std::mem::transmute(address);
                f(handle.cast());
            }
            Direct::EventGetInfo => {
                let f: sys::PFN_urEventGetInfo = std::mem::transmute(address);
                let what = sys::ur_event_info_t::COMMAND_EXECUTION_STATUS;
                f(handle.cast(), what, 4, out, none);
            }
            Direct::EventGetProfilingInfo => {
                let f: sys::PFN_urEventGetProfilingInfo = std::mem::transmute(address);
                let what = sys::ur_profiling_info_t::COMMAND_START;
                f(handle.cast(), what, 8, out, none);
            }
            Direct::QueueGetInfo => {
                let f: sys::PFN_urQueueGetInfo = std::mem::transmute(address);
                f(handle.cast(), sys::ur_queue_info_t::DEVICE, 8, out, none);
            }
        }
    }
}

/// The address of `handle`'s dispatch table (its first word); 0 for a null
/// handle. Cheap: one load, for the hot path.
///
/// # Safety
/// `handle` is null or a live handle of a UR 0.12+ adapter.
#[inline]
pub unsafe fn table_address(handle: usize) -> usize {
    if handle == 0 {
        return 0;
    }
    // SAFETY: guaranteed by the caller: a live handle's first word is readable.
    unsafe { (handle as *const usize).read() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_probe_records_its_own_index() {
        for (i, probe) in PROBE_TABLE.iter().flatten().enumerate() {
            // SAFETY: a probe takes no argument.
            unsafe { probe() };
            assert_eq!(PROBED.load(Ordering::SeqCst), i);
        }
    }
}
