//! Changing the process environment from inside someone else's program.
//!
//! `setenv` is unsafe while other threads may read the environment: it can
//! free the array a concurrent `getenv` is walking. So syclgraph never calls
//! it. [`publish`] builds a new, complete `environ` array (the old entries,
//! the variables added, replaced or removed) and publishes it with one
//! aligned pointer store, freeing nothing: a thread reading the environment
//! meanwhile sees the old array or the new one, both valid for the life of
//! the process (the few hundred bytes are leaked on purpose). A later
//! `setenv` by the application copies our array into one of its own and
//! frees nothing of ours either. What this cannot exclude is another thread
//! calling `setenv` in the same instant (glibc's lock is internal): one of
//! the two changes could be lost.

use std::ffi::{c_char, CString};

extern "C" {
    /// The process environment (POSIX): a null-terminated array of
    /// `NAME=value` strings.
    static mut environ: *const *const c_char;
}

/// Publishes a new `environ`: every entry of the current one except those
/// of the names in `changes`, plus each change's `NAME=value` entry where
/// it has one (`None` removes the variable).
pub fn publish(changes: &[(&str, Option<CString>)]) {
    let prefixes: Vec<String> = changes.iter().map(|(name, _)| format!("{name}=")).collect();
    // SAFETY: `environ` is a valid null-terminated array of C strings that
    // the C library never frees while we read it (we only ever replace it
    // by arrays we leak); reading the pointer is one aligned load.
    let old = unsafe { std::ptr::addr_of!(environ).read_volatile() };
    let mut entries: Vec<*const c_char> = Vec::new();
    if !old.is_null() {
        let mut i = 0;
        loop {
            // SAFETY: within the array, up to and including its terminator.
            let p = unsafe { *old.add(i) };
            if p.is_null() {
                break;
            }
            // SAFETY: each entry is a NUL-terminated string owned by the C library.
            let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes();
            if !prefixes
                .iter()
                .any(|prefix| text.starts_with(prefix.as_bytes()))
            {
                entries.push(p);
            }
            i += 1;
        }
    }
    for (_, entry) in changes {
        if let Some(entry) = entry {
            entries.push(entry.clone().into_raw());
        }
    }
    entries.push(std::ptr::null());
    let array: &'static mut [*const c_char] = Box::leak(entries.into_boxed_slice());
    // SAFETY: one aligned pointer store publishing a complete, leaked array.
    unsafe { std::ptr::addr_of_mut!(environ).write_volatile(array.as_ptr()) };
}

/// The variables the collector's own UR loader starts with, and (below)
/// without, whatever the application set:
/// - `UR_ENABLE_LOADER_INTERCEPT=1`: that loader then calls every function
///   through the handle's dispatch table, so the application's handles
///   reach the adapter copy that made them even when only one adapter is
///   loaded (otherwise the loader would call its own copy of that adapter
///   directly, with handles it never made);
/// - no `UR_ENABLE_LAYERS` and no `UR_LOG_TRACING`: no layer of the user's
///   in our loader. A second instance of a layer in the process shares that
///   layer library's globals with the runtime's (a sanitizer layer's
///   teardown then behaved differently: the program's exit code changed),
///   and a tracing layer there would announce our own calls.
const OWN_LOADER_SETS: &[(&str, &str)] = &[("UR_ENABLE_LOADER_INTERCEPT", "1")];
/// The variables hidden from the collector's own UR loader (see
/// [`OWN_LOADER_SETS`]).
const OWN_LOADER_HIDES: &[&str] = &["UR_ENABLE_LAYERS", "UR_LOG_TRACING"];

/// Runs `f` (the start of the collector's own UR loader) with the
/// environment of [`OWN_LOADER_SETS`] and [`OWN_LOADER_HIDES`], then puts
/// back what the application had. The runtime's own loader has finished
/// starting before (the collector waits for its first UR call), so it reads
/// none of this.
pub fn with_own_loader_environment<T>(f: impl FnOnce() -> T) -> T {
    let entry = |name: &str, value: &std::ffi::OsStr| {
        let mut text = format!("{name}=").into_bytes();
        text.extend_from_slice(std::os::unix::ffi::OsStrExt::as_bytes(value));
        CString::new(text).ok()
    };
    let names = OWN_LOADER_SETS
        .iter()
        .map(|&(name, _)| name)
        .chain(OWN_LOADER_HIDES.iter().copied());
    let saved: Vec<(&str, Option<CString>)> = names
        .map(|name| (name, std::env::var_os(name).and_then(|v| entry(name, &v))))
        .collect();
    let mut changes: Vec<(&str, Option<CString>)> =
        OWN_LOADER_HIDES.iter().map(|&name| (name, None)).collect();
    for &(name, value) in OWN_LOADER_SETS {
        if std::env::var_os(name).is_none() {
            changes.push((name, entry(name, value.as_ref())));
        }
    }
    publish(&changes);
    let result = f();
    publish(&saved);
    result
}

#[cfg(test)]
mod tests {
    /// The tests change the one process environment: one at a time.
    static ENVIRONMENT: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_published_entry_is_seen_and_the_other_entries_stay() {
        let _one_at_a_time = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
        let before = std::env::vars_os().count();
        let one = std::ffi::CString::new("SYCLGRAPH_TEST_ENTRY=one").ok();
        super::publish(&[("SYCLGRAPH_TEST_ENTRY", one)]);
        assert_eq!(std::env::var("SYCLGRAPH_TEST_ENTRY").unwrap(), "one");
        let two = std::ffi::CString::new("SYCLGRAPH_TEST_ENTRY=two").ok();
        super::publish(&[("SYCLGRAPH_TEST_ENTRY", two)]);
        assert_eq!(std::env::var("SYCLGRAPH_TEST_ENTRY").unwrap(), "two");
        assert_eq!(std::env::vars_os().count(), before + 1);
        super::publish(&[("SYCLGRAPH_TEST_ENTRY", None)]);
        assert!(std::env::var_os("SYCLGRAPH_TEST_ENTRY").is_none());
        assert_eq!(std::env::vars_os().count(), before);
    }

    #[test]
    fn the_own_loader_environment_is_put_back() {
        let _one_at_a_time = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
        let layers = std::ffi::CString::new("UR_ENABLE_LAYERS=UR_LAYER_TSAN").ok();
        super::publish(&[("UR_ENABLE_LAYERS", layers)]);
        let inside = super::with_own_loader_environment(|| {
            (
                std::env::var_os("UR_ENABLE_LAYERS"),
                std::env::var("UR_ENABLE_LOADER_INTERCEPT").ok(),
            )
        });
        assert_eq!(inside, (None, Some("1".to_owned())));
        assert_eq!(std::env::var("UR_ENABLE_LAYERS").unwrap(), "UR_LAYER_TSAN");
        assert!(std::env::var_os("UR_ENABLE_LOADER_INTERCEPT").is_none());
        super::publish(&[("UR_ENABLE_LAYERS", None)]);
    }
}
