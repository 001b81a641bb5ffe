//! Raw FFI for the parts of the XPTI tracing framework syclgraph uses.
//!
//! Declarations follow `xpti/xpti_data_types.h` and `xpti_trace_framework.h`
//! of the DPC++ runtime (intel/llvm `xpti/include`). The framework library is
//! not linked: its functions are looked up at run time (see the
//! `Xpti*Fn` pointer types) from the dispatcher the runtime already loaded.
//!
//! The C++ shim built by `build.rs` walks `metadata_t` (a
//! `std::unordered_map`) and asserts, at build time, that the layouts below
//! match the installed headers.
#![warn(missing_docs)]
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

pub mod compat;
#[cfg(test)]
mod xpti_headers_tests;

/// `xpti::string_id_t`.
pub type string_id_t = u32;
/// `xpti::object_id_t`.
pub type object_id_t = i32;
/// `xpti::stream_id_t`.
pub type stream_id_t = u8;
/// `xpti::result_t` (0 is success).
pub type result_t = i32;

/// `xpti::uid_t`: the 128-bit universal id of a payload.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct uid_t {
    /// File string id (upper 32 bits) and line (lower 32 bits).
    pub p1: u64,
    /// Function/kernel string id.
    pub p2: u64,
    /// Address of the kernel or SYCL object.
    pub p3: u64,
}

/// `xpti::payload_t`: where a trace point is in the user's code.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct payload_t {
    /// Name of the trace point (kernel name, operation).
    pub name: *const c_char,
    /// Stack trace, rarely set.
    pub stack_trace: *const c_char,
    /// Source file, or null / `<unknown-file>`.
    pub source_file: *const c_char,
    /// Line number (`u32::MAX` or 0 when unknown).
    pub line_no: u32,
    /// Column number.
    pub column_no: u32,
    /// Code address.
    pub code_ptr_va: *const c_void,
    /// Framework-internal hash.
    pub internal: u64,
    /// `payload_flag_t` bits telling which fields are valid.
    pub flags: u64,
    /// Universal id.
    pub uid: uid_t,
}

/// Size in bytes of `xpti::metadata_t` (`std::unordered_map<u32, i32>` in
/// libstdc++). Checked against the shim at start-up.
pub const METADATA_T_SIZE: usize = 56;

/// `xpti::reserved_data_t`: the payload pointer and the metadata map.
#[repr(C)]
pub struct reserved_data_t {
    /// The event's payload.
    pub payload: *mut payload_t,
    /// Opaque storage of the `metadata_t` map; walk it with [`syclgraph_visit_metadata`].
    pub metadata: [u64; METADATA_T_SIZE / 8],
}

/// `xpti::trace_event_data_t`: the event every callback receives.
#[repr(C)]
pub struct trace_event_data_t {
    /// Unique id of the event (the code location, mostly).
    pub unique_id: u64,
    /// Data id.
    pub data_id: u64,
    /// Instance id of the last creation.
    pub instance_id: u64,
    /// `trace_event_type_t`.
    pub event_type: u16,
    /// `trace_activity_type_t`.
    pub activity_type: u16,
    /// Unused padding.
    pub unused: u32,
    /// For edges: unique_id of the source node event.
    pub source_id: u64,
    /// For edges: unique_id of the target node event.
    pub target_id: u64,
    /// Payload and metadata.
    pub reserved: reserved_data_t,
    /// Runtime's own data.
    pub global_user_data: *mut c_void,
    /// `trace_event_flag_t` bits.
    pub flags: u64,
}

/// `xpti::object_data_t`: a metadata value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct object_data_t {
    /// Byte count of `data`.
    pub size: usize,
    /// The bytes.
    pub data: *const c_char,
    /// `metadata_type_t`.
    pub type_: u8,
}

/// `xpti::function_with_args_t`: what the `ur.call.debug` stream delivers.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct function_with_args_t {
    /// Stable id of the API function (`ur_function_t`).
    pub function_id: u32,
    /// Its name.
    pub function_name: *const c_char,
    /// The `ur_<fn>_params_t` struct of pointers to the arguments.
    pub args_data: *mut c_void,
    /// Pointer to the return value (valid in the `_end` callback).
    pub ret_data: *mut c_void,
    /// Provisional extra data.
    pub user_data: *mut c_void,
}

/// `metadata_type_t` values.
pub mod metadata_type {
    /// Raw bytes.
    pub const BINARY: u8 = 0;
    /// A string (may or may not include its NUL).
    pub const STRING: u8 = 1;
    /// A signed little-endian integer.
    pub const SIGNED_INTEGER: u8 = 2;
    /// An unsigned little-endian integer.
    pub const UNSIGNED_INTEGER: u8 = 3;
    /// A float or double.
    pub const FLOATING: u8 = 4;
    /// A boolean.
    pub const BOOLEAN: u8 = 5;
}

