//! A long-running traced program killed by SIGTERM or SIGINT: it dies of the
//! signal exactly as it does untraced, and what syclgraph recorded so far is
//! on disk and readable (kernels.csv is flushed every 100 ms, graph.dot and
//! summary.csv are snapshotted about every second).

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/long_running.cpp";

/// Starts the program, waits for its `ready` line, runs `meanwhile`, sends
/// `SIG<signal>` and returns how it ended (bounded; killed otherwise).
fn run_until_signalled(mut cmd: Command, signal: &str, meanwhile: impl FnOnce()) -> ExitStatus {
    // The program gives up by itself after 120 s.
    cmd.arg("120");
    let mut cmd = with_default_signals(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start long_running");
    let pid = child.id();
    let kill = |sig: &str| {
        signal_process(pid, sig);
    };
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, got) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = lines.send(line);
        }
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    match got.recv_timeout(Duration::from_secs(60)) {
        Ok(line) if line == "ready" => {}
        other => {
            kill("KILL");
            let _ = child.wait();
            panic!(
                "no `ready` line ({other:?}); stderr:\n{}",
                err.join().unwrap_or_default()
            );
        }
    }
    meanwhile();
    kill(signal);
    for _ in 0..1500 {
        if let Some(status) = child.try_wait().unwrap() {
            let _ = err.join();
            return status;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("KILL");
    let _ = child.wait();
    panic!(
        "still running 30 s after SIG{signal}; stderr:\n{}",
        err.join().unwrap_or_default()
    );
}

/// `long_running` traced by syclgraph into `dir`.
fn traced_long_running(dir: &std::path::Path) -> Command {
    let mut cmd = runtime_command(&program("long_running"));
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", dir);
    cmd
}

fn killed_by(signal: &str, number: i32) {
    let after = Duration::from_millis(1500);
    let untraced = run_until_signalled(runtime_command(&program("long_running")), signal, || {
        std::thread::sleep(after)
    });
    assert_eq!(
        untraced.signal(),
        Some(number),
        "untraced: {untraced:?} (the program installs no handlers)"
    );

    let test = format!("robust-sig{}", signal.to_lowercase());
    let dir = fresh_dir(&test);
    let cmd = traced_long_running(&dir);
    let traced = run_until_signalled(cmd, signal, || std::thread::sleep(after));
    assert_eq!(
        traced.signal(),
        untraced.signal(),
        "traced: {traced:?}, untraced: {untraced:?}"
    );
    assert_eq!(traced.code(), None, "{traced:?}");
    assert_eq!(traced.core_dumped(), untraced.core_dumped());

    // What was recorded so far is readable.
    let rows = read_csv(&dir.join("kernels.csv"));
    let kernels = rows_at(&rows, SRC, tag_line(SRC, "long_kernel"));
    assert!(
        kernels.iter().any(|r| r["timing"] == "ok"),
        "no complete, timed kernel row after {after:?} of running: {} rows",
        rows.len()
    );
    for row in &rows {
        assert!(
            !row["kind"].is_empty() && !row["timing"].is_empty(),
            "{row:?}"
        );
    }
    let graph_dot = dir.join("graph.dot");
    assert!(
        graph_dot.exists(),
        "no graph.dot snapshot after {after:?}: {:?}",
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect::<Vec<_>>()
    );
    // The snapshot renders and loads like a finished run's graph.dot.
    assert!(check_dot_files(&dir) >= 1);
    let graph = DotGraph::read(&graph_dot);
    let (_, node) = node_at(&graph, SRC, tag_line(SRC, "long_kernel"));
    assert_eq!(node["kind"], "kernel", "{node:?}");
    assert!(node["count"].parse::<u64>().unwrap() >= 1, "{node:?}");
    let summary = read_csv(&dir.join("summary.csv"));
    assert!(summary.iter().any(|r| r["kind"] == "kernel"), "{summary:?}");
}

#[test]
fn sigterm_kills_as_untraced_and_leaves_readable_outputs() {
    killed_by("TERM", 15);
}

#[test]
fn sigint_kills_as_untraced_and_leaves_readable_outputs() {
    killed_by("INT", 2);
}

/// Why the two tests above can pass or fail by chance: they read the file at
/// one random moment. This one looks at kernels.csv many times while the
/// program runs: whatever a signal would leave behind must end at a row
/// boundary and parse.
///
/// A read can land while syclgraph's one `write` of a flush is copying into
/// the file, and see part of it (Linux does not make a read wait for a
/// write to a regular file); that row is complete a moment later. A row
/// split over two writes would stay torn until the next flush (every
/// 100 ms): a torn read is a defect when its row is still incomplete 80 ms
/// later.
#[test]
fn kernels_csv_on_disk_always_ends_with_a_complete_row() {
    let dir = fresh_dir("robust-sig-sampled");
    let cmd = traced_long_running(&dir);
    let path = dir.join("kernels.csv");
    let mut samples = 0;
    let mut in_progress = 0;
    let mut torn = Vec::new();
    run_until_signalled(cmd, "TERM", || {
        let end = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < end {
            let bytes = std::fs::read(&path).unwrap_or_default();
            samples += 1;
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                if row_completes_within(&path, bytes.len(), Duration::from_millis(80)) {
                    in_progress += 1;
                } else {
                    let tail = &bytes[bytes.len().saturating_sub(60)..];
                    torn.push(String::from_utf8_lossy(tail).into_owned());
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    assert!(samples > 100, "{samples} samples");
    assert!(
        torn.is_empty(),
        "{} of {samples} reads of kernels.csv ended inside a row that stayed \
         incomplete for 80 ms ({in_progress} more caught a write in progress), e.g. ...{:?}",
        torn.len(),
        torn[0]
    );
    read_csv(&path);
}

/// Whether the row that the first `torn_at` bytes of `path` end inside is
/// complete (a newline after `torn_at`) within `limit`.
fn row_completes_within(path: &std::path::Path, torn_at: usize, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        let bytes = std::fs::read(path).unwrap_or_default();
        if bytes
            .get(torn_at..)
            .is_some_and(|rest| rest.contains(&b'\n'))
        {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The graph files follow a program whose collector is mostly idle (a
/// kernel, a copy and a wait per iteration): snapshots are paced on the
/// collector's CPU time, which hardly moves here, so the wall-time pace
/// must bring them (`subscriber/src/snapshot_pacing.rs`). `graph.dot`'s
/// count of `long_kernel` is read every 50 ms for 8 s: it must be rewritten
/// with a higher count several times, never more than 4 s apart.
#[test]
fn graph_files_keep_up_with_a_slow_program() {
    let dir = fresh_dir("robust-slow-snapshots");
    let cmd = traced_long_running(&dir);
    let graph_dot = dir.join("graph.dot");
    let kernel_count = || -> Option<u64> {
        let text = std::fs::read_to_string(&graph_dot).ok()?;
        if text.is_empty() {
            return None;
        }
        let line = tag_line(SRC, "long_kernel").to_string();
        DotGraph::read(&graph_dot).nodes.values().find_map(|node| {
            (node.get("file").is_some_and(|f| f.ends_with(SRC)) && node.get("line") == Some(&line))
                .then(|| node["count"].parse().ok())?
        })
    };
    let mut changes = Vec::new();
    let mut last = None;
    run_until_signalled(cmd, "TERM", || {
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(8) {
            if let Some(count) = kernel_count().filter(|&c| Some(c) != last) {
                changes.push((start.elapsed(), count));
                last = Some(count);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    assert!(changes.len() >= 3, "graph.dot rewrites seen: {changes:?}");
    for pair in changes.windows(2) {
        assert!(pair[1].1 > pair[0].1, "{changes:?}");
        assert!(
            pair[1].0 - pair[0].0 <= Duration::from_secs(4),
            "graph.dot was not rewritten for over 4 s while the program ran: {changes:?}"
        );
    }
}

/// Without device timing every output is written at exit: a killed program
/// leaves the journal of what it did (flushed every 100 ms), `kernels.csv`
/// with its header only, and no graph snapshot.
#[test]
fn sigterm_without_device_timing_leaves_the_journal() {
    let dir = fresh_dir("robust-sigterm-untimed");
    let mut cmd = traced_long_running(&dir);
    cmd.env("SYCLGRAPH_DEVICE_TIMING", "0");
    let status = run_until_signalled(cmd, "TERM", || {
        std::thread::sleep(Duration::from_millis(1500))
    });
    assert_eq!(status.signal(), Some(15), "{status:?}");
    let journal = std::fs::File::open(dir.join(".syclgraph-journal")).expect("the journal");
    let records = syclgraph_graph::journal::JournalReader::new(BufReader::new(journal))
        .expect("a journal header")
        .map(|r| r.expect("a whole record"))
        .collect::<Vec<_>>();
    let kernels = records
        .iter()
        .filter(|r| {
            matches!(
                r,
                syclgraph_graph::record::Record::SignalledTask { .. }
                    | syclgraph_graph::record::Record::SubmittedTask { .. }
                    | syclgraph_graph::record::Record::Task { .. }
            )
        })
        .count();
    assert!(kernels >= 1, "no task in the journal: {records:?}");
    let header = std::fs::read_to_string(dir.join("kernels.csv")).unwrap();
    assert_eq!(header.lines().count(), 1, "{header}");
    assert!(!dir.join("graph.dot").exists());

    // `syclgraph report` converts the journal, the rows included: one per
    // task instance the journal holds, none timed (timing was off), each
    // on a node of the converted graph.
    let instances = records
        .iter()
        .filter_map(|r| match r {
            syclgraph_graph::record::Record::SignalledTask { node, instance, .. }
            | syclgraph_graph::record::Record::SubmittedTask { node, instance, .. }
            | syclgraph_graph::record::Record::Task { node, instance, .. } => {
                Some((*node, *instance))
            }
            _ => None,
        })
        .collect::<std::collections::BTreeSet<_>>();
    let mut report = Command::new(syclgraph_exe());
    report.arg("report").arg(&dir);
    let out = output_within(report, Duration::from_secs(120));
    assert!(out.status.success(), "{out:?}");
    let rows = read_csv(&dir.join("kernels.csv"));
    assert_eq!(rows.len(), instances.len(), "{instances:?}");
    assert!(
        rows.iter().all(|r| r["timing"] == "unavailable"),
        "{rows:?}"
    );
    check_joins(&dir);
    assert!(!dir.join(".syclgraph-journal").exists());
}
