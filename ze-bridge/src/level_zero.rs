//! Level Zero, loaded at run time: kernel timestamps of completed events on
//! the host `CLOCK_MONOTONIC` timeline.
//!
//! [`LevelZero`] is a table of function pointers owning the
//! `libloading::Library` of the Level Zero loader (`libze_loader.so.1`, else
//! `libze_loader.so`). A missing library or symbol is a [`LoadError`], never a
//! panic. Once the process holds the loader (the SYCL Level Zero adapter loads
//! it), `dlopen` hands back that same instance, so the handles the runtime
//! made are valid here.
//!
//! # Initialisation
//!
//! [`LevelZero::load`] does **not** call `zeInit`. In a SYCL application the
//! Level Zero adapter initialises the loader with the flags it wants; calling
//! `zeInit` from the subscriber first could pick the drivers and flags in its
//! place, and would bring up GPU drivers in processes that never use Level
//! Zero. Event and device handles only exist once the runtime initialised
//! anyway. Tests and tools that create their own objects call
//! [`LevelZero::init_for_tests`] (`zeInit(0)`; repeated calls are harmless).
//!
//! # Per-device cache
//!
//! [`LevelZero::kernel_times`] keeps, per device handle, the timer
//! description (`zeDeviceGetProperties` with
//! `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2`: frequency in Hz, valid bits) and
//! a host/device timestamp pair (`zeDeviceGetGlobalTimestamps`), retaken when
//! older than [`RESYNC_INTERVAL`] so that 32-bit kernel timestamps (a wrap
//! every 5.7 min at 12.5 MHz) stay within half a wrap of their pair. The map
//! sits behind a `Mutex`: this runs on the collector thread, not on the
//! application's hot path.
//!
//! # Host clocks
//!
//! Intel's compute-runtime on Linux reads the host side of
//! `zeDeviceGetGlobalTimestamps` with `CLOCK_MONOTONIC_RAW`
//! (`OSTimeLinux::getCpuTime`), which drifts from `CLOCK_MONOTONIC` while NTP
//! slews. By default ([`DriverHostClock::MonotonicRaw`]) each pair is moved to
//! `CLOCK_MONOTONIC` by `CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW`, measured right
//! after the pair. [`LevelZero::with_driver_host_clock`] selects a driver
//! whose host clock already is `CLOCK_MONOTONIC`.
//!
//! The conversion itself is in [`crate::clock`].

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libloading::Library;
use ze_sys::*;

use crate::clock::{shift_host_ns, ClockSync, DeviceClock, TimerResolution};
use crate::{Readout, Untimed};

/// File names tried, in order, for the Level Zero loader.
pub const LIBRARY_NAMES: [&str; 2] = ["libze_loader.so.1", "libze_loader.so"];

/// A cached host/device timestamp pair is retaken when older than this.
pub const RESYNC_INTERVAL: Duration = Duration::from_secs(1);

/// Why [`LevelZero::load`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// None of [`LIBRARY_NAMES`] could be opened.
    Library {
        /// `dlopen`'s message for each name tried.
        errors: Vec<String>,
    },
    /// The loader lacks an entry point we need (too old a loader).
    Symbol {
        /// The missing symbol.
        name: &'static str,
        /// `dlsym`'s message.
        error: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Library { errors } => {
                write!(
                    f,
                    "cannot load the Level Zero loader: {}",
                    errors.join("; ")
                )
            }
            LoadError::Symbol { name, error } => {
                write!(f, "the Level Zero loader has no {name}: {error}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A Level Zero call that did not return `ZE_RESULT_SUCCESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeError {
    /// The function called.
    pub call: &'static str,
    /// What it returned.
    pub result: ze_result_t,
}

impl fmt::Display for ZeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} returned {}", self.call, self.result)
    }
}

impl std::error::Error for ZeError {}

fn check(call: &'static str, result: ze_result_t) -> Result<(), ZeError> {
    if result == ze_result_t::SUCCESS {
        Ok(())
    } else {
        Err(ZeError { call, result })
    }
}

/// The clock a driver reads the host side of `zeDeviceGetGlobalTimestamps` with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DriverHostClock {
    /// `CLOCK_MONOTONIC_RAW`, as Intel's compute-runtime on Linux.
    #[default]
    MonotonicRaw,
    /// `CLOCK_MONOTONIC`: used as is.
    Monotonic,
}

