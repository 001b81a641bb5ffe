//! The symbols [`ze_bridge::tracing_bypass`] relies on are in the real
//! runtime library: the DPC++ 2026 `libsycl.so` of the project's venv names
//! its UR loader context and pairs (nearly) every tracing-layer function
//! with the loader function of the same name and signature. (That the
//! bypass then works in a traced program is tested with the runtime in
//! tests/tests/dependencies.rs.)

mod common;

use std::path::{Path, PathBuf};

use common::skip;
use ze_bridge::tracing_bypass::{loader_symbols, MIN_ENTRIES};

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
    let (_, size) = symbols.singleton.expect("the loader context's singleton");
    assert!(size >= 8, "{size}");
    // 2026.2 has 248 tracing-layer entry points and 241 loader ones.
    let pairs = symbols.layer_to_loader.len();
    assert!(pairs >= 200, "{pairs}");
    assert!(MIN_ENTRIES < pairs / 2);
    assert!(symbols.layer_to_loader.iter().all(|(a, b)| a != b));
    let (_, bytes) = symbols.sample.expect("a tracing-layer function's bytes");
    assert_eq!(bytes.len(), 32);
}
