//! Unified Runtime, loaded at run time (ash-style function table).
//!
//! `libsycl.so` links its own UR loader statically; the events it signals are
//! handles of that loader's adapters. The wheel's `libur_loader.so.0` is a
//! *second* loader instance: every call on it returns
//! `UR_RESULT_ERROR_UNINITIALIZED` (37) until `urLoaderInit(0, NULL)` was
//! called on it, and afterwards it can act on the first instance's handles
//! (a UR handle carries its adapter's dispatch table, which the loader
//! follows). [`UnifiedRuntime::load`] opens that library and initialises it.
//!
//! # Handles
//!
//! The methods take handles as the newtypes [`UrEvent`], [`UrQueue`],
//! [`UrDevice`] and [`UrPlatform`]. They are not checked (UR cannot check
//! them): the caller's contract, as for every [`crate::TimestampSource`], is
//! that a handle came from the runtime (a `signal` trace point, or a query
//! here) and is still alive (retained). Null handles are refused without a
//! call. The `// SAFETY:` comments below rest on that contract.
//!
//! # When not to call
//!
//! No call may be made once the SYCL runtime started tearing down (the late
//! `xptiTraceFinish("sycl")`): its adapters are gone and a call crashed a
//! program. Read and release retained events before that.

use std::ffi::{c_void, CStr, OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use libloading::Library;
use ur_sys as sys;

use crate::UrEvent;

/// The file name of the loader library (`libur_loader.so.0`).
pub const LOADER_SONAME: &str = "libur_loader.so.0";

/// An opaque `ur_queue_handle_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UrQueue(pub usize);

/// An opaque `ur_device_handle_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UrDevice(pub usize);

/// An opaque `ur_platform_handle_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UrPlatform(pub usize);

/// A backend's own handle (`ur_native_handle_t`): a `cl_event`, a
/// `ze_event_handle_t`, a `ze_device_handle_t`, ... depending on the backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NativeHandle(pub usize);

pub use sys::ur_backend_t as Backend;
pub use sys::ur_queue_flags_t as QueueFlags;

/// Execution status of a command (`ur_event_status_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventStatus {
    /// The command completed.
    Complete,
    /// The device is running it.
    Running,
    /// It was submitted to the device.
    Submitted,
    /// It is queued.
    Queued,
    /// It failed.
    Error,
    /// A value this crate does not know (a newer runtime).
    Other(u32),
}

impl From<sys::ur_event_status_t> for EventStatus {
    fn from(raw: sys::ur_event_status_t) -> Self {
        match raw {
            sys::ur_event_status_t::COMPLETE => EventStatus::Complete,
            sys::ur_event_status_t::RUNNING => EventStatus::Running,
            sys::ur_event_status_t::SUBMITTED => EventStatus::Submitted,
            sys::ur_event_status_t::QUEUED => EventStatus::Queued,
            sys::ur_event_status_t::ERROR => EventStatus::Error,
            other => EventStatus::Other(other.0),
        }
    }
}

/// Which device time to read from an event (`ur_profiling_info_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProfilingInfo {
    /// Enqueued on the host.
    Queued,
    /// Submitted to the device.
    Submit,
    /// Execution started on the device.
    Start,
    /// Execution ended on the device.
    End,
    /// The command and its children completed.
    Complete,
}

impl ProfilingInfo {
    /// The raw query.
    pub const fn raw(self) -> sys::ur_profiling_info_t {
        match self {
            ProfilingInfo::Queued => sys::ur_profiling_info_t::COMMAND_QUEUED,
            ProfilingInfo::Submit => sys::ur_profiling_info_t::COMMAND_SUBMIT,
            ProfilingInfo::Start => sys::ur_profiling_info_t::COMMAND_START,
            ProfilingInfo::End => sys::ur_profiling_info_t::COMMAND_END,
            ProfilingInfo::Complete => sys::ur_profiling_info_t::COMMAND_COMPLETE,
        }
    }
}

/// A UR call that did not return `UR_RESULT_SUCCESS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UrError {
    /// The UR function called (`"urEventGetProfilingInfo"`).
    pub function: &'static str,
    /// What it returned.
    pub code: sys::ur_result_t,
}

