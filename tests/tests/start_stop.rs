//! Tracing started and stopped while the program runs (issue 17): every way
//! to do it (C API through include/syclgraph.h, ITT from C++ and Python,
//! SYCLGRAPH_DELAY/DURATION, a signal and the control file from outside),
//! and what a window means: commands submitted while on are recorded and
//! timed completely even when they run after the stop, commands submitted
//! while stopped are counted, not recorded, and an edge between two windows
//! is kept. Last, toggling from several threads while 8 threads submit.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/start_stop.cpp";
const N: usize = 10;

/// The number on the stderr line `not recorded: <n> submission(s) ...`.
fn not_recorded(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("not recorded: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no 'not recorded' line in:\n{stderr}"))
}

/// windows.csv as (start_ns, end_ns, still_on).
fn windows(traced: &Traced) -> Vec<(u64, u64, bool)> {
    traced
        .csv("windows.csv")
        .iter()
        .map(|r| {
            (
                r["start_ns"].parse().unwrap(),
                r["end_ns"].parse().unwrap(),
                r["still_on"] == "1",
            )
        })
        .collect()
}

/// What `start_stop api|itt|wait` must give: phases B and D recorded and
/// timed, A and C counted only, the host task of B (ending after the stop)
/// and the memcpy queued behind it (running after the stop) complete, the
/// B -> D buffer edge kept across the stopped phase C.
/// `prompt`: the stop took effect at the call (API, ITT), not up to half a
/// second later (signal, control file), so the late memcpy ran after it.
fn check_phases(traced: &Traced, prompt: bool) {
    let stderr = traced.stderr();
    let rows = traced.csv("kernels.csv");
    for (tag, want) in [
        ("a_memcpy", 0),
        ("b_memcpy", N),
        ("b_late_memcpy", 1),
        ("c_memcpy", 0),
        ("d_memcpy", N),
    ] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), want, "{tag} rows; stderr:\n{stderr}");
        assert!(
            found.iter().all(|r| r["timing"] == "ok"),
            "{tag}: {found:?}"
        );
    }
    let wins = windows(traced);
    assert_eq!(wins.len(), 2, "{wins:?}\n{stderr}");
    assert!(wins.iter().all(|w| !w.2), "both windows closed: {wins:?}");
    // Submitted in window 1, run (behind a 300 ms host task) after it ended.
    let late = &rows_at(&rows, SRC, tag_line(SRC, "b_late_memcpy"))[0];
    let submit: u64 = late["submit_ns"].parse().unwrap();
    let end: u64 = late["end_ns"].parse().unwrap();
    assert!(
        submit >= wins[0].0 && submit <= wins[0].1,
        "{late:?} {wins:?}"
    );
    if prompt {
        assert!(end > wins[0].1, "ran after the stop: {late:?} {wins:?}");
    }
    // Every recorded row was submitted inside a window.
    for r in &rows {
        let s: u64 = r["submit_ns"].parse().unwrap();
        assert!(
            wins.iter().any(|w| s >= w.0 && s <= w.1),
            "row outside the windows: {r:?} {wins:?}"
        );
    }
    let graph = traced.graph();
    let (_, b) = node_at(&graph, SRC, tag_line(SRC, "b_host"));
    let (_, d) = node_at(&graph, SRC, tag_line(SRC, "d_host"));
    assert_eq!((b["count"].as_str(), d["count"].as_str()), ("1", "1"));
    let (bl, dl) = (b["line"].clone(), d["line"].clone());
    assert!(
        !graph
            .edges_between(
                |a| a.get("line") == Some(&bl),
                |a| a.get("line") == Some(&dl)
            )
            .is_empty(),
        "the B -> D edge across the stopped phase is kept"
    );
    // A and C: 2N memcpys counted, not recorded. The runtime counts
    // commands: a memcpy queued behind the host task goes through the
    // scheduler, which adds a `copy usm` command of its own (when the
    // callbacks are still in), and the buffer's write-back may come too.
    let counted = not_recorded(&stderr);
    assert!(
        (2 * N as u64..=3 * N as u64 + 4).contains(&counted),
        "{counted}\n{stderr}"
    );
    assert!(stderr.contains("recorded: 2 windows"), "{stderr}");
    let dot = std::fs::read_to_string(traced.dir.join("graph.dot")).unwrap();
    assert!(dot.starts_with("// syclgraph recorded: 2 windows"), "{dot}");
    let instances = std::fs::read_to_string(traced.dir.join("instances.dot")).unwrap();
    assert!(
        instances.starts_with("// syclgraph recorded: 2 windows"),
        "{instances}"
    );
}

