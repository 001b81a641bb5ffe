//! The symbols [`ze_bridge::entry_table`] relies on are in the real
//! runtime library: the DPC++ 2026 `libsycl.so` of the project's venv names
//! its UR loader and tracing-layer contexts, and (nearly) every tracing-layer
//! function has a loader function of the same name and signature. (That the
//! bypass then works in a traced program is tested with the runtime in
//! tests/tests/dependencies.rs.)

mod common;

use std::path::{Path, PathBuf};

use common::skip;
use ze_bridge::entry_table::{loader_symbols, MIN_ENTRIES};

fn venv() -> PathBuf {
    match std::env::var_os("SYCLGRAPH_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv"),
    }
}

#[test]
fn the_runtime_names_its_loader_context_and_the_layer_functions() {
    let library = venv().join("lib/libsycl.so.9");
    if !library.exists() {
        return skip("no venv with lib/libsycl.so.9");
    }
    let symbols = loader_symbols(&library).expect("the runtime library parses");
    for (what, context) in [
        ("loader", symbols.lib_context),
        ("tracing layer", symbols.layer_context),
    ] {
        let (_, size) = context.unwrap_or_else(|| panic!("the {what} context's singleton"));
        assert!(size >= 8, "{what}: {size}");
    }
    // 2026.2 has 248 tracing-layer entry points and 241 loader ones, nearly
    // all of the same names.
    let paired = symbols
        .layer_functions
        .values()
        .filter(|name| symbols.loader_functions.contains_key(*name))
        .count();
    assert!(paired >= 200, "{paired}");
    assert!(MIN_ENTRIES < paired / 2);
    let (_, bytes) = symbols.sample.expect("a tracing-layer function's bytes");
    assert_eq!(bytes.len(), 32);
}
