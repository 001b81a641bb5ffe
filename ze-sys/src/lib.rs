//! Raw, hand-written declarations for the small part of Level Zero
//! (`ze_api.h`, `ze_ddi.h`) that syclgraph uses.
//!
//! Everything here mirrors the C headers of the Level Zero loader 1.8.12
//! (API version 1.4, Debian `libze-dev`) field for field; the layout tests at
//! the bottom hold sizes and offsets measured with a C program compiled
//! against those headers.
//!
//! - Status codes and enumerations are `#[repr(transparent)]` newtypes over
//!   `u32` with associated constants, so that an unknown value coming from a
//!   newer driver is a value, not undefined behaviour.
//! - Handles are pointers to opaque structs.
//! - `PFN_*`-style function pointer types (`ze_pfnInit_t`, …) describe both the
//!   loader's exported entry points (looked up with `dlsym`) and the fields of
//!   the DDI tables a driver fills in for the loader.
//! - DDI table fields are `Option<fn>`: a driver leaves what it does not
//!   implement as null, and the loader checks for null before calling.
//!
//! [`host`] holds the one non-Level-Zero declaration the bridge needs:
//! `clock_gettime`, to relate the driver's host clock to `CLOCK_MONOTONIC`.
#![allow(non_camel_case_types, non_snake_case)]
#![warn(missing_docs)]

use std::ffi::{c_char, c_void};
use std::fmt;

pub mod host;

// ---------------------------------------------------------------------------
// Status codes
// ---------------------------------------------------------------------------

/// `ze_result_t`: the status every Level Zero call returns.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ze_result_t(pub u32);

impl ze_result_t {
    /// `ZE_RESULT_SUCCESS`.
    pub const SUCCESS: Self = Self(0);
    /// `ZE_RESULT_NOT_READY`: synchronization primitive not signaled.
    pub const NOT_READY: Self = Self(1);
    /// `ZE_RESULT_ERROR_DEVICE_LOST`.
    pub const ERROR_DEVICE_LOST: Self = Self(0x7000_0001);
    /// `ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY`.
    pub const ERROR_OUT_OF_HOST_MEMORY: Self = Self(0x7000_0002);
    /// `ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`.
    pub const ERROR_OUT_OF_DEVICE_MEMORY: Self = Self(0x7000_0003);
    /// `ZE_RESULT_ERROR_UNINITIALIZED`: the driver is not initialized.
    pub const ERROR_UNINITIALIZED: Self = Self(0x7800_0001);
    /// `ZE_RESULT_ERROR_UNSUPPORTED_VERSION`.
    pub const ERROR_UNSUPPORTED_VERSION: Self = Self(0x7800_0002);
    /// `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.
    pub const ERROR_UNSUPPORTED_FEATURE: Self = Self(0x7800_0003);
    /// `ZE_RESULT_ERROR_INVALID_ARGUMENT`.
    pub const ERROR_INVALID_ARGUMENT: Self = Self(0x7800_0004);
    /// `ZE_RESULT_ERROR_INVALID_NULL_HANDLE`.
    pub const ERROR_INVALID_NULL_HANDLE: Self = Self(0x7800_0005);
    /// `ZE_RESULT_ERROR_INVALID_NULL_POINTER`.
    pub const ERROR_INVALID_NULL_POINTER: Self = Self(0x7800_0007);
    /// `ZE_RESULT_ERROR_INVALID_SIZE`.
    pub const ERROR_INVALID_SIZE: Self = Self(0x7800_0008);
    /// `ZE_RESULT_ERROR_INVALID_ENUMERATION`.
    pub const ERROR_INVALID_ENUMERATION: Self = Self(0x7800_000c);
    /// `ZE_RESULT_ERROR_UNKNOWN`.
    pub const ERROR_UNKNOWN: Self = Self(0x7fff_fffe);

