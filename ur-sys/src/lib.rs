//! Raw, hand-written declarations for the parts of Unified Runtime
//! (`ur_api.h`) that syclgraph uses.
//!
//! Source of truth: the `ur_api.h` that the `intel-sycl-rt==2026.2.0` wheel
//! installs as `<venv>/include/unified-runtime/ur_api.h` (`@version v0.12-r0`,
//! the same API as the wheel's `libur_loader.so.0.12.0`). Every value here was
//! also checked against that loader's own `urPrint*` functions, and
//! `tests/header.rs` re-checks all of them against the installed header.
//!
//! Nothing is linked: `libur_loader.so` is opened at run time and the
//! `PFN_*` pointer types below are what its symbols are cast to.
//!
//! C enums are `#[repr(transparent)]` newtypes over `u32` (ash's habit): a
//! value a newer runtime adds is just another number, never undefined
//! behaviour.
#![warn(missing_docs)]
#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::c_void;
use core::fmt;
use core::marker::{PhantomData, PhantomPinned};

// ---------------------------------------------------------------------------
// Newtype enums
// ---------------------------------------------------------------------------

/// Declares a `#[repr(transparent)]` newtype over `u32` for a C enum, with
/// associated constants and a `name()` giving the C enumerator's name.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:expr => $cname:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $name {
            $( $(#[$vmeta])* pub const $variant: Self = Self($value); )*

            /// Every value declared here, with its C enumerator's name.
            pub const VALUES: &'static [(Self, &'static str)] = &[ $( (Self($value), $cname), )* ];

            /// The C enumerator's name, or `None` for a value not declared here.
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $( $value => Some($cname), )*
                    _ => None,
                }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{}({})", name, self.0),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}

c_enum! {
    /// `ur_result_t`: return code of every UR function.
    ur_result_t {
        /// Success.
        SUCCESS = 0 => "UR_RESULT_SUCCESS",
        /// Invalid operation.
        ERROR_INVALID_OPERATION = 1 => "UR_RESULT_ERROR_INVALID_OPERATION",
        /// Invalid queue properties.
        ERROR_INVALID_QUEUE_PROPERTIES = 2 => "UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES",
        /// Invalid queue.
        ERROR_INVALID_QUEUE = 3 => "UR_RESULT_ERROR_INVALID_QUEUE",
        /// Invalid value.
        ERROR_INVALID_VALUE = 4 => "UR_RESULT_ERROR_INVALID_VALUE",
        /// Invalid context.
        ERROR_INVALID_CONTEXT = 5 => "UR_RESULT_ERROR_INVALID_CONTEXT",
        /// Invalid platform.
        ERROR_INVALID_PLATFORM = 6 => "UR_RESULT_ERROR_INVALID_PLATFORM",
        /// Invalid memory object.
        ERROR_INVALID_MEM_OBJECT = 11 => "UR_RESULT_ERROR_INVALID_MEM_OBJECT",
        /// Invalid event.
        ERROR_INVALID_EVENT = 12 => "UR_RESULT_ERROR_INVALID_EVENT",
        /// Invalid event wait list.
        ERROR_INVALID_EVENT_WAIT_LIST = 13 => "UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST",
        /// Profiling info not available (the queue was made without profiling).
        ERROR_PROFILING_INFO_NOT_AVAILABLE = 17 => "UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE",
        /// Device not found.
        ERROR_DEVICE_NOT_FOUND = 18 => "UR_RESULT_ERROR_DEVICE_NOT_FOUND",
        /// Invalid device.
        ERROR_INVALID_DEVICE = 19 => "UR_RESULT_ERROR_INVALID_DEVICE",
        /// Device hung, reset, was removed, or adapter update occurred.
        ERROR_DEVICE_LOST = 20 => "UR_RESULT_ERROR_DEVICE_LOST",
        /// Invalid kernel.
        ERROR_INVALID_KERNEL = 28 => "UR_RESULT_ERROR_INVALID_KERNEL",
        /// The loader (or adapter) was not initialised: `urLoaderInit` first.
        ERROR_UNINITIALIZED = 37 => "UR_RESULT_ERROR_UNINITIALIZED",
        /// Out of host memory.
        ERROR_OUT_OF_HOST_MEMORY = 38 => "UR_RESULT_ERROR_OUT_OF_HOST_MEMORY",
        /// Out of device memory.
        ERROR_OUT_OF_DEVICE_MEMORY = 39 => "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        /// Out of resources.
        ERROR_OUT_OF_RESOURCES = 40 => "UR_RESULT_ERROR_OUT_OF_RESOURCES",
        /// Unsupported version.
        ERROR_UNSUPPORTED_VERSION = 43 => "UR_RESULT_ERROR_UNSUPPORTED_VERSION",
        /// Unsupported feature.
        ERROR_UNSUPPORTED_FEATURE = 44 => "UR_RESULT_ERROR_UNSUPPORTED_FEATURE",
        /// Invalid argument.
        ERROR_INVALID_ARGUMENT = 45 => "UR_RESULT_ERROR_INVALID_ARGUMENT",
        /// A handle argument was null.
        ERROR_INVALID_NULL_HANDLE = 46 => "UR_RESULT_ERROR_INVALID_NULL_HANDLE",
        /// Handle object in use.
        ERROR_HANDLE_OBJECT_IN_USE = 47 => "UR_RESULT_ERROR_HANDLE_OBJECT_IN_USE",
        /// A pointer argument was null.
        ERROR_INVALID_NULL_POINTER = 48 => "UR_RESULT_ERROR_INVALID_NULL_POINTER",
        /// Invalid size.
        ERROR_INVALID_SIZE = 49 => "UR_RESULT_ERROR_INVALID_SIZE",
        /// Unsupported size.
        ERROR_UNSUPPORTED_SIZE = 50 => "UR_RESULT_ERROR_UNSUPPORTED_SIZE",
        /// Enumerator out of range.
        ERROR_INVALID_ENUMERATION = 53 => "UR_RESULT_ERROR_INVALID_ENUMERATION",
        /// Enumerator not supported by the adapter.
        ERROR_UNSUPPORTED_ENUMERATION = 54 => "UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION",
        /// Adapter-specific error (see `urAdapterGetLastError`).
        ERROR_ADAPTER_SPECIFIC = 66 => "UR_RESULT_ERROR_ADAPTER_SPECIFIC",
        /// A layer named in `UR_ENABLE_LAYERS` is not present.
        ERROR_LAYER_NOT_PRESENT = 67 => "UR_RESULT_ERROR_LAYER_NOT_PRESENT",
        /// An event in the wait list has `UR_EVENT_STATUS_ERROR`.
        ERROR_IN_EVENT_LIST_EXEC_STATUS = 68 => "UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS",
        /// Device not available.
        ERROR_DEVICE_NOT_AVAILABLE = 69 => "UR_RESULT_ERROR_DEVICE_NOT_AVAILABLE",
        /// Unknown or internal error.
        ERROR_UNKNOWN = 0x7fff_fffe => "UR_RESULT_ERROR_UNKNOWN",
    }
}

impl ur_result_t {
    /// True for [`ur_result_t::SUCCESS`].
    pub const fn is_success(self) -> bool {
        self.0 == Self::SUCCESS.0
    }
}

c_enum! {
    /// `ur_structure_type_t`: the `stype` of extensible structures.
    ur_structure_type_t {
        /// `ur_queue_properties_t`.
        QUEUE_PROPERTIES = 14 => "UR_STRUCTURE_TYPE_QUEUE_PROPERTIES",
        /// `ur_exp_command_buffer_desc_t`.
        EXP_COMMAND_BUFFER_DESC = 0x1000 => "UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC",
    }
}

