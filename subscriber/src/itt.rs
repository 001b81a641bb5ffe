//! The ITT API (Intel's ittnotify) as a collector: `__itt_pause()` /
//! `__itt_resume()` stop and start tracing; `__itt_task_begin/end` and
//! `__itt_task_begin/end_overlapped` are the program's regions
//! ([`syclgraph_graph::regions`]): each begin and end is sent, whether
//! tracing is on or not, and a task of the name `SYCLGRAPH_REGION` gives
//! starts capture ([`crate::capture`]).
//!
//! A task's label is its name, or `domain:name` when another domain used
//! the name first (the first domain to use a name keeps it bare: rows
//! already written never change). Each (domain, name) pair is looked up
//! once, under a mutex; its label, and whether it is the captured name,
//! are then cached in the string handle for that domain (the next task
//! of that handle in that domain reads one atomic).
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
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use syclgraph_graph::record::StrId;

use crate::session::Session;

/// `__itt_domain` (ittnotify.h): the program reads `flags` (non-zero:
/// enabled) before each call that takes the domain. `extra1` ("reserved
/// to the runtime") holds our number for its name ([`domain_number`]; 0:
/// not numbered yet: the ittnotify static part makes the domains created
/// before it loaded us itself, with 0 there).
#[repr(C)]
pub struct IttDomain {
    flags: c_int,
    name_a: *const c_char,
    name_w: *mut c_void,
    extra1: AtomicI32,
    extra2: *mut c_void,
    next: *mut IttDomain,
}

/// `__itt_string_handle`; `extra2` ("reserved to the runtime", as
/// `extra1`) caches the name's label in the domain it was used in last
/// ([`Cached`]; 0: none yet).
#[repr(C)]
pub struct IttString {
    str_a: *const c_char,
    str_w: *mut c_void,
    extra1: AtomicI32,
    extra2: AtomicU64,
    next: *mut IttString,
}

/// A string handle's label in one domain, packed in one `u64`: bit 63
/// set, the domain's number in bits 33..63, bit 32 whether the name is the
/// captured region's, the label in bits 0..32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cached {
    domain: u32,
    named: bool,
    label: StrId,
}

impl Cached {
    fn pack(self) -> u64 {
        1 << 63
            | u64::from(self.domain & 0x3fff_ffff) << 33
            | u64::from(self.named) << 32
            | u64::from(self.label)
    }