    /// The constant's name without the `ZE_RESULT_` prefix, if known.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::SUCCESS => "SUCCESS",
            Self::NOT_READY => "NOT_READY",
            Self::ERROR_DEVICE_LOST => "ERROR_DEVICE_LOST",
            Self::ERROR_OUT_OF_HOST_MEMORY => "ERROR_OUT_OF_HOST_MEMORY",
            Self::ERROR_OUT_OF_DEVICE_MEMORY => "ERROR_OUT_OF_DEVICE_MEMORY",
            Self::ERROR_UNINITIALIZED => "ERROR_UNINITIALIZED",
            Self::ERROR_UNSUPPORTED_VERSION => "ERROR_UNSUPPORTED_VERSION",
            Self::ERROR_UNSUPPORTED_FEATURE => "ERROR_UNSUPPORTED_FEATURE",
            Self::ERROR_INVALID_ARGUMENT => "ERROR_INVALID_ARGUMENT",
            Self::ERROR_INVALID_NULL_HANDLE => "ERROR_INVALID_NULL_HANDLE",
            Self::ERROR_INVALID_NULL_POINTER => "ERROR_INVALID_NULL_POINTER",
            Self::ERROR_INVALID_SIZE => "ERROR_INVALID_SIZE",
            Self::ERROR_INVALID_ENUMERATION => "ERROR_INVALID_ENUMERATION",
            Self::ERROR_UNKNOWN => "ERROR_UNKNOWN",
            _ => return None,
        })
    }
}

impl fmt::Debug for ze_result_t {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "ZE_RESULT_{name}"),
            None => write!(f, "ze_result_t({:#x})", self.0),
        }
    }
}

impl fmt::Display for ze_result_t {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

// ---------------------------------------------------------------------------
// Enumerations and flags
// ---------------------------------------------------------------------------

/// `ze_structure_type_t`: the `stype` tag at the start of extensible structs.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ze_structure_type_t(pub u32);

impl ze_structure_type_t {
    /// `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES`: `timerResolution` in ns per cycle.
    pub const DEVICE_PROPERTIES: Self = Self(0x3);
    /// `ZE_STRUCTURE_TYPE_CONTEXT_DESC`.
    pub const CONTEXT_DESC: Self = Self(0xd);
    /// `ZE_STRUCTURE_TYPE_EVENT_POOL_DESC`.
    pub const EVENT_POOL_DESC: Self = Self(0x10);
    /// `ZE_STRUCTURE_TYPE_EVENT_DESC`.
    pub const EVENT_DESC: Self = Self(0x11);
    /// `ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2`: `timerResolution` in cycles/s.
    pub const DEVICE_PROPERTIES_1_2: Self = Self(0x0002_0006);
}

/// `ze_api_version_t`: `(major << 16) | minor`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ze_api_version_t(pub u32);

impl ze_api_version_t {
    /// `ZE_API_VERSION_1_0`.
    pub const V1_0: Self = Self(0x0001_0000);
    /// `ZE_API_VERSION_1_2`: the version that redefined `timerResolution`.
    pub const V1_2: Self = Self(0x0001_0002);
    /// `ZE_API_VERSION_1_4`: `ZE_API_VERSION_CURRENT` of the 1.8.12 headers.
    pub const V1_4: Self = Self(0x0001_0004);
    /// The version these declarations describe (`ZE_API_VERSION_CURRENT`).
    pub const CURRENT: Self = Self::V1_4;

    /// The major version.
    pub fn major(self) -> u32 {
        self.0 >> 16
    }