c_enum! {
    /// `ur_event_info_t`: queries of `urEventGetInfo`.
    ur_event_info_t {
        /// `ur_queue_handle_t`: the queue the command was enqueued to.
        COMMAND_QUEUE = 0 => "UR_EVENT_INFO_COMMAND_QUEUE",
        /// `ur_context_handle_t`.
        CONTEXT = 1 => "UR_EVENT_INFO_CONTEXT",
        /// `ur_command_t`: the kind of command.
        COMMAND_TYPE = 2 => "UR_EVENT_INFO_COMMAND_TYPE",
        /// `ur_event_status_t`: execution status.
        COMMAND_EXECUTION_STATUS = 3 => "UR_EVENT_INFO_COMMAND_EXECUTION_STATUS",
        /// `uint32_t`: reference count (for debugging only).
        REFERENCE_COUNT = 4 => "UR_EVENT_INFO_REFERENCE_COUNT",
    }
}

c_enum! {
    /// `ur_event_status_t`: execution status of a command.
    ur_event_status_t {
        /// The command completed.
        COMPLETE = 0 => "UR_EVENT_STATUS_COMPLETE",
        /// The device is running the command.
        RUNNING = 1 => "UR_EVENT_STATUS_RUNNING",
        /// The command was submitted to the device.
        SUBMITTED = 2 => "UR_EVENT_STATUS_SUBMITTED",
        /// The command is queued (initial state).
        QUEUED = 3 => "UR_EVENT_STATUS_QUEUED",
        /// The command failed.
        ERROR = 4 => "UR_EVENT_STATUS_ERROR",
    }
}

c_enum! {
    /// `ur_profiling_info_t`: queries of `urEventGetProfilingInfo`, each a
    /// `uint64_t` device time in nanoseconds.
    ur_profiling_info_t {
        /// When the command was enqueued on the host.
        COMMAND_QUEUED = 0 => "UR_PROFILING_INFO_COMMAND_QUEUED",
        /// When the command was submitted to the device.
        COMMAND_SUBMIT = 1 => "UR_PROFILING_INFO_COMMAND_SUBMIT",
        /// When the device started executing the command.
        COMMAND_START = 2 => "UR_PROFILING_INFO_COMMAND_START",
        /// When the device finished executing the command.
        COMMAND_END = 3 => "UR_PROFILING_INFO_COMMAND_END",
        /// When the command and its child commands completed.
        COMMAND_COMPLETE = 4 => "UR_PROFILING_INFO_COMMAND_COMPLETE",
    }
}

c_enum! {
    /// `ur_queue_info_t`: queries of `urQueueGetInfo`.
    ur_queue_info_t {
        /// `ur_context_handle_t`.
        CONTEXT = 0 => "UR_QUEUE_INFO_CONTEXT",
        /// `ur_device_handle_t`.
        DEVICE = 1 => "UR_QUEUE_INFO_DEVICE",
        /// `ur_queue_handle_t`: the device's default queue.
        DEVICE_DEFAULT = 2 => "UR_QUEUE_INFO_DEVICE_DEFAULT",
        /// `ur_queue_flags_t`.
        FLAGS = 3 => "UR_QUEUE_INFO_FLAGS",
        /// `uint32_t`: reference count.
        REFERENCE_COUNT = 4 => "UR_QUEUE_INFO_REFERENCE_COUNT",
        /// `uint32_t`: size of a device queue.
        SIZE = 5 => "UR_QUEUE_INFO_SIZE",
        /// `ur_bool_t`: whether the queue holds no command.
        EMPTY = 6 => "UR_QUEUE_INFO_EMPTY",
    }
}

c_enum! {
    /// `ur_device_info_t`: queries of `urDeviceGetInfo` (only those used).
    ur_device_info_t {
        /// `ur_device_type_t`.
        TYPE = 0 => "UR_DEVICE_INFO_TYPE",
        /// `size_t`: profiling timer resolution in ns.
        PROFILING_TIMER_RESOLUTION = 54 => "UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION",
        /// `ur_platform_handle_t`.
        PLATFORM = 63 => "UR_DEVICE_INFO_PLATFORM",
        /// `char[]`: device name.
        NAME = 66 => "UR_DEVICE_INFO_NAME",
        /// `ur_device_handle_t`: the parent device of a sub-device (null
        /// for a root device).
        PARENT_DEVICE = 75 => "UR_DEVICE_INFO_PARENT_DEVICE",
    }
}

c_enum! {
    /// `ur_platform_info_t`: queries of `urPlatformGetInfo`.
    ur_platform_info_t {
        /// `char[]`: platform name.
        NAME = 1 => "UR_PLATFORM_INFO_NAME",
        /// `char[]`: vendor name.
        VENDOR_NAME = 2 => "UR_PLATFORM_INFO_VENDOR_NAME",
        /// `char[]`: version.
        VERSION = 3 => "UR_PLATFORM_INFO_VERSION",
        /// `char[]`: extensions.
        EXTENSIONS = 4 => "UR_PLATFORM_INFO_EXTENSIONS",
        /// `char[]`: profile.
        PROFILE = 5 => "UR_PLATFORM_INFO_PROFILE",
        /// `ur_backend_t`.
        BACKEND = 6 => "UR_PLATFORM_INFO_BACKEND",
        /// `ur_adapter_handle_t`.
        ADAPTER = 7 => "UR_PLATFORM_INFO_ADAPTER",
    }
}

c_enum! {
    /// `ur_backend_t`: the native API under a platform.
    ur_backend_t {
        /// Unknown.
        UNKNOWN = 0 => "UR_BACKEND_UNKNOWN",
        /// Level Zero.
        LEVEL_ZERO = 1 => "UR_BACKEND_LEVEL_ZERO",
        /// OpenCL.
        OPENCL = 2 => "UR_BACKEND_OPENCL",
        /// CUDA.
        CUDA = 3 => "UR_BACKEND_CUDA",
        /// HIP.
        HIP = 4 => "UR_BACKEND_HIP",
        /// Native CPU.
        NATIVE_CPU = 5 => "UR_BACKEND_NATIVE_CPU",
        /// LLVM Offload.
        OFFLOAD = 0x100 => "UR_BACKEND_OFFLOAD",
    }
}

c_enum! {
    /// `ur_device_type_t`: device kinds for `urDeviceGet`.
    ur_device_type_t {
        /// The platform's default device.
        DEFAULT = 1 => "UR_DEVICE_TYPE_DEFAULT",
        /// All devices.
        ALL = 2 => "UR_DEVICE_TYPE_ALL",
        /// GPUs.
        GPU = 3 => "UR_DEVICE_TYPE_GPU",
        /// CPUs.
        CPU = 4 => "UR_DEVICE_TYPE_CPU",
    }
}

