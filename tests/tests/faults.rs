//! Faults (issue 13, item 5) not covered by the robust_*.rs tests: syclgraph's
//! collector thread cannot be created; the output directory is removed, or
//! its disk fills, while the program runs; the record ring overflows; the
//! program calls `exit` from another thread or from a host task, calls
//! `abort()`, or `execve`s without exiting. In each the program's stdout and
//! exit status are its untraced ones, what was recorded up to then is
//! readable, and losses are counted and said on stderr.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/faults.cpp";
const LIMIT: Duration = Duration::from_secs(60);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `make()` untraced and traced (into a fresh directory, with `env`),
/// both bounded; asserts the same exit status and stdout.
fn same_both(test: &str, make: impl Fn() -> Command, env: &[(&str, &str)]) -> (Output, Traced) {
    let untraced = output_within(make(), LIMIT);
    let traced = run_traced_within(test, make(), env, LIMIT);
    assert_eq!(
        traced.output.status,
        untraced.status,
        "traced {:?} / untraced {:?}; traced stderr:\n{}",
        traced.output.status,
        untraced.status,
        traced.stderr()
    );
    assert_eq!(
        strip_profiling(&traced.stdout()),
        strip_profiling(&text(&untraced.stdout)),
        "stdout changed; traced stderr:\n{}",
        traced.stderr()
    );
    (untraced, traced)
}

fn faults(mode: &str) -> Command {
    let mut cmd = runtime_command(&program("faults"));
    cmd.arg(mode);
    cmd
}

/// The rows of the 20 kernels every mode runs first, all timed.
fn assert_first_rounds_recorded(dir: &Path) {
    let rows = read_csv(&dir.join("kernels.csv"));
    let kernels = rows_at(&rows, SRC, tag_line(SRC, "fault_kernel"));
    assert_eq!(kernels.len(), 20, "fault_kernel rows: {rows:?}");
    assert!(kernels.iter().all(|r| r["timing"] == "ok"), "{kernels:?}");
    let graph = DotGraph::read(&dir.join("graph.dot"));
    let (_, node) = node_at(&graph, SRC, tag_line(SRC, "fault_kernel"));
    assert_eq!(node["count"], "20", "{node:?}");
}

/// The process limit is reached (`RLIMIT_NPROC`, a full thread table) just
/// when syclgraph starts its collector thread. Root ignores RLIMIT_NPROC and
/// a real limit would stop the runtime's threads too, so an LD_PRELOAD shim
/// (tests/programs/shims/no_syclgraph_threads.c) makes `pthread_create` fail
/// with EAGAIN for calls from libsyclgraph.so only: the program runs
/// untraced, one line says why.
#[test]
fn collector_thread_cannot_be_created() {
    let shim = fresh_dir("faults-shim").join("libno_syclgraph_threads.so");
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&shim)
        .arg(repo_root().join("tests/programs/shims/no_syclgraph_threads.c"))
        .arg("-ldl")
        .status()
        .expect("run cc");
    assert!(built.success(), "building the shim failed");
    let make = || {
        let mut cmd = runtime_command(&program("pipeline"));
        cmd.env("LD_PRELOAD", &shim);
        cmd
    };
    let (_, traced) = same_both("faults-no-thread", make, &[]);
    let stderr = traced.stderr();
    let lines = syclgraph_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("cannot start the collector thread")
            && lines[0].contains("tracing is off"),
        "{}",
        lines[0]
    );
    assert!(
        !traced.dir.join(".syclgraph-owner").exists(),
        "the owner file of a process that writes nothing is left behind"
    );
}

/// Starts `cmd` (long_running, which gives up by itself after `seconds`
/// and exits 3), waits for its `ready` line, runs `meanwhile`, and returns
/// its output once it ended (bounded).
fn long_running_with(mut cmd: Command, seconds: u32, meanwhile: impl FnOnce()) -> Output {
    cmd.arg(seconds.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start long_running");
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (lines, got) = mpsc::channel();
    let out = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines.send(line);
        }
        all
    });
    let err = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut all);
        all
    });
    let ready = got.recv_timeout(LIMIT);
    if ready.as_deref() == Ok("ready") {
        meanwhile();
    }
    let deadline = std::time::Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "long_running still running after {LIMIT:?}; stderr:\n{}",
                text(&err.join().unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap_or_default().into_bytes(),
        stderr: err.join().unwrap_or_default(),
    };
    assert_eq!(
        ready,
        Ok("ready".to_owned()),
        "no `ready` line; stderr:\n{}",
        text(&output.stderr)
    );
    output
}

