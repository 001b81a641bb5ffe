//! The XPTI framework, loaded once at run time, and safe views of its events.
//!
//! The framework library (the "dispatcher") is already in the process when
//! the runtime calls our `xptiTraceInit`: we open it again by the path in
//! `XPTI_FRAMEWORK_DISPATCHER` (the same instance, since it is loaded) and
//! take the few functions we call from it. Nothing is linked at build time.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

use xpti_sys as sys;

/// The XPTI functions syclgraph calls, looked up once.
pub struct Xpti {
    /// Keeps the framework library mapped while the pointers are used.
    _library: libloading::Library,
    register_stream: sys::XptiRegisterStreamFn,
    register_callback: sys::XptiRegisterCallbackFn,
    unregister_callback: sys::XptiUnregisterCallbackFn,
    lookup_string: sys::XptiLookupStringFn,
    lookup_object: sys::XptiLookupObjectFn,
    query_metadata: sys::XptiQueryMetadataFn,
    get_stashed_tuple: Option<sys::XptiGetStashedTupleFn>,
    /// The runtime's `"queue_id"` key ([`Xpti::stashed_queue_id`]).
    queue_id_key: RememberedKey,
}

/// Why the framework's functions could not be had.
#[derive(Debug)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Xpti {
    /// Finds the XPTI framework the runtime loaded (by `XPTI_FRAMEWORK_DISPATCHER`,
    /// then by soname) and looks up the functions we use.
    pub fn load() -> Result<Xpti, LoadError> {
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        if let Some(path) = std::env::var_os("XPTI_FRAMEWORK_DISPATCHER") {
            names.push(path);
        }
        names.push("libxptifw.so.1".into());
        names.push("libxptifw.so".into());
        let mut last_error = String::from("no candidate");
        for name in &names {
            // SAFETY: the framework library is already loaded by the runtime;
            // opening it again runs no initialisers and returns the same instance.
            match unsafe { libloading::Library::new(name) } {
                Ok(library) => return Self::from_library(library),
                Err(e) => last_error = e.to_string(),
            }
        }
        Err(LoadError(format!(
            "the XPTI framework library could not be opened ({last_error})"
        )))
    }

    fn from_library(library: libloading::Library) -> Result<Xpti, LoadError> {
        /// Looks a symbol up as a plain function pointer of type `T`.
        fn get<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, LoadError> {
            // SAFETY: each call site names the pointer type of that symbol as
            // declared in xpti_trace_framework.h (see xpti-sys).
            unsafe { lib.get::<T>(name) }.map(|s| *s).map_err(|e| {
                LoadError(format!(
                    "the XPTI framework lacks {}: {e}",
                    String::from_utf8_lossy(&name[..name.len() - 1])
                ))
            })
        }
        Ok(Xpti {
            register_stream: get(&library, b"xptiRegisterStream\0")?,
            register_callback: get(&library, b"xptiRegisterCallback\0")?,
            unregister_callback: get(&library, b"xptiUnregisterCallback\0")?,
            lookup_string: get(&library, b"xptiLookupString\0")?,
            lookup_object: get(&library, b"xptiLookupObject\0")?,
            query_metadata: get(&library, b"xptiQueryMetadata\0")?,
            get_stashed_tuple: get(&library, b"xptiGetStashedTuple\0").ok(),
            queue_id_key: RememberedKey::new(b"queue_id\0"),
            _library: library,
        })
    }

    /// Registers `callback` for `trace_type` on `stream`. Returns false when
    /// the framework refused it.
    pub fn register(
        &self,
        stream: &CStr,
        trace_type: u16,
        callback: sys::tracepoint_callback_api_t,
    ) -> bool {
        self.set_callback(self.register_callback, stream, trace_type, callback)
    }

    /// Removes a callback registered with [`Xpti::register`]. Never call it
    /// from inside a callback (the framework may hold its callback lock).
    pub fn unregister(
        &self,
        stream: &CStr,
        trace_type: u16,
        callback: sys::tracepoint_callback_api_t,
    ) -> bool {
        self.set_callback(self.unregister_callback, stream, trace_type, callback)
    }

    /// Calls `xptiRegisterCallback` or `xptiUnregisterCallback` (`change`).
    fn set_callback(
        &self,
        change: sys::XptiRegisterCallbackFn,
        stream: &CStr,
        trace_type: u16,
        callback: sys::tracepoint_callback_api_t,
    ) -> bool {
        // SAFETY: `stream` is a valid C string; the callback has the
        // signature the framework expects and lives as long as the library.
        unsafe {
            let id = (self.register_stream)(stream.as_ptr());
            change(id, trace_type, callback) == 0
        }
    }

    /// The `queue_id` the runtime stashed for the current submission on
    /// this thread, if it stashed one (DPC++ stashes the tuple
    /// `("queue_id", id)`). This runs at every submission: the key is
    /// compared in place, without reading it as a Rust string, and once a
    /// key read `queue_id` its address answers alone (DPC++ stashes one
    /// global constant, `XPTI_QUEUE_INSTANCE_ID_KEY`, so that the pointer
    /// never goes stale: no other string can sit at that address).
    #[inline]
    pub fn stashed_queue_id(&self) -> Option<u64> {
        let get = self.get_stashed_tuple?;
        let mut key: *mut c_char = std::ptr::null_mut();
        let mut value = 0u64;
        // SAFETY: both out-pointers are valid for writes; the key string is
        // owned by the runtime and lives for the process (a literal).
        let result = unsafe { get(&mut key, &mut value) };
        if result != 0 || key.is_null() {
            return None;
        }
        // SAFETY: non-null (checked above); the runtime's key is a
        // NUL-terminated literal that stays where it is.
        unsafe { self.queue_id_key.is(key) }.then_some(value)
    }

    /// Calls `visit(key, value)` for every metadata pair of `event`, values
    /// rendered as text.
    pub fn for_each_metadata(&self, event: EventRef<'_>, mut visit: impl FnMut(&str, String)) {
        // SAFETY: `event` points at a live event for the duration of the
        // callback that handed it to us.
        let md = unsafe { (self.query_metadata)(event.ptr) };
        if md.is_null() {
            return;
        }
        let mut visitor: &mut dyn FnMut(&str, String) = &mut visit;
        // SAFETY: `md` came from xptiQueryMetadata; the visitor context is a
        // pointer to `visitor`, alive for the whole call, used only by
        // `metadata_trampoline` below.
        unsafe {
            sys::syclgraph_visit_metadata(
                md,
                self.lookup_string,
                self.lookup_object,
                metadata_trampoline,
                (&mut visitor) as *mut &mut dyn FnMut(&str, String) as *mut c_void,
            );
        }
    }
}

