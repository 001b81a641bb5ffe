//! Whether a UR loader calls through the handles' dispatch tables: the
//! proof that [`crate::ur_dispatch`] needs before it probes a loader with a
//! fake handle or patches an adapter's table.
//!
//! A UR loader with more than one adapter (or with
//! `UR_ENABLE_LOADER_INTERCEPT`) puts its own intercept functions
//! (`ur_loader::urX`) into its top-level table; they find the adapter
//! through the handle (`handle->ddi->...`). With a single adapter (for
//! example `ONEAPI_DEVICE_SELECTOR=opencl:cpu`, or a machine without the
//! Level Zero loader), the loader copies that adapter's own functions into
//! its top-level table and never looks at a handle's table. Then:
//! - a fake handle passed to the loader reaches the adapter's real code
//!   (a crash), and
//! - a patched handle table is never called (the hooks would see nothing).
//!
//! [`dispatches_through_handles`] reads the loader library's symbol table
//! (the same way as [`crate::entry_table`]) and looks for the intercept
//! functions in the tables of the loader's context and of every layer's
//! context (the innermost layer keeps the loader's original table). Only
//! when at least [`MIN_ENTRIES`] of them are found there does it say yes;
//! every other outcome (a stripped library, another layout, a layer from a
//! library of its own innermost, the direct mode) is a no with the reason.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol, SymbolKind};

use crate::entry_table::{
    function_bytes, function_suffix, image_matches, words_holding, LoadedLibrary, LOADER,
    MIN_ENTRIES, SINGLETON_PREFIX, SINGLETON_SUFFIX,
};

/// What a loader library's symbol table says about its dispatch.
#[derive(Debug, Default)]
struct DispatchSymbols {
    /// Every UR context singleton: (value, size).
    contexts: Vec<(u64, u64)>,
    /// `ur_loader::urX` function values, with the name after the namespace.
    intercepts: HashMap<u64, String>,
    /// An intercept function's value and first bytes in the file.
    sample: Option<(u64, Vec<u8>)>,
}

fn dispatch_symbols(path: &Path) -> Result<DispatchSymbols, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut symbols = DispatchSymbols::default();
    for symbol in file.symbols() {
        let Ok(name) = symbol.name() else { continue };
        if name.starts_with(SINGLETON_PREFIX) && name.ends_with(SINGLETON_SUFFIX) {
            symbols.contexts.push((symbol.address(), symbol.size()));
            continue;
        }
        if symbol.kind() != SymbolKind::Text || symbol.address() == 0 {
            continue;
        }
        if let Some(rest) = function_suffix(name, LOADER) {
            symbols.intercepts.insert(symbol.address(), rest.to_owned());
            if symbols.sample.is_none() {
                symbols.sample = function_bytes(&file, &symbol).map(|b| (symbol.address(), b));
            }
        }
    }
    Ok(symbols)
}

/// Succeeds when the UR loader in `library` (initialised) dispatches
/// through the handles' tables; otherwise says why that is not known.
pub fn dispatches_through_handles(library: &LoadedLibrary) -> Result<(), String> {
    let name = library.path.display();
    let symbols = dispatch_symbols(&library.path)?;
    if symbols.contexts.is_empty() || symbols.intercepts.len() < MIN_ENTRIES {
        return Err(format!(
            "{name} does not name its UR loader's context and functions (stripped?)"
        ));
    }
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
    let sample = symbols.sample.as_ref().ok_or("no function to compare")?;
    if !image_matches(&maps, library, sample) {
        return Err(format!("{name}: the file is not the mapped image"));
    }
    let intercepts: HashMap<usize, &str> = symbols
        .intercepts
        .iter()
        .map(|(&value, name)| (library.base + value as usize, name.as_str()))
        .collect();
    let found = symbols
        .contexts
        .iter()
        .map(|&(value, size)| {
            // SAFETY: the singleton's address comes from the library's own
            // symbol table (checked to be the mapped image); words_holding
            // reads only within writable mappings.
            unsafe { words_holding(&maps, library.base + value as usize, size, &intercepts) }.len()
        })
        .max()
        .unwrap_or(0);
    if found >= MIN_ENTRIES {
        Ok(())
    } else {
        Err(format!(
            "the UR loader in {name} calls its adapter directly, not through the handles \
             (one adapter loaded: a device selector, or no Level Zero loader)"
        ))
    }
}

/// The loaded object that holds the code at `address`, with its load bias.
pub fn library_containing(address: usize) -> Option<LoadedLibrary> {
    struct Search {
        address: usize,
        found: Option<LoadedLibrary>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the dynamic linker passes a valid entry for this call, and
        // `data` is the `Search` below.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        if info.dlpi_name.is_null() || info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: the entry's program headers, `dlpi_phnum` of them.
        let headers =
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        let base = info.dlpi_addr as usize;
        let inside = headers.iter().any(|h| {
            let start = base.wrapping_add(h.p_vaddr as usize);
            h.p_type == libc::PT_LOAD
                && (start..start + h.p_memsz as usize).contains(&search.address)
        });
        if !inside {
            return 0;
        }
        // SAFETY: a non-null name is a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) };
        search.found = Some(LoadedLibrary {
            path: PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes())),
            base,
        });
        1
    }
    let mut search = Search {
        address,
        found: None,
    };
    // SAFETY: `visit` only reads the entries and writes `search`, which
    // outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found.filter(|l| !l.path.as_os_str().is_empty())
}
