//! The runtime's table of UR entry points: where syclgraph puts its hooks,
//! and how it takes the UR tracing layer back out of the call chain.
//!
//! The loader built into `libsycl.so` (DPC++ 2026) calls every UR function
//! through one table in its context (`ur_lib::context_t`). syclgraph turns
//! the UR tracing layer on (`UR_ENABLE_LAYERS`) so that it sees the
//! runtime's first UR calls on `ur.call.debug`; with the layer on, the
//! table's entries are the layer's functions (`ur_tracing_layer::urX`),
//! and the layer calls on through a table of its own, in its context: the
//! next layer's functions, the loader's (`ur_loader::urX`, several
//! adapters) or the built-in OpenCL adapter's (`ur::opencl::urX`, when it
//! is the only adapter). [`find_entry_table`] finds both tables;
//! [`EntryTable::entry`] names the entry the subscriber's hooks replace,
//! [`EntryTable::next_function`] what the layer would call on from it, and
//! [`EntryTable::bypass`] copies that into every entry still leading into
//! the layer: the chain the runtime builds without the layer (any other
//! layer stays). With nobody listening, the layer would still ask XPTI,
//! before and after every UR call, whether anyone listens (about 330
//! instructions per call, ~1k per tiny memcpy). Nothing is assumed about
//! layouts:
//!
//! 1. the runtime library is found among the loaded objects, and its symbol
//!    table (`.symtab`, read from the file with the `object` crate) names
//!    the contexts' singletons and the functions of the layer, the loader
//!    and the built-in adapter; the file is checked to be the mapped image
//!    (a function's bytes compared);
//! 2. the entries are the words of one context (the loader's, or that of a
//!    layer in front of the tracing layer) that hold a layer function; the
//!    layer's own table is found in the layer's context as the words that
//!    hold a next function of the same name: both tables have one layout,
//!    so the two sets of words must agree on one distance between the
//!    tables for at least [`MIN_ENTRIES`] functions;
//! 3. each entry is swapped, with a compare-and-swap, for a hook or for the
//!    word at that distance (checked to be code).
//!
//! A thread calling through an entry at that moment gets the old function
//! or the new one, both valid. Where any step fails (a stripped library,
//! another layout, a runtime without the built-in loader) nothing is
//! written.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};

use crate::maps::Maps;

/// The loader context's singleton (`AtomicSingleton<ur_lib::context_t>::instance`).
const LIB_CONTEXT: &str = "_ZN15AtomicSingletonIN6ur_lib9context_tEE8instanceE";
/// The tracing layer context's singleton.
const LAYER_CONTEXT: &str = "_ZN15AtomicSingletonIN16ur_tracing_layer9context_tEE8instanceE";
/// Mangled-name prefix of the tracing layer's functions.
const TRACING: &str = "_ZN16ur_tracing_layer";
/// Mangled-name prefix of the loader's functions.
const LOADER: &str = "_ZN9ur_loader";
/// Mangled-name prefix of the built-in OpenCL adapter's functions.
const OPENCL_ADAPTER: &str = "_ZN2ur6opencl";
/// Mangled-name prefix and suffix of a UR context singleton
/// (`AtomicSingleton<ns::context_t>::instance`).
const SINGLETON_PREFIX: &str = "_ZN15AtomicSingletonIN";
const SINGLETON_SUFFIX: &str = "9context_tEE8instanceE";
/// Fewest functions whose entries must be found, and agree, before any is
/// touched (the tables hold about 240).
pub const MIN_ENTRIES: usize = 64;
/// How far past a context's start its table is looked for.
const SCAN_BYTES: usize = 64 * 1024;

/// What [`EntryTable::bypass`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bypassed {
    /// The runtime library whose loader table was changed.
    pub library: PathBuf,
    /// Table entries that no longer pass through the layer.
    pub entries: usize,
}

/// The runtime library holding the UR loader: the loaded object whose file
/// name starts with `libsycl.so`, and its load address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedLibrary {
    /// Its path, as the dynamic linker has it.
    pub path: PathBuf,
    /// Its load bias (what symbol values are relative to).
    pub base: usize,
}