c_enum! {
    /// `ur_function_t`: stable function ids, as the tracing layer reports them
    /// (`function_with_args_t::function_id` on stream `ur.call.debug`).
    ur_function_t {
        /// `urEnqueueKernelLaunch`. Not in UR 0.12 as shipped with DPC++
        /// 2026.2 (its loader neither exports nor prints it); older runtimes.
        ENQUEUE_KERNEL_LAUNCH = 17 => "UR_FUNCTION_ENQUEUE_KERNEL_LAUNCH",
        /// `urEnqueueEventsWait`.
        ENQUEUE_EVENTS_WAIT = 18 => "UR_FUNCTION_ENQUEUE_EVENTS_WAIT",
        /// `urEnqueueEventsWaitWithBarrier`.
        ENQUEUE_EVENTS_WAIT_WITH_BARRIER = 19 => "UR_FUNCTION_ENQUEUE_EVENTS_WAIT_WITH_BARRIER",
        /// `urEnqueueMemBufferRead`.
        ENQUEUE_MEM_BUFFER_READ = 20 => "UR_FUNCTION_ENQUEUE_MEM_BUFFER_READ",
        /// `urEnqueueMemBufferWrite`.
        ENQUEUE_MEM_BUFFER_WRITE = 21 => "UR_FUNCTION_ENQUEUE_MEM_BUFFER_WRITE",
        /// `urEnqueueMemBufferCopy`.
        ENQUEUE_MEM_BUFFER_COPY = 24 => "UR_FUNCTION_ENQUEUE_MEM_BUFFER_COPY",
        /// `urEnqueueMemBufferFill`.
        ENQUEUE_MEM_BUFFER_FILL = 26 => "UR_FUNCTION_ENQUEUE_MEM_BUFFER_FILL",
        /// `urEnqueueUSMFill`.
        ENQUEUE_USM_FILL = 32 => "UR_FUNCTION_ENQUEUE_USM_FILL",
        /// `urEnqueueUSMMemcpy`.
        ENQUEUE_USM_MEMCPY = 33 => "UR_FUNCTION_ENQUEUE_USM_MEMCPY",
        /// `urEnqueueUSMPrefetch`.
        ENQUEUE_USM_PREFETCH = 34 => "UR_FUNCTION_ENQUEUE_USM_PREFETCH",
        /// `urEnqueueUSMAdvise`.
        ENQUEUE_USM_ADVISE = 35 => "UR_FUNCTION_ENQUEUE_USM_ADVISE",
        /// `urEventGetInfo`.
        EVENT_GET_INFO = 40 => "UR_FUNCTION_EVENT_GET_INFO",
        /// `urEventGetProfilingInfo`.
        EVENT_GET_PROFILING_INFO = 41 => "UR_FUNCTION_EVENT_GET_PROFILING_INFO",
        /// `urEventRetain`.
        EVENT_RETAIN = 43 => "UR_FUNCTION_EVENT_RETAIN",
        /// `urEventRelease`.
        EVENT_RELEASE = 44 => "UR_FUNCTION_EVENT_RELEASE",
        /// `urQueueGetInfo`.
        QUEUE_GET_INFO = 91 => "UR_FUNCTION_QUEUE_GET_INFO",
        /// `urQueueCreate`.
        QUEUE_CREATE = 92 => "UR_FUNCTION_QUEUE_CREATE",
        /// `urQueueRelease`.
        QUEUE_RELEASE = 94 => "UR_FUNCTION_QUEUE_RELEASE",
        /// `urEnqueueUSMMemcpy2D`.
        ENQUEUE_USM_MEMCPY_2D = 152 => "UR_FUNCTION_ENQUEUE_USM_MEMCPY_2D",
        /// `urCommandBufferCreateExp`.
        COMMAND_BUFFER_CREATE_EXP = 113 => "UR_FUNCTION_COMMAND_BUFFER_CREATE_EXP",
        /// `urCommandBufferFinalizeExp`.
        COMMAND_BUFFER_FINALIZE_EXP = 123 => "UR_FUNCTION_COMMAND_BUFFER_FINALIZE_EXP",
        /// `urLoaderInit`.
        LOADER_INIT = 201 => "UR_FUNCTION_LOADER_INIT",
        /// `urEnqueueTimestampRecordingExp`.
        ENQUEUE_TIMESTAMP_RECORDING_EXP = 223 => "UR_FUNCTION_ENQUEUE_TIMESTAMP_RECORDING_EXP",
        /// `urEnqueueNativeCommandExp`.
        ENQUEUE_NATIVE_COMMAND_EXP = 228 => "UR_FUNCTION_ENQUEUE_NATIVE_COMMAND_EXP",
        /// `urCommandBufferAppendUSMMemcpyExp`.
        COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP = 231 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_USM_MEMCPY_EXP",
        /// `urCommandBufferAppendUSMFillExp`.
        COMMAND_BUFFER_APPEND_USM_FILL_EXP = 232 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_USM_FILL_EXP",
        /// `urCommandBufferAppendMemBufferCopyExp`.
        COMMAND_BUFFER_APPEND_MEM_BUFFER_COPY_EXP = 233 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_MEM_BUFFER_COPY_EXP",
        /// `urCommandBufferAppendMemBufferWriteExp`.
        COMMAND_BUFFER_APPEND_MEM_BUFFER_WRITE_EXP = 234 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_MEM_BUFFER_WRITE_EXP",
        /// `urCommandBufferAppendMemBufferReadExp`.
        COMMAND_BUFFER_APPEND_MEM_BUFFER_READ_EXP = 235 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_MEM_BUFFER_READ_EXP",
        /// `urCommandBufferAppendMemBufferFillExp`.
        COMMAND_BUFFER_APPEND_MEM_BUFFER_FILL_EXP = 239 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_MEM_BUFFER_FILL_EXP",
        /// `urEnqueueCommandBufferExp`.
        ENQUEUE_COMMAND_BUFFER_EXP = 242 => "UR_FUNCTION_ENQUEUE_COMMAND_BUFFER_EXP",
        /// `urCommandBufferAppendNativeCommandExp`.
        COMMAND_BUFFER_APPEND_NATIVE_COMMAND_EXP = 263 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_NATIVE_COMMAND_EXP",
        /// `urEnqueueEventsWaitWithBarrierExt`.
        ENQUEUE_EVENTS_WAIT_WITH_BARRIER_EXT = 246 => "UR_FUNCTION_ENQUEUE_EVENTS_WAIT_WITH_BARRIER_EXT",
        /// `urEnqueueKernelLaunchWithArgsExp`: how DPC++ 2026.2 launches kernels.
        ENQUEUE_KERNEL_LAUNCH_WITH_ARGS_EXP = 295 => "UR_FUNCTION_ENQUEUE_KERNEL_LAUNCH_WITH_ARGS_EXP",
        /// `urCommandBufferAppendKernelLaunchWithArgsExp`.
        COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP = 310 => "UR_FUNCTION_COMMAND_BUFFER_APPEND_KERNEL_LAUNCH_WITH_ARGS_EXP",
    }
}

// ---------------------------------------------------------------------------
// Bit fields and scalar typedefs
// ---------------------------------------------------------------------------

/// `ur_bool_t`.
pub type ur_bool_t = u8;
/// `ur_native_handle_t`: a backend's own handle (`cl_event`,
/// `ze_event_handle_t`, ...) as an integer.
pub type ur_native_handle_t = usize;
/// `ur_device_init_flags_t` (`urLoaderInit`; 0 means all device kinds).
pub type ur_device_init_flags_t = u32;
/// `ur_mem_flags_t` (`urMemBufferCreate`).
pub type ur_mem_flags_t = u32;
/// `UR_MEM_FLAG_READ_WRITE`.
pub const UR_MEM_FLAG_READ_WRITE: ur_mem_flags_t = 1 << 0;

/// `ur_queue_flags_t`: a bit field of `ur_queue_flag_t`.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct ur_queue_flags_t(pub u32);

