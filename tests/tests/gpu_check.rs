//! `scripts/gpu-check.sh`, the GPU check (issue #42), where CI runs: no GPU.
//! Without a SYCL GPU device it must say `skipped: no SYCL GPU device` and
//! succeed. Asked to check the default device anyway
//! (`SYCLGRAPH_GPU_CHECK_ANY_DEVICE=1`) it runs its own programs
//! (tests/gpu/) on the OpenCL CPU device under syclgraph, and its checker
//! holds every timed row against the bounds the program recorded itself:
//! each command's start no earlier than the program's clock before it
//! submitted, its end no later than the clock after its wait returned
//! (to 1 µs), and every duration equal to the program's own event
//! profiling.

use std::process::{Command, Output};
use std::time::Duration;

use syclgraph_tests::*;

/// The script, with the runtime, syclgraph and an output folder of its own.
fn gpu_check(test: &str, any_device: bool) -> Output {
    let out = fresh_dir(test);
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/gpu-check.sh"))
        .env("SYCLGRAPH_VENV", venv())
        .env("SYCLGRAPH_EXE", syclgraph_exe())
        .env("SYCLGRAPH_GPU_CHECK_OUT", &out)
        .env_remove("XPTI_TRACE_ENABLE")
        .env_remove("XPTI_SUBSCRIBERS");
    if any_device {
        cmd.env("SYCLGRAPH_GPU_CHECK_ANY_DEVICE", "1");
    } else {
        cmd.env_remove("SYCLGRAPH_GPU_CHECK_ANY_DEVICE");
    }
    output_within(cmd, Duration::from_secs(600))
}

#[test]
fn without_a_gpu_it_says_skipped_and_succeeds() {
    let out = gpu_check("gpu_check_skipped", false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout.trim_end(), "skipped: no SYCL GPU device", "{out:?}");
}

#[test]
fn on_the_cpu_device_every_row_is_inside_the_programs_own_clock_bounds() {
    let out = gpu_check("gpu_check_cpu", true);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("FAIL"), "{stdout}");
    // Both programs ran and were checked: every waited command of
    // clock_bounds (600) and of its burst (1000), each against its bracket.
    assert!(
        stdout.contains(
            "ok bounds: every one of 1600 timed rows inside the program's clock bounds to 1.00 us"
        ),
        "{stdout}"
    );
    for label in [
        "memcpy",
        "memset",
        "fill",
        "burst",
        "usm_memcpy",
        "two_queues_memcpy",
    ] {
        assert!(
            stdout.contains(&format!("ok profiling {label}: ")),
            "{label}: {stdout}"
        );
    }
    // gpu_mix's USM commands, two queues and graph replays (markers on
    // this device).
    assert!(
        stdout.contains("ok bounds: every one of 5 marker rows"),
        "{stdout}"
    );
    // syclgraph's own account of the clock is in the summary.
    assert!(
        stdout.contains("summary: host clock: opencl device 1: "),
        "{stdout}"
    );
    assert!(stdout.contains(" 0 failed"), "{stdout}");
}