impl UrError {
    /// The event's queue was created without profiling
    /// (`UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE`).
    pub fn is_profiling_not_available(&self) -> bool {
        self.code == sys::ur_result_t::ERROR_PROFILING_INFO_NOT_AVAILABLE
    }

    /// The loader was not initialised (`UR_RESULT_ERROR_UNINITIALIZED`).
    pub fn is_uninitialized(&self) -> bool {
        self.code == sys::ur_result_t::ERROR_UNINITIALIZED
    }
}

impl fmt::Display for UrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} returned {:?}", self.function, self.code)
    }
}

impl std::error::Error for UrError {}

/// Why [`UnifiedRuntime::load`] failed. Never a panic.
#[derive(Debug)]
pub enum LoadError {
    /// No candidate could be opened; each with `dlerror`'s message.
    NotFound {
        /// `(candidate, error)` in the order tried.
        tried: Vec<(OsString, String)>,
    },
    /// The library lacks a function this crate needs.
    MissingSymbol {
        /// The library.
        path: OsString,
        /// The function.
        symbol: &'static str,
    },
    /// `urLoaderInit(0, NULL)` failed.
    Init {
        /// The library.
        path: OsString,
        /// What `urLoaderInit` returned.
        code: sys::ur_result_t,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound { tried } => {
                write!(
                    f,
                    "Unified Runtime loader not found (set LD_LIBRARY_PATH to the DPC++ \
                     runtime's lib directory); tried:"
                )?;
                for (candidate, error) in tried {
                    write!(f, " [{}: {}]", candidate.to_string_lossy(), error)?;
                }
                Ok(())
            }
            LoadError::MissingSymbol { path, symbol } => write!(
                f,
                "{} has no symbol {symbol} (not a UR 0.12 loader?)",
                path.to_string_lossy()
            ),
            LoadError::Init { path, code } => write!(
                f,
                "urLoaderInit(0, NULL) on {} returned {code:?}",
                path.to_string_lossy()
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The function table.
#[derive(Clone, Copy)]
struct Fns {
    loader_init: sys::PFN_urLoaderInit,
    event_retain: sys::PFN_urEventRetain,
    event_release: sys::PFN_urEventRelease,
    event_get_info: sys::PFN_urEventGetInfo,
    event_get_profiling_info: sys::PFN_urEventGetProfilingInfo,
    event_get_native_handle: sys::PFN_urEventGetNativeHandle,
    queue_get_info: sys::PFN_urQueueGetInfo,
    device_get_info: sys::PFN_urDeviceGetInfo,
    device_get_native_handle: sys::PFN_urDeviceGetNativeHandle,
    device_get_global_timestamps: sys::PFN_urDeviceGetGlobalTimestamps,
    platform_get_info: sys::PFN_urPlatformGetInfo,
}

impl Fns {
    /// Fills the table through `lookup` (ash's loader closure): the address of
    /// a symbol, or null when it is missing. Fails on the first missing one.
    fn load(mut lookup: impl FnMut(&CStr) -> *const c_void) -> Result<Self, &'static str> {
        macro_rules! get {
            ($name:literal, $ty:ty) => {{
                let ptr = lookup(
                    CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes())
                        .expect("literal with one NUL"),
                );
                if ptr.is_null() {
                    return Err($name);
                }
                // SAFETY: `ptr` is the non-null address of the exported C
                // function `$name`, whose prototype in ur_api.h (v0.12) is the
                // one `$ty` declares; fn pointers and data pointers have the
                // same size and representation on the targets we build for.
                unsafe { std::mem::transmute::<*const c_void, $ty>(ptr) }
            }};
        }
        Ok(Fns {
            loader_init: get!("urLoaderInit", sys::PFN_urLoaderInit),
            event_retain: get!("urEventRetain", sys::PFN_urEventRetain),
            event_release: get!("urEventRelease", sys::PFN_urEventRelease),
            event_get_info: get!("urEventGetInfo", sys::PFN_urEventGetInfo),
            event_get_profiling_info: get!(
                "urEventGetProfilingInfo",
                sys::PFN_urEventGetProfilingInfo
            ),
            event_get_native_handle: get!(
                "urEventGetNativeHandle",
                sys::PFN_urEventGetNativeHandle
            ),
            queue_get_info: get!("urQueueGetInfo", sys::PFN_urQueueGetInfo),
            device_get_info: get!("urDeviceGetInfo", sys::PFN_urDeviceGetInfo),
            device_get_native_handle: get!(
                "urDeviceGetNativeHandle",
                sys::PFN_urDeviceGetNativeHandle
            ),
            device_get_global_timestamps: get!(
                "urDeviceGetGlobalTimestamps",
                sys::PFN_urDeviceGetGlobalTimestamps
            ),
            platform_get_info: get!("urPlatformGetInfo", sys::PFN_urPlatformGetInfo),
        })
    }
}

/// One adapter's event functions, for the events that carry its dispatch
/// table ([`crate::adapter_events`]).
#[derive(Clone, Copy)]
struct DirectEvents {
    /// The first word of each of the adapter's event handles.
    table: usize,
    get_info: sys::PFN_urEventGetInfo,
    get_profiling_info: sys::PFN_urEventGetProfilingInfo,
    retain: sys::PFN_urEventRetain,
    release: sys::PFN_urEventRelease,
}

/// The UR loader library, initialised, and the functions syclgraph calls.
///
/// Thread-safe: UR functions may be called from any thread.
pub struct UnifiedRuntime {
    fns: Fns,
    /// The built-in adapter's event functions, called directly for its
    /// events once [`UnifiedRuntime::call_adapter_directly`] set them.
    direct: OnceLock<DirectEvents>,
    /// What the library was opened as.
    path: OsString,
    // Keeps the code behind `fns` mapped; last field, dropped last.
    library: Arc<Library>,
}

impl fmt::Debug for UnifiedRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnifiedRuntime")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The UR loader opened and its functions looked up, not initialised yet
/// (see [`UnifiedRuntime::open_uninitialised`]).
pub struct Uninitialised {
    fns: Fns,
    path: OsString,
    library: Library,
}

impl Uninitialised {
    fn new(library: Library, path: OsString) -> Result<Self, LoadError> {
        let fns = Fns::load(|name| {
            // SAFETY: the symbol is only read as an address here; Fns::load
            // gives it its type.
            match unsafe { library.get::<*const c_void>(name.to_bytes_with_nul()) } {
                Ok(symbol) => *symbol,
                Err(_) => std::ptr::null(),
            }
        })
        .map_err(|symbol| LoadError::MissingSymbol {
            path: path.clone(),
            symbol,
        })?;
        Ok(Uninitialised { fns, path, library })
    }