impl ur_queue_flags_t {
    /// `UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE`.
    pub const OUT_OF_ORDER_EXEC_MODE_ENABLE: Self = Self(1 << 0);
    /// `UR_QUEUE_FLAG_PROFILING_ENABLE`: device timestamps on events.
    pub const PROFILING_ENABLE: Self = Self(1 << 1);
    /// `UR_QUEUE_FLAG_ON_DEVICE`.
    pub const ON_DEVICE: Self = Self(1 << 2);
    /// `UR_QUEUE_FLAG_ON_DEVICE_DEFAULT`.
    pub const ON_DEVICE_DEFAULT: Self = Self(1 << 3);
    /// `UR_QUEUE_FLAG_DISCARD_EVENTS`: the queue may return no events.
    pub const DISCARD_EVENTS: Self = Self(1 << 4);
    /// `UR_QUEUE_FLAG_PRIORITY_LOW`.
    pub const PRIORITY_LOW: Self = Self(1 << 5);
    /// `UR_QUEUE_FLAG_PRIORITY_HIGH`.
    pub const PRIORITY_HIGH: Self = Self(1 << 6);
    /// `UR_QUEUE_FLAG_SUBMISSION_BATCHED`.
    pub const SUBMISSION_BATCHED: Self = Self(1 << 7);
    /// `UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE`.
    pub const SUBMISSION_IMMEDIATE: Self = Self(1 << 8);
    /// `UR_QUEUE_FLAG_USE_DEFAULT_STREAM`.
    pub const USE_DEFAULT_STREAM: Self = Self(1 << 9);
    /// `UR_QUEUE_FLAG_SYNC_WITH_DEFAULT_STREAM`.
    pub const SYNC_WITH_DEFAULT_STREAM: Self = Self(1 << 10);
    /// `UR_QUEUE_FLAG_LOW_POWER_EVENTS_SUPPORT_EXP`.
    pub const LOW_POWER_EVENTS_SUPPORT_EXP: Self = Self(1 << 11);

