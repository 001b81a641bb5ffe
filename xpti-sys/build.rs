//! Builds the C++ shim that walks XPTI's `metadata_t` (a `std::unordered_map`)
//! against the XPTI headers of the installed DPC++ runtime.
//!
//! The headers are looked for in `$XPTI_INCLUDE_DIR`, then in the project's
//! venv (`<workspace>/.venv/include`, made by `scripts/setup.sh`).

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=shim/metadata_shim.cpp");
    println!("cargo:rerun-if-env-changed=XPTI_INCLUDE_DIR");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let candidates = [
        std::env::var_os("XPTI_INCLUDE_DIR").map(PathBuf::from),
        Some(manifest.join("../.venv/include")),
    ];
    let include = candidates
        .into_iter()
        .flatten()
        .find(|dir| dir.join("xpti/xpti_data_types.h").exists())
        .unwrap_or_else(|| {
            panic!(
                "syclgraph: XPTI headers not found. Run scripts/setup.sh (it installs \
                 intel-sycl-rt into .venv) or set XPTI_INCLUDE_DIR to the folder holding \
                 xpti/xpti_data_types.h"
            )
        });
    println!(
        "cargo:rerun-if-changed={}",
        include.join("xpti/xpti_data_types.h").display()
    );
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&include)
        .file("shim/metadata_shim.cpp")
        .warnings(true)
        .compile("syclgraph_xpti_shim");
}
