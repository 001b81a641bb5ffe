//! Native commands (`ext_codeplay_enqueue_native_command`) on the real
//! runtime's CPU backends (tests/programs/native_commands.cpp). Neither the
//! OpenCL adapter nor the Level Zero adapter of the 2026.2 runtime (UR 0.12)
//! runs them: `urEnqueueNativeCommandExp` returns
//! `UR_RESULT_ERROR_UNSUPPORTED_FEATURE` and the runtime throws. What is
//! checked here is what the CPU can show: syclgraph follows the call
//! (through its hook, and on `ur.call.debug` without hooks), makes the
//! node a `native` device command at its submitting line, and counts the
//! refusal under the adapter's result; a host task taking an
//! `interop_handle` stays a host task. A native command that runs, and its
//! times, are checked on CUDA (tests/gpu/native_commands.cpp).

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/native_commands.cpp";
const REFUSED: &str = "native commands: 1 refused by the backend (urEnqueueNativeCommandExp returned UR_RESULT_ERROR_UNSUPPORTED_FEATURE(44); the program got an exception): their nodes have no device time";

fn summary(traced: &Traced) -> String {
    std::fs::read_to_string(traced.dir.join("summary.txt")).expect("summary.txt")
}

/// The native command's node and its one row; the memcpys around it timed.
fn check_refused_native(traced: &Traced) {
    assert!(
        traced.stdout().contains("native refused"),
        "{}",
        traced.stdout()
    );
    let line = tag_line(SRC, "native");
    let graph = traced.graph();
    let (_, attrs) = node_at(&graph, "native_commands.cpp", line);
    assert_eq!(attrs["kind"], "native", "{attrs:?}");
    let rows = traced.csv("kernels.csv");
    let native: Vec<&BTreeMap<String, String>> = rows_at(&rows, "native_commands.cpp", line);
    assert_eq!(native.len(), 1, "{rows:?}");
    assert_eq!(native[0]["kind"], "native");
    assert_eq!(native[0]["name"], "native command");
    assert_eq!(native[0]["timing"], "unavailable");
    for label in ["before", "after"] {
        let at = rows_at(&rows, "native_commands.cpp", tag_line(SRC, label));
        assert_eq!(at.len(), 1, "{label}: {rows:?}");
        assert_eq!(at[0]["timing"], "ok", "{label}");
    }
    let text = summary(traced);
    assert!(text.contains(REFUSED), "{text}");
    assert!(!text.contains("violations:"), "{text}");
    assert!(!text.contains("without a node"), "{text}");
}

#[test]
fn a_native_command_the_opencl_cpu_device_refuses_is_a_native_node_counted_under_its_cause() {
    let make = || {
        let mut cmd = runtime_command(&program("native_commands"));
        cmd.arg("native");
        cmd
    };
    check_refused_native(&run_both("native-opencl", make, &[]));
    // Before the hooks are in (and without them), on ur.call.debug.
    check_refused_native(&run_both(
        "native-opencl-layer",
        make,
        &[("SYCLGRAPH_UR_HOOKS", "0")],
    ));
}

#[test]
fn a_native_command_on_level_zero_over_the_test_driver_likewise() {
    let make = || {
        let mut cmd = runtime_command(&program("native_commands"));
        on_level_zero_test_driver(&mut cmd);
        cmd.env(
            "ZE_TEST_DRIVER_SCRIPT",
            "timer_hz 10000000; sync 1000000000 5000",
        )
        .arg("native");
        cmd
    };
    check_refused_native(&run_both("native-level-zero", make, &[]));
}

#[test]
fn a_host_task_taking_an_interop_handle_stays_a_host_task() {
    let make = || {
        let mut cmd = runtime_command(&program("native_commands"));
        cmd.arg("host-task");
        cmd
    };
    let traced = run_both("native-host-task", make, &[]);
    let graph = traced.graph();
    let (_, attrs) = node_at(
        &graph,
        "native_commands.cpp",
        tag_line(SRC, "interop_host_task"),
    );
    assert_eq!(attrs["kind"], "host_task", "{attrs:?}");
    let rows = traced.csv("kernels.csv");
    assert!(rows.iter().all(|r| r["kind"] != "native"), "{rows:?}");
    assert!(!summary(&traced).contains("native commands:"));
}