    /// True when every bit of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for ur_queue_flags_t {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl core::ops::BitOrAssign for ur_queue_flags_t {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}

// ---------------------------------------------------------------------------
// Opaque handles
// ---------------------------------------------------------------------------

/// Declares an opaque C struct and the pointer typedef used as its handle.
macro_rules! handle {
    ($(#[$meta:meta])* $opaque:ident => $handle:ident) => {
        #[doc = concat!("Opaque target of [`", stringify!($handle), "`].")]
        #[repr(C)]
        pub struct $opaque {
            _data: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
        $(#[$meta])*
        pub type $handle = *mut $opaque;
    };
}

handle!(/// `ur_loader_config_handle_t`.
    ur_loader_config_handle_t_ => ur_loader_config_handle_t);
handle!(/// `ur_adapter_handle_t`.
    ur_adapter_handle_t_ => ur_adapter_handle_t);
handle!(/// `ur_platform_handle_t`.
    ur_platform_handle_t_ => ur_platform_handle_t);
handle!(/// `ur_device_handle_t`.
    ur_device_handle_t_ => ur_device_handle_t);
handle!(/// `ur_context_handle_t`.
    ur_context_handle_t_ => ur_context_handle_t);
handle!(/// `ur_event_handle_t`.
    ur_event_handle_t_ => ur_event_handle_t);
handle!(/// `ur_kernel_handle_t`.
    ur_kernel_handle_t_ => ur_kernel_handle_t);
handle!(/// `ur_queue_handle_t`.
    ur_queue_handle_t_ => ur_queue_handle_t);
handle!(/// `ur_mem_handle_t`: a buffer or an image.
    ur_mem_handle_t_ => ur_mem_handle_t);
handle!(/// `ur_exp_command_buffer_handle_t`: a SYCL graph's command buffer.
    ur_exp_command_buffer_handle_t_ => ur_exp_command_buffer_handle_t);

/// `ur_exp_command_buffer_sync_point_t`: names a command appended to a
/// command buffer, for the later appends that depend on it.
pub type ur_exp_command_buffer_sync_point_t = u32;

/// Opaque `ur_exp_kernel_arg_properties_t` (only pointed to).
#[repr(C)]
pub struct ur_exp_kernel_arg_properties_t {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `ur_kernel_launch_ext_properties_t` (only pointed to).
#[repr(C)]
pub struct ur_kernel_launch_ext_properties_t {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `ur_exp_enqueue_ext_properties_t` (only pointed to).
#[repr(C)]
pub struct ur_exp_enqueue_ext_properties_t {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `ur_context_properties_t` (only pointed to; pass null).
#[repr(C)]
pub struct ur_context_properties_t {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `ur_buffer_properties_t` (only pointed to; pass null).
#[repr(C)]
pub struct ur_buffer_properties_t {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

// ---------------------------------------------------------------------------
// Structures
// ---------------------------------------------------------------------------

/// `ur_queue_properties_t`: optional properties of `urQueueCreate`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ur_queue_properties_t {
    /// Must be [`ur_structure_type_t::QUEUE_PROPERTIES`].
    pub stype: ur_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *mut c_void,
    /// Queue creation flags.
    pub flags: ur_queue_flags_t,
}

/// `ur_exp_command_buffer_desc_t`: how `urCommandBufferCreateExp` makes a
/// command buffer (a SYCL graph's, at finalisation).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ur_exp_command_buffer_desc_t {
    /// Must be [`ur_structure_type_t::EXP_COMMAND_BUFFER_DESC`].
    pub stype: ur_structure_type_t,
    /// Extension chain, or null.
    pub pNext: *const c_void,
    /// Commands in the finalised buffer can be updated.
    pub isUpdatable: ur_bool_t,
    /// Commands run in the order they were appended; sync points are
    /// ignored (the runtime then hands out none).
    pub isInOrder: ur_bool_t,
    /// Profiling of the buffer's replays is on.
    pub enableProfiling: ur_bool_t,
}

/// Declares a tracing-layer params struct: one pointer per argument of the
/// function, in declaration order (`ur_<fn>_params_t` in `ur_api.h`).
macro_rules! params {
    (
        $(#[$meta:meta])*
        $name:ident { $( $field:ident : $ty:ty ),* $(,)? }
    ) => {
        $(#[$meta])*
        ///
        /// Each field points at the corresponding argument of the call.
        #[repr(C)]
        #[derive(Clone, Copy, Debug)]
        pub struct $name {
            $(
                #[doc = concat!("Points at the argument `", stringify!($field), "` (without its `p` prefix).")]
                pub $field: $ty,
            )*
        }

        impl $name {
            /// Each field's C name and byte offset, in declaration order.
            pub const FIELD_OFFSETS: &'static [(&'static str, usize)] =
                &[ $( (stringify!($field), core::mem::offset_of!($name, $field)), )* ];
        }
    };
}

params! {
    /// `ur_queue_create_params_t` (`urQueueCreate`, function id 92).
    ur_queue_create_params_t {
        phContext: *mut ur_context_handle_t,
        phDevice: *mut ur_device_handle_t,
        ppProperties: *mut *const ur_queue_properties_t,
        pphQueue: *mut *mut ur_queue_handle_t,
    }
}

params! {
    /// `ur_enqueue_kernel_launch_params_t` (`urEnqueueKernelLaunch`,
    /// function id 17), as in `ur_api.h` v0.12-r0 of intel/llvm before the
    /// function was removed. The 2026.2 runtime has no such function: it
    /// launches with `urEnqueueKernelLaunchWithArgsExp`.
    ur_enqueue_kernel_launch_params_t {
        phQueue: *mut ur_queue_handle_t,
        phKernel: *mut ur_kernel_handle_t,
        pworkDim: *mut u32,
        ppGlobalWorkOffset: *mut *const usize,
        ppGlobalWorkSize: *mut *const usize,
        ppLocalWorkSize: *mut *const usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_kernel_launch_with_args_exp_params_t`
    /// (`urEnqueueKernelLaunchWithArgsExp`, function id 295).
    ur_enqueue_kernel_launch_with_args_exp_params_t {
        phQueue: *mut ur_queue_handle_t,
        phKernel: *mut ur_kernel_handle_t,
        pworkDim: *mut u32,
        ppGlobalWorkOffset: *mut *const usize,
        ppGlobalWorkSize: *mut *const usize,
        ppLocalWorkSize: *mut *const usize,
        pnumArgs: *mut u32,
        ppArgs: *mut *const ur_exp_kernel_arg_properties_t,
        plaunchPropList: *mut *const ur_kernel_launch_ext_properties_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_usm_memcpy_params_t` (`urEnqueueUSMMemcpy`, function id 33).
    ur_enqueue_usm_memcpy_params_t {
        phQueue: *mut ur_queue_handle_t,
        pblocking: *mut bool,
        ppDst: *mut *mut c_void,
        ppSrc: *mut *const c_void,
        psize: *mut usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_usm_fill_params_t` (`urEnqueueUSMFill`, function id 32).
    ur_enqueue_usm_fill_params_t {
        phQueue: *mut ur_queue_handle_t,
        ppMem: *mut *mut c_void,
        ppatternSize: *mut usize,
        ppPattern: *mut *const c_void,
        psize: *mut usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_usm_memcpy_2d_params_t` (`urEnqueueUSMMemcpy2D`,
    /// function id 152).
    ur_enqueue_usm_memcpy_2d_params_t {
        phQueue: *mut ur_queue_handle_t,
        pblocking: *mut bool,
        ppDst: *mut *mut c_void,
        pdstPitch: *mut usize,
        ppSrc: *mut *const c_void,
        psrcPitch: *mut usize,
        pwidth: *mut usize,
        pheight: *mut usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_mem_buffer_read_params_t` (`urEnqueueMemBufferRead`,
    /// function id 20).
    ur_enqueue_mem_buffer_read_params_t {
        phQueue: *mut ur_queue_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        pblockingRead: *mut bool,
        poffset: *mut usize,
        psize: *mut usize,
        ppDst: *mut *mut c_void,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_mem_buffer_write_params_t` (`urEnqueueMemBufferWrite`,
    /// function id 21).
    ur_enqueue_mem_buffer_write_params_t {
        phQueue: *mut ur_queue_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        pblockingWrite: *mut bool,
        poffset: *mut usize,
        psize: *mut usize,
        ppSrc: *mut *const c_void,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_mem_buffer_copy_params_t` (`urEnqueueMemBufferCopy`,
    /// function id 24).
    ur_enqueue_mem_buffer_copy_params_t {
        phQueue: *mut ur_queue_handle_t,
        phBufferSrc: *mut ur_mem_handle_t,
        phBufferDst: *mut ur_mem_handle_t,
        psrcOffset: *mut usize,
        pdstOffset: *mut usize,
        psize: *mut usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_mem_buffer_fill_params_t` (`urEnqueueMemBufferFill`,
    /// function id 26).
    ur_enqueue_mem_buffer_fill_params_t {
        phQueue: *mut ur_queue_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        ppPattern: *mut *const c_void,
        ppatternSize: *mut usize,
        poffset: *mut usize,
        psize: *mut usize,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_events_wait_params_t` (`urEnqueueEventsWait`, function id 18).
    ur_enqueue_events_wait_params_t {
        phQueue: *mut ur_queue_handle_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_events_wait_with_barrier_params_t`
    /// (`urEnqueueEventsWaitWithBarrier`, function id 19).
    ur_enqueue_events_wait_with_barrier_params_t {
        phQueue: *mut ur_queue_handle_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_enqueue_events_wait_with_barrier_ext_params_t`
    /// (`urEnqueueEventsWaitWithBarrierExt`, function id 246).
    ur_enqueue_events_wait_with_barrier_ext_params_t {
        phQueue: *mut ur_queue_handle_t,
        ppProperties: *mut *const ur_exp_enqueue_ext_properties_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_command_buffer_create_exp_params_t` (`urCommandBufferCreateExp`,
    /// function id 113).
    ur_command_buffer_create_exp_params_t {
        phContext: *mut ur_context_handle_t,
        phDevice: *mut ur_device_handle_t,
        ppCommandBufferDesc: *mut *const c_void,
        pphCommandBuffer: *mut *mut ur_exp_command_buffer_handle_t,
    }
}

params! {
    /// `ur_command_buffer_finalize_exp_params_t`
    /// (`urCommandBufferFinalizeExp`, function id 123).
    ur_command_buffer_finalize_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
    }
}

params! {
    /// `ur_command_buffer_append_usm_memcpy_exp_params_t`
    /// (`urCommandBufferAppendUSMMemcpyExp`, function id 231).
    ur_command_buffer_append_usm_memcpy_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        ppDst: *mut *mut c_void,
        ppSrc: *mut *const c_void,
        psize: *mut usize,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_usm_fill_exp_params_t`
    /// (`urCommandBufferAppendUSMFillExp`, function id 232).
    ur_command_buffer_append_usm_fill_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        ppMemory: *mut *mut c_void,
        ppPattern: *mut *const c_void,
        ppatternSize: *mut usize,
        psize: *mut usize,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_kernel_launch_with_args_exp_params_t`
    /// (`urCommandBufferAppendKernelLaunchWithArgsExp`, function id 310).
    ur_command_buffer_append_kernel_launch_with_args_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        phKernel: *mut ur_kernel_handle_t,
        pworkDim: *mut u32,
        ppGlobalWorkOffset: *mut *const usize,
        ppGlobalWorkSize: *mut *const usize,
        ppLocalWorkSize: *mut *const usize,
        pnumArgs: *mut u32,
        ppArgs: *mut *const ur_exp_kernel_arg_properties_t,
        pnumKernelAlternatives: *mut u32,
        pphKernelAlternatives: *mut *mut ur_kernel_handle_t,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_mem_buffer_copy_exp_params_t`
    /// (`urCommandBufferAppendMemBufferCopyExp`, function id 233).
    ur_command_buffer_append_mem_buffer_copy_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        phSrcMem: *mut ur_mem_handle_t,
        phDstMem: *mut ur_mem_handle_t,
        psrcOffset: *mut usize,
        pdstOffset: *mut usize,
        psize: *mut usize,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_mem_buffer_write_exp_params_t`
    /// (`urCommandBufferAppendMemBufferWriteExp`, function id 234).
    ur_command_buffer_append_mem_buffer_write_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        poffset: *mut usize,
        psize: *mut usize,
        ppSrc: *mut *const c_void,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_mem_buffer_read_exp_params_t`
    /// (`urCommandBufferAppendMemBufferReadExp`, function id 235).
    ur_command_buffer_append_mem_buffer_read_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        poffset: *mut usize,
        psize: *mut usize,
        ppDst: *mut *mut c_void,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_command_buffer_append_mem_buffer_fill_exp_params_t`
    /// (`urCommandBufferAppendMemBufferFillExp`, function id 239).
    ur_command_buffer_append_mem_buffer_fill_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        phBuffer: *mut ur_mem_handle_t,
        ppPattern: *mut *const c_void,
        ppatternSize: *mut usize,
        poffset: *mut usize,
        psize: *mut usize,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
        pphEvent: *mut *mut ur_event_handle_t,
        pphCommand: *mut *mut c_void,
    }
}

params! {
    /// `ur_enqueue_native_command_exp_params_t`
    /// (`urEnqueueNativeCommandExp`, function id 228).
    ur_enqueue_native_command_exp_params_t {
        phQueue: *mut ur_queue_handle_t,
        ppfnNativeEnqueue: *mut *mut c_void,
        pdata: *mut *mut c_void,
        pnumMemsInMemList: *mut u32,
        pphMemList: *mut *const ur_mem_handle_t,
        ppProperties: *mut *const c_void,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

params! {
    /// `ur_command_buffer_append_native_command_exp_params_t`
    /// (`urCommandBufferAppendNativeCommandExp`, function id 263).
    ur_command_buffer_append_native_command_exp_params_t {
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        ppfnNativeCommand: *mut *mut c_void,
        ppData: *mut *mut c_void,
        phChildCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        pnumSyncPointsInWaitList: *mut u32,
        ppSyncPointWaitList: *mut *const ur_exp_command_buffer_sync_point_t,
        ppSyncPoint: *mut *mut ur_exp_command_buffer_sync_point_t,
    }
}

params! {
    /// `ur_enqueue_command_buffer_exp_params_t` (`urEnqueueCommandBufferExp`,
    /// function id 242).
    ur_enqueue_command_buffer_exp_params_t {
        phQueue: *mut ur_queue_handle_t,
        phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
        pnumEventsInWaitList: *mut u32,
        pphEventWaitList: *mut *const ur_event_handle_t,
        pphEvent: *mut *mut ur_event_handle_t,
    }
}

// ---------------------------------------------------------------------------
// Function pointer types
// ---------------------------------------------------------------------------

/// `urLoaderInit(device_flags, hLoaderConfig)`: must be called once on a
/// loader instance before any other call (else 37, `ERROR_UNINITIALIZED`).
pub type PFN_urLoaderInit = unsafe extern "C" fn(
    device_flags: ur_device_init_flags_t,
    hLoaderConfig: ur_loader_config_handle_t,
) -> ur_result_t;

/// `urAdapterGet(NumEntries, phAdapters, pNumAdapters)`.
pub type PFN_urAdapterGet = unsafe extern "C" fn(
    NumEntries: u32,
    phAdapters: *mut ur_adapter_handle_t,
    pNumAdapters: *mut u32,
) -> ur_result_t;

/// `urPlatformGet(hAdapter, NumEntries, phPlatforms, pNumPlatforms)` (UR 0.12
/// form: one adapter per call).
pub type PFN_urPlatformGet = unsafe extern "C" fn(
    hAdapter: ur_adapter_handle_t,
    NumEntries: u32,
    phPlatforms: *mut ur_platform_handle_t,
    pNumPlatforms: *mut u32,
) -> ur_result_t;

/// `urDeviceGet(hPlatform, DeviceType, NumEntries, phDevices, pNumDevices)`.
pub type PFN_urDeviceGet = unsafe extern "C" fn(
    hPlatform: ur_platform_handle_t,
    DeviceType: ur_device_type_t,
    NumEntries: u32,
    phDevices: *mut ur_device_handle_t,
    pNumDevices: *mut u32,
) -> ur_result_t;

/// `urEventRetain(hEvent)`.
pub type PFN_urEventRetain = unsafe extern "C" fn(hEvent: ur_event_handle_t) -> ur_result_t;

/// `urEventRelease(hEvent)`.
pub type PFN_urEventRelease = unsafe extern "C" fn(hEvent: ur_event_handle_t) -> ur_result_t;

/// `urEventGetInfo(hEvent, propName, propSize, pPropValue, pPropSizeRet)`.
pub type PFN_urEventGetInfo = unsafe extern "C" fn(
    hEvent: ur_event_handle_t,
    propName: ur_event_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t;

/// `urEventGetProfilingInfo(hEvent, propName, propSize, pPropValue, pPropSizeRet)`.
pub type PFN_urEventGetProfilingInfo = unsafe extern "C" fn(
    hEvent: ur_event_handle_t,
    propName: ur_profiling_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t;

/// `urEventGetNativeHandle(hEvent, phNativeEvent)`.
pub type PFN_urEventGetNativeHandle = unsafe extern "C" fn(
    hEvent: ur_event_handle_t,
    phNativeEvent: *mut ur_native_handle_t,
) -> ur_result_t;

/// `urEventWait(numEvents, phEventWaitList)`.
pub type PFN_urEventWait =
    unsafe extern "C" fn(numEvents: u32, phEventWaitList: *const ur_event_handle_t) -> ur_result_t;

/// `urQueueGetInfo(hQueue, propName, propSize, pPropValue, pPropSizeRet)`.
pub type PFN_urQueueGetInfo = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    propName: ur_queue_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t;

/// `urDeviceGetInfo(hDevice, propName, propSize, pPropValue, pPropSizeRet)`.
pub type PFN_urDeviceGetInfo = unsafe extern "C" fn(
    hDevice: ur_device_handle_t,
    propName: ur_device_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t;

/// `urDeviceGetNativeHandle(hDevice, phNativeDevice)`.
pub type PFN_urDeviceGetNativeHandle = unsafe extern "C" fn(
    hDevice: ur_device_handle_t,
    phNativeDevice: *mut ur_native_handle_t,
) -> ur_result_t;

/// `urDeviceGetGlobalTimestamps(hDevice, pDeviceTimestamp, pHostTimestamp)`:
/// a device time and a host time read together, both in ns.
pub type PFN_urDeviceGetGlobalTimestamps = unsafe extern "C" fn(
    hDevice: ur_device_handle_t,
    pDeviceTimestamp: *mut u64,
    pHostTimestamp: *mut u64,
) -> ur_result_t;

/// `urPlatformGetInfo(hPlatform, propName, propSize, pPropValue, pPropSizeRet)`.
pub type PFN_urPlatformGetInfo = unsafe extern "C" fn(
    hPlatform: ur_platform_handle_t,
    propName: ur_platform_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t;

/// `urContextCreate(DeviceCount, phDevices, pProperties, phContext)`.
pub type PFN_urContextCreate = unsafe extern "C" fn(
    DeviceCount: u32,
    phDevices: *const ur_device_handle_t,
    pProperties: *const ur_context_properties_t,
    phContext: *mut ur_context_handle_t,
) -> ur_result_t;

/// `urContextRelease(hContext)`.
pub type PFN_urContextRelease = unsafe extern "C" fn(hContext: ur_context_handle_t) -> ur_result_t;

/// `urQueueCreate(hContext, hDevice, pProperties, phQueue)`.
pub type PFN_urQueueCreate = unsafe extern "C" fn(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pProperties: *const ur_queue_properties_t,
    phQueue: *mut ur_queue_handle_t,
) -> ur_result_t;

/// `urQueueRelease(hQueue)`.
pub type PFN_urQueueRelease = unsafe extern "C" fn(hQueue: ur_queue_handle_t) -> ur_result_t;

/// `urMemBufferCreate(hContext, flags, size, pProperties, phBuffer)`.
pub type PFN_urMemBufferCreate = unsafe extern "C" fn(
    hContext: ur_context_handle_t,
    flags: ur_mem_flags_t,
    size: usize,
    pProperties: *const ur_buffer_properties_t,
    phBuffer: *mut ur_mem_handle_t,
) -> ur_result_t;

/// `urMemRelease(hMem)`.
pub type PFN_urMemRelease = unsafe extern "C" fn(hMem: ur_mem_handle_t) -> ur_result_t;

/// `urEnqueueUSMMemcpy(hQueue, blocking, pDst, pSrc, size,
/// numEventsInWaitList, phEventWaitList, phEvent)`.
pub type PFN_urEnqueueUSMMemcpy = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    pDst: *mut c_void,
    pSrc: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueUSMFill(hQueue, pMem, patternSize, pPattern, size,
/// numEventsInWaitList, phEventWaitList, phEvent)`.
pub type PFN_urEnqueueUSMFill = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    pMem: *mut c_void,
    patternSize: usize,
    pPattern: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueUSMMemcpy2D(hQueue, blocking, pDst, dstPitch, pSrc, srcPitch,
/// width, height, numEventsInWaitList, phEventWaitList, phEvent)`.
pub type PFN_urEnqueueUSMMemcpy2D = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    pDst: *mut c_void,
    dstPitch: usize,
    pSrc: *const c_void,
    srcPitch: usize,
    width: usize,
    height: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueEventsWait` and `urEnqueueEventsWaitWithBarrier` (same
/// prototype): `(hQueue, numEventsInWaitList, phEventWaitList, phEvent)`.
pub type PFN_urEnqueueEventsWait = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueUSMPrefetch(hQueue, pMem, size, flags, numEventsInWaitList,
/// phEventWaitList, phEvent)`; `flags` is a `ur_usm_migration_flags_t`.
pub type PFN_urEnqueueUSMPrefetch = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    flags: u32,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueUSMAdvise(hQueue, pMem, size, advice, phEvent)`: no wait
/// list; `advice` is a `ur_usm_advice_flags_t`.
pub type PFN_urEnqueueUSMAdvise = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    advice: u32,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueTimestampRecordingExp(hQueue, blocking, numEventsInWaitList,
/// phEventWaitList, phEvent)`.
pub type PFN_urEnqueueTimestampRecordingExp = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueEventsWaitWithBarrierExt(hQueue, pProperties,
/// numEventsInWaitList, phEventWaitList, phEvent)`; the properties
/// (`ur_exp_enqueue_ext_properties_t`) are passed through unread.
pub type PFN_urEnqueueEventsWaitWithBarrierExt = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    pProperties: *const c_void,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urEnqueueKernelLaunchWithArgsExp(hQueue, hKernel, workDim,
/// pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, numArgs, pArgs,
/// launchPropList, numEventsInWaitList, phEventWaitList, phEvent)`; the
/// argument and launch property structs are passed through unread.
pub type PFN_urEnqueueKernelLaunchWithArgsExp = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    hKernel: ur_kernel_handle_t,
    workDim: u32,
    pGlobalWorkOffset: *const usize,
    pGlobalWorkSize: *const usize,
    pLocalWorkSize: *const usize,
    numArgs: u32,
    pArgs: *const c_void,
    launchPropList: *const c_void,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urCommandBufferCreateExp(hContext, hDevice, pCommandBufferDesc,
/// phCommandBuffer)`; the descriptor is passed through unread.
pub type PFN_urCommandBufferCreateExp = unsafe extern "C" fn(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pCommandBufferDesc: *const c_void,
    phCommandBuffer: *mut ur_exp_command_buffer_handle_t,
) -> ur_result_t;

/// `urCommandBufferFinalizeExp(hCommandBuffer)`.
pub type PFN_urCommandBufferFinalizeExp =
    unsafe extern "C" fn(hCommandBuffer: ur_exp_command_buffer_handle_t) -> ur_result_t;

/// `urCommandBufferAppendUSMMemcpyExp(hCommandBuffer, pDst, pSrc, size,
/// numSyncPointsInWaitList, pSyncPointWaitList, numEventsInWaitList,
/// phEventWaitList, pSyncPoint, phEvent, phCommand)` (UR 0.12).
pub type PFN_urCommandBufferAppendUSMMemcpyExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    pDst: *mut c_void,
    pSrc: *const c_void,
    size: usize,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urCommandBufferAppendUSMFillExp(hCommandBuffer, pMemory, pPattern,
/// patternSize, size, numSyncPointsInWaitList, pSyncPointWaitList,
/// numEventsInWaitList, phEventWaitList, pSyncPoint, phEvent, phCommand)`
/// (UR 0.12).
pub type PFN_urCommandBufferAppendUSMFillExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    pMemory: *mut c_void,
    pPattern: *const c_void,
    patternSize: usize,
    size: usize,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urCommandBufferAppendKernelLaunchWithArgsExp(hCommandBuffer, hKernel,
/// workDim, pGlobalWorkOffset, pGlobalWorkSize, pLocalWorkSize, numArgs,
/// pArgs, numKernelAlternatives, phKernelAlternatives,
/// numSyncPointsInWaitList, pSyncPointWaitList, numEventsInWaitList,
/// phEventWaitList, pSyncPoint, phEvent, phCommand)` (UR 0.12).
pub type PFN_urCommandBufferAppendKernelLaunchWithArgsExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    hKernel: ur_kernel_handle_t,
    workDim: u32,
    pGlobalWorkOffset: *const usize,
    pGlobalWorkSize: *const usize,
    pLocalWorkSize: *const usize,
    numArgs: u32,
    pArgs: *const c_void,
    numKernelAlternatives: u32,
    phKernelAlternatives: *mut ur_kernel_handle_t,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urEnqueueCommandBufferExp(hQueue, hCommandBuffer, numEventsInWaitList,
/// phEventWaitList, phEvent)`: one replay of a SYCL graph.
pub type PFN_urEnqueueCommandBufferExp = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urCommandBufferAppendMemBufferCopyExp(hCommandBuffer, hSrcMem, hDstMem,
/// srcOffset, dstOffset, size, numSyncPointsInWaitList, pSyncPointWaitList,
/// numEventsInWaitList, phEventWaitList, pSyncPoint, phEvent, phCommand)`.
pub type PFN_urCommandBufferAppendMemBufferCopyExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    hSrcMem: ur_mem_handle_t,
    hDstMem: ur_mem_handle_t,
    srcOffset: usize,
    dstOffset: usize,
    size: usize,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urCommandBufferAppendMemBufferWriteExp(hCommandBuffer, hBuffer, offset,
/// size, pSrc, numSyncPointsInWaitList, pSyncPointWaitList,
/// numEventsInWaitList, phEventWaitList, pSyncPoint, phEvent, phCommand)`.
pub type PFN_urCommandBufferAppendMemBufferWriteExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    hBuffer: ur_mem_handle_t,
    offset: usize,
    size: usize,
    pSrc: *const c_void,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urCommandBufferAppendMemBufferReadExp(hCommandBuffer, hBuffer, offset,
/// size, pDst, numSyncPointsInWaitList, pSyncPointWaitList,
/// numEventsInWaitList, phEventWaitList, pSyncPoint, phEvent, phCommand)`.
pub type PFN_urCommandBufferAppendMemBufferReadExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    hBuffer: ur_mem_handle_t,
    offset: usize,
    size: usize,
    pDst: *mut c_void,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urCommandBufferAppendMemBufferFillExp(hCommandBuffer, hBuffer, pPattern,
/// patternSize, offset, size, numSyncPointsInWaitList, pSyncPointWaitList,
/// numEventsInWaitList, phEventWaitList, pSyncPoint, phEvent, phCommand)`.
pub type PFN_urCommandBufferAppendMemBufferFillExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    hBuffer: ur_mem_handle_t,
    pPattern: *const c_void,
    patternSize: usize,
    offset: usize,
    size: usize,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
    phEvent: *mut ur_event_handle_t,
    phCommand: *mut c_void,
) -> ur_result_t;

/// `urEnqueueNativeCommandExp(hQueue, pfnNativeEnqueue, data,
/// numMemsInMemList, phMemList, pProperties, numEventsInWaitList,
/// phEventWaitList, phEvent)`: the runtime's function enqueues the
/// program's native work at once, on the queue's native queue or stream;
/// the properties are passed through unread.
pub type PFN_urEnqueueNativeCommandExp = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    pfnNativeEnqueue: *mut c_void,
    data: *mut c_void,
    numMemsInMemList: u32,
    phMemList: *const ur_mem_handle_t,
    pProperties: *const c_void,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

/// `urCommandBufferAppendNativeCommandExp(hCommandBuffer, pfnNativeCommand,
/// pData, hChildCommandBuffer, numSyncPointsInWaitList, pSyncPointWaitList,
/// pSyncPoint)`: the runtime's function adds the native work at once
/// (on CUDA and HIP into the child buffer, which becomes one node).
pub type PFN_urCommandBufferAppendNativeCommandExp = unsafe extern "C" fn(
    hCommandBuffer: ur_exp_command_buffer_handle_t,
    pfnNativeCommand: *mut c_void,
    pData: *mut c_void,
    hChildCommandBuffer: ur_exp_command_buffer_handle_t,
    numSyncPointsInWaitList: u32,
    pSyncPointWaitList: *const ur_exp_command_buffer_sync_point_t,
    pSyncPoint: *mut ur_exp_command_buffer_sync_point_t,
) -> ur_result_t;

/// `urEnqueueMemBufferFill(hQueue, hBuffer, pPattern, patternSize, offset,
/// size, numEventsInWaitList, phEventWaitList, phEvent)`.
pub type PFN_urEnqueueMemBufferFill = unsafe extern "C" fn(
    hQueue: ur_queue_handle_t,
    hBuffer: ur_mem_handle_t,
    pPattern: *const c_void,
    patternSize: usize,
    offset: usize,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    #[test]
    fn newtypes_are_transparent() {
        assert_eq!(size_of::<ur_result_t>(), 4);
        assert_eq!(size_of::<ur_queue_flags_t>(), 4);
        assert_eq!(size_of::<ur_backend_t>(), 4);
        assert_eq!(size_of::<ur_native_handle_t>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<ur_event_handle_t>(), size_of::<*mut c_void>());
    }

    #[test]
    fn queue_properties_layout() {
        assert_eq!(size_of::<ur_queue_properties_t>(), 24);
        assert_eq!(align_of::<ur_queue_properties_t>(), 8);
        assert_eq!(offset_of!(ur_queue_properties_t, stype), 0);
        assert_eq!(offset_of!(ur_queue_properties_t, pNext), 8);
        assert_eq!(offset_of!(ur_queue_properties_t, flags), 16);
    }

    #[test]
    fn params_are_arrays_of_pointers() {
        let p = size_of::<*mut c_void>();
        assert_eq!(size_of::<ur_queue_create_params_t>(), 4 * p);
        assert_eq!(size_of::<ur_enqueue_kernel_launch_params_t>(), 9 * p);
        assert_eq!(
            size_of::<ur_enqueue_kernel_launch_with_args_exp_params_t>(),
            12 * p
        );
        assert_eq!(size_of::<ur_enqueue_usm_memcpy_params_t>(), 8 * p);
        assert_eq!(size_of::<ur_enqueue_usm_fill_params_t>(), 8 * p);
        assert_eq!(size_of::<ur_enqueue_usm_memcpy_2d_params_t>(), 11 * p);
        assert_eq!(size_of::<ur_enqueue_mem_buffer_read_params_t>(), 9 * p);
        assert_eq!(size_of::<ur_enqueue_mem_buffer_write_params_t>(), 9 * p);
        assert_eq!(size_of::<ur_enqueue_mem_buffer_copy_params_t>(), 9 * p);
        assert_eq!(size_of::<ur_enqueue_mem_buffer_fill_params_t>(), 9 * p);
        assert_eq!(size_of::<ur_enqueue_events_wait_params_t>(), 4 * p);
        assert_eq!(
            size_of::<ur_enqueue_events_wait_with_barrier_params_t>(),
            4 * p
        );
        assert_eq!(
            size_of::<ur_enqueue_events_wait_with_barrier_ext_params_t>(),
            5 * p
        );
        assert_eq!(size_of::<ur_enqueue_native_command_exp_params_t>(), 9 * p);
    }

    #[test]
    fn wait_list_and_event_offsets() {
        let p = size_of::<*mut c_void>();
        type K = ur_enqueue_kernel_launch_with_args_exp_params_t;
        assert_eq!(offset_of!(K, phQueue), 0);
        assert_eq!(offset_of!(K, pnumEventsInWaitList), 9 * p);
        assert_eq!(offset_of!(K, pphEventWaitList), 10 * p);
        assert_eq!(offset_of!(K, pphEvent), 11 * p);
        type B = ur_enqueue_events_wait_with_barrier_ext_params_t;
        assert_eq!(offset_of!(B, pnumEventsInWaitList), 2 * p);
        assert_eq!(offset_of!(B, pphEvent), 4 * p);
        type Q = ur_queue_create_params_t;
        assert_eq!(offset_of!(Q, ppProperties), 2 * p);
        assert_eq!(offset_of!(Q, pphQueue), 3 * p);
    }

    #[test]
    fn values_that_runtime_facts_rely_on() {
        assert_eq!(ur_result_t::ERROR_UNINITIALIZED.0, 37);
        assert_eq!(ur_result_t::ERROR_PROFILING_INFO_NOT_AVAILABLE.0, 17);
        assert_eq!(ur_function_t::QUEUE_CREATE.0, 92);
        assert_eq!(ur_function_t::ENQUEUE_KERNEL_LAUNCH_WITH_ARGS_EXP.0, 295);
        assert_eq!(ur_queue_flags_t::PROFILING_ENABLE.0, 2);
        assert_eq!(ur_structure_type_t::QUEUE_PROPERTIES.0, 14);
    }

    #[test]
    fn debug_names_known_and_unknown_values() {
        assert_eq!(
            format!("{:?}", ur_result_t::ERROR_UNINITIALIZED),
            "UR_RESULT_ERROR_UNINITIALIZED(37)"
        );
        assert_eq!(format!("{:?}", ur_result_t(12345)), "ur_result_t(12345)");
        assert_eq!(ur_backend_t(99).name(), None);
        assert!(ur_result_t::SUCCESS.is_success());
        assert!(!ur_result_t::ERROR_UNKNOWN.is_success());
    }

    #[test]
    fn queue_flags_ops() {
        let mut f = ur_queue_flags_t::OUT_OF_ORDER_EXEC_MODE_ENABLE;
        assert!(!f.contains(ur_queue_flags_t::PROFILING_ENABLE));
        f |= ur_queue_flags_t::PROFILING_ENABLE;
        assert!(f.contains(ur_queue_flags_t::PROFILING_ENABLE));
        assert_eq!(f, ur_queue_flags_t(3));
    }
}