/// `trace_point_type_t` values (begin = n << 1, end = n << 1 | 1).
pub mod trace_point {
    /// graph_create.
    pub const GRAPH_CREATE: u16 = 1 << 1;
    /// node_create.
    pub const NODE_CREATE: u16 = 2 << 1;
    /// edge_create.
    pub const EDGE_CREATE: u16 = 3 << 1;
    /// task_begin.
    pub const TASK_BEGIN: u16 = 5 << 1;
    /// task_end.
    pub const TASK_END: u16 = 5 << 1 | 1;
    /// barrier_begin.
    pub const BARRIER_BEGIN: u16 = 6 << 1;
    /// barrier_end.
    pub const BARRIER_END: u16 = 6 << 1 | 1;
    /// signal.
    pub const SIGNAL: u16 = 8 << 1;
    /// wait_begin.
    pub const WAIT_BEGIN: u16 = 11 << 1;
    /// wait_end.
    pub const WAIT_END: u16 = 11 << 1 | 1;
    /// function_with_args_begin.
    pub const FUNCTION_WITH_ARGS_BEGIN: u16 = 14 << 1;
    /// function_with_args_end.
    pub const FUNCTION_WITH_ARGS_END: u16 = 14 << 1 | 1;
    /// queue_create.
    pub const QUEUE_CREATE: u16 = 21 << 1;
    /// queue_destroy.
    pub const QUEUE_DESTROY: u16 = 21 << 1 | 1;
}

/// `stream_detail_level_t` values.
pub mod detail_level {
    /// No optional data.
    pub const NONE: u8 = 0;
    /// Basic optional data.
    pub const BASIC: u8 = 1;
    /// The default.
    pub const NORMAL: u8 = 2;
    /// Everything.
    pub const VERBOSE: u8 = 3;
}

/// `tracepoint_callback_api_t`: the signature of every trace point callback.
pub type tracepoint_callback_api_t = unsafe extern "C" fn(
    trace_type: u16,
    parent: *mut trace_event_data_t,
    event: *mut trace_event_data_t,
    instance: u64,
    user_data: *const c_void,
);

/// `xptiRegisterStream`.
pub type XptiRegisterStreamFn = unsafe extern "C" fn(stream_name: *const c_char) -> stream_id_t;
/// `xptiRegisterCallback`.
pub type XptiRegisterCallbackFn = unsafe extern "C" fn(
    stream: stream_id_t,
    trace_type: u16,
    cb: tracepoint_callback_api_t,
) -> result_t;
/// `xptiUnregisterCallback` (same signature as `xptiRegisterCallback`).
pub type XptiUnregisterCallbackFn = XptiRegisterCallbackFn;
/// `xptiLookupString`.
pub type XptiLookupStringFn = unsafe extern "C" fn(id: string_id_t) -> *const c_char;
/// `xptiLookupObject`.
pub type XptiLookupObjectFn = unsafe extern "C" fn(id: object_id_t) -> object_data_t;
/// `xptiQueryMetadata`.
pub type XptiQueryMetadataFn = unsafe extern "C" fn(event: *mut trace_event_data_t) -> *mut c_void;
/// `xptiQueryPayload`.
pub type XptiQueryPayloadFn =
    unsafe extern "C" fn(event: *mut trace_event_data_t) -> *const payload_t;

/// `xptiGetStashedTuple` (the C++ `uint64_t &` is a pointer in the ABI).
pub type XptiGetStashedTupleFn =
    unsafe extern "C" fn(key: *mut *mut c_char, value: *mut u64) -> result_t;

/// The visitor [`syclgraph_visit_metadata`] calls once per pair.
pub type MetadataVisitor = unsafe extern "C" fn(
    ctx: *mut c_void,
    key: *const c_char,
    value: *const c_char,
    size: usize,
    type_: u8,
);

extern "C" {
    /// Walks the `metadata_t` at `md` (from `xptiQueryMetadata`; may be null),
    /// calling `visit(ctx, key, value, size, type)` for each pair. Returns the
    /// number of pairs.
    pub fn syclgraph_visit_metadata(
        md: *const c_void,
        lookup_string: XptiLookupStringFn,
        lookup_object: XptiLookupObjectFn,
        visit: MetadataVisitor,
        ctx: *mut c_void,
    ) -> usize;
    /// `sizeof(xpti::metadata_t)` in the headers the shim was built with.
    pub fn syclgraph_metadata_size() -> usize;
    /// `sizeof(xpti::trace_event_data_t)` in the headers the shim was built with.
    pub fn syclgraph_trace_event_size() -> usize;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_the_headers_the_shim_was_built_with() {
        // SAFETY: both functions only return a constant.
        let (md, ev) = unsafe { (syclgraph_metadata_size(), syclgraph_trace_event_size()) };
        assert_eq!(md, METADATA_T_SIZE);
        assert_eq!(ev, size_of::<trace_event_data_t>());
        assert_eq!(size_of::<payload_t>(), 80);
        assert_eq!(offset_of!(payload_t, line_no), 24);
        assert_eq!(offset_of!(trace_event_data_t, source_id), 32);
        assert_eq!(offset_of!(trace_event_data_t, reserved), 48);
        assert_eq!(size_of::<object_data_t>(), 24);
        assert_eq!(size_of::<function_with_args_t>(), 40);
    }
}