/// The symbols [`find_entry_table`] needs, with their file values.
#[derive(Debug, Default)]
pub struct LoaderSymbols {
    /// The loader context's singleton: value and size.
    pub lib_context: Option<(u64, u64)>,
    /// The tracing layer context's singleton: value and size.
    pub layer_context: Option<(u64, u64)>,
    /// `ur_tracing_layer::urX` by value: the name after the namespace.
    pub layer_functions: HashMap<u64, String>,
    /// `ur_loader::urX` by the name after the namespace: its value.
    pub loader_functions: HashMap<String, u64>,
    /// The OpenCL adapter built into the runtime (`ur::opencl::urX`) by the
    /// name after the namespace: what the layer calls on when that adapter
    /// is the only one (the loader then calls it directly).
    pub adapter_functions: HashMap<String, u64>,
    /// Every other UR context singleton (a validation layer's, ...): value
    /// and size; the tracing layer may sit behind one of them.
    pub other_contexts: Vec<(u64, u64)>,
    /// A tracing-layer function's value and its first bytes in the file
    /// (to check the file is the mapped image).
    pub sample: Option<(u64, Vec<u8>)>,
}

/// Reads the symbols of the runtime library file at `path`.
pub fn loader_symbols(path: &std::path::Path) -> Result<LoaderSymbols, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut symbols = LoaderSymbols::default();
    for symbol in file.symbols() {
        let Ok(name) = symbol.name() else { continue };
        match name {
            LIB_CONTEXT => symbols.lib_context = Some((symbol.address(), symbol.size())),
            LAYER_CONTEXT => symbols.layer_context = Some((symbol.address(), symbol.size())),
            _ if name.starts_with(SINGLETON_PREFIX) && name.ends_with(SINGLETON_SUFFIX) => symbols
                .other_contexts
                .push((symbol.address(), symbol.size())),
            _ => {}
        }
        if symbol.kind() != SymbolKind::Text || symbol.address() == 0 {
            continue;
        }
        if let Some(rest) = function_suffix(name, TRACING) {
            symbols
                .layer_functions
                .insert(symbol.address(), rest.to_owned());
            if symbols.sample.is_none() {
                symbols.sample = function_bytes(&file, &symbol).map(|b| (symbol.address(), b));
            }
        } else if let Some(rest) = function_suffix(name, LOADER) {
            symbols
                .loader_functions
                .insert(rest.to_owned(), symbol.address());
        } else if let Some(rest) = function_suffix(name, OPENCL_ADAPTER) {
            symbols
                .adapter_functions
                .insert(rest.to_owned(), symbol.address());
        }
    }
    Ok(symbols)
}

/// The part of `name` after the namespace `prefix` when it names a UR
/// entry point (`<length>ur<Name>E<parameters>`).
fn function_suffix<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with("ur")).then_some(rest)
}

/// The first 32 bytes of a function in the file.
fn function_bytes(file: &object::File<'_>, symbol: &object::Symbol<'_, '_>) -> Option<Vec<u8>> {
    let section = file.section_by_index(symbol.section_index()?).ok()?;
    let data = section.data().ok()?;
    let start = usize::try_from(symbol.address().checked_sub(section.address())?).ok()?;
    data.get(start..start + 32).map(<[u8]>::to_vec)
}

/// The loaded runtime library (`libsycl.so*`), if any.
pub fn find_runtime_library() -> Option<LoadedLibrary> {
    let mut found: Option<LoadedLibrary> = None;
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the dynamic linker passes a valid entry for this call, and
        // `data` is the `Option<LoadedLibrary>` below.
        let (info, found) = unsafe { (&*info, &mut *(data as *mut Option<LoadedLibrary>)) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a non-null name is a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) };
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes()));
        let is_runtime = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libsycl.so"));
        if is_runtime {
            *found = Some(LoadedLibrary {
                path,
                base: info.dlpi_addr as usize,
            });
            return 1;
        }
        0
    }
    // SAFETY: `visit` only reads the entries and writes `found`, which
    // outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut _ as *mut c_void) };
    found
}

