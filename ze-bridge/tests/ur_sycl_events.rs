//! `UrTimestampSource` on events that the SYCL runtime itself signals.
//!
//! Two small C++ libraries are compiled with `g++` against the venv's SYCL
//! and XPTI headers:
//! - `libsgsub.so`, an XPTI subscriber that keeps the `user_data` of every
//!   `signal` trace point (the `ur_event_handle_t` of an enqueued command);
//!   it finds `xptiRegisterCallback` in the dispatcher the runtime loaded
//!   (`$XPTI_FRAMEWORK_DISPATCHER`), since the wheel ships `libxptifw.so` and
//!   `libxptifw.so.1` as two copies and linking against one may bind the
//!   other;
//! - `libsgapp.so`, which runs one SYCL command (a host-to-buffer copy through
//!   an accessor, so it goes through the scheduler and is signalled) on the
//!   OpenCL CPU device and keeps the `sycl::event` alive until `sg_cleanup`.
//!
//! A child process (this test binary, re-run with XPTI on) loads both, runs
//! the command, and reads its signalled events with a `UrTimestampSource` over
//! the *second* UR loader, comparing with SYCL's own `get_profiling_info`.
//!
//! Without the venv or `g++` the test prints why and passes, unless
//! `SYCLGRAPH_REQUIRE_RUNTIME=1` (then it fails).

mod common;
use common::skip;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use libloading::Library;
use ze_bridge::ur::{ProfilingInfo, UnifiedRuntime};
use ze_bridge::ur_source::UrTimestampSource;
use ze_bridge::{Readout, TimestampSource, Untimed, UrEvent};

const CHILD: &str = "SYCLGRAPH_UR_TEST_CHILD";
const NAME: &str = "sycl_signalled_events_read_through_the_second_loader";

const SUBSCRIBER_CPP: &str = r#"
#include <xpti/xpti_trace_framework.h>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
extern "C" {
__attribute__((visibility("default"))) void *sg_signals[1024];
__attribute__((visibility("default"))) int sg_nsignals = 0;
}
static void on_signal(uint16_t, xpti::trace_event_data_t *, xpti::trace_event_data_t *,
                      uint64_t, const void *user_data) {
  if (sg_nsignals < 1024) sg_signals[sg_nsignals++] = const_cast<void *>(user_data);
}
// Not linked with libxptifw: the wheel's libxptifw.so and .so.1 are separate
// copies, so a link-time binding could reach a framework instance the
// runtime does not use. Ask the dispatcher the runtime loaded.
XPTI_CALLBACK_API void xptiTraceInit(unsigned int, unsigned int, const char *,
                                     const char *stream) {
  if (std::strcmp(stream, "sycl") != 0) return;
  const char *path = std::getenv("XPTI_FRAMEWORK_DISPATCHER");
  void *fw = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (!fw) return;
  auto reg_stream = (decltype(&xptiRegisterStream))dlsym(fw, "xptiRegisterStream");
  auto reg_callback = (decltype(&xptiRegisterCallback))dlsym(fw, "xptiRegisterCallback");
  if (reg_stream && reg_callback)
    reg_callback(reg_stream(stream), (uint16_t)xpti::trace_point_type_t::signal, on_signal);
}
XPTI_CALLBACK_API void xptiTraceFinish(const char *) {}
"#;

const APP_CPP: &str = r#"
#include <sycl/sycl.hpp>
#include <cstdio>
#include <ctime>
#include <memory>
#include <vector>
static uint64_t mono() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}
struct Kept {
  sycl::queue q;
  std::vector<int> host;
  sycl::buffer<int, 1> buf;
  sycl::event ev;
};
static std::vector<std::unique_ptr<Kept>> kept;
// Runs one host-to-buffer copy; 0 on success. Times are CLOCK_MONOTONIC
// around submit..wait and, with profiling, SYCL's command_start/end.
extern "C" __attribute__((visibility("default"))) int
sg_submit(int profiling, uint64_t *before, uint64_t *after, uint64_t *start, uint64_t *end) {
  try {
    const size_t n = 1 << 22;
    sycl::property_list props;
    if (profiling) props = sycl::property_list{sycl::property::queue::enable_profiling{}};
    auto k = std::unique_ptr<Kept>(new Kept{sycl::queue{sycl::cpu_selector_v, props},
                                            std::vector<int>(n, 3),
                                            sycl::buffer<int, 1>{sycl::range<1>{n}}, {}});
    *before = mono();
    k->ev = k->q.submit([&](sycl::handler &h) {
      auto a = k->buf.get_access<sycl::access::mode::write>(h);
      h.copy(k->host.data(), a);
    });
    k->ev.wait();
    *after = mono();
    if (profiling) {
      *start = k->ev.get_profiling_info<sycl::info::event_profiling::command_start>();
      *end = k->ev.get_profiling_info<sycl::info::event_profiling::command_end>();
    }
    kept.push_back(std::move(k));
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "sg_submit: %s\n", e.what());
    return -1;
  }
}
extern "C" __attribute__((visibility("default"))) void sg_cleanup() { kept.clear(); }
"#;