/// A driver handle obtained from [`LevelZero::drivers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Driver(ze_driver_handle_t);

impl Driver {
    /// The raw handle.
    pub fn raw(self) -> ze_driver_handle_t {
        self.0
    }
}

/// A device handle obtained from [`LevelZero::devices`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device(ze_device_handle_t);

impl Device {
    /// The raw handle.
    pub fn raw(self) -> ze_device_handle_t {
        self.0
    }
}

/// What [`LevelZero`] keeps per device.
#[derive(Clone, Copy, Debug)]
struct DeviceEntry {
    clock: DeviceClock,
    sync: ClockSync,
    synced_at: Instant,
}

/// The Level Zero loader's entry points, loaded at run time.
pub struct LevelZero {
    init: ze_pfnInit_t,
    driver_get: ze_pfnDriverGet_t,
    device_get: ze_pfnDeviceGet_t,
    device_get_properties: ze_pfnDeviceGetProperties_t,
    device_get_global_timestamps: ze_pfnDeviceGetGlobalTimestamps_t,
    context_create: ze_pfnContextCreate_t,
    context_destroy: ze_pfnContextDestroy_t,
    event_pool_create: ze_pfnEventPoolCreate_t,
    event_pool_destroy: ze_pfnEventPoolDestroy_t,
    event_create: ze_pfnEventCreate_t,
    event_destroy: ze_pfnEventDestroy_t,
    event_query_status: ze_pfnEventQueryStatus_t,
    event_query_kernel_timestamp: ze_pfnEventQueryKernelTimestamp_t,
    host_clock: DriverHostClock,
    devices: Mutex<HashMap<usize, DeviceEntry>>,
    /// Keeps the function pointers above valid.
    _library: Arc<Library>,
}

impl fmt::Debug for LevelZero {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LevelZero")
            .field("host_clock", &self.host_clock)
            .finish_non_exhaustive()
    }
}

/// Looks up `name` in `library` as a function pointer of type `F`.
///
/// # Safety
/// `F` must be the C signature of the symbol `name`.
unsafe fn symbol<F: Copy>(library: &Library, name: &'static str) -> Result<F, LoadError> {
    let mut bytes = Vec::with_capacity(name.len() + 1);
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(0);
    // SAFETY: the caller guarantees `F` is the symbol's type; the copied
    // pointer outlives the `Symbol` only inside `LevelZero`, which keeps the
    // library loaded.
    unsafe { library.get::<F>(&bytes) }
        .map(|s| *s)
        .map_err(|e| LoadError::Symbol {
            name,
            error: e.to_string(),
        })
}

impl LevelZero {
    /// Loads the Level Zero loader already used by the process (or loads it).
    ///
    /// Does not call `zeInit` (see the module documentation).
    pub fn load() -> Result<LevelZero, LoadError> {
        let mut errors = Vec::new();
        for name in LIBRARY_NAMES {
            // SAFETY: loading the Level Zero loader runs its initialisers,
            // which only set up its own state (drivers load at `zeInit`).
            match unsafe { Library::new(name) } {
                Ok(library) => return Self::from_library(library),
                Err(e) => errors.push(format!("{name}: {e}")),
            }
        }
        Err(LoadError::Library { errors })
    }

    fn from_library(library: Library) -> Result<LevelZero, LoadError> {
        let lib = &library;
        // SAFETY (every `symbol` call below): each type is the ze-sys
        // declaration of that entry point of ze_api.h.
        unsafe {
            Ok(LevelZero {
                init: symbol(lib, "zeInit")?,
                driver_get: symbol(lib, "zeDriverGet")?,
                device_get: symbol(lib, "zeDeviceGet")?,
                device_get_properties: symbol(lib, "zeDeviceGetProperties")?,
                device_get_global_timestamps: symbol(lib, "zeDeviceGetGlobalTimestamps")?,
                context_create: symbol(lib, "zeContextCreate")?,
                context_destroy: symbol(lib, "zeContextDestroy")?,
                event_pool_create: symbol(lib, "zeEventPoolCreate")?,
                event_pool_destroy: symbol(lib, "zeEventPoolDestroy")?,
                event_create: symbol(lib, "zeEventCreate")?,
                event_destroy: symbol(lib, "zeEventDestroy")?,
                event_query_status: symbol(lib, "zeEventQueryStatus")?,
                event_query_kernel_timestamp: symbol(lib, "zeEventQueryKernelTimestamp")?,
                host_clock: DriverHostClock::default(),
                devices: Mutex::new(HashMap::new()),
                _library: Arc::new(library),
            })
        }
    }

