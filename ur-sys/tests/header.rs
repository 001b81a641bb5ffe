//! Checks every value and layout in `ur-sys` against the `ur_api.h` that the
//! installed DPC++ runtime ships (`<venv>/include/unified-runtime/ur_api.h`).
//!
//! A small C program is generated that prints each enumerator, `sizeof` and
//! `offsetof` the crate declares; it is compiled with `$CC` (default `cc`)
//! and its output compared with the Rust side.
//!
//! The header is looked for in `$UR_INCLUDE_DIR`, then
//! `$SYCLGRAPH_VENV/include/unified-runtime`, then the workspace's
//! `.venv/include/unified-runtime`. Without a header or a C compiler the test
//! prints why and passes, unless `SYCLGRAPH_REQUIRE_RUNTIME=1`, when it fails.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use ur_sys::*;

fn require_runtime() -> bool {
    std::env::var_os("SYCLGRAPH_REQUIRE_RUNTIME").is_some_and(|v| v == "1")
}

fn skip(reason: &str) {
    assert!(
        !require_runtime(),
        "SYCLGRAPH_REQUIRE_RUNTIME=1 but {reason} (run scripts/setup.sh)"
    );
    eprintln!("skipped: {reason}");
}

fn header_dir() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("UR_INCLUDE_DIR").map(PathBuf::from),
        std::env::var_os("SYCLGRAPH_VENV")
            .map(|v| PathBuf::from(v).join("include/unified-runtime")),
        Some(manifest.join("../.venv/include/unified-runtime")),
    ]
    .into_iter()
    .flatten()
    .find(|dir| dir.join("ur_api.h").is_file())
}

/// (C expression, value the Rust side declares).
fn expectations() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    macro_rules! enum_values {
        ($($ty:ty),* $(,)?) => {$(
            for (value, cname) in <$ty>::VALUES {
                // Removed from UR before 2026.2 (kept for older runtimes).
                if *cname == "UR_FUNCTION_ENQUEUE_KERNEL_LAUNCH" {
                    continue;
                }
                out.push((cname.to_string(), u64::from(value.0)));
            }
        )*};
    }
    enum_values!(
        ur_result_t,
        ur_structure_type_t,
        ur_event_info_t,
        ur_event_status_t,
        ur_profiling_info_t,
        ur_queue_info_t,
        ur_device_info_t,
        ur_platform_info_t,
        ur_backend_t,
        ur_device_type_t,
        ur_function_t,
    );

    let flags = [
        (
            "OUT_OF_ORDER_EXEC_MODE_ENABLE",
            ur_queue_flags_t::OUT_OF_ORDER_EXEC_MODE_ENABLE,
        ),
        ("PROFILING_ENABLE", ur_queue_flags_t::PROFILING_ENABLE),
        ("ON_DEVICE", ur_queue_flags_t::ON_DEVICE),
        ("ON_DEVICE_DEFAULT", ur_queue_flags_t::ON_DEVICE_DEFAULT),
        ("DISCARD_EVENTS", ur_queue_flags_t::DISCARD_EVENTS),
        ("PRIORITY_LOW", ur_queue_flags_t::PRIORITY_LOW),
        ("PRIORITY_HIGH", ur_queue_flags_t::PRIORITY_HIGH),
        ("SUBMISSION_BATCHED", ur_queue_flags_t::SUBMISSION_BATCHED),
        (
            "SUBMISSION_IMMEDIATE",
            ur_queue_flags_t::SUBMISSION_IMMEDIATE,
        ),
        ("USE_DEFAULT_STREAM", ur_queue_flags_t::USE_DEFAULT_STREAM),
        (
            "SYNC_WITH_DEFAULT_STREAM",
            ur_queue_flags_t::SYNC_WITH_DEFAULT_STREAM,
        ),
        (
            "LOW_POWER_EVENTS_SUPPORT_EXP",
            ur_queue_flags_t::LOW_POWER_EVENTS_SUPPORT_EXP,
        ),
    ];
    for (name, flag) in flags {
        out.push((format!("UR_QUEUE_FLAG_{name}"), u64::from(flag.0)));
    }
    out.push((
        "UR_MEM_FLAG_READ_WRITE".into(),
        u64::from(UR_MEM_FLAG_READ_WRITE),
    ));

    for t in [
        "ur_result_t",
        "ur_queue_flags_t",
        "ur_native_handle_t",
        "ur_bool_t",
    ] {
        let size = match t {
            "ur_result_t" => std::mem::size_of::<ur_result_t>(),
            "ur_queue_flags_t" => std::mem::size_of::<ur_queue_flags_t>(),
            "ur_native_handle_t" => std::mem::size_of::<ur_native_handle_t>(),
            _ => std::mem::size_of::<ur_bool_t>(),
        };
        out.push((format!("sizeof({t})"), size as u64));
    }

    out.push((
        "sizeof(ur_queue_properties_t)".into(),
        std::mem::size_of::<ur_queue_properties_t>() as u64,
    ));
    for (field, offset) in [
        ("stype", std::mem::offset_of!(ur_queue_properties_t, stype)),
        ("pNext", std::mem::offset_of!(ur_queue_properties_t, pNext)),
        ("flags", std::mem::offset_of!(ur_queue_properties_t, flags)),
    ] {
        out.push((
            format!("offsetof(ur_queue_properties_t, {field})"),
            offset as u64,
        ));
    }

    out.push((
        "sizeof(ur_exp_command_buffer_desc_t)".into(),
        std::mem::size_of::<ur_exp_command_buffer_desc_t>() as u64,
    ));
    for (field, offset) in [
        (
            "stype",
            std::mem::offset_of!(ur_exp_command_buffer_desc_t, stype),
        ),
        (
            "pNext",
            std::mem::offset_of!(ur_exp_command_buffer_desc_t, pNext),
        ),
        (
            "isUpdatable",
            std::mem::offset_of!(ur_exp_command_buffer_desc_t, isUpdatable),
        ),
        (
            "isInOrder",
            std::mem::offset_of!(ur_exp_command_buffer_desc_t, isInOrder),
        ),
        (
            "enableProfiling",
            std::mem::offset_of!(ur_exp_command_buffer_desc_t, enableProfiling),
        ),
    ] {
        out.push((
            format!("offsetof(ur_exp_command_buffer_desc_t, {field})"),
            offset as u64,
        ));
    }

    macro_rules! params_layout {
        ($($ty:ident),* $(,)?) => {$(
            out.push((
                format!("sizeof({})", stringify!($ty)),
                std::mem::size_of::<$ty>() as u64,
            ));
            for (field, offset) in $ty::FIELD_OFFSETS {
                out.push((
                    format!("offsetof({}, {})", stringify!($ty), field),
                    *offset as u64,
                ));
            }
        )*};
    }
    // ur_enqueue_kernel_launch_params_t is not in the 2026.2 header.
    params_layout!(
        ur_queue_create_params_t,
        ur_enqueue_kernel_launch_with_args_exp_params_t,
        ur_enqueue_usm_memcpy_params_t,
        ur_enqueue_usm_fill_params_t,
        ur_enqueue_usm_memcpy_2d_params_t,
        ur_enqueue_mem_buffer_read_params_t,
        ur_enqueue_mem_buffer_write_params_t,
        ur_enqueue_mem_buffer_copy_params_t,
        ur_enqueue_mem_buffer_fill_params_t,
        ur_enqueue_events_wait_params_t,
        ur_enqueue_events_wait_with_barrier_params_t,
        ur_enqueue_events_wait_with_barrier_ext_params_t,
        ur_command_buffer_create_exp_params_t,
        ur_command_buffer_finalize_exp_params_t,
        ur_command_buffer_append_usm_memcpy_exp_params_t,
        ur_command_buffer_append_usm_fill_exp_params_t,
        ur_command_buffer_append_kernel_launch_with_args_exp_params_t,
        ur_command_buffer_append_mem_buffer_copy_exp_params_t,
        ur_command_buffer_append_mem_buffer_write_exp_params_t,
        ur_command_buffer_append_mem_buffer_read_exp_params_t,
        ur_command_buffer_append_mem_buffer_fill_exp_params_t,
        ur_command_buffer_append_native_command_exp_params_t,
        ur_enqueue_native_command_exp_params_t,
        ur_enqueue_command_buffer_exp_params_t,
    );
    out
}