    /// Calls `urLoaderInit(0, NULL)` on the loader.
    pub fn init(self) -> Result<UnifiedRuntime, LoadError> {
        // SAFETY: urLoaderInit(0, NULL) takes no pointer; 0 asks for every
        // device kind and NULL for the default configuration.
        let code = unsafe { (self.fns.loader_init)(0, std::ptr::null_mut()) };
        if !code.is_success() {
            return Err(LoadError::Init {
                path: self.path,
                code,
            });
        }
        Ok(UnifiedRuntime {
            fns: self.fns,
            direct: OnceLock::new(),
            path: self.path,
            library: Arc::new(self.library),
        })
    }
}

impl UnifiedRuntime {
    /// Finds, opens and initialises the UR loader.
    ///
    /// Tries, in order: (a) the plain name [`LOADER_SONAME`] (the dynamic
    /// linker's search: `LD_LIBRARY_PATH`, RUNPATHs, the system); (b) that
    /// name in the directory of every `libsycl.so*` already mapped into the
    /// process (read from `/proc/self/maps`). Then calls
    /// `urLoaderInit(0, NULL)` once on it.
    pub fn load() -> Result<Self, LoadError> {
        Self::open_uninitialised()?.init()
    }

    /// Finds and opens the UR loader as [`UnifiedRuntime::load`] does, and
    /// looks its functions up, without initialising it: what takes time
    /// (mapping and relocating the library), and can be done while the
    /// runtime's own loader starts. [`Uninitialised::init`] finishes.
    pub fn open_uninitialised() -> Result<Uninitialised, LoadError> {
        let mut tried = Vec::new();
        match Self::open(OsStr::new(LOADER_SONAME)) {
            Ok(library) => return Uninitialised::new(library, OsString::from(LOADER_SONAME)),
            Err(e) => tried.push((OsString::from(LOADER_SONAME), e.to_string())),
        }
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        for candidate in loader_candidates_beside_sycl(&maps) {
            match Self::open(candidate.as_os_str()) {
                Ok(library) => return Uninitialised::new(library, candidate.into_os_string()),
                Err(e) => tried.push((candidate.into_os_string(), e.to_string())),
            }
        }
        Err(LoadError::NotFound { tried })
    }

