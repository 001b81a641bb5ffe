//! Compiles `src/sim.c`, the command lists, memory and properties of the test
//! driver, against the Level Zero loader's headers (`<level_zero/ze_ddi.h>`,
//! Debian `libze-dev`).

fn main() {
    println!("cargo:rerun-if-changed=src/sim.c");
    cc::Build::new()
        .file("src/sim.c")
        .warnings(true)
        .extra_warnings(true)
        .compile("ze_test_driver_sim");
}