    /// Declares which host clock the driver's `zeDeviceGetGlobalTimestamps`
    /// uses (default [`DriverHostClock::MonotonicRaw`]).
    pub fn with_driver_host_clock(mut self, clock: DriverHostClock) -> Self {
        self.host_clock = clock;
        self
    }

    /// `zeInit(0)`, for tests and tools that make their own objects. The
    /// subscriber never calls it: the SYCL runtime initialises Level Zero.
    pub fn init_for_tests(&self) -> Result<(), ZeError> {
        // SAFETY: `zeInit` takes flags by value; 0 is valid.
        check("zeInit", unsafe { (self.init)(0) })
    }

    /// The drivers the loader offers (`zeDriverGet`).
    pub fn drivers(&self) -> Result<Vec<Driver>, ZeError> {
        let mut count = 0u32;
        // SAFETY: count query: `count` is valid, the array may be null.
        check("zeDriverGet", unsafe {
            (self.driver_get)(&mut count, std::ptr::null_mut())
        })?;
        let mut handles = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: `handles` has room for `count` handles.
        check("zeDriverGet", unsafe {
            (self.driver_get)(&mut count, handles.as_mut_ptr())
        })?;
        handles.truncate(count as usize);
        Ok(handles.into_iter().map(Driver).collect())
    }

    /// The devices of `driver` (`zeDeviceGet`).
    pub fn devices(&self, driver: Driver) -> Result<Vec<Device>, ZeError> {
        let mut count = 0u32;
        // SAFETY: `driver` came from `zeDriverGet` of this loader (drivers live
        // as long as the process); `count` is valid, the array may be null.
        check("zeDeviceGet", unsafe {
            (self.device_get)(driver.0, &mut count, std::ptr::null_mut())
        })?;
        let mut handles = vec![std::ptr::null_mut(); count as usize];
        // SAFETY: as above, and `handles` has room for `count` handles.
        check("zeDeviceGet", unsafe {
            (self.device_get)(driver.0, &mut count, handles.as_mut_ptr())
        })?;
        handles.truncate(count as usize);
        Ok(handles.into_iter().map(Device).collect())
    }