    /// Opens and initialises the UR loader at `path` (a file name or path, as
    /// `dlopen` takes it).
    pub fn load_from(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        let path = path.as_ref().as_os_str();
        let library = Self::open(path).map_err(|e| LoadError::NotFound {
            tried: vec![(path.to_os_string(), e.to_string())],
        })?;
        Uninitialised::new(library, path.to_os_string())?.init()
    }

    fn open(name: &OsStr) -> Result<Library, libloading::Error> {
        // RTLD_NOW: a broken library fails here, not at the first call.
        let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
        // SAFETY: opening the UR loader runs its static initialisers, which
        // only set up its own state (no UR call is made until urLoaderInit);
        // this is what libsycl and any UR application do.
        unsafe { libloading::os::unix::Library::open(Some(name), flags) }.map(Library::from)
    }

    /// What the library was opened as (a file name or a path).
    pub fn path(&self) -> &OsStr {
        &self.path
    }

    /// The opened library, for looking up functions this type does not wrap.
    pub fn library(&self) -> &Arc<Library> {
        &self.library
    }

    /// From now on, calls the event functions of `adapter` directly for
    /// the events that carry its dispatch table, instead of through the
    /// loader (which would call the same functions after two layers of its
    /// own). Later calls do nothing.
    ///
    /// # Safety
    /// `adapter` must name the functions an event whose first word is
    /// `adapter.table` is dispatched to (what
    /// [`crate::adapter_events::find_built_in_adapter_events`] checks), with
    /// the prototypes of `urEventGetInfo`, `urEventGetProfilingInfo`,
    /// `urEventRetain` and `urEventRelease`, and their code must stay mapped
    /// while this runtime is used (the runtime library's adapter: it is,
    /// until the runtime tears down, after which no call may be made).
    pub unsafe fn call_adapter_directly(&self, adapter: crate::adapter_events::AdapterEvents) {
        let function = |address: usize| address as *const c_void;
        // SAFETY: the caller's contract: each address is the function of
        // that UR name, whose prototype the PFN type declares.
        let direct = unsafe {
            DirectEvents {
                table: adapter.table,
                get_info: std::mem::transmute::<*const c_void, sys::PFN_urEventGetInfo>(function(
                    adapter.get_info,
                )),
                get_profiling_info: std::mem::transmute::<
                    *const c_void,
                    sys::PFN_urEventGetProfilingInfo,
                >(function(adapter.get_profiling_info)),
                retain: std::mem::transmute::<*const c_void, sys::PFN_urEventRetain>(function(
                    adapter.retain,
                )),
                release: std::mem::transmute::<*const c_void, sys::PFN_urEventRelease>(function(
                    adapter.release,
                )),
            }
        };
        let _ = self.direct.set(direct);
    }

    /// True once [`UnifiedRuntime::call_adapter_directly`] was called.
    pub fn calls_adapter_directly(&self) -> bool {
        self.direct.get().is_some()
    }

    /// The adapter functions for the live event `h`, when it carries the
    /// table of the adapter called directly.
    #[inline]
    fn direct_for(&self, h: sys::ur_event_handle_t) -> Option<&DirectEvents> {
        let direct = self.direct.get()?;
        // SAFETY: `h` is a non-null, live event handle (module contract): a
        // C++ object at least one word long, whose first word is read.
        let first_word = unsafe { (h as *const usize).read() };
        (first_word == direct.table).then_some(direct)
    }

