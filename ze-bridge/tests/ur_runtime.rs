//! `UnifiedRuntime` and `UrTimestampSource` on the real DPC++ 2026.2 runtime
//! of the project's venv, without SYCL: the wheel's `libur_loader.so.0` sees
//! the OpenCL CPU device (its OpenCL adapter is linked into the loader) once
//! `OCL_ICD_FILENAMES` names `libintelocl.so`, so the test makes its own
//! context, profiling queue and buffer fill and reads the fill's event.
//!
//! Each test runs its body in a child process (this test binary, re-run on
//! that one test) whose environment it controls: `LD_LIBRARY_PATH` is read by
//! the dynamic linker at start-up only, and a second loader must be tried
//! without it too.
//!
//! The venv is `$SYCLGRAPH_VENV` or `<workspace>/.venv`. Without it the tests
//! print why and pass, unless `SYCLGRAPH_REQUIRE_RUNTIME=1` (then they fail).

mod common;
use common::skip;

use std::ffi::{c_void, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use libloading::Library;
use ur_sys as sys;
use ze_bridge::ur::{
    Backend, EventStatus, ProfilingInfo, UnifiedRuntime, UrDevice, UrPlatform, UrQueue,
};
use ze_bridge::ur_source::{monotonic_ns, HostReference, NativeLevelZero, UrTimestampSource};
use ze_bridge::{Readout, TimestampSource, Untimed, UrEvent};

// ---- child-process harness ------------------------------------------------

const CHILD: &str = "SYCLGRAPH_UR_TEST_CHILD";

fn venv() -> Option<PathBuf> {
    let dir = match std::env::var_os("SYCLGRAPH_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv"),
    };
    dir.join("lib/libur_loader.so.0")
        .is_file()
        .then(|| dir.canonicalize().unwrap_or(dir))
}

/// True in the child process that runs test `name`'s body.
fn is_child(name: &str) -> bool {
    std::env::var_os(CHILD).is_some_and(|v| v == name)
}

/// Runs test `name` in a child with `set` added to and `remove` taken from
/// the environment, and asserts that it passed.
fn run_child(name: &str, set: &[(&str, OsString)], remove: &[&str]) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name);
    for key in remove {
        cmd.env_remove(key);
    }
    for (key, value) in set {
        cmd.env(key, value);
    }
    let out = cmd.output().expect("re-run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child `{name}` failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    eprint!("{stderr}");
}

fn runtime_env(venv: &Path) -> Vec<(&'static str, OsString)> {
    vec![
        ("LD_LIBRARY_PATH", venv.join("lib").into_os_string()),
        (
            "OCL_ICD_FILENAMES",
            venv.join("lib/libintelocl.so").into_os_string(),
        ),
    ]
}

// ---- tests ----------------------------------------------------------------

#[test]
fn second_loader_answers_37_until_loader_init() {
    const NAME: &str = "second_loader_answers_37_until_loader_init";
    if !is_child(NAME) {
        let Some(venv) = venv() else {
            return skip("no venv with lib/libur_loader.so.0");
        };
        run_child(NAME, &runtime_env(&venv), &[]);
        return;
    }
    // SAFETY: opening the UR loader only runs its own initialisers.
    let raw = unsafe { Library::new("libur_loader.so.0") }.expect("LD_LIBRARY_PATH has the venv");
    // SAFETY: urAdapterGet has the PFN_urAdapterGet prototype (ur_api.h).
    let adapter_get = *unsafe { raw.get::<sys::PFN_urAdapterGet>(b"urAdapterGet\0") }.unwrap();
    let mut count = 0u32;
    // SAFETY: NumEntries 0 with a null array only asks for the count, written
    // to a valid u32.
    let before = unsafe { adapter_get(0, std::ptr::null_mut(), &mut count) };
    assert_eq!(before, sys::ur_result_t::ERROR_UNINITIALIZED);

    let ur = UnifiedRuntime::load().expect("load");
    assert_eq!(ur.path(), "libur_loader.so.0");
    // SAFETY: as above; the loader is the same instance (same soname).
    let after = unsafe { adapter_get(0, std::ptr::null_mut(), &mut count) };
    assert_eq!(after, sys::ur_result_t::SUCCESS);
    eprintln!("second loader: 37 before urLoaderInit, {count} adapter(s) after");
    assert!(count >= 1, "the OpenCL adapter should see the CPU device");
}