/// A C string the runtime passes again and again from one place (a
/// literal), recognised by its text the first time and by its address
/// after: a comparison instead of a `strncmp`.
pub struct RememberedKey {
    /// The text, with its NUL.
    text: &'static [u8],
    /// The address of a string that read `text` (0: none yet).
    address: AtomicUsize,
}

impl RememberedKey {
    /// A key reading `text` (which ends in its NUL and holds no other).
    pub const fn new(text: &'static [u8]) -> RememberedKey {
        RememberedKey {
            text,
            address: AtomicUsize::new(0),
        }
    }

    /// Whether `key` reads this key's text; remembers its address when it
    /// does, and answers by that address from then on.
    ///
    /// # Safety
    /// `key` is null or a NUL-terminated string, and a string that once
    /// read the text is never freed nor changed (a literal of a library
    /// that stays loaded), so no other string can later sit at its address.
    #[inline]
    pub unsafe fn is(&self, key: *const c_char) -> bool {
        if key.is_null() {
            return false;
        }
        if key as usize == self.address.load(Ordering::Relaxed) {
            return true;
        }
        // Another text is mostly told by its first byte, without a call.
        // SAFETY: a NUL-terminated string (contract) has at least one byte.
        if unsafe { *key } as u8 != self.text[0] {
            return false;
        }
        // SAFETY: the caller's contract.
        unsafe { self.is_by_text(key) }
    }

    /// [`RememberedKey::is`] by the text (out of line: once per new address).
    ///
    /// # Safety
    /// As [`RememberedKey::is`].
    #[cold]
    unsafe fn is_by_text(&self, key: *const c_char) -> bool {
        // SAFETY: the caller's contract: null or NUL-terminated.
        let matches = unsafe { c_str_starts_with(key, self.text) };
        if matches {
            self.address.store(key as usize, Ordering::Relaxed);
        }
        matches
    }
}