/// The runtime's table of UR entry points that leads into the tracing
/// layer, found by the layer's functions in it (see the module docs): the
/// loader's top-level table, or the table of a layer in front of the
/// tracing layer (a validation layer the user enabled).
pub struct EntryTable {
    /// The runtime library holding the table.
    pub library: PathBuf,
    /// Each entry holding a tracing-layer function: its address and the
    /// function's name after the namespace (mangled: `18urEnqueueUSMMemcpyE…`).
    entries: Vec<(usize, String)>,
    /// The tracing-layer functions, by runtime address.
    layer: HashMap<usize, String>,
    /// The functions the layer may call on (the loader's, the built-in
    /// adapter's), by runtime address.
    next_functions: HashMap<usize, String>,
    /// From an entry to the layer's own entry for the same function (what
    /// the layer calls on), when at least [`MIN_ENTRIES`] functions agree.
    next_distance: Result<isize, String>,
    /// The process's mappings when the table was found.
    maps: Maps,
}

/// Finds the runtime's [`EntryTable`]. Reads only: nothing is written.
pub fn find_entry_table() -> Result<EntryTable, String> {
    let library = find_runtime_library().ok_or("no libsycl.so is loaded")?;
    let symbols = runtime_symbols(&library)?;
    let (Some(lib_context), Some(layer_context)) = (symbols.lib_context, symbols.layer_context)
    else {
        return Err("the runtime's symbol table does not name its UR contexts".into());
    };
    if symbols.layer_functions.len() < MIN_ENTRIES {
        return Err(
            "the runtime's symbol table does not name the tracing layer's functions".into(),
        );
    }
    let maps = Maps::read()?;
    let sample = symbols.sample.as_ref().ok_or("no function to compare")?;
    if !image_matches(&maps, &library, sample) {
        return Err("the runtime library's file is not the mapped image".into());
    }
    let rebase = |value: u64| library.base + value as usize;
    // Runtime address of each layer function → its name; the functions the
    // layer may call on (the loader's, or the built-in adapter's) likewise.
    let layer: HashMap<usize, &str> = symbols
        .layer_functions
        .iter()
        .map(|(&v, name)| (rebase(v), name.as_str()))
        .collect();
    let next_functions: HashMap<usize, &str> = symbols
        .loader_functions
        .iter()
        .chain(&symbols.adapter_functions)
        .map(|(name, &v)| (rebase(v), name.as_str()))
        .collect();
    // The loader's context first; a layer in front of the tracing layer
    // holds the entries otherwise.
    let mut top = Vec::new();
    for (value, size) in std::iter::once(lib_context).chain(symbols.other_contexts.clone()) {
        // SAFETY: the scans read only within writable mappings (checked).
        let found = unsafe { words_holding(&maps, rebase(value), size, &layer) };
        if found.len() > top.len() {
            top = found;
        }
    }
    if top.len() < MIN_ENTRIES {
        return Err(format!(
            "the UR tables were not recognised ({} entries lead into the tracing layer)",
            top.len()
        ));
    }
    // SAFETY: as above.
    let next = unsafe {
        words_holding(
            &maps,
            rebase(layer_context.0),
            layer_context.1,
            &next_functions,
        )
    };
    let next_distance = match table_distance(&top, &next) {
        Some((distance, agreeing)) if agreeing >= MIN_ENTRIES => Ok(distance),
        Some((_, agreeing)) => Err(format!(
            "the tracing layer's own table was not recognised ({agreeing} entries agree)"
        )),
        None => Err("the tracing layer's own table was not found".into()),
    };
    Ok(EntryTable {
        library: library.path,
        entries: top.into_iter().map(|(at, n)| (at, n.to_owned())).collect(),
        layer: layer
            .into_iter()
            .map(|(at, n)| (at, n.to_owned()))
            .collect(),
        next_functions: next_functions
            .into_iter()
            .map(|(at, n)| (at, n.to_owned()))
            .collect(),
        next_distance,
        maps,
    })
}

/// Reads the loaded runtime library's symbols ahead of
/// [`find_entry_table`], which then only scans memory: reading and parsing
/// the file is what takes time, and can be done while the runtime starts.
pub fn read_runtime_symbols() {
    if let Some(library) = find_runtime_library() {
        let _ = runtime_symbols(&library);
    }
}

