//! Making this library's `extern "C"` functions (the C API of
//! [`crate::c_api`]) reachable by `dlsym(RTLD_DEFAULT, ...)`.

/// Makes this library's exported functions visible to
/// `dlsym(RTLD_DEFAULT, ...)` (XPTI loads subscribers with `RTLD_LOCAL`),
/// which is how `include/syclgraph.h` finds `syclgraph_start`, and keeps
/// it mapped for good: a program may keep those function pointers past
/// XPTI's unloading of its subscribers.
pub fn publish_c_api() -> Result<(), String> {
    // SAFETY: Dl_info is plain C data (pointers and integers); all zeros
    // is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { libc::dladdr(publish_c_api as *const std::ffi::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return Err("cannot find this library's path".into());
    }
    let flags = libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_GLOBAL | libc::RTLD_NODELETE;
    // SAFETY: dli_fname is the loader's NUL-terminated path of this
    // library, already loaded (RTLD_NOLOAD): this only changes its scope
    // and pins it; no initialiser runs again.
    let handle = unsafe { libc::dlopen(info.dli_fname, flags) };
    if handle.is_null() {
        return Err("dlopen(RTLD_NOLOAD | RTLD_GLOBAL) refused".into());
    }
    Ok(())
}
