//! The oldest DPC++ runtime syclgraph supports (PyPI `intel-sycl-rt` and
//! `intel-opencl-rt` 2025.0.0: `libsycl.so.8`, no `sycl.debug` stream, UR
//! 0.10 loaded as a shared library): test programs compiled against it run
//! the same traced and untraced, graph.dot holds their commands at their
//! source lines, and kernels.csv has the application's own durations. The
//! newest (2026.2, the project venv) is covered by every other test file;
//! one test here makes that explicit.
//!
//! The old runtime lives in `<repo>/.venv-2025.0.0` (`scripts/setup-runtime.sh
//! 2025.0.0`, which `scripts/test.sh` runs). When it is absent the tests say
//! so and pass, unless `SYCLGRAPH_REQUIRE_RUNTIME=1`, when they fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use syclgraph_tests::*;

/// The oldest supported runtime, as PyPI names it.
const OLDEST: &str = "2025.0.0";

/// One extra runtime: its venv and the programs compiled against it.
struct Runtime {
    venv: PathBuf,
    programs: PathBuf,
}

/// The oldest runtime with the test programs built against it, or `None`
/// (after printing why) when its venv is absent and not required.
fn oldest() -> Option<&'static Runtime> {
    static RUNTIME: OnceLock<Option<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let venv = repo_root().join(format!(".venv-{OLDEST}"));
            let present = venv.join("lib/libsycl.so").exists()
                && venv.join("lib/libxptifw.so").exists()
                && venv.join("include/sycl").is_dir();
            if !present {
                let required = std::env::var("SYCLGRAPH_REQUIRE_RUNTIME").as_deref() == Ok("1");
                assert!(
                    !required,
                    "SYCLGRAPH_REQUIRE_RUNTIME=1 but there is no DPC++ {OLDEST} runtime in {}: \
                     run scripts/setup-runtime.sh {OLDEST}",
                    venv.display()
                );
                println!(
                    "skipped: no DPC++ {OLDEST} runtime in {} (run scripts/setup-runtime.sh {OLDEST}; \
                     SYCLGRAPH_REQUIRE_RUNTIME=1 makes this a failure)",
                    venv.display()
                );
                return None;
            }
            let status = Command::new("bash")
                .arg(repo_root().join("scripts/build-programs-for.sh"))
                .arg(OLDEST)
                .args(["buffers", "timing", "pipeline"])
                .status()
                .expect("run scripts/build-programs-for.sh");
            assert!(
                status.success(),
                "building the test programs against DPC++ {OLDEST} failed"
            );
            Some(Runtime {
                venv,
                programs: repo_root().join(format!("build/programs-{OLDEST}")),
            })
        })
        .as_ref()
}