/// [`loader_symbols`] of the runtime library, read once per process.
pub(crate) fn runtime_symbols(library: &LoadedLibrary) -> Result<&'static LoaderSymbols, String> {
    static READ: std::sync::OnceLock<(PathBuf, Result<LoaderSymbols, String>)> =
        std::sync::OnceLock::new();
    let (path, symbols) =
        READ.get_or_init(|| (library.path.clone(), loader_symbols(&library.path)));
    if *path != library.path {
        return Err(format!(
            "{} is not the runtime library read",
            library.path.display()
        ));
    }
    symbols.as_ref().map_err(Clone::clone)
}

/// The plain UR name (`urEnqueueUSMMemcpy`) in a name after the namespace
/// (`18urEnqueueUSMMemcpyE…`).
pub fn plain_name(mangled_rest: &str) -> Option<&str> {
    let digits = mangled_rest.bytes().take_while(u8::is_ascii_digit).count();
    let length: usize = mangled_rest[..digits].parse().ok()?;
    mangled_rest.get(digits..digits + length)
}

impl EntryTable {
    /// The address of the entry for the UR function `name`
    /// (`urEnqueueUSMMemcpy`), if the table has one leading into the layer.
    pub fn entry(&self, name: &str) -> Option<usize> {
        self.entries
            .iter()
            .find(|(_, rest)| plain_name(rest) == Some(name))
            .map(|&(at, _)| at)
    }

    /// What the tracing layer calls on for the entry at `at`: the layer's
    /// own entry for that function, when its table was found and the word
    /// there is the loader's (or the built-in adapter's) function of the
    /// same UR name. Anything else there (another layer's function, or a
    /// word of some other table the scan met) is refused: the entry then
    /// keeps leading into the layer.
    pub fn next_function(&self, at: usize) -> Result<usize, String> {
        let distance = self.next_distance.clone()?;
        let name = self
            .entries
            .iter()
            .find(|&&(entry, _)| entry == at)
            .and_then(|(_, rest)| plain_name(rest))
            .ok_or("not an entry of the table")?;
        let next_at = at.wrapping_add_signed(distance);
        if !self.maps.writable_private(next_at, next_at + 8) {
            return Err("the layer's entry is not in its table".into());
        }
        // SAFETY: an aligned word in a writable mapping (checked).
        let next = unsafe { (next_at as *const usize).read_volatile() };
        if next == 0 || !self.maps.executable_file(next) {
            return Err("the layer's entry does not hold code".into());
        }
        match self.next_functions.get(&next).and_then(|n| plain_name(n)) {
            Some(next_name) if next_name == name => Ok(next),
            _ => Err(format!(
                "the layer's entry for {name} holds another function"
            )),
        }
    }

    /// True when `function` is one of the tracing layer's.
    pub fn is_layer_function(&self, function: usize) -> bool {
        self.layer.contains_key(&function)
    }