    /// A new context of `driver` holding one kernel-timestamp, host-visible
    /// event pool of `count` events, visible to `devices`.
    pub fn event_pool(
        &self,
        driver: Driver,
        devices: &[Device],
        count: u32,
    ) -> Result<EventPool<'_>, ZeError> {
        let desc = ze_context_desc_t {
            stype: ze_structure_type_t::CONTEXT_DESC,
            pNext: std::ptr::null(),
            flags: 0,
        };
        let mut context = std::ptr::null_mut();
        // SAFETY: `driver` came from `zeDriverGet`; `desc` and `context` are
        // valid for the call.
        check("zeContextCreate", unsafe {
            (self.context_create)(driver.0, &desc, &mut context)
        })?;
        let desc = ze_event_pool_desc_t {
            stype: ze_structure_type_t::EVENT_POOL_DESC,
            pNext: std::ptr::null(),
            flags: ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
            count,
        };
        let mut raw_devices: Vec<ze_device_handle_t> = devices.iter().map(|d| d.0).collect();
        let mut pool = std::ptr::null_mut();
        // SAFETY: `context` was just created; `raw_devices` holds
        // `raw_devices.len()` device handles from `zeDeviceGet`.
        let created = check("zeEventPoolCreate", unsafe {
            (self.event_pool_create)(
                context,
                &desc,
                raw_devices.len() as u32,
                raw_devices.as_mut_ptr(),
                &mut pool,
            )
        });
        if let Err(e) = created {
            // SAFETY: `context` was created above and nothing else uses it.
            unsafe { (self.context_destroy)(context) };
            return Err(e);
        }
        Ok(EventPool {
            ze: self,
            context,
            pool,
        })
    }

    /// Device start and end of a completed event's command on the host
    /// `CLOCK_MONOTONIC` timeline (`zeEventQueryKernelTimestamp`, `global`
    /// wall-clock values).
    ///
    /// [`Readout::Pending`] while `zeEventQueryKernelTimestamp` says
    /// `NOT_READY`; [`Untimed::Failed`] if a Level Zero call fails;
    /// [`Untimed::Invalid`] if the timestamps fail the checks of
    /// [`crate::clock`].
    ///
    /// `event` and `device` must be live handles of this process's Level Zero
    /// loader (the ones the SYCL runtime hands out), `device` the one the
    /// command ran on; the loader cannot check them.
    // A safe fn taking raw handles is the agreed interface: the handles come
    // from the SYCL runtime, which keeps them alive while their events are
    // retained; a stale handle is the caller's bug, as in C.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn kernel_times(&self, event: ze_event_handle_t, device: ze_device_handle_t) -> Readout {
        if event.is_null() || device.is_null() {
            return Readout::Untimed(Untimed::Failed);
        }
        let mut result = ze_kernel_timestamp_result_t::default();
        // SAFETY: `event` is a live event handle (caller's contract) and
        // `result` is a valid destination.
        let status = unsafe { (self.event_query_kernel_timestamp)(event, &mut result) };
        match status {
            ze_result_t::SUCCESS => {}
            ze_result_t::NOT_READY => return Readout::Pending,
            _ => return Readout::Untimed(Untimed::Failed),
        }
        let entry = match self.device_entry(device) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Readout::Untimed(Untimed::Invalid),
            Err(_) => return Readout::Untimed(Untimed::Failed),
        };
        entry.clock.to_host(
            entry.sync,
            result.global.kernelStart,
            result.global.kernelEnd,
        )
    }

    /// The cached clock of `device`, (re)synchronised if stale. `Ok(None)` if
    /// the device reports an unusable timer.
    fn device_entry(&self, device: ze_device_handle_t) -> Result<Option<DeviceEntry>, ZeError> {
        let key = device as usize;
        let mut devices = self
            .devices
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        if let Some(entry) = devices.get(&key) {
            if now.duration_since(entry.synced_at) < RESYNC_INTERVAL {
                return Ok(Some(*entry));
            }
        }
        let clock = match devices.get(&key) {
            Some(entry) => entry.clock,
            None => self.device_clock(device)?,
        };
        if clock.resolution.ticks_to_ns(1).is_none() || clock.kernel_valid_bits == 0 {
            return Ok(None);
        }
        let Some(sync) = self.sync(device)? else {
            return Ok(None);
        };
        let entry = DeviceEntry {
            clock,
            sync,
            synced_at: now,
        };
        devices.insert(key, entry);
        Ok(Some(entry))
    }

    fn device_clock(&self, device: ze_device_handle_t) -> Result<DeviceClock, ZeError> {
        let mut props = ze_device_properties_t::new(ze_structure_type_t::DEVICE_PROPERTIES_1_2);
        // SAFETY: `device` is a live device handle (caller's contract of
        // `kernel_times`); `props` is a valid struct with `stype` set and no
        // extension chain.
        check("zeDeviceGetProperties", unsafe {
            (self.device_get_properties)(device, &mut props)
        })?;
        Ok(DeviceClock {
            resolution: TimerResolution::from_properties(props.stype, props.timerResolution),
            kernel_valid_bits: props.kernelTimestampValidBits,
            timestamp_valid_bits: props.timestampValidBits,
        })
    }

    /// A host (`CLOCK_MONOTONIC`) / device pair; `Ok(None)` if the host clocks
    /// cannot be read or the pair cannot be moved to `CLOCK_MONOTONIC`.
    fn sync(&self, device: ze_device_handle_t) -> Result<Option<ClockSync>, ZeError> {
        let (mut host, mut ticks) = (0u64, 0u64);
        // SAFETY: `device` is a live device handle; both outputs are valid.
        check("zeDeviceGetGlobalTimestamps", unsafe {
            (self.device_get_global_timestamps)(device, &mut host, &mut ticks)
        })?;
        let host_ns = match self.host_clock {
            DriverHostClock::Monotonic => Some(host),
            DriverHostClock::MonotonicRaw => {
                monotonic_minus_raw().and_then(|offset| shift_host_ns(host, offset))
            }
        };
        Ok(host_ns.map(|host_ns| ClockSync {
            host_ns,
            device_ticks: ticks,
        }))
    }
}