    /// The minor version.
    pub fn minor(self) -> u32 {
        self.0 & 0xffff
    }
}

/// `ze_init_flags_t`: flags for `zeInit`.
pub type ze_init_flags_t = u32;
/// `ZE_INIT_FLAG_GPU_ONLY`.
pub const ZE_INIT_FLAG_GPU_ONLY: ze_init_flags_t = 1 << 0;
/// `ZE_INIT_FLAG_VPU_ONLY`.
pub const ZE_INIT_FLAG_VPU_ONLY: ze_init_flags_t = 1 << 1;

/// `ze_device_type_t`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ze_device_type_t(pub u32);

impl ze_device_type_t {
    /// `ZE_DEVICE_TYPE_GPU`.
    pub const GPU: Self = Self(1);
}

/// `ze_device_property_flags_t`.
pub type ze_device_property_flags_t = u32;
/// `ze_context_flags_t`.
pub type ze_context_flags_t = u32;
/// `ze_event_pool_flags_t`.
pub type ze_event_pool_flags_t = u32;
/// `ZE_EVENT_POOL_FLAG_HOST_VISIBLE`.
pub const ZE_EVENT_POOL_FLAG_HOST_VISIBLE: ze_event_pool_flags_t = 1 << 0;
/// `ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP`: events carry kernel timestamps.
pub const ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: ze_event_pool_flags_t = 1 << 2;
/// `ze_event_scope_flags_t`.
pub type ze_event_scope_flags_t = u32;
/// `ZE_EVENT_SCOPE_FLAG_HOST`.
pub const ZE_EVENT_SCOPE_FLAG_HOST: ze_event_scope_flags_t = 1 << 2;

/// `ZE_MAX_DEVICE_UUID_SIZE`.
pub const ZE_MAX_DEVICE_UUID_SIZE: usize = 16;
/// `ZE_MAX_DEVICE_NAME`.
pub const ZE_MAX_DEVICE_NAME: usize = 256;

// ---------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------

macro_rules! handles {
    ($($(#[$doc:meta])* $handle:ident => $opaque:ident;)*) => {$(
        #[doc(hidden)]
        #[repr(C)]
        pub struct $opaque {
            _private: [u8; 0],
        }
        $(#[$doc])*
        pub type $handle = *mut $opaque;
    )*};
}

handles! {
    /// `ze_driver_handle_t`.
    ze_driver_handle_t => _ze_driver_handle_t;
    /// `ze_device_handle_t`.
    ze_device_handle_t => _ze_device_handle_t;
    /// `ze_context_handle_t`.
    ze_context_handle_t => _ze_context_handle_t;
    /// `ze_event_pool_handle_t`.
    ze_event_pool_handle_t => _ze_event_pool_handle_t;
    /// `ze_event_handle_t`.
    ze_event_handle_t => _ze_event_handle_t;
}

// ---------------------------------------------------------------------------
// Structures
// ---------------------------------------------------------------------------

/// `ze_device_uuid_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_device_uuid_t {
    /// Opaque bytes.
    pub id: [u8; ZE_MAX_DEVICE_UUID_SIZE],
}

/// `ze_device_properties_t`, filled by `zeDeviceGetProperties`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ze_device_properties_t {
    /// `DEVICE_PROPERTIES` or `DEVICE_PROPERTIES_1_2` (changes `timerResolution`).
    pub stype: ze_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *mut c_void,
    /// Generic device type.
    pub type_: ze_device_type_t,
    /// PCI vendor id.
    pub vendorId: u32,
    /// PCI device id.
    pub deviceId: u32,
    /// `ze_device_property_flag_t` bits.
    pub flags: ze_device_property_flags_t,
    /// Sub-device id, if a sub-device.
    pub subdeviceId: u32,
    /// Core clock rate.
    pub coreClockRate: u32,
    /// Maximum allocation size.
    pub maxMemAllocSize: u64,
    /// Maximum number of logical hardware contexts.
    pub maxHardwareContexts: u32,
    /// Maximum command queue priority.
    pub maxCommandQueuePriority: u32,
    /// Threads per EU.
    pub numThreadsPerEU: u32,
    /// Physical EU SIMD width.
    pub physicalEUSimdWidth: u32,
    /// EUs per sub-slice.
    pub numEUsPerSubslice: u32,
    /// Sub-slices per slice.
    pub numSubslicesPerSlice: u32,
    /// Slices.
    pub numSlices: u32,
    /// Timer resolution: ns per cycle with `stype == DEVICE_PROPERTIES`,
    /// cycles per second with `stype == DEVICE_PROPERTIES_1_2`.
    pub timerResolution: u64,
    /// Valid bits of the device timestamp of `zeDeviceGetGlobalTimestamps`.
    pub timestampValidBits: u32,
    /// Valid bits of kernel timestamps (`zeEventQueryKernelTimestamp`).
    pub kernelTimestampValidBits: u32,
    /// Device UUID.
    pub uuid: ze_device_uuid_t,
    /// NUL-terminated device name.
    pub name: [c_char; ZE_MAX_DEVICE_NAME],
}

impl ze_device_properties_t {
    /// A zeroed struct with the given `stype` and no extension chain, ready to
    /// be passed to `zeDeviceGetProperties`.
    pub fn new(stype: ze_structure_type_t) -> Self {
        Self {
            stype,
            pNext: std::ptr::null_mut(),
            type_: ze_device_type_t(0),
            vendorId: 0,
            deviceId: 0,
            flags: 0,
            subdeviceId: 0,
            coreClockRate: 0,
            maxMemAllocSize: 0,
            maxHardwareContexts: 0,
            maxCommandQueuePriority: 0,
            numThreadsPerEU: 0,
            physicalEUSimdWidth: 0,
            numEUsPerSubslice: 0,
            numSubslicesPerSlice: 0,
            numSlices: 0,
            timerResolution: 0,
            timestampValidBits: 0,
            kernelTimestampValidBits: 0,
            uuid: ze_device_uuid_t::default(),
            name: [0; ZE_MAX_DEVICE_NAME],
        }
    }
}

/// `ze_kernel_timestamp_data_t`: start and end in device ticks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_kernel_timestamp_data_t {
    /// Device clock at kernel start.
    pub kernelStart: u64,
    /// Device clock at kernel end.
    pub kernelEnd: u64,
}

