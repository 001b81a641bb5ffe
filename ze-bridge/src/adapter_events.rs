//! The event functions of the OpenCL adapter built into the runtime, found
//! so that [`crate::ur::UnifiedRuntime`] can call them directly instead of
//! through its UR loader.
//!
//! A call through our loader instance (`libur_loader.so.0`) goes through
//! two layers before it reaches the adapter: the loader's API function
//! (`ur_lib`) and its dispatch (`ur_loader::urX`), which reads the
//! dispatch table the handle carries (its first word: a UR handle starts
//! with its adapter's `ur_dditable_t *`) and calls the adapter's function
//! from it. For the four event calls of every timed command (retain, the
//! end and start times, release) that is about 150 instructions per
//! command on the collector and the program's threads.
//!
//! [`find_built_in_adapter_events`] takes one live event of the built-in
//! OpenCL adapter (`ur::opencl::urX` in the runtime's symbol table, as
//! [`crate::entry_table`] reads it), and checks that the table its first
//! word points at holds that adapter's `urEventGetInfo`,
//! `urEventGetProfilingInfo`, `urEventRetain` and `urEventRelease` in the
//! order of `ur_event_dditable_t` (`pfnGetInfo`, `pfnGetProfilingInfo`,
//! `pfnWait`, `pfnRetain`, `pfnRelease`). An event whose first word is that
//! table is then one the loader would dispatch to exactly these functions;
//! any other event (Level Zero's, another runtime's layout) still goes
//! through the loader. Nothing is assumed about layouts beyond that order;
//! where any check fails, nothing is called directly.

use crate::entry_table::{find_runtime_library, image_matches, plain_name, runtime_symbols};
use crate::maps::Maps;

/// How far past the start of an adapter's dispatch table its event table
/// is looked for (the whole `ur_dditable_t` is a few KiB).
const SCAN_BYTES: usize = 16 * 1024;

/// Position of each function in `ur_event_dditable_t`, counted in words
/// from `pfnGetInfo`.
const PROFILING_SLOT: usize = 1;
const RETAIN_SLOT: usize = 3;
const RELEASE_SLOT: usize = 4;

/// The built-in adapter's event functions, by runtime address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterEvents {
    /// The adapter's dispatch table (`ur_dditable_t *`): the first word of
    /// each of its handles.
    pub table: usize,
    /// `urEventGetInfo`.
    pub get_info: usize,
    /// `urEventGetProfilingInfo`.
    pub get_profiling_info: usize,
    /// `urEventRetain`.
    pub retain: usize,
    /// `urEventRelease`.
    pub release: usize,
}

/// Where in `words` (a dispatch table read word by word) the event table
/// of `functions` (`get_info`, `get_profiling_info`, `retain`, `release`)
/// starts: the one index whose words hold them in `ur_event_dditable_t`'s
/// order. `None` when no index does, or more than one.
pub fn event_table_index(words: &[usize], functions: [usize; 4]) -> Option<usize> {
    let [get_info, profiling, retain, release] = functions;
    let mut found = None;
    for (k, &word) in words.iter().enumerate() {
        if word == get_info
            && words.get(k + PROFILING_SLOT) == Some(&profiling)
            && words.get(k + RETAIN_SLOT) == Some(&retain)
            && words.get(k + RELEASE_SLOT) == Some(&release)
        {
            if found.is_some() {
                return None;
            }
            found = Some(k);
        }
    }
    found
}

/// The built-in OpenCL adapter's event functions, when `event` (a live,
/// retained `ur_event_handle_t`) is one of its events; see the module docs.
///
/// Reads `/proc/self/maps` and (once per process) the runtime library's
/// symbol table: called once, on the collector thread.
///
/// # Safety
/// `event` must be a live UR event handle (a C++ object of at least one
/// word).
pub unsafe fn find_built_in_adapter_events(event: usize) -> Result<AdapterEvents, String> {
    let library = find_runtime_library().ok_or("no libsycl.so is loaded")?;
    let symbols = runtime_symbols(&library)?;
    let maps = Maps::read()?;
    let sample = symbols.sample.as_ref().ok_or("no function to compare")?;
    if !image_matches(&maps, &library, sample) {
        return Err("the runtime library's file is not the mapped image".into());
    }
    let function = |name: &str| -> Result<usize, String> {
        let value = symbols
            .adapter_functions
            .iter()
            .find(|(rest, _)| plain_name(rest) == Some(name))
            .map(|(_, &value)| library.base + value as usize)
            .ok_or_else(|| format!("the runtime names no built-in adapter {name}"))?;
        if maps.executable_file(value) {
            Ok(value)
        } else {
            Err(format!("the built-in adapter's {name} is not code"))
        }
    };
    let functions = [
        function("urEventGetInfo")?,
        function("urEventGetProfilingInfo")?,
        function("urEventRetain")?,
        function("urEventRelease")?,
    ];
    if event == 0 || !event.is_multiple_of(8) || !maps.readable(event, event + 8) {
        return Err("the event is not readable".into());
    }
    // SAFETY: the caller's live handle; its first word readable (checked).
    let table = unsafe { (event as *const usize).read() };
    if table == 0 || !table.is_multiple_of(8) {
        return Err("the event carries no dispatch table".into());
    }
    // The readable part of the table's first SCAN_BYTES.
    let mut end = table + SCAN_BYTES;
    while end > table && !maps.readable(table, end) {
        end -= 4096.min(end - table);
    }
    if end - table < 8 * (RELEASE_SLOT + 1) {
        return Err("the event's dispatch table is not readable".into());
    }
    // SAFETY: `[table, end)` lies in one readable mapping (checked) and is
    // word-aligned.
    let words = unsafe { std::slice::from_raw_parts(table as *const usize, (end - table) / 8) };
    event_table_index(words, functions)
        .ok_or("the event's dispatch table does not hold the built-in adapter's event functions")?;
    let [get_info, get_profiling_info, retain, release] = functions;
    Ok(AdapterEvents {
        table,
        get_info,
        get_profiling_info,
        retain,
        release,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: [usize; 4] = [0x1000, 0x1100, 0x1300, 0x1400];

    #[test]
    fn the_event_table_is_found_in_ddi_order() {
        // Some other table first, then pfnGetInfo, pfnGetProfilingInfo,
        // pfnWait, pfnRetain, pfnRelease, pfnGetNativeHandle.
        let words = [7, 8, 9, 0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500];
        assert_eq!(event_table_index(&words, F), Some(3));
    }

    #[test]
    fn anything_else_is_refused() {
        // Out of order, cut short, missing, or found twice.
        assert_eq!(
            event_table_index(&[0x1100, 0x1000, 0, 0x1300, 0x1400], F),
            None
        );
        assert_eq!(event_table_index(&[0x1000, 0x1100, 0, 0x1300], F), None);
        assert_eq!(event_table_index(&[], F), None);
        let twice = [
            0x1000, 0x1100, 0, 0x1300, 0x1400, 0x1000, 0x1100, 0, 0x1300, 0x1400,
        ];
        assert_eq!(event_table_index(&twice, F), None);
    }

    #[test]
    fn no_runtime_no_functions() {
        // This test process has no libsycl.so.
        let word = 0usize;
        // SAFETY: a readable word stands in for a handle; nothing is called.
        let err = unsafe { find_built_in_adapter_events(&word as *const usize as usize) };
        assert!(err.is_err());
    }
}