    /// `urEventRetain`.
    pub fn event_retain(&self, event: UrEvent) -> Result<(), UrError> {
        let h = non_null("urEventRetain", event.0)? as sys::ur_event_handle_t;
        let f = self
            .direct_for(h)
            .map_or(self.fns.event_retain, |d| d.retain);
        // SAFETY: `h` is a live event handle (module contract).
        check("urEventRetain", unsafe { f(h) })
    }

    /// `urEventRelease`.
    pub fn event_release(&self, event: UrEvent) -> Result<(), UrError> {
        let h = non_null("urEventRelease", event.0)? as sys::ur_event_handle_t;
        let f = self
            .direct_for(h)
            .map_or(self.fns.event_release, |d| d.release);
        // SAFETY: `h` is a live event handle the caller holds a reference on
        // (module contract).
        check("urEventRelease", unsafe { f(h) })
    }

    /// `urEventGetInfo(UR_EVENT_INFO_COMMAND_EXECUTION_STATUS)`.
    pub fn event_status(&self, event: UrEvent) -> Result<EventStatus, UrError> {
        let raw: u32 = self.event_info(event, sys::ur_event_info_t::COMMAND_EXECUTION_STATUS)?;
        Ok(EventStatus::from(sys::ur_event_status_t(raw)))
    }

    /// `urEventGetInfo(UR_EVENT_INFO_COMMAND_QUEUE)`: the queue the command
    /// was enqueued to.
    pub fn event_queue(&self, event: UrEvent) -> Result<UrQueue, UrError> {
        let raw: usize = self.event_info(event, sys::ur_event_info_t::COMMAND_QUEUE)?;
        non_null("urEventGetInfo", raw)?;
        Ok(UrQueue(raw))
    }

    /// `urEventGetProfilingInfo`: a device time in ns. Fails with
    /// [`UrError::is_profiling_not_available`] when the queue was created
    /// without profiling.
    pub fn event_profiling(&self, event: UrEvent, what: ProfilingInfo) -> Result<u64, UrError> {
        const F: &str = "urEventGetProfilingInfo";
        let h = non_null(F, event.0)? as sys::ur_event_handle_t;
        let f = self
            .direct_for(h)
            .map_or(self.fns.event_get_profiling_info, |d| d.get_profiling_info);
        let mut value = 0u64;
        // SAFETY: `h` is a live event handle (module contract); every
        // profiling query's value is a uint64_t and `value` is one, writable,
        // with its size passed.
        let code = unsafe {
            f(
                h,
                what.raw(),
                std::mem::size_of::<u64>(),
                (&mut value as *mut u64).cast(),
                std::ptr::null_mut(),
            )
        };
        check(F, code).map(|()| value)
    }

    /// `urEventGetNativeHandle`.
    pub fn event_native_handle(&self, event: UrEvent) -> Result<NativeHandle, UrError> {
        const F: &str = "urEventGetNativeHandle";
        let h = non_null(F, event.0)? as sys::ur_event_handle_t;
        let mut native: sys::ur_native_handle_t = 0;
        // SAFETY: `h` is a live event handle (module contract); `native` is a
        // writable ur_native_handle_t.
        let code = unsafe { (self.fns.event_get_native_handle)(h, &mut native) };
        check(F, code).map(|()| NativeHandle(native))
    }

    /// `urQueueGetInfo(UR_QUEUE_INFO_DEVICE)`.
    pub fn queue_device(&self, queue: UrQueue) -> Result<UrDevice, UrError> {
        let raw: usize = self.queue_info(queue, sys::ur_queue_info_t::DEVICE)?;
        non_null("urQueueGetInfo", raw)?;
        Ok(UrDevice(raw))
    }

    /// `urQueueGetInfo(UR_QUEUE_INFO_FLAGS)`.
    pub fn queue_flags(&self, queue: UrQueue) -> Result<QueueFlags, UrError> {
        let raw: u32 = self.queue_info(queue, sys::ur_queue_info_t::FLAGS)?;
        Ok(QueueFlags(raw))
    }