unsafe extern "C" fn metadata_trampoline(
    ctx: *mut c_void,
    key: *const c_char,
    value: *const c_char,
    size: usize,
    type_: u8,
) {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `ctx` is the `&mut &mut dyn FnMut` made in `for_each_metadata`.
        let visitor = unsafe { &mut *(ctx as *mut &mut dyn FnMut(&str, String)) };
        // SAFETY: the framework returns NUL-terminated keys or null.
        let key = unsafe { c_str(key) };
        let bytes: &[u8] = if value.is_null() || size == 0 {
            &[]
        } else {
            // SAFETY: `value` points at `size` bytes owned by the framework.
            unsafe { std::slice::from_raw_parts(value as *const u8, size) }
        };
        if key == "enqueue_kernel_data" {
            if let Some((global, local)) = kernel_ranges(bytes) {
                visitor("global_size", global);
                // All zero: the application left the local range to the runtime.
                if local != "0x0x0" {
                    visitor("local_size", local);
                }
            }
        }
        visitor(key, render_value(bytes, type_));
    }));
    let _ = result;
}

/// The global and local ranges of an `offload_kernel_enqueue_data_t`
/// (`size_t global[3], local[3], offset[3], args_num`), as `XxYxZ`.
pub fn kernel_ranges(bytes: &[u8]) -> Option<(String, String)> {
    const WORD: usize = std::mem::size_of::<usize>();
    if bytes.len() != 10 * WORD {
        return None;
    }
    let word = |i: usize| {
        let mut b = [0u8; WORD];
        b.copy_from_slice(&bytes[i * WORD..(i + 1) * WORD]);
        usize::from_ne_bytes(b)
    };
    let range = |first: usize| format!("{}x{}x{}", word(first), word(first + 1), word(first + 2));
    Some((range(0), range(3)))
}

/// Renders a metadata value as text by its `metadata_type_t`.
pub fn render_value(bytes: &[u8], type_: u8) -> String {
    use sys::metadata_type as t;
    let int_bytes = |bytes: &[u8]| {
        let mut buf = [0u8; 8];
        let n = bytes.len().min(8);
        buf[..n].copy_from_slice(&bytes[..n]);
        (u64::from_le_bytes(buf), n)
    };
    match type_ {
        t::STRING => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        }
        t::UNSIGNED_INTEGER => int_bytes(bytes).0.to_string(),
        t::SIGNED_INTEGER => {
            let (v, n) = int_bytes(bytes);
            let shift = 64 - 8 * n.max(1) as u32;
            (((v << shift) as i64) >> shift).to_string()
        }
        t::BOOLEAN => (bytes.first().copied().unwrap_or(0) != 0).to_string(),
        t::FLOATING => match bytes.len() {
            4 => f32::from_le_bytes(bytes.try_into().unwrap_or([0; 4])).to_string(),
            8 => f64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])).to_string(),
            _ => hex(bytes),
        },
        _ => hex(bytes),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(2 + 2 * bytes.len());
    s.push_str("0x");
    for b in bytes.iter().rev() {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Reads a C string the runtime owns, as UTF-8 (lossy text becomes "").
///
/// # Safety
/// `p` is null or points at a NUL-terminated string alive for `'a`.
pub unsafe fn c_str<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// A C string the runtime passed to a callback (user_data), kept as the
/// pointer: most callbacks only test its beginning
/// ([`CText::starts_with`]), which costs no length count or UTF-8 check.
#[derive(Clone, Copy, Debug)]
pub struct CText(*const c_char);

impl CText {
    /// Wraps `p`.
    ///
    /// # Safety
    /// `p` is null or points at a NUL-terminated string that stays alive
    /// as long as the `CText` is used (the callback's duration).
    pub unsafe fn new(p: *const c_char) -> CText {
        CText(p)
    }

    /// Whether the text begins with `prefix` (which holds no NUL).
    #[inline]
    pub fn starts_with(self, prefix: &[u8]) -> bool {
        // SAFETY: `CText::new`'s contract.
        unsafe { c_str_starts_with(self.0, prefix) }
    }

    /// Whether the text is `key`'s (by its address once seen: `key` must
    /// only stand for strings the runtime passes as literals, see
    /// [`RememberedKey::is`]).
    #[inline]
    pub fn is(self, key: &RememberedKey) -> bool {
        // SAFETY: `CText::new`'s contract (null or NUL-terminated); every
        // `RememberedKey` a `CText` is compared with names a literal of the
        // runtime (its callers say which).
        unsafe { key.is(self.0) }
    }

    /// The text (lossy text and null give "").
    pub fn to_str<'a>(self) -> &'a str {
        // SAFETY: `CText::new`'s contract.
        unsafe { c_str(self.0) }
    }
}

/// Whether the C string at `p` begins with `prefix` (a `prefix` ending in
/// NUL asks for equality; it holds no other NUL). libc's `strncmp`: reads
/// at most `prefix.len()` bytes and stops at the first difference, so never
/// past the string's terminator; no length count and no UTF-8 check, unlike
/// [`c_str`] (and a word at a time, not a byte).
///
/// # Safety
/// `p` is null or points at a NUL-terminated string.
#[inline]
pub unsafe fn c_str_starts_with(p: *const c_char, prefix: &[u8]) -> bool {
    if p.is_null() {
        return false;
    }
    // A different first byte answers without calling strncmp (the common
    // case: most kinds are tested against a prefix they do not have).
    // SAFETY: a NUL-terminated string has at least one readable byte.
    if let Some(&first) = prefix.first() {
        if unsafe { *p } as u8 != first {
            return false;
        }
    }
    // SAFETY: `p` is a NUL-terminated string (contract) and `prefix` is
    // `prefix.len()` readable bytes; strncmp stops at the first difference
    // or the string's NUL (which differs from every byte of `prefix` before
    // its end), so it reads neither past its end.
    unsafe { libc::strncmp(p, prefix.as_ptr().cast(), prefix.len()) == 0 }
}

/// Reads one field of the event behind an [`EventRef`] through its raw
/// pointer. No reference to the whole struct is made: on DPC++ 2025.0 the
/// runtime's event is 8 bytes shorter (no trailing `flags`, never read).
macro_rules! read_field {
    ($event:ident, $($field:tt)+) => {
        // SAFETY: `ptr` is non-null and alive for the callback (see
        // `EventRef::new`); the field exists in every supported layout.
        unsafe { std::ptr::addr_of!((*$event.ptr).$($field)+).read() }
    };
}

/// True when the runtime gave a real source file (it writes "" or
/// `<unknown-file>` for commands it made itself).
pub fn is_known_file(file: &str) -> bool {
    !file.is_empty() && file != "<unknown-file>"
}

/// A borrowed XPTI event, valid during the callback that received it.
#[derive(Clone, Copy)]
pub struct EventRef<'a> {
    ptr: *mut sys::trace_event_data_t,
    _life: std::marker::PhantomData<&'a sys::trace_event_data_t>,
}

