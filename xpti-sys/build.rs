//! Builds the C++ shim that walks XPTI's `metadata_t` (a `std::unordered_map`)
//! against the XPTI headers of a DPC++ runtime: `XPTI_INCLUDE_DIR`, an
//! installed oneAPI, the active Python environment, then the project's venv
//! (the order and the error are in `build/xpti_headers.rs`).

use std::path::PathBuf;

#[path = "build/xpti_headers.rs"]
mod xpti_headers;

fn main() {
    println!("cargo:rerun-if-changed=shim/metadata_shim.cpp");
    for var in xpti_headers::VARIABLES {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let workspace = manifest.parent().unwrap_or(&manifest).to_path_buf();
    let include = match xpti_headers::find(&|name| std::env::var_os(name), &workspace) {
        Ok(dir) => dir,
        Err(message) => {
            eprintln!("{message}");
            std::process::exit(1);
        }
    };
    println!(
        "cargo:rerun-if-changed={}",
        include.join(xpti_headers::HEADER).display()
    );
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&include)
        .file("shim/metadata_shim.cpp")
        .warnings(true)
        .compile("syclgraph_xpti_shim");
}