impl Runtime {
    /// `name` built against this runtime, with its environment (library
    /// path, OpenCL CPU device) and no XPTI variables.
    fn command(&self, name: &str) -> Command {
        let program = self.programs.join(name);
        assert!(program.exists(), "{} was not built", program.display());
        let lib = self.venv.join("lib");
        let mut paths = vec![lib.clone()];
        if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
            // The project venv (2026.2, from scripts/env.sh) must not shadow
            // this runtime's libraries.
            let project = repo_root().join(".venv/lib");
            paths.extend(std::env::split_paths(&old).filter(|p| *p != project));
        }
        let mut cmd = Command::new(program);
        cmd.env(
            "LD_LIBRARY_PATH",
            std::env::join_paths(paths).expect("joinable paths"),
        )
        .env("OCL_ICD_FILENAMES", lib.join("libintelocl.so"))
        .env_remove("OCL_ICD_VENDORS")
        .env_remove("UR_ENABLE_LAYERS")
        .env_remove("XPTI_TRACE_ENABLE")
        .env_remove("XPTI_SUBSCRIBERS")
        .env_remove("XPTI_FRAMEWORK_DISPATCHER");
        cmd
    }

    /// Runs `name` untraced, then traced by target/release/libsyclgraph.so
    /// through this runtime's XPTI framework; asserts the program behaved
    /// the same (exit code, stdout but measured durations).
    fn run_both(&self, test: &str, name: &str, args: &[&str]) -> Traced {
        let untraced = self
            .command(name)
            .args(args)
            .output()
            .expect("run untraced");
        assert!(
            untraced.status.success(),
            "untraced {name} failed on DPC++ {OLDEST}: {}",
            String::from_utf8_lossy(&untraced.stderr)
        );
        let dir = fresh_dir(test);
        let mut cmd = self.command(name);
        cmd.args(args)
            .env("XPTI_TRACE_ENABLE", "1")
            .env(
                "XPTI_FRAMEWORK_DISPATCHER",
                self.venv.join("lib/libxptifw.so"),
            )
            .env("XPTI_SUBSCRIBERS", subscriber())
            .env("SYCLGRAPH_OUTPUT_DIR", &dir);
        let traced = Traced {
            output: cmd.output().expect("run traced"),
            dir,
        };
        assert_eq!(
            traced.output.status.code(),
            untraced.status.code(),
            "exit code changed under tracing on DPC++ {OLDEST}; stderr:\n{}",
            traced.stderr()
        );
        assert_eq!(
            strip_profiling(&traced.stdout()),
            strip_profiling(&String::from_utf8_lossy(&untraced.stdout)),
            "stdout changed under tracing on DPC++ {OLDEST}"
        );
        if traced.dir.join("graph.dot").exists() {
            check_outputs(&traced.dir);
        }
        traced
    }
}

/// The lines syclgraph printed.
fn syclgraph_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("syclgraph:"))
        .collect()
}

/// The runtime was accepted: no refusal line, and the outputs exist.
fn assert_traced(traced: &Traced) {
    let stderr = traced.stderr();
    let lines = syclgraph_lines(&stderr);
    assert!(
        lines.iter().all(|l| !l.contains("tracing is off")),
        "DPC++ {OLDEST} is supported, yet syclgraph refused it:\n{stderr}"
    );
    assert!(
        lines.iter().any(|l| l.contains("outputs in")),
        "no outputs announced:\n{stderr}"
    );
    for file in ["graph.dot", "kernels.csv", "summary.csv"] {
        assert!(
            traced.dir.join(file).exists(),
            "{file} missing in {}; stderr:\n{stderr}",
            traced.dir.display()
        );
    }
}

/// Kernels.csv rows at each labelled line have the program's own durations.
fn assert_durations(traced: &Traced, src: &str, tag_of: impl Fn(&str) -> String, skip: &[&str]) {
    let measured = profiling_lines(&traced.stdout());
    assert!(
        !measured.is_empty(),
        "the program printed no profiling lines"
    );
    let rows = traced.csv("kernels.csv");
    let mut compared = 0;
    for ((label, instance), ns) in &measured {
        if skip.contains(&label.as_str()) {
            continue;
        }
        let tag = tag_of(label);
        let found = rows_at(&rows, src, tag_line(src, &tag));
        let row = found
            .get(*instance as usize)
            .unwrap_or_else(|| panic!("{tag} #{instance}: only {} rows: {found:?}", found.len()));
        assert_eq!(row["timing"], "ok", "{tag} #{instance}: {row:?}");
        assert_eq!(row["duration_ns"], ns.to_string(), "{tag} #{instance}");
        compared += 1;
    }
    assert!(compared > 0);
}

