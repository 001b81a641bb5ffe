//! The ITT API (Intel's ittnotify) as a collector: `__itt_pause()` /
//! `__itt_resume()` stop and start tracing, `__itt_task_begin/end` become
//! named host spans ([`SpanKind::Task`]).
//!
//! How a program reaches us: the ittnotify static part linked into the
//! program (or into a library such as the `ittapi` Python module), on its
//! first ITT call, reads `INTEL_LIBITTNOTIFY64`, `dlopen`s that library and,
//! when it exports `__itt_api_init`, calls it with the static part's
//! `__itt_global`. Its `api_list_ptr` lists every ITT function by name with
//! the pointer the program calls through; [`__itt_api_init`] points the ones
//! we implement at ours and the rest at their `null_func` (what ittnotify
//! itself does for a collector without them). Only `__itt_api_init` is
//! exported: the ITT names stay free for anything else in the process.
//!
//! Domains and string handles are ours, made once per name and never
//! freed (programs keep the pointers for good, as with any collector).

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::catch_unwind;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};

use syclgraph_graph::record::SpanKind;

/// `__itt_domain` (ittnotify.h): the program reads `flags` (non-zero:
/// enabled) before each call that takes the domain.
#[repr(C)]
pub struct IttDomain {
    flags: c_int,
    name_a: *const c_char,
    name_w: *mut c_void,
    extra1: c_int,
    extra2: *mut c_void,
    next: *mut IttDomain,
}

/// `__itt_string_handle`; `extra1` ("reserved to the runtime") caches our
/// interned id + 1 (0: not interned yet).
#[repr(C)]
pub struct IttString {
    str_a: *const c_char,
    str_w: *mut c_void,
    extra1: AtomicI32,
    extra2: *mut c_void,
    next: *mut IttString,
}

/// `__itt_id`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IttId {
    d1: u64,
    d2: u64,
    d3: u64,
}

/// `__itt_api_info`: one ITT function of the static part.
#[repr(C)]
pub struct IttApiInfo {
    name: *const c_char,
    func_ptr: *mut *mut c_void,
    init_func: *mut c_void,
    null_func: *mut c_void,
    group: c_int,
}

/// The start of `__itt_global` (ittnotify_config.h, 8-byte packing, which
/// on x86-64 is the natural layout), up to the API list.
#[repr(C)]
pub struct IttGlobal {
    magic: [u8; 8],
    version_major: std::ffi::c_ulong,
    version_minor: std::ffi::c_ulong,
    version_build: std::ffi::c_ulong,
    api_initialized: std::ffi::c_long,
    mutex_initialized: std::ffi::c_long,
    atomic_counter: std::ffi::c_long,
    mutex: libc::pthread_mutex_t,
    lib: *mut c_void,
    error_handler: *mut c_void,
    dll_path_ptr: *mut *const c_char,
    api_list_ptr: *mut IttApiInfo,
}

/// Addresses stored as integers (the pointed-to handles live for good).
type Handles = HashMap<CString, usize>;

static DOMAINS: Mutex<Option<Handles>> = Mutex::new(None);
static STRINGS: Mutex<Option<Handles>> = Mutex::new(None);

/// The handle for `name` in `table`, made by `make` on first use.
fn handle(
    table: &Mutex<Option<Handles>>,
    name: &CStr,
    make: impl FnOnce(*const c_char) -> usize,
) -> usize {
    let mut table = table.lock().unwrap_or_else(PoisonError::into_inner);
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(&h) = table.get(name) {
        return h;
    }
    let owned = name.to_owned();
    // The key's heap buffer does not move with the map: the handle may
    // point at it for good.
    let h = make(owned.as_ptr());
    table.insert(owned, h);
    h
}

extern "C" fn domain_create(name: *const c_char) -> *mut IttDomain {
    if name.is_null() {
        return std::ptr::null_mut();
    }
    catch_unwind(|| {
        // SAFETY: ITT passes a NUL-terminated name, alive for the call.
        let name = unsafe { CStr::from_ptr(name) };
        handle(&DOMAINS, name, |name_a| {
            Box::into_raw(Box::new(IttDomain {
                flags: 1,
                name_a,
                name_w: std::ptr::null_mut(),
                extra1: 0,
                extra2: std::ptr::null_mut(),
                next: std::ptr::null_mut(),
            })) as usize
        }) as *mut IttDomain
    })
    .unwrap_or(std::ptr::null_mut())
}

extern "C" fn string_handle_create(name: *const c_char) -> *mut IttString {
    if name.is_null() {
        return std::ptr::null_mut();
    }
    catch_unwind(|| {
        // SAFETY: as in `domain_create`.
        let name = unsafe { CStr::from_ptr(name) };
        handle(&STRINGS, name, |str_a| {
            Box::into_raw(Box::new(IttString {
                str_a,
                str_w: std::ptr::null_mut(),
                extra1: AtomicI32::new(0),
                extra2: std::ptr::null_mut(),
                next: std::ptr::null_mut(),
            })) as usize
        }) as *mut IttString
    })
    .unwrap_or(std::ptr::null_mut())
}

extern "C" fn pause() {
    // Catches its own panics.
    crate::c_api::syclgraph_stop();
}

extern "C" fn resume() {
    // Catches its own panics.
    crate::c_api::syclgraph_start();
}