/// `CLOCK_MONOTONIC − CLOCK_MONOTONIC_RAW` in ns, with the raw clock read
/// between two monotonic reads (their midpoint is compared).
pub fn monotonic_minus_raw() -> Option<i64> {
    let before = host::now_ns(host::CLOCK_MONOTONIC)?;
    let raw = host::now_ns(host::CLOCK_MONOTONIC_RAW)?;
    let after = host::now_ns(host::CLOCK_MONOTONIC)?;
    let mid = i128::from(before) + (i128::from(after) - i128::from(before)) / 2;
    i64::try_from(mid - i128::from(raw)).ok()
}

/// A context with one event pool, both destroyed on drop.
#[derive(Debug)]
pub struct EventPool<'a> {
    ze: &'a LevelZero,
    context: ze_context_handle_t,
    pool: ze_event_pool_handle_t,
}

impl EventPool<'_> {
    /// Creates the event at `index` of the pool.
    pub fn event(&self, index: u32) -> Result<Event<'_>, ZeError> {
        let desc = ze_event_desc_t {
            stype: ze_structure_type_t::EVENT_DESC,
            pNext: std::ptr::null(),
            index,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
        };
        let mut event = std::ptr::null_mut();
        // SAFETY: `self.pool` lives until `self` drops; `desc` and `event` are
        // valid for the call.
        check("zeEventCreate", unsafe {
            (self.ze.event_create)(self.pool, &desc, &mut event)
        })?;
        Ok(Event { pool: self, event })
    }
}

impl Drop for EventPool<'_> {
    fn drop(&mut self) {
        // SAFETY: both were created by `LevelZero::event_pool`; every `Event`
        // borrows the pool, so none is left.
        unsafe {
            (self.ze.event_pool_destroy)(self.pool);
            (self.ze.context_destroy)(self.context);
        }
    }
}

/// An event of an [`EventPool`], destroyed on drop.
#[derive(Debug)]
pub struct Event<'a> {
    pool: &'a EventPool<'a>,
    event: ze_event_handle_t,
}

impl Event<'_> {
    /// The raw handle, for [`LevelZero::kernel_times`].
    pub fn raw(&self) -> ze_event_handle_t {
        self.event
    }

    /// `zeEventQueryStatus`: `SUCCESS` once signaled, `NOT_READY` before.
    pub fn status(&self) -> ze_result_t {
        // SAFETY: the event lives until `self` drops.
        unsafe { (self.pool.ze.event_query_status)(self.event) }
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: created by `EventPool::event`, destroyed once here.
        unsafe { (self.pool.ze.event_destroy)(self.event) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display() {
        let e = LoadError::Symbol {
            name: "zeInit",
            error: "undefined symbol".into(),
        };
        assert_eq!(
            e.to_string(),
            "the Level Zero loader has no zeInit: undefined symbol"
        );
        let e = ZeError {
            call: "zeInit",
            result: ze_result_t::ERROR_UNINITIALIZED,
        };
        assert_eq!(
            e.to_string(),
            "zeInit returned ZE_RESULT_ERROR_UNINITIALIZED"
        );
    }

    #[test]
    fn missing_symbol_is_an_error() {
        // libc is always there and has none of the Level Zero entry points.
        // SAFETY: loading libc again runs no initialisers.
        let libc = unsafe { Library::new("libc.so.6") }.unwrap();
        match LevelZero::from_library(libc) {
            Err(LoadError::Symbol { name: "zeInit", .. }) => {}
            other => panic!("expected a missing zeInit, got {other:?}"),
        }
    }

    #[test]
    fn null_handles_fail_without_calling() {
        if let Ok(ze) = LevelZero::load() {
            assert_eq!(
                ze.kernel_times(std::ptr::null_mut(), std::ptr::null_mut()),
                Readout::Untimed(Untimed::Failed)
            );
        }
    }

    #[test]
    fn monotonic_offset_is_readable() {
        assert!(monotonic_minus_raw().is_some());
    }
}