#[test]
fn values_and_layouts_match_the_installed_header() {
    let Some(include) = header_dir() else {
        skip("no ur_api.h found (UR_INCLUDE_DIR, SYCLGRAPH_VENV, <workspace>/.venv)");
        return;
    };
    let expected = expectations();

    let mut c = String::from(
        "#include <stdbool.h>\n#include <stddef.h>\n#include <stdio.h>\n\
         #include \"ur_api.h\"\nint main(void) {\n",
    );
    for (expr, _) in &expected {
        writeln!(
            c,
            "  printf(\"%s=%llu\\n\", \"{expr}\", (unsigned long long)({expr}));"
        )
        .unwrap();
    }
    c.push_str("  return 0;\n}\n");

    let dir = std::env::temp_dir().join(format!("ur-sys-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("check.c");
    let exe = dir.join("check");
    std::fs::write(&src, c).unwrap();

    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let compiled = Command::new(&cc)
        .arg("-std=c11")
        .arg("-I")
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output();
    let compiled = match compiled {
        Ok(out) => out,
        Err(e) => {
            skip(&format!("C compiler `{cc}` not runnable: {e}"));
            return;
        }
    };
    assert!(
        compiled.status.success(),
        "compiling the header check against {} failed (a declared name is missing from \
         the header?):\n{}",
        include.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );

    let run = Command::new(&exe).output().expect("run the header check");
    assert!(run.status.success());
    let stdout = String::from_utf8(run.stdout).unwrap();
    let mut mismatches = Vec::new();
    let mut seen = 0;
    for (line, (expr, want)) in stdout.lines().zip(&expected) {
        let (name, got) = line.split_once('=').expect("name=value");
        assert_eq!(name, expr);
        let got: u64 = got.parse().unwrap();
        if got != *want {
            mismatches.push(format!("{expr}: header {got}, ur-sys {want}"));
        }
        seen += 1;
    }
    assert_eq!(seen, expected.len(), "the check printed too few lines");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        mismatches.is_empty(),
        "ur-sys disagrees with {}/ur_api.h:\n{}",
        include.display(),
        mismatches.join("\n")
    );
    eprintln!(
        "checked {} values against {}/ur_api.h",
        expected.len(),
        include.display()
    );
}
