//! `LevelZero::kernel_times` against the real Level Zero loader (Debian
//! `libze1` 1.8.12) driving our scripted driver, `ze-test-driver`.
//!
//! The loader reads `ZE_ENABLE_ALT_DRIVERS` once, when it initialises, and
//! the driver reads its script (`ZE_TEST_DRIVER_SCRIPT`) once, so every
//! scenario runs in a child process: the test `scenario_child` of this same
//! binary, started with `ZE_BRIDGE_SCENARIO=<name>` and both variables set in
//! its environment (nothing here calls `std::env::set_var`). In the parent,
//! `scenario_child` does nothing.
//!
//! The driver library is found through, in order: `ZE_TEST_DRIVER_PATH`; a
//! `cargo build -p ze-test-driver` into `<target>/<profile>/ze-test-driver-target`
//! (a target directory of its own, so it never waits on the lock of the build
//! running these tests), whose JSON messages name the artifact; a
//! `libze_test_driver.so` next to the test's profile directory.
//!
//! Expected times are worked out by hand in each scenario.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ze_bridge::level_zero::{monotonic_minus_raw, Device, Driver, DriverHostClock, LevelZero};
use ze_bridge::{Readout, Untimed};
use ze_sys::ze_result_t;

const SCENARIO_ENV: &str = "ZE_BRIDGE_SCENARIO";
const DRIVER_FILE: &str = "libze_test_driver.so";

fn build_driver(profile_dir: &Path) -> Result<PathBuf, String> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "build",
            "-p",
            "ze-test-driver",
            "--message-format=json",
            "--target-dir",
        ])
        .arg(profile_dir.join("ze-test-driver-target"))
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo build -p ze-test-driver failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // Each line is a JSON message; the artifact's "filenames" hold the path.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let suffix = format!("/{DRIVER_FILE}\"");
    stdout
        .lines()
        .filter(|line| line.contains("\"reason\":\"compiler-artifact\""))
        .find_map(|line| {
            let end = line.find(&suffix)? + suffix.len() - 1;
            let start = line[..end].rfind('"')? + 1;
            Some(PathBuf::from(&line[start..end]))
        })
        .ok_or_else(|| "cargo reported no libze_test_driver.so".to_string())
}

fn driver_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(path) = env::var_os("ZE_TEST_DRIVER_PATH") {
            return path.into();
        }
        // <target>/<profile>/deps/<this test>
        let exe = env::current_exe().expect("current_exe");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in <target>/<profile>/deps")
            .to_path_buf();
        match build_driver(&profile_dir) {
            Ok(path) => path,
            Err(e) => {
                let next_to_us = profile_dir.join(DRIVER_FILE);
                assert!(next_to_us.exists(), "{e}; and no {}", next_to_us.display());
                next_to_us
            }
        }
    })
}