/// The source location and name of an event, borrowed from the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PayloadView<'a> {
    /// The payload name.
    pub name: &'a str,
    /// Source file, "" when unknown.
    pub source_file: &'a str,
    /// Line, 0 when unknown.
    pub line: u32,
    /// Column, 0 when unknown.
    pub column: u32,
}

impl<'a> EventRef<'a> {
    /// Wraps the pointer a callback received; `None` when null.
    ///
    /// # Safety
    /// `ptr` is null or points at an event alive for `'a`.
    pub unsafe fn new(ptr: *mut sys::trace_event_data_t) -> Option<EventRef<'a>> {
        (!ptr.is_null()).then_some(EventRef {
            ptr,
            _life: std::marker::PhantomData,
        })
    }

    /// The event's unique_id.
    #[inline]
    pub fn unique_id(&self) -> u64 {
        read_field!(self, unique_id)
    }

    /// The event's instance number: how many times its code location was
    /// submitted so far (1-based).
    #[inline]
    pub fn instance_id(&self) -> u64 {
        read_field!(self, instance_id)
    }

    /// For edge events: the unique_id of the source node.
    #[inline]
    pub fn source_id(&self) -> u64 {
        read_field!(self, source_id)
    }

    /// For edge events: the unique_id of the target node.
    #[inline]
    pub fn target_id(&self) -> u64 {
        read_field!(self, target_id)
    }

    /// The payload's identity fields only (no string reads): cheap enough
    /// for every instance.
    #[inline]
    pub fn payload_key(&self) -> PayloadKey {
        let p = read_field!(self, reserved.payload);
        if p.is_null() {
            return PayloadKey::default();
        }
        // SAFETY: the framework keeps the payload alive with the event.
        let p = unsafe { &*p };
        PayloadKey {
            name_ptr: p.name as usize,
            file_ptr: p.source_file as usize,
            line: p.line_no,
            column: p.column_no,
        }
    }

    /// True when the payload names a user source file (not a command the
    /// runtime made itself).
    pub fn has_source_file(&self) -> bool {
        self.payload().is_some_and(|p| is_known_file(p.source_file))
    }

    /// The payload, read as text.
    pub fn payload(&self) -> Option<PayloadView<'a>> {
        let p = read_field!(self, reserved.payload);
        if p.is_null() {
            return None;
        }
        // SAFETY: the framework keeps the payload and its strings alive with
        // the event (strings are interned by the framework).
        let p = unsafe { &*p };
        // SAFETY: as above, NUL-terminated or null.
        let (name, file) = unsafe { (c_str(p.name), c_str(p.source_file)) };
        let known = |v: u32| if v == u32::MAX { 0 } else { v };
        Some(PayloadView {
            name,
            source_file: file,
            line: known(p.line_no),
            column: known(p.column_no),
        })
    }
}