#[test]
fn load_finds_the_loader_beside_libsycl() {
    const NAME: &str = "load_finds_the_loader_beside_libsycl";
    if !is_child(NAME) {
        let Some(venv) = venv() else {
            return skip("no venv with lib/libur_loader.so.0");
        };
        // No LD_LIBRARY_PATH: only (b), the directory of libsycl, can work.
        run_child(
            NAME,
            &[("SYCLGRAPH_VENV", venv.into_os_string())],
            &["LD_LIBRARY_PATH"],
        );
        return;
    }
    let venv = venv().unwrap();
    // SAFETY: loading libsycl runs its static initialisers, as any SYCL
    // program does; it is kept loaded until the end of the test.
    let sycl = unsafe { Library::new(venv.join("lib/libsycl.so.9")) }.expect("open libsycl");
    let ur = UnifiedRuntime::load().expect("load through /proc/self/maps");
    if !system_loader() {
        assert_eq!(
            Path::new(ur.path()),
            venv.join("lib/libur_loader.so.0"),
            "found beside libsycl"
        );
    }
    drop(ur);
    drop(sycl);
}

/// A `libur_loader.so.0` on the default search path (none on our machines).
fn system_loader() -> bool {
    // SAFETY: as in the test.
    unsafe { Library::new("libur_loader.so.0") }.is_ok()
}

#[test]
fn load_error_lists_what_was_tried() {
    const NAME: &str = "load_error_lists_what_was_tried";
    if !is_child(NAME) {
        run_child(NAME, &[], &["LD_LIBRARY_PATH"]);
        return;
    }
    if system_loader() {
        return eprintln!("skipped: a libur_loader.so.0 is on the default search path");
    }
    let err = UnifiedRuntime::load().unwrap_err().to_string();
    assert!(err.contains("libur_loader.so.0"), "{err}");
    assert!(err.contains("LD_LIBRARY_PATH"), "{err}");
}

/// The raw UR calls the test needs besides `UnifiedRuntime`'s.
struct Setup {
    platform: sys::ur_platform_handle_t,
    device: sys::ur_device_handle_t,
    context: sys::ur_context_handle_t,
    queue_create: sys::PFN_urQueueCreate,
    queue_release: sys::PFN_urQueueRelease,
    buffer_create: sys::PFN_urMemBufferCreate,
    mem_release: sys::PFN_urMemRelease,
    fill: sys::PFN_urEnqueueMemBufferFill,
    event_wait: sys::PFN_urEventWait,
    event_release: sys::PFN_urEventRelease,
    context_release: sys::PFN_urContextRelease,
}