/// A job's scratch directory (the outputs' home) is cleaned away by another
/// job or a tmp reaper while the program runs: the program ends as untraced,
/// and syclgraph says that its outputs could not be written.
#[test]
fn output_directory_removed_mid_run() {
    let untraced = long_running_with(runtime_command(&program("long_running")), 3, || {});
    let dir = fresh_dir("faults-dir-removed");
    let mut cmd = runtime_command(&program("long_running"));
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir);
    let traced = long_running_with(cmd, 3, || {
        std::thread::sleep(Duration::from_millis(500));
        // A snapshot may create its temporary file while the directory is
        // emptied (then removing the directory fails: not empty): again.
        let mut removed = std::fs::remove_dir_all(&dir);
        for _ in 0..20 {
            if removed.is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
            removed = std::fs::remove_dir_all(&dir);
        }
        removed.expect("remove the output directory");
    });
    assert_eq!(traced.status, untraced.status);
    assert_eq!(text(&traced.stdout), text(&untraced.stdout));
    let stderr = text(&traced.stderr);
    let dir_text = dir.display().to_string();
    // Either syclgraph wrote its outputs again (then they are complete and
    // readable) or it said that it could not.
    if dir.join("summary.csv").exists() {
        read_csv(&dir.join("kernels.csv"));
        DotGraph::read(&dir.join("graph.dot"));
    } else {
        assert!(
            syclgraph_lines(&stderr)
                .iter()
                .any(|l| l.contains(&dir_text) || l.contains("kernels.csv")),
            "the outputs are gone and no syclgraph line says so:\n{stderr}"
        );
    }
}

/// Mounts a tmpfs of `size` on `dir` (root only); unmounted on drop.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> Option<SmallDisk> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| SmallDisk(dir.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The disk (quota) of the output directory fills while the program runs:
/// a 64 KiB tmpfs and 3,200 rows. The program is unaffected, kernels.csv on
/// disk ends at a complete row and parses, and stderr says what could not
/// be written.
#[test]
fn disk_fills_mid_run() {
    let dir = fresh_dir("faults-disk-full");
    let Some(_disk) = SmallDisk::mount(&dir, "64k") else {
        eprintln!("faults: SKIPPED disk_fills_mid_run: cannot mount a tmpfs here (needs root)");
        return;
    };
    let make = || {
        let mut cmd = runtime_command(&program("threads"));
        cmd.arg("200");
        cmd
    };
    let untraced = output_within(make(), LIMIT);
    let mut cmd = make();
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir);
    let traced = output_within(cmd, LIMIT);
    let stderr = text(&traced.stderr);
    assert_eq!(traced.status, untraced.status, "{stderr}");
    assert_eq!(
        strip_profiling(&text(&traced.stdout)),
        strip_profiling(&text(&untraced.stdout))
    );
    let bytes = std::fs::read(dir.join("kernels.csv")).expect("kernels.csv");
    assert!(
        bytes.ends_with(b"\n"),
        "kernels.csv ends inside a row: ...{:?}",
        text(&bytes[bytes.len().saturating_sub(80)..])
    );
    let rows = read_csv(&dir.join("kernels.csv"));
    assert!(
        rows.len() < 3200,
        "{} rows fit in 64 KiB? the disk did not fill",
        rows.len()
    );
    assert!(
        syclgraph_lines(&stderr)
            .iter()
            .any(|l| l.contains("No space left on device") || l.contains("os error 28")),
        "no syclgraph line says the disk is full:\n{stderr}"
    );
}