extern "C" fn task_begin(
    _domain: *const IttDomain,
    _id: IttId,
    _parent: IttId,
    name: *const IttString,
) {
    let _ = catch_unwind(|| {
        let Some(recorder) = crate::session::recorder() else {
            return;
        };
        // SAFETY: null or a handle from `string_handle_create`, never freed.
        let name = unsafe { name.as_ref() };
        let label = name.map_or(0, |n| {
            let cached = n.extra1.load(Ordering::Relaxed);
            if cached > 0 {
                return cached as u32 - 1;
            }
            // SAFETY: `str_a` points at the CString kept in STRINGS.
            let text = unsafe { CStr::from_ptr(n.str_a) }.to_string_lossy();
            let id = recorder.intern_label(&text);
            n.extra1.store(id as i32 + 1, Ordering::Relaxed);
            id
        });
        recorder.user_span(SpanKind::Task, true, label, name.is_some());
    });
}

extern "C" fn task_end(_domain: *const IttDomain) {
    let _ = catch_unwind(|| {
        if let Some(recorder) = crate::session::recorder() {
            recorder.user_span(SpanKind::Task, false, 0, true);
        }
    });
}

/// The ITT functions syclgraph implements, by their name in the API list.
fn implementation(name: &[u8]) -> Option<*mut c_void> {
    Some(match name {
        b"__itt_pause" => pause as extern "C" fn() as *mut c_void,
        b"__itt_resume" => resume as extern "C" fn() as *mut c_void,
        b"__itt_domain_create" => {
            domain_create as extern "C" fn(*const c_char) -> *mut IttDomain as *mut c_void
        }
        b"__itt_string_handle_create" => {
            string_handle_create as extern "C" fn(*const c_char) -> *mut IttString as *mut c_void
        }
        b"__itt_task_begin" => {
            task_begin as extern "C" fn(*const IttDomain, IttId, IttId, *const IttString)
                as *mut c_void
        }
        b"__itt_task_end" => task_end as extern "C" fn(*const IttDomain) as *mut c_void,
        _ => return None,
    })
}

/// Called by the ittnotify static part of the program once it loaded
/// libsyclgraph.so (named by `INTEL_LIBITTNOTIFY64`): points each ITT
/// function of its list at ours, or at its `null_func`.
///
/// # Safety
/// `global` is null or the static part's `__itt_global`, whose
/// `api_list_ptr` ends with an entry whose name is null.
#[no_mangle]
pub unsafe extern "C" fn __itt_api_init(global: *mut IttGlobal, _groups: c_int) {
    let _ = catch_unwind(|| {
        // SAFETY: null or the static part's global (the caller's contract).
        let Some(global) = (unsafe { global.as_mut() }) else {
            return;
        };
        let mut entry = global.api_list_ptr;
        if entry.is_null() {
            return;
        }
        // SAFETY: the list ends with a null name; every func_ptr points
        // at the static part's pointer for that function, writable.
        unsafe {
            while !(*entry).name.is_null() {
                let name = CStr::from_ptr((*entry).name).to_bytes();
                let ours = implementation(name).unwrap_or((*entry).null_func);
                if !(*entry).func_ptr.is_null() {
                    *(*entry).func_ptr = ours;
                }
                entry = entry.add(1);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_list_offset_matches_ittnotify() {
        // magic 8, three version words, three counters, a 40-byte
        // pthread mutex, lib, error handler, dll path: 120.
        assert_eq!(std::mem::offset_of!(IttGlobal, api_list_ptr), 120);
        assert_eq!(std::mem::size_of::<IttApiInfo>(), 40);
        assert_eq!(std::mem::size_of::<IttDomain>(), 48);
        assert_eq!(std::mem::size_of::<IttString>(), 40);
    }

    #[test]
    fn handles_are_made_once_per_name() {
        let a = domain_create(c"syclgraph.test".as_ptr());
        let b = domain_create(c"syclgraph.test".as_ptr());
        assert_eq!(a, b);
        // SAFETY: a live handle from domain_create.
        assert_eq!(unsafe { (*a).flags }, 1);
        let s = string_handle_create(c"step".as_ptr());
        // SAFETY: a live handle from string_handle_create.
        assert_eq!(unsafe { CStr::from_ptr((*s).str_a) }, c"step");
        assert!(domain_create(std::ptr::null()).is_null());
    }

    #[test]
    fn api_init_fills_ours_and_null_funcs() {
        let mut pause_ptr: *mut c_void = std::ptr::null_mut();
        let mut other_ptr: *mut c_void = std::ptr::dangling_mut::<c_void>();
        let null_func = 0x1234 as *mut c_void;
        let mut list = [
            IttApiInfo {
                name: c"__itt_pause".as_ptr(),
                func_ptr: &mut pause_ptr,
                init_func: std::ptr::null_mut(),
                null_func,
                group: 0,
            },
            IttApiInfo {
                name: c"__itt_frame_begin_v3".as_ptr(),
                func_ptr: &mut other_ptr,
                init_func: std::ptr::null_mut(),
                null_func,
                group: 0,
            },
            IttApiInfo {
                name: std::ptr::null(),
                func_ptr: std::ptr::null_mut(),
                init_func: std::ptr::null_mut(),
                null_func: std::ptr::null_mut(),
                group: 0,
            },
        ];
        // SAFETY: all-zero is a valid IttGlobal (integers, null pointers,
        // an unlocked-looking mutex never used).
        let mut global: IttGlobal = unsafe { std::mem::zeroed() };
        global.api_list_ptr = list.as_mut_ptr();
        // SAFETY: a global whose list ends with a null name.
        unsafe { __itt_api_init(&mut global, 0) };
        assert_eq!(pause_ptr, pause as extern "C" fn() as *mut c_void);
        assert_eq!(other_ptr, null_func);
    }
}