fn venv() -> Option<PathBuf> {
    let dir = match std::env::var_os("SYCLGRAPH_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv"),
    };
    (dir.join("lib/libsycl.so.9").is_file() && dir.join("include/sycl/sycl.hpp").is_file())
        .then(|| dir.canonicalize().unwrap_or(dir))
}

/// Compiles the two helper libraries into `dir`; `Err` when g++ is missing.
fn build_helpers(venv: &Path, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).unwrap();
    for (name, source, lib) in [("sgsub", SUBSCRIBER_CPP, "dl"), ("sgapp", APP_CPP, "sycl")] {
        let src = dir.join(format!("{name}.cpp"));
        std::fs::write(&src, source).unwrap();
        let out = Command::new("g++")
            .args(["-std=c++17", "-O1", "-shared", "-fPIC"])
            .arg("-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING")
            .arg(format!("-I{}", venv.join("include").display()))
            .arg(&src)
            .arg("-o")
            .arg(dir.join(format!("lib{name}.so")))
            .arg(format!("-L{}", venv.join("lib").display()))
            .arg(format!("-l{lib}"))
            .output()
            .map_err(|e| format!("g++ not runnable: {e}"))?;
        assert!(
            out.status.success(),
            "g++ failed on {name}.cpp:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

type Submit = unsafe extern "C" fn(i32, *mut u64, *mut u64, *mut u64, *mut u64) -> i32;

struct Run {
    before: u64,
    after: u64,
    sycl_start: u64,
    sycl_end: u64,
    /// Events signalled during this submission.
    signals: Vec<UrEvent>,
}

fn submit(app: &Library, sub: &Library, profiling: bool) -> Run {
    // SAFETY: the helper exports these with exactly these C types.
    let (submit, count, signals) = unsafe {
        (
            *app.get::<Submit>(b"sg_submit\0").unwrap(),
            *sub.get::<*const i32>(b"sg_nsignals\0").unwrap(),
            *sub.get::<*const usize>(b"sg_signals\0").unwrap(),
        )
    };
    // SAFETY: `count` points at the subscriber's int, written only on the
    // thread that submits (this one).
    let first = unsafe { count.read() } as usize;
    let (mut before, mut after, mut sycl_start, mut sycl_end) = (0, 0, 0, 0);
    // SAFETY: four valid u64 out-pointers.
    let rc = unsafe {
        submit(
            i32::from(profiling),
            &mut before,
            &mut after,
            &mut sycl_start,
            &mut sycl_end,
        )
    };
    assert_eq!(rc, 0, "sg_submit failed (see stderr)");
    // SAFETY: as above; entries below the count are written.
    let last = unsafe { count.read() } as usize;
    let signals = (first..last)
        // SAFETY: index below the count, inside the 1024-entry array.
        .map(|i| UrEvent(unsafe { signals.add(i).read() }))
        .filter(|e| e.0 != 0)
        .collect();
    Run {
        before,
        after,
        sycl_start,
        sycl_end,
        signals,
    }
}

#[test]
fn sycl_signalled_events_read_through_the_second_loader() {
    if std::env::var_os(CHILD).is_some_and(|v| v == NAME) {
        return child_body();
    }
    let Some(venv) = venv() else {
        return skip("no venv with lib/libsycl.so.9 and include/sycl");
    };
    let dir = std::env::temp_dir().join(format!("syclgraph-ur-sycl-{}", std::process::id()));
    if let Err(reason) = build_helpers(&venv, &dir) {
        return skip(&reason);
    }
    let lib = venv.join("lib");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, NAME)
        .env("SG_HELPERS", &dir)
        .env("LD_LIBRARY_PATH", &lib)
        .env("OCL_ICD_FILENAMES", lib.join("libintelocl.so"))
        .env("XPTI_TRACE_ENABLE", "1")
        .env("XPTI_FRAMEWORK_DISPATCHER", lib.join("libxptifw.so"))
        .env("XPTI_SUBSCRIBERS", dir.join("libsgsub.so"))
        .output()
        .expect("re-run the test binary");
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    eprint!("{stderr}");
}

fn child_body() {
    let dir = PathBuf::from(std::env::var_os("SG_HELPERS").expect("set by the parent"));
    let open = |name: &str| {
        // SAFETY: the helpers' initialisers are libsycl's and the XPTI
        // framework's, as in any traced SYCL program.
        unsafe { Library::new(OsString::from(dir.join(name))) }.unwrap()
    };
    let app = open("libsgapp.so");
    // The XPTI framework loaded the subscriber when libsycl started; this is
    // the same instance (same path).
    let sub = open("libsgsub.so");

    let ur = Arc::new(UnifiedRuntime::load().expect("second UR loader"));
    let source = UrTimestampSource::new(ur.clone());

    // -- a profiling queue ---------------------------------------------------
    let run = submit(&app, &sub, true);
    assert!(
        !run.signals.is_empty(),
        "no signal: XPTI not on, or subscriber not loaded?"
    );
    for &event in &run.signals {
        assert!(source.retain(event));
    }
    // The copy's event is the signalled one whose UR times are SYCL's.
    let copy = run
        .signals
        .iter()
        .copied()
        .find(|&e| {
            ur.event_profiling(e, ProfilingInfo::Start).ok() == Some(run.sycl_start)
                && ur.event_profiling(e, ProfilingInfo::End).ok() == Some(run.sycl_end)
        })
        .unwrap_or_else(|| panic!("no signalled event has SYCL's start/end"));
    let Readout::Times { start_ns, end_ns } = source.read(copy) else {
        panic!("no times: {:?}", source.read(copy));
    };
    assert_eq!(end_ns - start_ns, run.sycl_end - run.sycl_start);
    // The first read found the OpenCL adapter built into the runtime: its
    // event calls now skip our loader, and answer as the loader did.
    assert!(
        ur.calls_adapter_directly(),
        "the built-in adapter's event functions were not found: {:?}",
        // SAFETY: `copy` is retained.
        unsafe { ze_bridge::adapter_events::find_built_in_adapter_events(copy.0) }
    );
    assert_eq!(
        ur.event_profiling(copy, ProfilingInfo::Start),
        Ok(run.sycl_start)
    );
    assert_eq!(
        ur.event_profiling(copy, ProfilingInfo::End),
        Ok(run.sycl_end)
    );
    assert_eq!(source.read(copy), Readout::Times { start_ns, end_ns });
    assert!(
        run.before - 1_000_000 <= start_ns && end_ns <= run.after + 1_000_000,
        "copy [{start_ns}, {end_ns}] outside submit..wait [{}, {}]",
        run.before,
        run.after
    );
    eprintln!(
        "SYCL copy: {} signalled event(s); device {} ns, SYCL {} ns; start {} ns after submit",
        run.signals.len(),
        end_ns - start_ns,
        run.sycl_end - run.sycl_start,
        start_ns as i128 - run.before as i128
    );
    for &event in &run.signals {
        source.release(event);
    }

    // -- a queue without profiling -------------------------------------------
    let run = submit(&app, &sub, false);
    assert!(!run.signals.is_empty());
    for &event in &run.signals {
        assert!(source.retain(event));
        assert_eq!(source.read(event), Readout::Untimed(Untimed::NoProfiling));
        source.release(event);
    }

    // Release SYCL's objects while the runtime is fully up.
    // SAFETY: sg_cleanup takes no argument.
    unsafe { app.get::<unsafe extern "C" fn()>(b"sg_cleanup\0").unwrap()() };
}