    /// `urDeviceGetInfo` of a query whose value is a handle (0: null).
    fn device_info_handle(
        &self,
        device: UrDevice,
        query: sys::ur_device_info_t,
    ) -> Result<usize, UrError> {
        const F: &str = "urDeviceGetInfo";
        let h = non_null(F, device.0)? as sys::ur_device_handle_t;
        let mut value: *mut c_void = std::ptr::null_mut();
        // SAFETY: `h` is a live device handle (module contract); the
        // queries passed here (PLATFORM, PARENT_DEVICE) have a handle, a
        // pointer, as their value and `value` is one, writable, with its
        // size passed.
        let code = unsafe {
            (self.fns.device_get_info)(
                h,
                query,
                std::mem::size_of_val(&value),
                (&mut value as *mut *mut c_void).cast(),
                std::ptr::null_mut(),
            )
        };
        check(F, code).map(|()| value as usize)
    }

    /// `urDeviceGetInfo(UR_DEVICE_INFO_PLATFORM)`.
    pub fn device_platform(&self, device: UrDevice) -> Result<UrPlatform, UrError> {
        let value = self.device_info_handle(device, sys::ur_device_info_t::PLATFORM)?;
        non_null("urDeviceGetInfo", value).map(UrPlatform)
    }

    /// `urDeviceGetInfo(UR_DEVICE_INFO_PARENT_DEVICE)`: the device a
    /// sub-device was partitioned from; `None` for a root device.
    pub fn device_parent(&self, device: UrDevice) -> Result<Option<UrDevice>, UrError> {
        let value = self.device_info_handle(device, sys::ur_device_info_t::PARENT_DEVICE)?;
        Ok((value != 0).then_some(UrDevice(value)))
    }

    /// `urDeviceGetNativeHandle`.
    pub fn device_native_handle(&self, device: UrDevice) -> Result<NativeHandle, UrError> {
        const F: &str = "urDeviceGetNativeHandle";
        let h = non_null(F, device.0)? as sys::ur_device_handle_t;
        let mut native: sys::ur_native_handle_t = 0;
        // SAFETY: `h` is a live device handle (module contract); `native` is
        // a writable ur_native_handle_t.
        let code = unsafe { (self.fns.device_get_native_handle)(h, &mut native) };
        check(F, code).map(|()| NativeHandle(native))
    }

    /// `urDeviceGetGlobalTimestamps`: `(device_ns, host_ns)` read together.
    ///
    /// Which clock the host value is on is the adapter's choice: Intel's
    /// OpenCL CPU device reads `CLOCK_MONOTONIC` for both (observed); the
    /// [`crate::ur_source`] conversion checks it each time.
    pub fn device_global_timestamps(&self, device: UrDevice) -> Result<(u64, u64), UrError> {
        const F: &str = "urDeviceGetGlobalTimestamps";
        let h = non_null(F, device.0)? as sys::ur_device_handle_t;
        let (mut device_ns, mut host_ns) = (0u64, 0u64);
        // SAFETY: `h` is a live device handle (module contract); both
        // out-pointers are writable u64s.
        let code =
            unsafe { (self.fns.device_get_global_timestamps)(h, &mut device_ns, &mut host_ns) };
        check(F, code).map(|()| (device_ns, host_ns))
    }

    /// `urPlatformGetInfo(UR_PLATFORM_INFO_BACKEND)`.
    pub fn platform_backend(&self, platform: UrPlatform) -> Result<Backend, UrError> {
        const F: &str = "urPlatformGetInfo";
        let h = non_null(F, platform.0)? as sys::ur_platform_handle_t;
        let mut value = Backend::UNKNOWN;
        // SAFETY: `h` is a live platform handle (module contract); the
        // BACKEND query's value is a ur_backend_t (a 4-byte enum) and `value`
        // is a writable #[repr(transparent)] u32, with its size passed.
        let code = unsafe {
            (self.fns.platform_get_info)(
                h,
                sys::ur_platform_info_t::BACKEND,
                std::mem::size_of::<Backend>(),
                (&mut value as *mut Backend).cast(),
                std::ptr::null_mut(),
            )
        };
        check(F, code).map(|()| value)
    }