/// The fields that tell two payloads with the same unique_id apart, compared
/// by address first (the framework interns its strings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PayloadKey {
    /// Address of the name string.
    pub name_ptr: usize,
    /// Address of the source-file string.
    pub file_ptr: usize,
    /// Line number as stored.
    pub line: u32,
    /// Column number as stored.
    pub column: u32,
}

#[cfg(test)]
mod tests {
    use super::render_value;
    use xpti_sys::metadata_type as t;

    #[test]
    fn kernel_enqueue_data_gives_global_and_local_ranges() {
        let words: [usize; 10] = [1024, 1, 1, 64, 1, 1, 0, 0, 0, 3];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(
            super::kernel_ranges(&bytes),
            Some(("1024x1x1".to_owned(), "64x1x1".to_owned()))
        );
        assert_eq!(super::kernel_ranges(&bytes[..8]), None);
    }

    #[test]
    fn c_string_prefixes_and_equality() {
        let check = |text: &[u8], prefix: &[u8]| {
            // SAFETY: every `text` below ends in its NUL.
            unsafe { super::c_str_starts_with(text.as_ptr().cast(), prefix) }
        };
        let memcpy = b"memory_transfer_node::memcpy\0";
        assert!(check(memcpy, b"memory_transfer_node::"));
        assert!(check(memcpy, b"memory_transfer_node::memcpy\0"));
        assert!(!check(memcpy, b"memory_transfer_node::memcp\0"));
        assert!(!check(b"memory_transfer\0", b"memory_transfer_node::"));
        assert!(!check(b"command_group_node\0", b"memory_transfer_node::"));
        assert!(check(b"queue_id\0", b"queue_id\0"));
        assert!(!check(b"queue_id_2\0", b"queue_id\0"));
        assert!(check(b"\0", b""));
        // SAFETY: null is allowed.
        assert!(!unsafe { super::c_str_starts_with(std::ptr::null(), b"a") });
    }

    #[test]
    fn a_remembered_key_is_told_by_text_then_by_address() {
        let key = super::RememberedKey::new(b"queue_id\0");
        let (queue_id, other) = (c"queue_id".to_owned(), c"queue_idx".to_owned());
        // SAFETY: both strings live (unchanged) to the end of the test.
        unsafe {
            assert!(!key.is(other.as_ptr()));
            assert!(!key.is(std::ptr::null()));
            assert!(key.is(queue_id.as_ptr()), "by its text");
            assert!(key.is(queue_id.as_ptr()), "by its address");
            assert!(!key.is(other.as_ptr()), "another address is read");
            let again = c"queue_id".to_owned();
            assert!(key.is(again.as_ptr()), "another copy of the text");
        }
    }

    #[test]
    fn renders_each_metadata_type() {
        assert_eq!(render_value(b"abc\0", t::STRING), "abc");
        assert_eq!(render_value(b"abc", t::STRING), "abc");
        assert_eq!(
            render_value(&42u64.to_le_bytes(), t::UNSIGNED_INTEGER),
            "42"
        );
        assert_eq!(
            render_value(&(-5i32).to_le_bytes(), t::SIGNED_INTEGER),
            "-5"
        );
        assert_eq!(render_value(&[1], t::BOOLEAN), "true");
        assert_eq!(render_value(&1.5f64.to_le_bytes(), t::FLOATING), "1.5");
        assert_eq!(render_value(&[0x34, 0x12], t::BINARY), "0x1234");
    }
}
