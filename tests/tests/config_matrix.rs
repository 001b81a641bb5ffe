//! The configuration matrix (issue 13): the same programs run untraced and
//! traced under the runtime settings users really have (device selectors,
//! Unified Runtime layers and traces, adapter sets without Level Zero, no
//! OpenCL driver, what cluster users set). In every case tracing changes
//! nothing the program shows: the exit status and stdout (less measured
//! durations) are the untraced run's, a failing program fails the same way,
//! and either syclgraph's files are there and readable or exactly one
//! `syclgraph:` line on stderr says why not. Every run is bounded: a hang
//! fails the case (with every thread's backtrace) instead of blocking, and a
//! traced run must finish within a small factor of the untraced one.
//!
//! Cases are grouped into a few tests that run their cases one after the
//! other; a group reports every failing case at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use syclgraph_tests::*;

/// Bound of one run; untraced, every program here takes well under a second.
const LIMIT: Duration = Duration::from_secs(60);

/// The programs every case runs: the demo (kernels, host task, USM memcpy
/// depending on it) and a USM chain with `depends_on` on an out-of-order queue.
const PROGRAMS: [&str; 2] = ["pipeline", "usm_chain"];

/// How the program is expected to end untraced in a case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Untraced {
    /// Exit code 0.
    Succeeds,
    /// Anything else (exception, crash of the runtime itself): the traced run
    /// must end the same way.
    Fails,
    /// Fails, and with the same stderr: every line the untraced run printed
    /// is printed traced too (an exception's message, say).
    FailsSaying,
}

/// One user setup.
struct Case {
    name: String,
    /// Variables set in both runs.
    env: Vec<(String, String)>,
    /// The runtime's library folder (replaces `<venv>/lib`, also for
    /// `XPTI_FRAMEWORK_DISPATCHER`).
    lib_dir: Option<PathBuf>,
    /// Run in a private mount namespace where the system's Level Zero
    /// loader (`libze*` of the library directories) does not exist.
    hide_system_level_zero: bool,
    /// `XPTI_SUBSCRIBERS` of the traced run, when not syclgraph alone.
    subscribers: Option<String>,
    untraced: Untraced,
    /// The case prints the runtime's own UR trace on stdout (with
    /// addresses): compare only the program's lines.
    ur_trace_on_stdout: bool,
}