    fn unpack(v: u64) -> Option<Cached> {
        (v >> 63 == 1).then_some(Cached {
            domain: (v >> 33) as u32 & 0x3fff_ffff,
            named: v >> 32 & 1 == 1,
            label: v as u32,
        })
    }
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

/// Domain numbers by name, labels by (domain number, name), and the first
/// domain that used each name (cold: once per domain, and per pair and
/// string handle).
#[derive(Default)]
struct Labels {
    domains: HashMap<Vec<u8>, u32>,
    first_domain: HashMap<Vec<u8>, u32>,
    labels: HashMap<(u32, Vec<u8>), StrId>,
}

static LABELS: Mutex<Option<Labels>> = Mutex::new(None);

/// The bit of a domain's number that says its tasks are not regions:
/// oneTBB's own domains (`tbb`, `tbb.*`: the OpenCL CPU device's TBB marks
/// its internal work with ITT tasks on every thread).
const IGNORED: u32 = 1 << 30;

/// The number of the domain named `name` (from 1, the same for every
/// domain of that name, [`IGNORED`] set for oneTBB's).
fn domain_number(name: &[u8]) -> u32 {
    let mut labels = LABELS.lock().unwrap_or_else(PoisonError::into_inner);
    let labels = labels.get_or_insert_with(Labels::default);
    let next = labels.domains.len() as u32 + 1;
    *labels.domains.entry(name.to_vec()).or_insert_with(|| {
        if name == b"tbb" || name.starts_with(b"tbb.") {
            next | IGNORED
        } else {
            next
        }
    })
}

/// The number of `domain` (0 for none), numbered now if it was not.
fn number_of(domain: Option<&IttDomain>) -> u32 {
    let Some(d) = domain else {
        return 0;
    };
    match d.extra1.load(Ordering::Relaxed) as u32 {
        0 => {
            // SAFETY: `name_a` of a live domain is its NUL-terminated name.
            let n = domain_number(unsafe { CStr::from_ptr(d.name_a) }.to_bytes());
            d.extra1.store(n as i32, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

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
                extra1: AtomicI32::new(domain_number(name.to_bytes()) as i32),
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
                extra2: AtomicU64::new(0),
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

/// The label of task `name` in `domain` (interned through the recorder,
/// qualified by the domain when another domain used the name first) and
/// whether it is the captured region's name: cached in the handle. `None`
/// for a task of an [`IGNORED`] domain.
fn label(session: &Session, domain: *const IttDomain, name: *const IttString) -> Option<Cached> {
    // SAFETY: null or a domain handle (ours or the static part's), never freed.
    let domain = unsafe { domain.as_ref() };
    let number = number_of(domain);
    if number & IGNORED != 0 {
        return None;
    }
    Some(label_in(session, domain, number, name))
}

/// [`label`] in a domain not ignored, numbered `number`.
#[inline]
fn label_in(
    session: &Session,
    domain: Option<&IttDomain>,
    number: u32,
    name: *const IttString,
) -> Cached {
    // SAFETY: null or a string handle (ours, or the static part's made
    // before it loaded us), never freed.
    let Some(name) = (unsafe { name.as_ref() }) else {
        return Cached {
            domain: number,
            named: false,
            label: session.recorder.intern_label("task"),
        };
    };
    if let Some(c) = Cached::unpack(name.extra2.load(Ordering::Relaxed)) {
        if c.domain == number {
            return c;
        }
    }
    label_slow(session, domain, number, name)
}

/// [`label`] when the handle's cache is for another domain (or empty).
#[cold]
fn label_slow(
    session: &Session,
    domain: Option<&IttDomain>,
    number: u32,
    name: &IttString,
) -> Cached {
    // SAFETY: `str_a` of a live handle is its NUL-terminated name (kept in
    // STRINGS for ours, for good by the static part for its own).
    let text = unsafe { CStr::from_ptr(name.str_a) }.to_bytes();
    let mut labels = LABELS.lock().unwrap_or_else(PoisonError::into_inner);
    let labels = labels.get_or_insert_with(Labels::default);
    let first = *labels.first_domain.entry(text.to_vec()).or_insert(number);
    let shown = if first == number {
        String::from_utf8_lossy(text).into_owned()
    } else {
        // SAFETY: `name_a` of a live domain is its NUL-terminated name.
        let domain_name = domain.map_or(std::borrow::Cow::Borrowed(""), |d| unsafe {
            CStr::from_ptr(d.name_a).to_string_lossy()
        });
        format!("{domain_name}:{}", String::from_utf8_lossy(text))
    };
    let label = *labels
        .labels
        .entry((number, text.to_vec()))
        .or_insert_with(|| session.recorder.intern_label(&shown));
    let named = session
        .captured_region()
        .is_some_and(|r| r.as_bytes() == text || r == shown);
    let cached = Cached {
        domain: number,
        named,
        label,
    };
    name.extra2.store(cached.pack(), Ordering::Relaxed);
    cached
}

/// An overlapped task's id as one non-zero number.
fn overlapped_id(id: IttId) -> u64 {
    match id.d1 ^ id.d2.rotate_left(29) ^ id.d3.rotate_left(47) {
        0 => 1,
        h => h,
    }
}

/// A task (`id` 0: nested) named `name` in `domain` began on this thread.
fn begin(domain: *const IttDomain, name: *const IttString, id: u64) {
    let Some(session) = crate::session::current() else {
        return;
    };
    let Some(Cached { named, label, .. }) = label(session, domain, name) else {
        return;
    };
    let recorder = &session.recorder;
    if recorder.capture_begin(named, id) {
        session.entered_captured_region();
    }
    recorder.region_begin(label, id);
}

/// The task `id` (0: the innermost nested one) of `domain` ended on this
/// thread.
fn end(domain: *const IttDomain, id: u64) {
    let Some(session) = crate::session::current() else {
        return;
    };
    // SAFETY: as in `label`.
    if number_of(unsafe { domain.as_ref() }) & IGNORED != 0 {
        return;
    }
    session.recorder.region_end(id);
    if session.recorder.capture_end(id) {
        session.left_captured_region();
    }
}

extern "C" fn task_begin(
    domain: *const IttDomain,
    _id: IttId,
    _parent: IttId,
    name: *const IttString,
) {
    let _ = catch_unwind(|| begin(domain, name, 0));
}

extern "C" fn task_end(domain: *const IttDomain) {
    let _ = catch_unwind(|| end(domain, 0));
}

extern "C" fn task_begin_overlapped(
    domain: *const IttDomain,
    id: IttId,
    _parent: IttId,
    name: *const IttString,
) {
    let _ = catch_unwind(|| begin(domain, name, overlapped_id(id)));
}

extern "C" fn task_end_overlapped(domain: *const IttDomain, id: IttId) {
    let _ = catch_unwind(|| end(domain, overlapped_id(id)));
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
        b"__itt_task_begin_overlapped" => {
            task_begin_overlapped as extern "C" fn(*const IttDomain, IttId, IttId, *const IttString)
                as *mut c_void
        }
        b"__itt_task_end_overlapped" => {
            task_end_overlapped as extern "C" fn(*const IttDomain, IttId) as *mut c_void
        }
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
        // SAFETY: as above.
        let number = unsafe { (*a).extra1.load(Ordering::Relaxed) } as u32;
        assert_eq!(number, domain_number(b"syclgraph.test"));
        assert_ne!(domain_number(b"tbb") & IGNORED, 0);
        assert_ne!(domain_number(b"tbb.flow") & IGNORED, 0);
        assert_eq!(domain_number(b"tbbx") & IGNORED, 0);
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