/// A program submitting faster than the collector takes records, with a
/// tiny ring (`SYCLGRAPH_QUEUE_CAPACITY=16`): the program is unaffected, the
/// outputs are readable and the losses are counted on a `lost:` line; the
/// commands submitted while the collector was behind keep no device event
/// (`timing=behind`), counted on their own line.
#[test]
fn record_ring_overflow_is_counted_and_said() {
    let (_, traced) = same_both(
        "faults-ring",
        || {
            let mut cmd = runtime_command(&program("threads"));
            cmd.arg("200");
            cmd
        },
        &[("SYCLGRAPH_QUEUE_CAPACITY", "16")],
    );
    let stderr = traced.stderr();
    let lost: u64 = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("lost: ")?
                .strip_suffix(" records (the queue to the collector was full)")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no `lost: N records` line:\n{stderr}"));
    assert!(lost > 0, "{stderr}");
    let rows = traced.csv("kernels.csv");
    traced.graph();
    traced.csv("summary.csv");
    // 8 threads × 200 × (kernel + memcpy) submitted; some records lost.
    assert!(rows.len() <= 3200, "{} rows", rows.len());
    // From a quarter of the ring queued on, commands keep no device event
    // (the memory the runtime holds for them stays bounded): counted, and
    // each such row that reached the collector says so.
    let behind: u64 = stderr
        .lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("lost: ")?;
            let (n, what) = rest.split_once(' ')?;
            what.starts_with(
                "device events not kept while the collector was behind (timing=behind)",
            )
            .then(|| n.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no `lost: N device events not kept` line:\n{stderr}"));
    let behind_rows = rows.iter().filter(|r| r["timing"] == "behind").count() as u64;
    assert!(
        behind_rows > 0 && behind_rows <= behind,
        "{behind_rows} behind rows, {behind} counted:\n{stderr}"
    );
    for row in rows.iter().filter(|r| r["timing"] == "behind") {
        assert!(
            row["start_ns"].is_empty() && row["duration_ns"].is_empty(),
            "{row:?}"
        );
    }
}

/// Another thread of the program calls `exit(5)` (after its own kernel)
/// while main sleeps: exit status 5 as untraced, and the exit drain wrote
/// everything, the other thread's kernel included.
#[test]
fn exit_from_another_thread() {
    let (_, traced) = same_both("faults-exit-thread", || faults("exit-thread"), &[]);
    assert_eq!(traced.output.status.code(), Some(5));
    assert_first_rounds_recorded(&traced.dir);
    let rows = traced.csv("kernels.csv");
    let theirs = rows_at(&rows, SRC, tag_line(SRC, "fault_thread_kernel"));
    assert_eq!(theirs.len(), 1, "{rows:?}\nstderr:\n{}", traced.stderr());
    assert_eq!(theirs[0]["timing"], "ok", "{:?}", theirs[0]);
    assert!(traced.stderr().contains("syclgraph: outputs in"));
}

/// `abort()` (an assertion failing in the program): it dies of SIGABRT as
/// untraced, and the last snapshot (kernels.csv, graph.dot, summary.csv) is
/// readable.
#[test]
fn abort_leaves_readable_snapshots() {
    let (untraced, traced) = same_both("faults-abort", || faults("abort"), &[]);
    assert_eq!(untraced.status.signal(), Some(6));
    assert_first_rounds_recorded(&traced.dir);
    read_csv(&traced.dir.join("summary.csv"));
}

/// The program `execve`s another SYCL program (itself in another mode)
/// without exiting: no atexit handler runs. The new image is a new traced
/// program in the same process: output and exit as untraced, and both
/// images' records are readable.
#[test]
fn execve_without_exit() {
    let (_, traced) = same_both("faults-execve", || faults("execve"), &[]);
    assert!(traced.stdout().ends_with("after exec 1.0\n"));
    // Whatever directory each image wrote to (the same process id owns
    // both), every kernels.csv under the output directory parses, and the
    // records of both images are somewhere.
    let mut files = vec![traced.dir.join("kernels.csv")];
    for entry in std::fs::read_dir(&traced.dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.push(path.join("kernels.csv"));
        }
    }
    let rows: Vec<_> = files
        .iter()
        .filter(|f| f.exists())
        .flat_map(|f| read_csv(f))
        .collect();
    let after = rows_at(&rows, SRC, tag_line(SRC, "fault_after_exec"));
    assert_eq!(after.len(), 1, "the exec'd image's kernel: {rows:?}");
    assert_eq!(after[0]["timing"], "ok", "{:?}", after[0]);
    let before = rows_at(&rows, SRC, tag_line(SRC, "fault_kernel"));
    assert!(
        !before.is_empty(),
        "nothing of the image before exec is left: {}",
        traced.stderr()
    );
}

/// A host task calls `exit(7)`. The DPC++ runtime's shutdown then waits for
/// that very host task and the program hangs, untraced too (it never
/// exits). Traced it must hang the same way (not crash, not exit), with the
/// rows recorded before on disk.
#[test]
fn exit_from_a_host_task_hangs_as_untraced_with_rows_on_disk() {
    let start = |traced_dir: Option<&Path>, out: &str| {
        let mut cmd = faults("exit-host-task");
        if let Some(dir) = traced_dir {
            with_xpti(&mut cmd, &subscriber());
            cmd.env("SYCLGRAPH_OUTPUT_DIR", dir);
        }
        let file = fresh_dir(out).join("stdout.txt");
        cmd.stdout(std::fs::File::create(&file).unwrap())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        (cmd.spawn().expect("start faults"), file)
    };
    let finish = |(mut child, file): (std::process::Child, PathBuf)| {
        let still_running = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let status = child.wait().unwrap();
        (
            still_running,
            status,
            std::fs::read_to_string(&file).unwrap(),
        )
    };
    // Untraced and traced side by side: each has the same 8 s to hang in.
    let dir = fresh_dir("faults-host-task");
    let untraced = start(None, "faults-host-task-untraced-out");
    let traced = start(Some(&dir), "faults-host-task-traced-out");
    std::thread::sleep(Duration::from_secs(8));
    let (untraced_hung, untraced_status, untraced_out) = finish(untraced);
    let (traced_hung, traced_status, traced_out) = finish(traced);
    assert_eq!(
        (traced_hung, traced_out.as_str()),
        (untraced_hung, untraced_out.as_str()),
        "traced {traced_status:?}, untraced {untraced_status:?}"
    );
    assert!(
        traced_out.ends_with("exit from a host task\n"),
        "{traced_out}"
    );
    let rows = read_csv(&dir.join("kernels.csv"));
    let kernels = rows_at(&rows, SRC, tag_line(SRC, "fault_kernel"));
    assert_eq!(kernels.len(), 20, "{rows:?}");
}