impl Case {
    fn new(name: impl Into<String>, env: &[(&str, &str)]) -> Case {
        Case {
            name: name.into(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            lib_dir: None,
            hide_system_level_zero: false,
            subscribers: None,
            untraced: Untraced::Succeeds,
            ur_trace_on_stdout: false,
        }
    }

    fn expect(mut self, untraced: Untraced) -> Case {
        self.untraced = untraced;
        self
    }

    fn command(&self, program_path: &Path) -> Command {
        let mut cmd = if self.hide_system_level_zero {
            let mut cmd = runtime_command(Path::new("unshare"));
            let whiteouts = fresh_dir(&format!("matrix-ns-{}", self.name));
            cmd.args(["-m", "sh", "-c", HIDE_LEVEL_ZERO, "sh"])
                .arg(program_path)
                .env("SG_WHITEOUTS", whiteouts);
            cmd
        } else {
            runtime_command(program_path)
        };
        if let Some(dir) = &self.lib_dir {
            cmd.env("LD_LIBRARY_PATH", dir);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Shell script run by `unshare -m sh -c` before the program: a private
/// mount namespace in which the `libze*` files of the system library
/// directory are whited out by a read-only overlay, as on a machine without
/// Intel's GPU packages; then it checks that no `libze_loader.so*` the
/// `ld.so` cache names still exists, and execs the program.
const HIDE_LEVEL_ZERO: &str = r#"set -e
mount --make-rprivate /
mount -t tmpfs tmpfs "$SG_WHITEOUTS"
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/lib; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  ls "$d" | grep -q '^libze' || continue
  w="$SG_WHITEOUTS/$(echo "$d" | tr / _)"
  mkdir "$w"
  for f in "$d"/libze*; do mknod "$w/${f##*/}" c 0 0; done
  mount -t overlay overlay -o "lowerdir=$w:$d" "$d"
done
for f in $(ldconfig -p | awk '/libze_loader/ {print $NF}'); do
  if [ -e "$f" ]; then echo "config_matrix: $f still visible" >&2; exit 97; fi
done
exec "$@""#;

/// True when this machine lets the tests make a mount namespace with an
/// overlay (root with CAP_SYS_ADMIN).
fn namespaces_work() -> bool {
    let dir = fresh_dir("matrix-ns-probe");
    Command::new("unshare")
        .args(["-m", "sh", "-c", HIDE_LEVEL_ZERO, "sh", "true"])
        .env("SG_WHITEOUTS", &dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A folder of hard links to every file of `<venv>/lib` except those whose
/// name starts with one of `without` (directories are symbolic links).
/// Hard links, because the runtime's UR loader looks for adapters beside
/// its own resolved path: symbolic links would lead it back to the venv.
fn lib_folder_without(name: &str, without: &[&str]) -> PathBuf {
    let dir = fresh_dir(&format!("matrix-lib-{name}"));
    let lib = venv().join("lib");
    for entry in std::fs::read_dir(&lib).expect("read the venv's lib") {
        let entry = entry.unwrap();
        let file = entry.file_name();
        let text = file.to_string_lossy();
        if without.iter().any(|w| text.starts_with(w)) {
            continue;
        }
        let (from, to) = (entry.path(), dir.join(&file));
        if entry.file_type().unwrap().is_dir() {
            std::os::unix::fs::symlink(&from, &to).unwrap();
        } else {
            // A symbolic link is linked itself; its relative target then
            // resolves inside the new folder.
            std::fs::hard_link(&from, &to).unwrap_or_else(|e| {
                panic!(
                    "hard link {} -> {}: {e} (the build dir must be on the venv's filesystem)",
                    from.display(),
                    to.display()
                )
            });
        }
    }
    dir
}

/// Lines of the program itself, less measured durations: the UR trace's
/// lines (they start with spaces, `<`, `-` or `SYCL_UR_TRACE:` and hold
/// addresses) are left out.
fn program_lines(stdout: &str) -> String {
    let own: Vec<&str> = stdout
        .lines()
        // The runtime's trace also writes blank lines, more or fewer as its
        // threads interleave; the test programs print none.
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with([' ', '<', '-', '\t'])
                && !l.starts_with("SYCL_UR_TRACE")
        })
        .collect();
    strip_profiling(&own.join("\n"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn status_of(out: &Output) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (out.status.code(), out.status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => format!("{:?}", out.status),
    }
}

/// Runs one case on one program; `Err` says what went wrong.
fn run_case(case: &Case, name: &str) -> Result<(), String> {
    let path = program(name);
    let started = Instant::now();
    let untraced =
        try_output_within(case.command(&path), LIMIT).map_err(|e| format!("untraced run: {e}"))?;
    let untraced_time = started.elapsed();
    match case.untraced {
        Untraced::Succeeds if !untraced.status.success() => {
            return Err(format!(
                "the untraced run failed ({}), so the case does not test what it says:\n{}",
                status_of(&untraced),
                text(&untraced.stderr)
            ))
        }
        Untraced::Fails | Untraced::FailsSaying if untraced.status.success() => {
            return Err("the untraced run succeeded; the case expects it to fail".into())
        }
        _ => {}
    }

    let dir = fresh_dir(&format!("matrix-{}-{name}", case.name));
    let mut cmd = case.command(&path);
    with_xpti(&mut cmd, &subscriber());
    if let Some(lib) = &case.lib_dir {
        cmd.env("XPTI_FRAMEWORK_DISPATCHER", lib.join("libxptifw.so"));
    }
    if let Some(subscribers) = &case.subscribers {
        cmd.env("XPTI_SUBSCRIBERS", subscribers);
    }
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir);
    let started = Instant::now();
    let traced = try_output_within(cmd, LIMIT).map_err(|e| format!("traced run: {e}"))?;
    let traced_time = started.elapsed();
    let stderr = text(&traced.stderr);

    if traced.status != untraced.status {
        return Err(format!(
            "traced: {}, untraced: {}; traced stderr:\n{stderr}",
            status_of(&traced),
            status_of(&untraced)
        ));
    }
    let (a, b) = if case.ur_trace_on_stdout {
        (
            program_lines(&text(&traced.stdout)),
            program_lines(&text(&untraced.stdout)),
        )
    } else {
        (
            strip_profiling(&text(&traced.stdout)),
            strip_profiling(&text(&untraced.stdout)),
        )
    };
    if a != b {
        return Err(format!(
            "stdout changed under tracing:\n--- traced\n{a}\n--- untraced\n{b}\ntraced stderr:\n{stderr}"
        ));
    }
    if case.untraced == Untraced::FailsSaying {
        for line in text(&untraced.stderr).lines() {
            if !stderr.lines().any(|l| l == line) {
                return Err(format!(
                    "the untraced run said {line:?}, the traced run did not:\n{stderr}"
                ));
            }
        }
    }
    let bound = untraced_time * 5 + Duration::from_secs(10);
    if traced_time > bound {
        return Err(format!(
            "traced run took {traced_time:?}, untraced {untraced_time:?}; stderr:\n{stderr}"
        ));
    }
    check_outputs(&dir, &stderr, untraced.status.success())
}

/// syclgraph's files are there and readable, or one line says why not.
fn check_outputs(dir: &Path, stderr: &str, succeeded: bool) -> Result<(), String> {
    let lines = syclgraph_lines(stderr);
    if !dir.join("kernels.csv").exists() {
        return match lines.len() {
            1 => Ok(()),
            // A program that stops before the runtime starts XPTI (a
            // refused variable) never loads syclgraph.
            0 if !succeeded => Ok(()),
            n => Err(format!(
                "no kernels.csv in {} and {n} syclgraph lines (one must say why):\n{stderr}",
                dir.display()
            )),
        };
    }
    let read = |name: &str| {
        let path = dir.join(name);
        std::panic::catch_unwind(|| read_csv(&path)).map_err(|_| format!("{name} is unreadable"))
    };
    read("kernels.csv")?;
    if !succeeded {
        return Ok(());
    }
    // The program ended normally: the exit drain wrote every file.
    let rows = read("kernels.csv")?;
    if !rows.iter().any(|r| r["kind"] == "kernel") {
        return Err(format!("no kernel row in kernels.csv; stderr:\n{stderr}"));
    }
    read("summary.csv")?;
    let graph = dir.join("graph.dot");
    std::panic::catch_unwind(|| DotGraph::read(&graph))
        .map_err(|_| format!("graph.dot missing or unreadable; stderr:\n{stderr}"))?;
    if !lines.iter().any(|l| l.starts_with("syclgraph: outputs in")) {
        return Err(format!("no `outputs in` line:\n{stderr}"));
    }
    Ok(())
}

/// Runs every case on every program; panics listing all failures.
fn run_all(cases: Vec<Case>) {
    let mut failures = Vec::new();
    for case in &cases {
        for name in PROGRAMS {
            let started = Instant::now();
            let result = run_case(case, name);
            eprintln!(
                "config_matrix: {} on {name}: {} ({:.1} s)",
                case.name,
                if result.is_ok() { "ok" } else { "FAILED" },
                started.elapsed().as_secs_f64()
            );
            if let Err(e) = result {
                failures.push(format!("== {} on {name}: {e}", case.name));
                // One program showing the failure is enough: a hang costs a
                // minute per run.
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// `ONEAPI_DEVICE_SELECTOR` as users pick the CPU device. With
/// `opencl:*`/`opencl:cpu`/`!level_zero:*` only one UR adapter is loaded
/// (issue 13: SIGSEGV). A selector matching no device (the OpenCL driver is
/// the CPU one only) makes the program throw: traced, the same exception.
#[test]
fn device_selectors() {
    run_all(vec![
        Case::new(
            "selector-opencl-cpu",
            &[("ONEAPI_DEVICE_SELECTOR", "opencl:cpu")],
        ),
        Case::new(
            "selector-opencl-all",
            &[("ONEAPI_DEVICE_SELECTOR", "opencl:*")],
        ),
        Case::new("selector-any-cpu", &[("ONEAPI_DEVICE_SELECTOR", "*:cpu")]),
        Case::new(
            "selector-not-level-zero",
            &[("ONEAPI_DEVICE_SELECTOR", "!level_zero:*")],
        ),
        Case::new(
            "selector-no-device",
            &[("ONEAPI_DEVICE_SELECTOR", "opencl:gpu")],
        )
        .expect(Untraced::FailsSaying),
    ]);
}

/// `UR_ENABLE_LAYERS` with each layer the runtime knows (the names in
/// libsycl.so.9): tracing, the validation levels (issue 13: the full one
/// hung), leak and bounds checking. The sanitizer layers (`UR_LAYER_ASAN`,
/// `UR_LAYER_MSAN`, `UR_LAYER_TSAN`) crash the program untraced on the
/// OpenCL CPU device: traced, it must end the same way.
#[test]
fn unified_runtime_layers() {
    let mut cases: Vec<Case> = [
        "UR_LAYER_TRACING",
        "UR_LAYER_PARAMETER_VALIDATION",
        "UR_LAYER_LIFETIME_VALIDATION",
        "UR_LAYER_FULL_VALIDATION",
        "UR_LAYER_LEAK_CHECKING",
        "UR_LAYER_BOUNDS_CHECKING",
    ]
    .iter()
    .map(|layer| Case::new(layer.to_lowercase(), &[("UR_ENABLE_LAYERS", layer)]))
    .collect();
    for layer in ["UR_LAYER_ASAN", "UR_LAYER_TSAN"] {
        cases.push(
            Case::new(layer.to_lowercase(), &[("UR_ENABLE_LAYERS", layer)]).expect(Untraced::Fails),
        );
    }
    run_all(cases);
}

/// The runtime's own traces: `SYCL_UR_TRACE` 1 (loader messages), 2 (every
/// UR call) and -1 (everything), all on stdout, `UR_LOG_TRACING`, and
/// `SYCL_PI_TRACE` (the old name: the runtime refuses it and exits 1).
#[test]
fn runtime_traces() {
    let mut cases = Vec::new();
    for level in ["1", "2", "-1"] {
        let mut case = Case::new(
            format!("sycl-ur-trace-{level}"),
            &[("SYCL_UR_TRACE", level)],
        );
        case.ur_trace_on_stdout = true;
        cases.push(case);
    }
    cases.push(Case::new(
        "ur-log-tracing",
        &[("UR_LOG_TRACING", "level:info;output:stderr")],
    ));
    // Removed from the runtime: the program stops at start-up saying so.
    cases.push(Case::new("sycl-pi-trace", &[("SYCL_PI_TRACE", "1")]).expect(Untraced::FailsSaying));
    run_all(cases);
}

/// Adapter sets without Level Zero, as on machines without Intel's GPU
/// packages: (a) a runtime folder without the Level Zero adapters (the
/// loader libraries still there); (b) the adapters there but no Level Zero
/// loader anywhere (neither in the folder nor on the system: it cannot
/// load); (c) neither adapters nor loader. (b) and (c) run in a private
/// mount namespace where the system's `libze*` are whited out (skipped, and
/// said, when namespaces cannot be made). (d) the system's Level Zero loader
/// hidden with the venv as it is (the venv ships its own loader).
#[test]
fn adapter_sets_without_level_zero() {
    let mut no_adapter = Case::new("no-level-zero-adapter", &[]);
    no_adapter.lib_dir = Some(lib_folder_without(
        "no-l0-adapter",
        &["libur_adapter_level_zero"],
    ));
    let mut cases = vec![no_adapter];
    if namespaces_work() {
        let mut no_loader = Case::new("no-level-zero-loader", &[]);
        no_loader.lib_dir = Some(lib_folder_without("no-l0-loader", &["libze_"]));
        no_loader.hide_system_level_zero = true;
        cases.push(no_loader);
        let mut none = Case::new("no-level-zero-at-all", &[]);
        none.lib_dir = Some(lib_folder_without(
            "no-l0",
            &["libze_", "libur_adapter_level_zero"],
        ));
        none.hide_system_level_zero = true;
        cases.push(none);
        let mut system_hidden = Case::new("system-level-zero-hidden", &[]);
        system_hidden.hide_system_level_zero = true;
        cases.push(system_hidden);
    } else {
        eprintln!(
            "config_matrix: SKIPPED the cases without a Level Zero loader: \
             cannot make a mount namespace with an overlay here (needs root)"
        );
    }
    run_all(cases);
}

/// No OpenCL driver at all (`OCL_ICD_FILENAMES` names a missing file, no GPU
/// driver here either): no device, the program throws; traced the same way.
/// Also with the CPU selector users would set.
#[test]
fn no_opencl_driver() {
    let missing = "/nonexistent/libintelocl.so";
    run_all(vec![
        Case::new("no-opencl-icd", &[("OCL_ICD_FILENAMES", missing)]).expect(Untraced::FailsSaying),
        Case::new(
            "no-opencl-icd-opencl-selector",
            &[
                ("OCL_ICD_FILENAMES", missing),
                ("ONEAPI_DEVICE_SELECTOR", "opencl:cpu"),
            ],
        )
        .expect(Untraced::FailsSaying),
    ]);
}

/// What users on clusters set: the persistent kernel cache in a directory of
/// their own, a device allow-list, the Level Zero v2 adapter, Level Zero
/// affinity and debug keys, one OpenMP/TBB thread (the OpenCL CPU driver's
/// TBB workers: `CL_CONFIG_CPU_TBB_NUM_WORKERS`; TBB itself reads no
/// variable), the SYCL host-task thread pool size, another library in
/// `LD_PRELOAD`, and a second XPTI subscriber before or after syclgraph (the
/// bench's empty subscriber, `target/release/libempty_subscriber.so`, built
/// by `cargo build --release -p empty-subscriber`).
#[test]
fn cluster_settings() {
    let cache = fresh_dir("matrix-cache");
    let cache = cache.to_string_lossy();
    let mut cases = vec![
        Case::new(
            "persistent-cache",
            &[("SYCL_CACHE_PERSISTENT", "1"), ("SYCL_CACHE_DIR", &cache)],
        ),
        Case::new(
            "device-allowlist",
            &[("SYCL_DEVICE_ALLOWLIST", "BackendName:opencl,DeviceType:cpu")],
        ),
        Case::new("level-zero-v2", &[("SYCL_UR_USE_LEVEL_ZERO_V2", "1")]),
        Case::new("ze-affinity-mask", &[("ZE_AFFINITY_MASK", "0")]),
        Case::new("ze-debug", &[("ZE_DEBUG", "1")]),
        Case::new(
            "one-thread",
            &[
                ("OMP_NUM_THREADS", "1"),
                ("CL_CONFIG_CPU_TBB_NUM_WORKERS", "1"),
                ("SYCL_QUEUE_THREAD_POOL_SIZE", "1"),
            ],
        ),
    ];
    let empty = subscriber().with_file_name("libempty_subscriber.so");
    assert!(
        empty.exists(),
        "{} is missing: cargo build --release -p empty-subscriber",
        empty.display()
    );
    let ours = subscriber();
    let preload = Case::new(
        "ld-preload-other-library",
        &[("LD_PRELOAD", &empty.to_string_lossy())],
    );
    cases.push(preload);
    for (name, list) in [
        ("second-subscriber-after", [&ours, &empty]),
        ("second-subscriber-before", [&empty, &ours]),
    ] {
        let mut case = Case::new(name, &[]);
        case.subscribers = Some(format!("{},{}", list[0].display(), list[1].display()));
        cases.push(case);
    }
    run_all(cases);
}