    /// Takes the tracing layer out of every entry that still leads into it
    /// (entries replaced since, by hooks, are left alone: a compare-and-swap
    /// from the layer's function).
    ///
    /// # Safety
    /// Nothing may need the tracing layer any more: nobody subscribed to the
    /// UR call streams, and nobody will (the layer's calls are skipped for
    /// the rest of the process).
    pub unsafe fn bypass(&self) -> Result<Bypassed, String> {
        self.next_distance.clone()?;
        let mut entries = 0;
        for &(at, _) in &self.entries {
            let Ok(next_function) = self.next_function(at) else {
                continue;
            };
            // SAFETY: an aligned word of a writable mapping that held a
            // tracing function's address: an entry of the loader's table.
            let entry = unsafe { &*(at as *const AtomicUsize) };
            let layer_function = entry.load(Ordering::Acquire);
            if self.layer.contains_key(&layer_function)
                && entry
                    .compare_exchange(
                        layer_function,
                        next_function,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
            {
                entries += 1;
            }
        }
        Ok(Bypassed {
            library: self.library.clone(),
            entries,
        })
    }
}

/// True when the function `sample` (its file value and first bytes) has
/// those bytes in `library`'s mapped image: the file read is the one mapped.
pub(crate) fn image_matches(maps: &Maps, library: &LoadedLibrary, sample: &(u64, Vec<u8>)) -> bool {
    let (value, bytes) = sample;
    let at = library.base + *value as usize;
    maps.readable(at, at + bytes.len())
        // SAFETY: checked readable just above.
        && unsafe { std::slice::from_raw_parts(at as *const u8, bytes.len()) } == &bytes[..]
}

/// The distance from the top-level table to the layer's own table, and for
/// how many functions it holds: both tables share one layout, so the
/// layer's entry for a function lies at one fixed distance from the
/// top-level entry for it. `top` and `next` are (address, function name).
pub fn table_distance(top: &[(usize, &str)], next: &[(usize, &str)]) -> Option<(isize, usize)> {
    let next_by_name: HashMap<&str, usize> = next.iter().map(|&(at, name)| (name, at)).collect();
    let mut distances: HashMap<isize, usize> = HashMap::new();
    for &(at, name) in top {
        if let Some(&there) = next_by_name.get(name) {
            *distances.entry(there as isize - at as isize).or_default() += 1;
        }
    }
    distances.into_iter().max_by_key(|&(d, n)| (n, -d.abs()))
}

/// The words of the context a singleton points to whose value is a key of
/// `wanted`: (address, name). The singleton's words (`size` bytes, at most
/// four) are tried in turn; the one whose context holds the most wins.
///
/// # Safety
/// `singleton` is the runtime address of the singleton's symbol.
unsafe fn words_holding<'a>(
    maps: &Maps,
    singleton: usize,
    size: u64,
    wanted: &HashMap<usize, &'a str>,
) -> Vec<(usize, &'a str)> {
    let words = (size as usize / 8).clamp(1, 4);
    if !maps.writable_private(singleton, singleton + words * 8) {
        return Vec::new();
    }
    let mut best = Vec::new();
    for i in 0..words {
        // SAFETY: the singleton's words lie in a writable mapping (checked).
        let context = unsafe { ((singleton + i * 8) as *const usize).read_volatile() };
        let Some(end) = maps.writable_private_end(context) else {
            continue;
        };
        let end = end.min(context.saturating_add(SCAN_BYTES));
        let found: Vec<(usize, &str)> = (context..end)
            .step_by(8)
            .filter_map(|at| {
                // SAFETY: within one writable mapping (writable_private_end).
                let value = unsafe { (at as *const usize).read_volatile() };
                wanted.get(&value).map(|name| (at, *name))
            })
            .collect();
        if found.len() > best.len() {
            best = found;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_come_out_of_mangled_ones() {
        assert_eq!(
            plain_name("18urEnqueueUSMMemcpyEP18ur_queue_handle_t_"),
            Some("urEnqueueUSMMemcpy")
        );
        assert_eq!(plain_name("13urQueueCreateEP"), Some("urQueueCreate"));
        assert_eq!(plain_name("99urX"), None);
        assert_eq!(plain_name("urX"), None);
    }

    #[test]
    fn suffixes_pair_the_layer_with_the_loader() {
        let layer = "_ZN16ur_tracing_layer18urEnqueueUSMMemcpyEP18ur_queue_handle_t_bPvPKvmjPKP18ur_event_handle_t_PS6_";
        let loader = "_ZN9ur_loader18urEnqueueUSMMemcpyEP18ur_queue_handle_t_bPvPKvmjPKP18ur_event_handle_t_PS6_";
        assert_eq!(
            function_suffix(layer, TRACING),
            function_suffix(loader, LOADER)
        );
        assert!(function_suffix(layer, TRACING).is_some());
        assert_eq!(
            function_suffix("_ZN16ur_tracing_layer10getContextEv", TRACING),
            None
        );
        assert_eq!(function_suffix(loader, TRACING), None);
    }

    #[test]
    fn the_tables_distance_is_the_one_most_functions_agree_on() {
        let top = [(1000, "a"), (1008, "b"), (1016, "c"), (1024, "d")];
        // b, c and d 4000 bytes further in the layer's context; a elsewhere.
        let next = [
            (5008, "b"),
            (5016, "c"),
            (5024, "d"),
            (9000, "a"),
            (7000, "x"),
        ];
        assert_eq!(table_distance(&top, &next), Some((4000, 3)));
        assert_eq!(table_distance(&top, &[]), None);
    }
}