/// `ze_kernel_timestamp_result_t`, filled by `zeEventQueryKernelTimestamp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ze_kernel_timestamp_result_t {
    /// Wall-clock data.
    pub global: ze_kernel_timestamp_data_t,
    /// Context-active data (only clocks while the context was executing).
    pub context: ze_kernel_timestamp_data_t,
}

/// `ze_context_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_context_desc_t {
    /// `CONTEXT_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *const c_void,
    /// Creation flags.
    pub flags: ze_context_flags_t,
}

/// `ze_event_pool_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_pool_desc_t {
    /// `EVENT_POOL_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *const c_void,
    /// `ZE_EVENT_POOL_FLAG_*` bits.
    pub flags: ze_event_pool_flags_t,
    /// Number of events in the pool.
    pub count: u32,
}

/// `ze_event_desc_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ze_event_desc_t {
    /// `EVENT_DESC`.
    pub stype: ze_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *const c_void,
    /// Index of the event within its pool.
    pub index: u32,
    /// Cache flush scope on signal.
    pub signal: ze_event_scope_flags_t,
    /// Cache invalidation scope on wait.
    pub wait: ze_event_scope_flags_t,
}

// ---------------------------------------------------------------------------
// Function pointer types
// ---------------------------------------------------------------------------

/// `zeInit`.
pub type ze_pfnInit_t = unsafe extern "C" fn(flags: ze_init_flags_t) -> ze_result_t;
/// `zeDriverGet`.
pub type ze_pfnDriverGet_t =
    unsafe extern "C" fn(pCount: *mut u32, phDrivers: *mut ze_driver_handle_t) -> ze_result_t;