    /// `urEventGetInfo` for a query whose value is a `T` (a handle as
    /// `usize`, or a 4-byte enum as `u32`).
    fn event_info<T: InfoValue>(
        &self,
        event: UrEvent,
        what: sys::ur_event_info_t,
    ) -> Result<T, UrError> {
        const F: &str = "urEventGetInfo";
        let h = non_null(F, event.0)? as sys::ur_event_handle_t;
        let f = self
            .direct_for(h)
            .map_or(self.fns.event_get_info, |d| d.get_info);
        let mut value = T::default();
        // SAFETY: `h` is a live event handle (module contract); callers pass
        // queries whose value has T's size (COMMAND_QUEUE: a handle, usize;
        // COMMAND_EXECUTION_STATUS: an enum, u32); `value` is writable and
        // its size is passed, so the adapter writes at most that much.
        let code = unsafe {
            f(
                h,
                what,
                std::mem::size_of::<T>(),
                (&mut value as *mut T).cast(),
                std::ptr::null_mut(),
            )
        };
        check(F, code).map(|()| value)
    }

    /// `urQueueGetInfo` for a query whose value is a `T` (see `event_info`).
    fn queue_info<T: InfoValue>(
        &self,
        queue: UrQueue,
        what: sys::ur_queue_info_t,
    ) -> Result<T, UrError> {
        const F: &str = "urQueueGetInfo";
        let h = non_null(F, queue.0)? as sys::ur_queue_handle_t;
        let mut value = T::default();
        // SAFETY: `h` is a live queue handle (module contract); callers pass
        // queries whose value has T's size (DEVICE: a handle, usize; FLAGS:
        // a uint32_t bit field, u32); `value` is writable and its size passed.
        let code = unsafe {
            (self.fns.queue_get_info)(
                h,
                what,
                std::mem::size_of::<T>(),
                (&mut value as *mut T).cast(),
                std::ptr::null_mut(),
            )
        };
        check(F, code).map(|()| value)
    }
}

/// Plain integer types an info query may write (any bit pattern is valid).
trait InfoValue: Default + Copy {}
impl InfoValue for u32 {}
impl InfoValue for usize {}

fn check(function: &'static str, code: sys::ur_result_t) -> Result<(), UrError> {
    if code.is_success() {
        Ok(())
    } else {
        Err(UrError { function, code })
    }
}

/// The handle if not null, else `UR_RESULT_ERROR_INVALID_NULL_HANDLE` (without
/// calling UR: adapters dereference handles unchecked).
fn non_null(function: &'static str, handle: usize) -> Result<usize, UrError> {
    if handle == 0 {
        Err(UrError {
            function,
            code: sys::ur_result_t::ERROR_INVALID_NULL_HANDLE,
        })
    } else {
        Ok(handle)
    }
}

/// Directories of the `libsycl.so*` (and `libsycl-preview.so*`) libraries
/// mapped into a process, from the text of its `/proc/<pid>/maps`, in order of
/// first appearance, without repeats.
pub fn sycl_library_dirs(maps: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for mapping in crate::maps::mappings(maps) {
        let rest = mapping.path;
        if !rest.starts_with('/') || rest.ends_with(" (deleted)") {
            continue;
        }
        let path = Path::new(OsStr::from_bytes(rest.as_bytes()));
        let Some(name) = path.file_name().and_then(OsStr::to_str) else {
            continue;
        };
        if !(name.starts_with("libsycl.so") || name.starts_with("libsycl-preview.so")) {
            continue;
        }
        if let Some(dir) = path.parent() {
            if !dirs.iter().any(|d| d == dir) {
                dirs.push(dir.to_path_buf());
            }
        }
    }
    dirs
}

/// `<dir>/libur_loader.so.0` for every directory of [`sycl_library_dirs`].
pub fn loader_candidates_beside_sycl(maps: &str) -> Vec<PathBuf> {
    sycl_library_dirs(maps)
        .into_iter()
        .map(|dir| dir.join(LOADER_SONAME))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 00:2a 123 /usr/bin/python3.11
7f0000000000-7f0000100000 r--p 00000000 00:2a 456 /opt/my venv/lib/libsycl.so.9.0.0
7f0000100000-7f0000200000 r-xp 00100000 00:2a 456 /opt/my venv/lib/libsycl.so.9.0.0
7f0000300000-7f0000400000 r--p 00000000 00:2a 789 /work/.venv/lib/libsycl-preview.so.9
7f0000400000-7f0000500000 r--p 00000000 00:2a 790 /old/lib/libsycl.so.8 (deleted)
7f0000500000-7f0000600000 r--p 00000000 00:2a 791 /work/.venv/lib/libsycl_ur_trace_collector.so
7f0000600000-7f0000601000 rw-p 00000000 00:00 0 
7f0000700000-7f0000701000 rw-p 00000000 00:00 0 [heap]
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0 [vdso]
";

    #[test]
    fn finds_sycl_dirs_in_maps() {
        assert_eq!(
            sycl_library_dirs(MAPS),
            vec![
                PathBuf::from("/opt/my venv/lib"),
                PathBuf::from("/work/.venv/lib")
            ]
        );
    }

    #[test]
    fn candidates_are_the_loader_beside_sycl() {
        assert_eq!(
            loader_candidates_beside_sycl(MAPS),
            vec![
                PathBuf::from("/opt/my venv/lib/libur_loader.so.0"),
                PathBuf::from("/work/.venv/lib/libur_loader.so.0")
            ]
        );
        assert!(loader_candidates_beside_sycl("").is_empty());
        assert!(loader_candidates_beside_sycl("garbage\n\n  \n").is_empty());
    }

    #[test]
    fn this_process_maps_parse_without_sycl() {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        assert!(sycl_library_dirs(&maps).is_empty());
    }

    #[test]
    fn fn_table_reports_the_first_missing_symbol() {
        let mut asked = Vec::new();
        let result = Fns::load(|name| {
            asked.push(name.to_str().unwrap().to_owned());
            if name.to_bytes() == b"urEventGetInfo" {
                std::ptr::null()
            } else {
                // Never called: the table is dropped on the error.
                check as *const c_void
            }
        });
        assert_eq!(result.err(), Some("urEventGetInfo"));
        assert_eq!(
            asked,
            [
                "urLoaderInit",
                "urEventRetain",
                "urEventRelease",
                "urEventGetInfo"
            ]
        );
    }

    #[test]
    fn missing_library_is_an_error_not_a_panic() {
        let err = UnifiedRuntime::load_from("/nonexistent/libur_loader.so.0").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, LoadError::NotFound { .. }), "{text}");
        assert!(text.contains("/nonexistent/libur_loader.so.0"), "{text}");
    }

    #[test]
    fn a_library_without_ur_is_reported_by_symbol() {
        // libc is mapped in every test process and has no UR symbol.
        let err = UnifiedRuntime::load_from("libc.so.6").unwrap_err();
        assert!(
            matches!(
                err,
                LoadError::MissingSymbol {
                    symbol: "urLoaderInit",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn errors_name_function_and_code() {
        let e = UrError {
            function: "urEventGetProfilingInfo",
            code: sys::ur_result_t::ERROR_PROFILING_INFO_NOT_AVAILABLE,
        };
        assert!(e.is_profiling_not_available());
        assert!(!e.is_uninitialized());
        assert_eq!(
            e.to_string(),
            "urEventGetProfilingInfo returned UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE(17)"
        );
        assert_eq!(
            non_null("urEventRetain", 0).unwrap_err().code,
            sys::ur_result_t::ERROR_INVALID_NULL_HANDLE
        );
    }

    #[test]
    fn status_mapping() {
        use sys::ur_event_status_t as S;
        assert_eq!(EventStatus::from(S::COMPLETE), EventStatus::Complete);
        assert_eq!(EventStatus::from(S::RUNNING), EventStatus::Running);
        assert_eq!(EventStatus::from(S::SUBMITTED), EventStatus::Submitted);
        assert_eq!(EventStatus::from(S::QUEUED), EventStatus::Queued);
        assert_eq!(EventStatus::from(S::ERROR), EventStatus::Error);
        assert_eq!(EventStatus::from(S(77)), EventStatus::Other(77));
        assert_eq!(
            ProfilingInfo::Start.raw(),
            sys::ur_profiling_info_t::COMMAND_START
        );
        assert_eq!(ProfilingInfo::End.raw().0, 3);
    }
}