fn start_stop(how: &str) -> impl Fn() -> std::process::Command + '_ {
    move || {
        let mut cmd = runtime_command(&program("start_stop"));
        cmd.arg(how).arg(N.to_string());
        cmd
    }
}

#[test]
fn c_api_through_the_header_records_only_the_windows() {
    // Untraced, the header finds no syclgraph and does nothing: same output.
    let traced = run_both(
        "start-stop-api",
        start_stop("api"),
        &[("SYCLGRAPH_START", "paused")],
    );
    check_phases(&traced, true);
}

#[test]
fn itt_pause_and_resume_from_cpp_and_task_ranges() {
    let lib = subscriber();
    let lib = lib.to_str().unwrap();
    let traced = run_both(
        "start-stop-itt",
        start_stop("itt"),
        &[("SYCLGRAPH_START", "paused"), ("INTEL_LIBITTNOTIFY64", lib)],
    );
    check_phases(&traced, true);
    let stderr = traced.stderr();
    let task = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("task") && l.contains("phase_b"))
        .unwrap_or_else(|| panic!("no ITT task phase_b:\n{stderr}"));
    assert_eq!(task.split_whitespace().nth(2), Some("1"), "{task}");
}

#[test]
fn itt_pause_and_resume_from_python() {
    let script = repo_root().join("tests/programs/start_stop_itt.py");
    let lib = subscriber();
    let traced = run_both(
        "start-stop-python",
        || {
            let mut cmd = python_command(&script);
            cmd.arg("7");
            cmd
        },
        &[
            ("SYCLGRAPH_START", "paused"),
            ("INTEL_LIBITTNOTIFY64", lib.to_str().unwrap()),
        ],
    );
    let stderr = traced.stderr();
    let rows = traced.csv("kernels.csv");
    assert_eq!(rows.len(), 7, "{rows:?}\n{stderr}");
    assert!(rows.iter().all(|r| r["timing"] == "ok"), "{rows:?}");
    assert_eq!(not_recorded(&stderr), 14, "{stderr}");
    assert_eq!(windows(&traced).len(), 1);
    assert!(
        stderr
            .lines()
            .any(|l| l.trim_start().starts_with("task") && l.contains("py_window")),
        "{stderr}"
    );
}