/// `zeDeviceGet`.
pub type ze_pfnDeviceGet_t = unsafe extern "C" fn(
    hDriver: ze_driver_handle_t,
    pCount: *mut u32,
    phDevices: *mut ze_device_handle_t,
) -> ze_result_t;
/// `zeDeviceGetProperties`.
pub type ze_pfnDeviceGetProperties_t = unsafe extern "C" fn(
    hDevice: ze_device_handle_t,
    pDeviceProperties: *mut ze_device_properties_t,
) -> ze_result_t;
/// `zeDeviceGetGlobalTimestamps`: host ns and device ticks taken together.
pub type ze_pfnDeviceGetGlobalTimestamps_t = unsafe extern "C" fn(
    hDevice: ze_device_handle_t,
    hostTimestamp: *mut u64,
    deviceTimestamp: *mut u64,
) -> ze_result_t;
/// `zeContextCreate`.
pub type ze_pfnContextCreate_t = unsafe extern "C" fn(
    hDriver: ze_driver_handle_t,
    desc: *const ze_context_desc_t,
    phContext: *mut ze_context_handle_t,
) -> ze_result_t;
/// `zeContextDestroy`.
pub type ze_pfnContextDestroy_t =
    unsafe extern "C" fn(hContext: ze_context_handle_t) -> ze_result_t;
/// `zeEventPoolCreate`.
pub type ze_pfnEventPoolCreate_t = unsafe extern "C" fn(
    hContext: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    numDevices: u32,
    phDevices: *mut ze_device_handle_t,
    phEventPool: *mut ze_event_pool_handle_t,
) -> ze_result_t;
/// `zeEventPoolDestroy`.
pub type ze_pfnEventPoolDestroy_t =
    unsafe extern "C" fn(hEventPool: ze_event_pool_handle_t) -> ze_result_t;
/// `zeEventCreate`.
pub type ze_pfnEventCreate_t = unsafe extern "C" fn(
    hEventPool: ze_event_pool_handle_t,
    desc: *const ze_event_desc_t,
    phEvent: *mut ze_event_handle_t,
) -> ze_result_t;
/// `zeEventDestroy`.
pub type ze_pfnEventDestroy_t = unsafe extern "C" fn(hEvent: ze_event_handle_t) -> ze_result_t;
/// `zeEventQueryStatus`: `SUCCESS` once signaled, `NOT_READY` before.
pub type ze_pfnEventQueryStatus_t = unsafe extern "C" fn(hEvent: ze_event_handle_t) -> ze_result_t;
/// `zeEventQueryKernelTimestamp`: `NOT_READY` until the event is signaled.
pub type ze_pfnEventQueryKernelTimestamp_t = unsafe extern "C" fn(
    hEvent: ze_event_handle_t,
    dstptr: *mut ze_kernel_timestamp_result_t,
) -> ze_result_t;

/// Placeholder for a DDI table slot syclgraph never calls: only its size and
/// nullability matter.
pub type ze_pfnUnused_t = unsafe extern "C" fn();

// ---------------------------------------------------------------------------
// DDI tables (ze_ddi.h of loader 1.8.12), in header order
// ---------------------------------------------------------------------------

/// `ze_global_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_global_dditable_t {
    /// `zeInit`.
    pub pfnInit: Option<ze_pfnInit_t>,
}

/// `ze_driver_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_driver_dditable_t {
    /// `zeDriverGet`.
    pub pfnGet: Option<ze_pfnDriverGet_t>,
    /// `zeDriverGetApiVersion` (unused).
    pub pfnGetApiVersion: Option<ze_pfnUnused_t>,
    /// `zeDriverGetProperties` (unused).
    pub pfnGetProperties: Option<ze_pfnUnused_t>,
    /// `zeDriverGetIpcProperties` (unused).
    pub pfnGetIpcProperties: Option<ze_pfnUnused_t>,
    /// `zeDriverGetExtensionProperties` (unused).
    pub pfnGetExtensionProperties: Option<ze_pfnUnused_t>,
    /// `zeDriverGetExtensionFunctionAddress` (unused).
    pub pfnGetExtensionFunctionAddress: Option<ze_pfnUnused_t>,
}