/// Runs `scenario` in a child process with the driver scripted by `script`.
fn run_scenario(scenario: &str, script: &str, extra_env: &[(&str, &str)]) {
    let mut child = Command::new(env::current_exe().expect("current_exe"));
    child
        .args([
            "scenario_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO_ENV, scenario)
        .env("ZE_ENABLE_ALT_DRIVERS", driver_path())
        .env("ZE_TEST_DRIVER_SCRIPT", script);
    for var in [
        "ZE_ENABLE_LOADER_INTERCEPT",
        "ZE_ENABLE_VALIDATION_LAYER",
        "ZE_ENABLE_TRACING_LAYER",
        "ZE_ENABLE_NULL_DRIVER",
    ] {
        child.env_remove(var);
    }
    for (key, value) in extra_env {
        child.env(key, value);
    }
    let output = child.output().expect("spawn the scenario child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "scenario {scenario} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains(&format!("scenario {scenario} done")),
        "scenario {scenario} did not run:\n{stdout}"
    );
}

/// The loader, initialised, with its one driver and device.
fn open(host_clock: DriverHostClock) -> (LevelZero, Driver, Device) {
    let ze = LevelZero::load()
        .expect("load libze_loader.so.1 (Debian package libze1)")
        .with_driver_host_clock(host_clock);
    ze.init_for_tests().expect("zeInit with the test driver");
    let drivers = ze.drivers().expect("zeDriverGet");
    assert_eq!(drivers.len(), 1, "one driver: ours");
    let devices = ze.devices(drivers[0]).expect("zeDeviceGet");
    assert_eq!(devices.len(), 1, "one device");
    (ze, drivers[0], devices[0])
}

fn times(start_ns: u64, end_ns: u64) -> Readout {
    Readout::Times { start_ns, end_ns }
}

/// 12.5 MHz (80 ns a tick), 32-bit kernel timestamps, 36-bit global ones;
/// the pair is (host 5 s, device tick 1000).
const PLAIN_SCRIPT: &str = "timer_hz 12500000; kernel_bits 32; timestamp_bits 36
    sync 5000000000 1000
    event 0 1250 1350
    event 1 0xfffffff0 0x20
    event 2 2000 2500 pending 2
    event 3 0 0
    event 4 1 2 result 0x70000001";

fn plain_checks() {
    let (ze, driver, device) = open(DriverHostClock::Monotonic);
    let pool = ze.event_pool(driver, &[device], 8).expect("event pool");
    let read = |index| {
        let event = pool.event(index).expect("event");
        ze.kernel_times(event.raw(), device.raw())
    };

    // 250 ticks after the pair = 20_000 ns; 100 ticks long = 8_000 ns.
    assert_eq!(read(0), times(5_000_020_000, 5_000_028_000));

    // Start 0xfffffff0 is 1016 ticks before the pair modulo 2^32
    // (0xfffffff0 - 1000 = 2^32 - 1016): 5 s - 81_280 ns. End 0x20 wrapped:
    // 0x30 = 48 ticks = 3_840 ns long.
    assert_eq!(read(1), times(4_999_918_720, 4_999_922_560));

    // Two NOT_READY answers, then 1000 ticks after the pair (80_000 ns),
    // 500 ticks (40_000 ns) long.
    let event = pool.event(2).expect("event");
    assert_eq!(event.status(), ze_result_t::NOT_READY);
    assert_eq!(ze.kernel_times(event.raw(), device.raw()), Readout::Pending);
    assert_eq!(ze.kernel_times(event.raw(), device.raw()), Readout::Pending);
    assert_eq!(event.status(), ze_result_t::SUCCESS);
    assert_eq!(
        ze.kernel_times(event.raw(), device.raw()),
        times(5_000_080_000, 5_000_120_000)
    );

    // Never written.
    assert_eq!(read(3), Readout::Untimed(Untimed::Invalid));
    // The query itself fails (ZE_RESULT_ERROR_DEVICE_LOST).
    assert_eq!(read(4), Readout::Untimed(Untimed::Failed));
}

fn scenario(name: &str) {
    match name {
        "plain" | "plain_intercepted" => plain_checks(),
        "fast_timer" => {
            // 19.2 MHz: a tick is 52.083.. ns; 64-bit counters; pair (1 ms, 0).
            let (ze, driver, device) = open(DriverHostClock::Monotonic);
            let pool = ze.event_pool(driver, &[device], 4).expect("event pool");
            let read = |index| {
                let event = pool.event(index).expect("event");
                ze.kernel_times(event.raw(), device.raw())
            };
            // Start 11 ticks = 572.92 -> 572 ns; 11 ticks long -> 572 ns.
            assert_eq!(read(0), times(1_000_572, 1_001_144));
            // 19_200_000 ticks = 1 s after the pair, 1 s long.
            assert_eq!(read(1), times(1_001_000_000, 2_001_000_000));
            // 64-bit end before start: no wrap possible.
            assert_eq!(read(2), Readout::Untimed(Untimed::Invalid));
            // 3601 s long: absurd.
            assert_eq!(read(3), Readout::Untimed(Untimed::Invalid));
        }
        "offset" => {
            // 12.5 MHz, 32/36 bits; the pair's device value has bits above
            // the kernel's 32 and sits just before a low-32-bit wrap.
            let (ze, driver, device) = open(DriverHostClock::Monotonic);
            let pool = ze.event_pool(driver, &[device], 2).expect("event pool");
            let read = |index| {
                let event = pool.event(index).expect("event");
                ze.kernel_times(event.raw(), device.raw())
            };
            // 0x10 - 0xffffff00 = 0x110 = 272 ticks after: + 21_760 ns;
            // 16 ticks = 1_280 ns long.
            assert_eq!(read(0), times(123_456_810_760, 123_456_812_040));
            // 0xfffffe00 - 0xffffff00 = -256 ticks: - 20_480 ns; 128 ticks
            // = 10_240 ns long.
            assert_eq!(read(1), times(123_456_768_520, 123_456_778_760));
        }
        "monotonic_raw" => {
            // The default: the driver's host value is CLOCK_MONOTONIC_RAW and
            // moves by CLOCK_MONOTONIC - CLOCK_MONOTONIC_RAW, which the test
            // brackets by reading it before and after.
            let before = monotonic_minus_raw().expect("host clocks");
            let (ze, driver, device) = open(DriverHostClock::MonotonicRaw);
            let pool = ze.event_pool(driver, &[device], 1).expect("event pool");
            let event = pool.event(0).expect("event");
            let readout = ze.kernel_times(event.raw(), device.raw());
            let after = monotonic_minus_raw().expect("host clocks");
            let Readout::Times { start_ns, end_ns } = readout else {
                panic!("expected times, got {readout:?}");
            };
            // 5 s + 20_000 ns in raw time; the duration is exactly 8_000 ns.
            assert_eq!(end_ns - start_ns, 8_000);
            let shift = start_ns as i64 - 5_000_020_000;
            let slack = 50_000; // clock reads a few µs apart at most
            assert!(
                shift >= before.min(after) - slack && shift <= before.max(after) + slack,
                "shift {shift} outside [{before}, {after}]"
            );
        }
        "no_driver" => {
            // No usable driver: loading works, initialising does not, and
            // nothing panics.
            let ze = LevelZero::load().expect("load the loader");
            let error = ze.init_for_tests().expect_err("no driver to initialise");
            assert_eq!(error.result, ze_result_t::ERROR_UNINITIALIZED);
            assert!(ze.drivers().map(|d| d.is_empty()).unwrap_or(true));
        }
        other => panic!("unknown scenario {other}"),
    }
    println!("scenario {name} done");
}

/// The child side: runs the scenario named in `ZE_BRIDGE_SCENARIO`, if any.
#[test]
fn scenario_child() {
    if let Ok(name) = env::var(SCENARIO_ENV) {
        scenario(&name);
    }
}

#[test]
fn plain_ticks_wrap_pending_and_invalid() {
    run_scenario("plain", PLAIN_SCRIPT, &[]);
}

#[test]
fn same_through_the_loaders_handle_wrapping() {
    // With one driver the 1.8.12 loader hands out the driver's own handles;
    // ZE_ENABLE_LOADER_INTERCEPT=1 makes it wrap them in its own objects.
    run_scenario(
        "plain_intercepted",
        PLAIN_SCRIPT,
        &[("ZE_ENABLE_LOADER_INTERCEPT", "1")],
    );
}

#[test]
fn another_timer_resolution() {
    run_scenario(
        "fast_timer",
        "timer_hz 19200000; kernel_bits 64; timestamp_bits 64
         sync 1000000 0
         event 0 11 22
         event 1 19200000 38400000
         event 2 100 50
         event 3 1 69139200001",
        &[],
    );
}

#[test]
fn device_to_host_offset() {
    run_scenario(
        "offset",
        "timer_hz 12500000; kernel_bits 32; timestamp_bits 36
         sync 123456789000 0x7ffffff00
         event 0 0x10 0x20
         event 1 0xfffffe00 0xfffffe80",
        &[],
    );
}

#[test]
fn driver_host_clock_is_monotonic_raw_by_default() {
    run_scenario(
        "monotonic_raw",
        "timer_hz 12500000; sync 5000000000 1000; event 0 1250 1350",
        &[],
    );
}

#[test]
fn missing_driver_is_an_error_not_a_crash() {
    let mut command = Command::new(env::current_exe().expect("current_exe"));
    let output = command
        .args([
            "scenario_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SCENARIO_ENV, "no_driver")
        .env("ZE_ENABLE_ALT_DRIVERS", "/nonexistent/libze_nothing.so")
        .env_remove("ZE_ENABLE_LOADER_INTERCEPT")
        .output()
        .expect("spawn the scenario child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("scenario no_driver done"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