#[test]
fn delay_and_duration_bound_one_window() {
    let mut cmd = runtime_command(&program("start_stop"));
    // The delay counts from syclgraph's start (the runtime's), the loop
    // from the end of the program's start-up, which takes up to about a
    // second on a loaded machine: the window must fall inside the loop.
    cmd.args(["loop", "4000"]);
    let traced = run_traced_within(
        "start-stop-delay",
        cmd,
        &[("SYCLGRAPH_DELAY", "1.6"), ("SYCLGRAPH_DURATION", "0.3")],
        Duration::from_secs(120),
    );
    let stderr = traced.stderr();
    assert!(traced.output.status.success(), "{stderr}");
    let wins = windows(&traced);
    assert_eq!(wins.len(), 1, "{wins:?}\n{stderr}");
    let (start, end, still_on) = wins[0];
    assert!(!still_on);
    let ms = (end - start) / 1_000_000;
    // Timed by the collector thread, which looks at least every 50 ms (on
    // a loaded machine it may be scheduled later).
    assert!((300..=700).contains(&ms), "window of {ms} ms");
    let rows = traced.csv("kernels.csv");
    assert!(!rows.is_empty(), "{stderr}");
    for r in &rows {
        let s: u64 = r["submit_ns"].parse().unwrap();
        assert!(s >= start && s <= end, "{r:?}");
        assert_eq!(r["timing"], "ok", "{r:?}");
    }
    // The program's own count: every submission recorded or counted, also
    // while the callbacks of a stopped tracer were removed (from 200 ms
    // after the stop: before the delay ended and after the duration).
    let submitted: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("loop submissions "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no submission count:\n{stderr}"));
    assert_eq!(
        rows.len() as u64 + not_recorded(&stderr),
        submitted,
        "{stderr}"
    );
}

#[test]
fn a_signal_and_the_control_file_from_outside() {
    let dir = fresh_dir("start-stop-outside");
    let mut cmd = start_stop("wait")();
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir)
        .env("SYCLGRAPH_START", "paused")
        .env("SYCLGRAPH_TOGGLE_SIGNAL", "USR2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start start_stop wait");
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let mut seen = String::new();
    // Start 1: signal; stop 1: control file; start 2: control file; stop 2: signal.
    let mut waits = 0;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if !line.starts_with("waiting for ") {
            continue;
        }
        waits += 1;
        let word = line.trim_start_matches("waiting for ");
        if waits == 1 || waits == 4 {
            assert!(signal_process(pid, "USR2"));
        } else {
            std::fs::write(dir.join(".syclgraph-control"), format!("{word}\n")).unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    let traced = Traced { output, dir };
    assert!(
        traced.output.status.success(),
        "{seen}\n{}",
        traced.stderr()
    );
    assert_eq!(waits, 4, "{seen}");
    assert!(seen.ends_with("done\n"), "{seen}");
    assert!(!traced.dir.join(".syclgraph-control").exists(), "consumed");
    check_phases(&traced, false);
}

#[test]
fn started_paused_and_never_started_records_nothing_but_counts() {
    let traced = run_both(
        "start-stop-never",
        start_stop("none"),
        &[("SYCLGRAPH_START", "paused")],
    );
    let stderr = traced.stderr();
    assert!(traced.csv("kernels.csv").is_empty(), "{stderr}");
    assert!(windows(&traced).is_empty());
    assert!(
        stderr.contains("recorded: no window (tracing never started)"),
        "{stderr}"
    );
    // 4 phases: 2 of N memcpys, 2 of N memcpys plus a host task, and the
    // memcpy behind the first host task.
    assert!(not_recorded(&stderr) >= 4 * N as u64 + 3, "{stderr}");
}

#[test]
fn toggling_from_many_threads_while_8_threads_submit_loses_nothing() {
    const K: usize = 400;
    let traced = run_both_within(
        "start-stop-threads",
        || {
            let mut cmd = runtime_command(&program("start_stop_threads"));
            cmd.arg(K.to_string());
            cmd
        },
        &[],
        Duration::from_secs(300),
    );
    let stderr = traced.stderr();
    assert!(traced.stdout().contains(&format!("submitted {}", 8 * K)));
    let src = "tests/programs/start_stop_threads.cpp";
    let rows = traced.csv("kernels.csv");
    let recorded = rows_at(&rows, src, tag_line(src, "stress_memcpy"));
    let untimed: Vec<_> = recorded.iter().filter(|r| r["timing"] != "ok").collect();
    assert!(untimed.is_empty(), "{untimed:?}");
    // Every submission is either recorded (one row) or counted.
    assert_eq!(
        recorded.len() as u64 + not_recorded(&stderr),
        8 * K as u64,
        "{stderr}"
    );
    assert!(!recorded.is_empty() && recorded.len() < 8 * K, "{stderr}");
    let wins = windows(&traced);
    assert!(wins.len() > 10, "many windows: {}", wins.len());
    assert!(
        wins.windows(2).all(|w| w[0].1 <= w[1].0),
        "ordered, disjoint"
    );
    assert!(!stderr.contains("lost:"), "{stderr}");
}