/// `ze_device_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_device_dditable_t {
    /// `zeDeviceGet`.
    pub pfnGet: Option<ze_pfnDeviceGet_t>,
    /// `zeDeviceGetSubDevices` (unused).
    pub pfnGetSubDevices: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetProperties`.
    pub pfnGetProperties: Option<ze_pfnDeviceGetProperties_t>,
    /// `zeDeviceGetComputeProperties` (unused).
    pub pfnGetComputeProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetModuleProperties` (unused).
    pub pfnGetModuleProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetCommandQueueGroupProperties` (unused).
    pub pfnGetCommandQueueGroupProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetMemoryProperties` (unused).
    pub pfnGetMemoryProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetMemoryAccessProperties` (unused).
    pub pfnGetMemoryAccessProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetCacheProperties` (unused).
    pub pfnGetCacheProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetImageProperties` (unused).
    pub pfnGetImageProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetExternalMemoryProperties` (unused).
    pub pfnGetExternalMemoryProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetP2PProperties` (unused).
    pub pfnGetP2PProperties: Option<ze_pfnUnused_t>,
    /// `zeDeviceCanAccessPeer` (unused).
    pub pfnCanAccessPeer: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetStatus` (unused).
    pub pfnGetStatus: Option<ze_pfnUnused_t>,
    /// `zeDeviceGetGlobalTimestamps`.
    pub pfnGetGlobalTimestamps: Option<ze_pfnDeviceGetGlobalTimestamps_t>,
    /// `zeDeviceReserveCacheExt` (unused).
    pub pfnReserveCacheExt: Option<ze_pfnUnused_t>,
    /// `zeDeviceSetCacheAdviceExt` (unused).
    pub pfnSetCacheAdviceExt: Option<ze_pfnUnused_t>,
    /// `zeDevicePciGetPropertiesExt` (unused).
    pub pfnPciGetPropertiesExt: Option<ze_pfnUnused_t>,
}

/// `ze_context_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_context_dditable_t {
    /// `zeContextCreate`.
    pub pfnCreate: Option<ze_pfnContextCreate_t>,
    /// `zeContextDestroy`.
    pub pfnDestroy: Option<ze_pfnContextDestroy_t>,
    /// `zeContextGetStatus` (unused).
    pub pfnGetStatus: Option<ze_pfnUnused_t>,
    /// `zeContextSystemBarrier` (unused).
    pub pfnSystemBarrier: Option<ze_pfnUnused_t>,
    /// `zeContextMakeMemoryResident` (unused).
    pub pfnMakeMemoryResident: Option<ze_pfnUnused_t>,
    /// `zeContextEvictMemory` (unused).
    pub pfnEvictMemory: Option<ze_pfnUnused_t>,
    /// `zeContextMakeImageResident` (unused).
    pub pfnMakeImageResident: Option<ze_pfnUnused_t>,
    /// `zeContextEvictImage` (unused).
    pub pfnEvictImage: Option<ze_pfnUnused_t>,
    /// `zeContextCreateEx` (unused).
    pub pfnCreateEx: Option<ze_pfnUnused_t>,
}

/// `ze_event_pool_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_event_pool_dditable_t {
    /// `zeEventPoolCreate`.
    pub pfnCreate: Option<ze_pfnEventPoolCreate_t>,
    /// `zeEventPoolDestroy`.
    pub pfnDestroy: Option<ze_pfnEventPoolDestroy_t>,
    /// `zeEventPoolGetIpcHandle` (unused).
    pub pfnGetIpcHandle: Option<ze_pfnUnused_t>,
    /// `zeEventPoolOpenIpcHandle` (unused).
    pub pfnOpenIpcHandle: Option<ze_pfnUnused_t>,
    /// `zeEventPoolCloseIpcHandle` (unused).
    pub pfnCloseIpcHandle: Option<ze_pfnUnused_t>,
}