fn sym<T: Copy>(lib: &Library, name: &str) -> T {
    let name = format!("{name}\0");
    // SAFETY: every caller names a UR function and T its PFN_ type.
    *unsafe { lib.get::<T>(name.as_bytes()) }.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn ok(what: &str, code: sys::ur_result_t) {
    assert_eq!(code, sys::ur_result_t::SUCCESS, "{what}");
}

impl Setup {
    fn new(lib: &Library) -> Setup {
        let adapter_get: sys::PFN_urAdapterGet = sym(lib, "urAdapterGet");
        let platform_get: sys::PFN_urPlatformGet = sym(lib, "urPlatformGet");
        let device_get: sys::PFN_urDeviceGet = sym(lib, "urDeviceGet");
        let context_create: sys::PFN_urContextCreate = sym(lib, "urContextCreate");
        let mut adapter: sys::ur_adapter_handle_t = std::ptr::null_mut();
        let mut platform: sys::ur_platform_handle_t = std::ptr::null_mut();
        let mut device: sys::ur_device_handle_t = std::ptr::null_mut();
        let mut context: sys::ur_context_handle_t = std::ptr::null_mut();
        let mut n = 0u32;
        // SAFETY (this block): each call gets room for exactly one handle
        // (NumEntries 1) and valid out-pointers; inputs are handles the
        // previous call returned.
        unsafe {
            ok("urAdapterGet", adapter_get(1, &mut adapter, &mut n));
            assert!(n >= 1, "no UR adapter: is OCL_ICD_FILENAMES set?");
            ok(
                "urPlatformGet",
                platform_get(adapter, 1, &mut platform, &mut n),
            );
            ok(
                "urDeviceGet",
                device_get(platform, sys::ur_device_type_t::ALL, 1, &mut device, &mut n),
            );
            ok(
                "urContextCreate",
                context_create(1, &device, std::ptr::null(), &mut context),
            );
        }
        Setup {
            platform,
            device,
            context,
            queue_create: sym(lib, "urQueueCreate"),
            queue_release: sym(lib, "urQueueRelease"),
            buffer_create: sym(lib, "urMemBufferCreate"),
            mem_release: sym(lib, "urMemRelease"),
            fill: sym(lib, "urEnqueueMemBufferFill"),
            event_wait: sym(lib, "urEventWait"),
            event_release: sym(lib, "urEventRelease"),
            context_release: sym(lib, "urContextRelease"),
        }
    }

    fn queue(&self, flags: sys::ur_queue_flags_t) -> sys::ur_queue_handle_t {
        let props = sys::ur_queue_properties_t {
            stype: sys::ur_structure_type_t::QUEUE_PROPERTIES,
            pNext: std::ptr::null_mut(),
            flags,
        };
        let mut queue: sys::ur_queue_handle_t = std::ptr::null_mut();
        // SAFETY: live context and device; props and queue are valid.
        ok("urQueueCreate", unsafe {
            (self.queue_create)(self.context, self.device, &props, &mut queue)
        });
        queue
    }

    /// Fills `bytes` bytes of a new buffer on `queue`; returns the buffer and
    /// the fill's event (not waited for).
    fn fill(
        &self,
        queue: sys::ur_queue_handle_t,
        bytes: usize,
    ) -> (sys::ur_mem_handle_t, sys::ur_event_handle_t) {
        let mut buffer: sys::ur_mem_handle_t = std::ptr::null_mut();
        let mut event: sys::ur_event_handle_t = std::ptr::null_mut();
        let pattern = 0xabcd_abcdu32;
        // SAFETY: live context/queue; the pattern outlives the call (the
        // adapter copies it); out-pointers are valid.
        unsafe {
            ok(
                "urMemBufferCreate",
                (self.buffer_create)(
                    self.context,
                    sys::UR_MEM_FLAG_READ_WRITE,
                    bytes,
                    std::ptr::null(),
                    &mut buffer,
                ),
            );
            ok(
                "urEnqueueMemBufferFill",
                (self.fill)(
                    queue,
                    buffer,
                    (&pattern as *const u32).cast::<c_void>(),
                    4,
                    0,
                    bytes,
                    0,
                    std::ptr::null(),
                    &mut event,
                ),
            );
        }
        (buffer, event)
    }

    fn wait(&self, event: sys::ur_event_handle_t) {
        // SAFETY: one live event.
        ok("urEventWait", unsafe { (self.event_wait)(1, &event) });
    }

    fn release(
        &self,
        queue: sys::ur_queue_handle_t,
        buffer: sys::ur_mem_handle_t,
        event: sys::ur_event_handle_t,
    ) {
        // SAFETY: each handle was created here and is released once.
        unsafe {
            ok("urEventRelease", (self.event_release)(event));
            ok("urMemRelease", (self.mem_release)(buffer));
            ok("urQueueRelease", (self.queue_release)(queue));
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        // SAFETY: the context was created in Setup::new and is released once.
        unsafe { (self.context_release)(self.context) };
    }
}

/// Counts calls; must never be reached for an OpenCL event.
struct FakeLevelZero(std::sync::atomic::AtomicUsize);

impl NativeLevelZero for FakeLevelZero {
    fn kernel_times(
        &self,
        _event: ze_bridge::ur::NativeHandle,
        _device: ze_bridge::ur::NativeHandle,
    ) -> Readout {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Readout::Untimed(Untimed::Failed)
    }
}

#[test]
fn reads_device_times_of_an_opencl_fill() {
    const NAME: &str = "reads_device_times_of_an_opencl_fill";
    if !is_child(NAME) {
        let Some(venv) = venv() else {
            return skip("no venv with lib/libur_loader.so.0");
        };
        run_child(NAME, &runtime_env(&venv), &[]);
        return;
    }

    let ur = Arc::new(UnifiedRuntime::load().expect("load"));
    let setup = Setup::new(ur.library());
    let fake_lz = Arc::new(FakeLevelZero(Default::default()));
    let source = UrTimestampSource::new(ur.clone()).with_level_zero(fake_lz.clone());
    assert_eq!(source.name(), "unified-runtime");

    // -- a profiling queue --------------------------------------------------
    let queue = setup.queue(sys::ur_queue_flags_t::PROFILING_ENABLE);
    let t0 = monotonic_ns();
    let (buffer, raw_event) = setup.fill(queue, 8 << 20);
    let event = UrEvent(raw_event as usize);
    assert!(source.retain(event));
    let early = source.read(event);
    assert!(
        matches!(early, Readout::Pending | Readout::Times { .. }),
        "{early:?}"
    );
    setup.wait(raw_event);
    let t1 = monotonic_ns();

    // The queries the source builds on.
    assert_eq!(ur.event_status(event).unwrap(), EventStatus::Complete);
    let q = ur.event_queue(event).unwrap();
    assert_eq!(q, UrQueue(queue as usize));
    assert!(ur
        .queue_flags(q)
        .unwrap()
        .contains(sys::ur_queue_flags_t::PROFILING_ENABLE));
    let device = ur.queue_device(q).unwrap();
    assert_eq!(device, UrDevice(setup.device as usize));
    let platform = ur.device_platform(device).unwrap();
    assert_eq!(platform, UrPlatform(setup.platform as usize));
    // A root device has no parent (sub-devices: tests/tests/sub_devices.rs).
    assert_eq!(ur.device_parent(device).unwrap(), None);
    assert_eq!(ur.platform_backend(platform).unwrap(), Backend::OPENCL);
    assert_ne!(ur.event_native_handle(event).unwrap().0, 0);
    assert_ne!(ur.device_native_handle(device).unwrap().0, 0);
    let (d, h) = ur.device_global_timestamps(device).unwrap();
    assert!(d > 0 && h > 0);
    let start = ur.event_profiling(event, ProfilingInfo::Start).unwrap();
    let end = ur.event_profiling(event, ProfilingInfo::End).unwrap();
    let queued = ur.event_profiling(event, ProfilingInfo::Queued).unwrap();
    assert!(queued <= start && start <= end, "{queued} {start} {end}");

    // The source's readout: the device's duration to the ns, on CLOCK_MONOTONIC.
    let Readout::Times { start_ns, end_ns } = source.read(event) else {
        panic!("no times: {:?}", source.read(event));
    };
    assert_eq!(end_ns - start_ns, end - start, "duration is the device's");
    let cal = source.calibration(device).expect("calibrated");
    assert_eq!(
        i128::from(start_ns) - i128::from(start),
        i128::from(cal.offset_ns)
    );
    // The OpenCL CPU device's clocks are CLOCK_MONOTONIC (module docs).
    assert_eq!(cal.host, HostReference::AdapterHost, "{cal:?}");
    assert!(cal.offset_ns.abs() < 1_000_000, "{cal:?}");
    assert!(
        t0 - 1_000_000 <= start_ns && end_ns <= t1 + 1_000_000,
        "fill [{start_ns}, {end_ns}] outside [{t0}, {t1}] (CLOCK_MONOTONIC)"
    );
    assert_eq!(fake_lz.0.load(std::sync::atomic::Ordering::Relaxed), 0);
    eprintln!(
        "8 MiB fill: {} ns on the device, start {} ns after submission; \
         calibration {cal:?}",
        end - start,
        start_ns as i128 - t0 as i128
    );
    source.release(event);
    setup.release(queue, buffer, raw_event);

    // -- a queue without profiling -----------------------------------------
    let queue = setup.queue(sys::ur_queue_flags_t::default());
    let (buffer, raw_event) = setup.fill(queue, 4096);
    setup.wait(raw_event);
    let event = UrEvent(raw_event as usize);
    let err = ur.event_profiling(event, ProfilingInfo::Start).unwrap_err();
    assert!(err.is_profiling_not_available(), "{err}");
    assert_eq!(source.read(event), Readout::Untimed(Untimed::NoProfiling));
    setup.release(queue, buffer, raw_event);

    // -- no event ------------------------------------------------------------
    assert!(!source.retain(UrEvent(0)));
    assert_eq!(source.read(UrEvent(0)), Readout::Untimed(Untimed::Failed));
    source.release(UrEvent(0));
}