#[test]
fn buffers_on_the_oldest_runtime_give_the_graph_and_the_applications_durations() {
    let Some(rt) = oldest() else { return };
    const SRC: &str = "tests/programs/buffers.cpp";
    let traced = rt.run_both("oldest-buffers", "buffers", &[]);
    assert_traced(&traced);

    let graph = traced.graph();
    let at = |label: &str| node_at(&graph, SRC, tag_line(SRC, label));
    for (label, kind) in BUFFERS_NODES {
        let (_, attrs) = at(label);
        assert_eq!(attrs["kind"], kind, "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "1", "{label}");
    }
    // Memory edges, as on the newest runtime.
    let (iota, _) = at("write_iota");
    let (axpy, _) = at("axpy_rw");
    let modes: Vec<&str> = graph
        .edges
        .iter()
        .filter(|(a, b, _)| a == iota && b == axpy)
        .filter_map(|(_, _, attrs)| attrs.get("access_mode").map(String::as_str))
        .collect();
    assert_eq!(modes, ["read"], "write_iota -> axpy_rw");

    // update_host makes no command-group node (only a Map command).
    assert_durations(&traced, SRC, str::to_owned, &["update_host_a"]);
}

#[test]
fn profiled_kernels_on_the_oldest_runtime_have_the_applications_durations() {
    let Some(rt) = oldest() else { return };
    const SRC: &str = "tests/programs/timing.cpp";
    const N: usize = 4;
    let traced = rt.run_both("oldest-timing", "timing", &[&N.to_string()]);
    assert_traced(&traced);
    let rows = traced.csv("kernels.csv");
    for tag in ["small_profiled", "large_profiled"] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), N, "{tag}: {found:?}");
        for row in found {
            assert_eq!(row["kind"], "kernel", "{row:?}");
            let n = |k: &str| row[k].parse::<u64>().unwrap();
            assert!(n("submit_ns") <= n("start_ns") && n("start_ns") <= n("end_ns"));
        }
    }
    assert_durations(&traced, SRC, |label| format!("{label}_profiled"), &[]);
    // 2025.x has no ur.call.debug stream, so queues made without profiling
    // cannot be switched to it: their rows say so instead of inventing times.
    for tag in ["small_plain", "large_plain"] {
        for row in rows_at(&rows, SRC, tag_line(SRC, tag)) {
            assert!(
                row["timing"] == "ok" || row["duration_ns"].is_empty(),
                "{tag}: {row:?}"
            );
        }
    }
}

#[test]
fn the_pipeline_example_on_the_oldest_runtime_keeps_its_kernel_names_and_lines() {
    let Some(rt) = oldest() else { return };
    const SRC: &str = "examples/pipeline.cpp";
    let traced = rt.run_both("oldest-pipeline", "pipeline", &[]);
    assert_traced(&traced);
    let graph = traced.graph();
    for (label, kind) in [("saxpy", "kernel"), ("scale", "kernel"), ("upload", "copy")] {
        let (_, attrs) = node_at(&graph, SRC, tag_line(SRC, label));
        assert_eq!(attrs["kind"], kind, "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "3", "{label}: {attrs:?}");
        assert_eq!(attrs["operation"], label, "{label}: {attrs:?}");
    }
    assert_durations(&traced, SRC, str::to_owned, &["upload"]);
    // A USM memcpy whose dependency is already complete takes the direct
    // path and sends no signal; on 2026.x its UR output event (from
    // ur.call.debug) times it, 2025.x has no such stream: such a row says
    // "unavailable", any other has the application's duration.
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    let uploads = rows_at(&rows, SRC, tag_line(SRC, "upload"));
    assert_eq!(uploads.len(), 3, "{uploads:?}");
    for (i, row) in uploads.iter().enumerate() {
        match row["timing"].as_str() {
            "ok" => assert_eq!(
                row["duration_ns"],
                measured[&("upload".to_owned(), i as u64)].to_string(),
                "upload #{i}"
            ),
            "unavailable" => assert_eq!(row["duration_ns"], "", "upload #{i}"),
            other => panic!("upload #{i}: timing {other}: {row:?}"),
        }
    }
}

#[test]
fn the_newest_runtime_is_accepted_too() {
    // The project venv holds the newest supported runtime (2026.2).
    let traced = run_both(
        "newest-accepted",
        || runtime_command(&program("buffers")),
        &[],
    );
    let stderr = traced.stderr();
    let lines = syclgraph_lines(&stderr);
    assert!(
        lines.iter().all(|l| !l.contains("tracing is off")),
        "{stderr}"
    );
    assert!(traced.dir.join("graph.dot").exists(), "{stderr}");
    assert!(Path::new(&traced.dir.join("kernels.csv")).exists());
}