/// `ze_event_dditable_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ze_event_dditable_t {
    /// `zeEventCreate`.
    pub pfnCreate: Option<ze_pfnEventCreate_t>,
    /// `zeEventDestroy`.
    pub pfnDestroy: Option<ze_pfnEventDestroy_t>,
    /// `zeEventHostSignal` (unused).
    pub pfnHostSignal: Option<ze_pfnUnused_t>,
    /// `zeEventHostSynchronize` (unused).
    pub pfnHostSynchronize: Option<ze_pfnUnused_t>,
    /// `zeEventQueryStatus`.
    pub pfnQueryStatus: Option<ze_pfnEventQueryStatus_t>,
    /// `zeEventHostReset` (unused).
    pub pfnHostReset: Option<ze_pfnUnused_t>,
    /// `zeEventQueryKernelTimestamp`.
    pub pfnQueryKernelTimestamp: Option<ze_pfnEventQueryKernelTimestamp_t>,
}

/// `zeGetGlobalProcAddrTable`, exported by drivers (and the loader).
pub type ze_pfnGetGlobalProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_global_dditable_t,
) -> ze_result_t;
/// `zeGetDriverProcAddrTable`.
pub type ze_pfnGetDriverProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_driver_dditable_t,
) -> ze_result_t;
/// `zeGetDeviceProcAddrTable`.
pub type ze_pfnGetDeviceProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_device_dditable_t,
) -> ze_result_t;
/// `zeGetContextProcAddrTable`.
pub type ze_pfnGetContextProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_context_dditable_t,
) -> ze_result_t;
/// `zeGetEventPoolProcAddrTable`.
pub type ze_pfnGetEventPoolProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_event_pool_dditable_t,
) -> ze_result_t;
/// `zeGetEventProcAddrTable`.
pub type ze_pfnGetEventProcAddrTable_t = unsafe extern "C" fn(
    version: ze_api_version_t,
    pDdiTable: *mut ze_event_dditable_t,
) -> ze_result_t;

#[cfg(test)]
mod layout_tests {
    //! Sizes and offsets printed by a C program compiled against the Debian
    //! `libze-dev` 1.8.12 headers (x86_64, gcc 12, `offsetof`/`sizeof`).
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn scalars() {
        assert_eq!(size_of::<ze_result_t>(), 4);
        assert_eq!(size_of::<ze_structure_type_t>(), 4);
        assert_eq!(size_of::<ze_api_version_t>(), 4);
        assert_eq!(size_of::<ze_init_flags_t>(), 4);
        assert_eq!(size_of::<Option<ze_pfnInit_t>>(), 8);
        assert_eq!(size_of::<Option<ze_pfnUnused_t>>(), 8);
    }

    #[test]
    fn device_properties() {
        type T = ze_device_properties_t;
        assert_eq!(size_of::<T>(), 368);
        assert_eq!(align_of::<T>(), 8);
        assert_eq!(offset_of!(T, stype), 0);
        assert_eq!(offset_of!(T, pNext), 8);
        assert_eq!(offset_of!(T, type_), 16);
        assert_eq!(offset_of!(T, vendorId), 20);
        assert_eq!(offset_of!(T, deviceId), 24);
        assert_eq!(offset_of!(T, flags), 28);
        assert_eq!(offset_of!(T, subdeviceId), 32);
        assert_eq!(offset_of!(T, coreClockRate), 36);
        assert_eq!(offset_of!(T, maxMemAllocSize), 40);
        assert_eq!(offset_of!(T, maxHardwareContexts), 48);
        assert_eq!(offset_of!(T, maxCommandQueuePriority), 52);
        assert_eq!(offset_of!(T, numThreadsPerEU), 56);
        assert_eq!(offset_of!(T, physicalEUSimdWidth), 60);
        assert_eq!(offset_of!(T, numEUsPerSubslice), 64);
        assert_eq!(offset_of!(T, numSubslicesPerSlice), 68);
        assert_eq!(offset_of!(T, numSlices), 72);
        assert_eq!(offset_of!(T, timerResolution), 80);
        assert_eq!(offset_of!(T, timestampValidBits), 88);
        assert_eq!(offset_of!(T, kernelTimestampValidBits), 92);
        assert_eq!(offset_of!(T, uuid), 96);
        assert_eq!(offset_of!(T, name), 112);
        assert_eq!(size_of::<ze_device_uuid_t>(), 16);
        assert_eq!(align_of::<ze_device_uuid_t>(), 1);
    }

    #[test]
    fn timestamps() {
        assert_eq!(size_of::<ze_kernel_timestamp_data_t>(), 16);
        assert_eq!(offset_of!(ze_kernel_timestamp_data_t, kernelEnd), 8);
        assert_eq!(size_of::<ze_kernel_timestamp_result_t>(), 32);
        assert_eq!(offset_of!(ze_kernel_timestamp_result_t, context), 16);
    }

    #[test]
    fn descriptors() {
        assert_eq!(size_of::<ze_context_desc_t>(), 24);
        assert_eq!(offset_of!(ze_context_desc_t, pNext), 8);
        assert_eq!(offset_of!(ze_context_desc_t, flags), 16);

        assert_eq!(size_of::<ze_event_pool_desc_t>(), 24);
        assert_eq!(offset_of!(ze_event_pool_desc_t, pNext), 8);
        assert_eq!(offset_of!(ze_event_pool_desc_t, flags), 16);
        assert_eq!(offset_of!(ze_event_pool_desc_t, count), 20);

        assert_eq!(size_of::<ze_event_desc_t>(), 32);
        assert_eq!(offset_of!(ze_event_desc_t, pNext), 8);
        assert_eq!(offset_of!(ze_event_desc_t, index), 16);
        assert_eq!(offset_of!(ze_event_desc_t, signal), 20);
        assert_eq!(offset_of!(ze_event_desc_t, wait), 24);
    }

    #[test]
    fn ddi_tables() {
        assert_eq!(size_of::<ze_global_dditable_t>(), 8);

        assert_eq!(size_of::<ze_driver_dditable_t>(), 48);
        assert_eq!(offset_of!(ze_driver_dditable_t, pfnGet), 0);
        assert_eq!(
            offset_of!(ze_driver_dditable_t, pfnGetExtensionFunctionAddress),
            40
        );

        assert_eq!(size_of::<ze_device_dditable_t>(), 144);
        assert_eq!(offset_of!(ze_device_dditable_t, pfnGet), 0);
        assert_eq!(offset_of!(ze_device_dditable_t, pfnGetProperties), 16);
        assert_eq!(
            offset_of!(ze_device_dditable_t, pfnGetGlobalTimestamps),
            112
        );
        assert_eq!(
            offset_of!(ze_device_dditable_t, pfnPciGetPropertiesExt),
            136
        );

        assert_eq!(size_of::<ze_context_dditable_t>(), 72);
        assert_eq!(offset_of!(ze_context_dditable_t, pfnCreate), 0);
        assert_eq!(offset_of!(ze_context_dditable_t, pfnDestroy), 8);
        assert_eq!(offset_of!(ze_context_dditable_t, pfnCreateEx), 64);

        assert_eq!(size_of::<ze_event_pool_dditable_t>(), 40);
        assert_eq!(offset_of!(ze_event_pool_dditable_t, pfnCreate), 0);
        assert_eq!(offset_of!(ze_event_pool_dditable_t, pfnDestroy), 8);
        assert_eq!(offset_of!(ze_event_pool_dditable_t, pfnCloseIpcHandle), 32);

        assert_eq!(size_of::<ze_event_dditable_t>(), 56);
        assert_eq!(offset_of!(ze_event_dditable_t, pfnCreate), 0);
        assert_eq!(offset_of!(ze_event_dditable_t, pfnDestroy), 8);
        assert_eq!(offset_of!(ze_event_dditable_t, pfnQueryStatus), 32);
        assert_eq!(offset_of!(ze_event_dditable_t, pfnQueryKernelTimestamp), 48);
    }

    #[test]
    fn result_names() {
        assert_eq!(
            format!("{:?}", ze_result_t::NOT_READY),
            "ZE_RESULT_NOT_READY"
        );
        assert_eq!(format!("{}", ze_result_t(0x1234)), "ze_result_t(0x1234)");
    }
}
