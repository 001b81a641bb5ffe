//! A killed job's files are whole when `syclgraph run` exits, with no
//! second command: `tests/programs/long_running` under `syclgraph run -o
//! out`, ended by SIGTERM to the launcher (forwarded to the program), by
//! SIGKILL to the program alone while the launcher lives, and as an MPI
//! job of 2 ranks (`mpiexec -n 2 syclgraph run ...`) whose `mpiexec` gets
//! SIGTERM. Each time the launcher exits 128 + the signal, says in one
//! line what it completed (the commands, the time), and leaves
//! `summary.txt`, `critical_path.csv`, `idle_gaps.csv`, `instances.dot`
//! and a `trace.pftrace` that Perfetto's protos decode with one device
//! slice per timed `kernels.csv` row (`tests/scripts/check_pftrace.py`),
//! the journal renamed `run.journal`, no temporary file left. A second
//! Ctrl-C typed during the conversion stops it, and leaves no
//! half-written file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use syclgraph_tests::*;

/// Longest a launcher may take to end after the signal (a few thousand
/// commands to convert, on a loaded 2-core machine).
const GRACE: Duration = Duration::from_secs(60);

/// Variables that would do the launcher's work for it (as cli_run's).
const CLEARED: [&str; 8] = [
    "XPTI_TRACE_ENABLE",
    "XPTI_FRAMEWORK_DISPATCHER",
    "XPTI_SUBSCRIBERS",
    "LD_LIBRARY_PATH",
    "OCL_ICD_FILENAMES",
    "SYCLGRAPH_OUTPUT_DIR",
    "SYCLGRAPH_QUIET",
    "SYCLGRAPH_VENV",
];

/// A started job: the process, its stderr (read to the end on a thread)
/// and the `ready` lines of its stdout.
struct Job {
    child: Child,
    stderr: std::thread::JoinHandle<String>,
    ready: std::sync::mpsc::Receiver<()>,
}

impl Job {
    /// Starts `cmd` in its own process group, the signals the test sends
    /// at their default action.
    fn start(cmd: &Command) -> Job {
        let mut cmd = with_default_signals(cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = std::os::unix::process::CommandExt::process_group(&mut cmd, 0)
            .spawn()
            .expect("start the job");
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if line == "ready" {
                    let _ = tx.send(());
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
            text
        });
        Job {
            child,
            stderr,
            ready,
        }
    }

    /// Waits for `n` `ready` lines (bounded); kills the group otherwise.
    fn wait_ready(mut self, n: usize) -> Job {
        for _ in 0..n {
            if self.ready.recv_timeout(Duration::from_secs(90)).is_err() {
                signal_group(self.child.id(), "KILL");
                let _ = self.child.wait();
                panic!("no `ready` line; stderr:\n{}", self.stderr_now());
            }
        }
        self
    }

    fn stderr_now(self) -> String {
        self.stderr.join().unwrap_or_default()
    }

    /// How the job ended, within [`GRACE`] of now, and its stderr.
    fn end(mut self) -> (ExitStatus, String, Duration) {
        let since = Instant::now();
        while since.elapsed() < GRACE {
            if let Some(status) = self.child.try_wait().unwrap() {
                let took = since.elapsed();
                return (status, self.stderr_now(), took);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        signal_group(self.child.id(), "KILL");
        let _ = self.child.wait();
        panic!(
            "still running {GRACE:?} after the signal; stderr:\n{}",
            self.stderr_now()
        );
    }
}

/// `syclgraph run -o out -- long_running 120` in `cwd`.
fn launcher(cwd: &Path) -> Command {
    let mut cmd = Command::new(syclgraph_exe());
    cmd.current_dir(cwd)
        .args(["run", "-o", "out", "--"])
        .arg(program("long_running"))
        .arg("120");
    for var in CLEARED {
        cmd.env_remove(var);
    }
    cmd
}

/// Waits (at most 60 s) until `dir/kernels.csv` holds `n` timed rows.
fn wait_for_rows(dir: &Path, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let text = std::fs::read_to_string(dir.join("kernels.csv")).unwrap_or_default();
        if text.lines().filter(|l| l.contains(",ok,")).count() >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "{}/kernels.csv has not {n} timed rows after 60 s",
        dir.display()
    );
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The number in `line` just before `word` (`3437 commands`).
fn number_before(line: &str, word: &str) -> u64 {
    let at = line
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {line}"));
    line[..at]
        .split_whitespace()
        .last()
        .and_then(|w| w.trim_start_matches('(').parse().ok())
        .unwrap_or_else(|| panic!("no number before {word:?} in {line}"))
}

/// Checks that `dir` holds a killed program's whole files, converted by
/// the launcher: returns the kernels.csv rows.
/// The `.tmp` files in `dir` (a write not renamed into place).
fn tmp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Every file a finished run has is in `dir`, with no journal left to
/// convert and no `.tmp` file; `context` goes into the messages.
fn assert_files_whole(dir: &Path, context: &str) {
    for f in [
        "summary.txt",
        "critical_path.csv",
        "idle_gaps.csv",
        "instances.dot",
        "windows.csv",
        "graph.dot",
        "summary.csv",
        "run.journal",
    ] {
        assert!(
            dir.join(f).is_file(),
            "no {f} in {}{context}",
            dir.display()
        );
    }
    assert!(
        !dir.join(".syclgraph-journal").exists(),
        "{}{context}",
        dir.display()
    );
    let tmp = tmp_files(dir);
    assert!(tmp.is_empty(), "temporary files left: {tmp:?}{context}");
}

fn check_whole(dir: &Path) -> usize {
    assert_files_whole(dir, "");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("converted by `syclgraph run` from .syclgraph-journal"),
        "{summary}"
    );
    assert!(summary.contains("critical path: "), "{summary}");
    let path = read_csv(&dir.join("critical_path.csv"));
    assert!(!path.is_empty(), "no critical path in {}", dir.display());
    let rows = read_csv(&dir.join("kernels.csv"));
    let timed = rows.iter().filter(|r| r["timing"] == "ok").count();
    assert!(timed > 0, "{}", dir.display());
    // Perfetto's protos decode it; each timed row is one device slice.
    let trace = check_pftrace(dir, false);
    assert_eq!(
        number_before(&trace, "device)"),
        timed as u64,
        "device slices against timed kernels.csv rows: {trace}"
    );
    check_joins(dir);
    rows.len()
}

/// The launcher's line for `dir`: the commands it gives are kernels.csv's
/// rows (long_running submits device commands only).
fn check_line(stderr: &str, signal: &str, dir: &Path, rows: usize) {
    let line = syclgraph_lines(stderr)
        .into_iter()
        .find(|l| l.contains("syclgraph completed its files from its journal in "))
        .unwrap_or_else(|| panic!("no completion line:\n{stderr}"));
    assert!(line.contains(signal), "{line}");
    assert!(line.ends_with(&format!(", in {}", dir.display())), "{line}");
    assert_eq!(number_before(line, "commands"), rows as u64, "{line}");
}

#[test]
fn sigterm_to_the_launcher_leaves_whole_files() {
    let cwd = fresh_dir("killed-term");
    let dir = cwd.join("out");
    let job = Job::start(&launcher(&cwd)).wait_ready(1);
    wait_for_rows(&dir, 20);
    assert!(signal_process(job.child.id(), "TERM"));
    let (status, stderr, _) = job.end();
    assert_eq!(status.code(), Some(143), "{stderr}");
    let rows = check_whole(&dir);
    check_line(
        &stderr,
        "the program was killed by signal 15 (SIGTERM)",
        &dir,
        rows,
    );
    assert!(
        stderr.contains(&format!("syclgraph: done; files in {}", dir.display())),
        "{stderr}"
    );
    // Nothing is left for `syclgraph report` to convert.
    let mut report = Command::new(syclgraph_exe());
    report.arg("report").arg(&dir);
    let out = output_within(report, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(syclgraph_lines(&err).is_empty(), "{err}");
}

/// A program that dies late in its exit, in an exit handler that runs
/// after the runtime's shutdown handler: syclgraph writes its files beside
/// the runtime's teardown, so the abort may come before they are written.
/// Whichever came first, the files are whole when the launcher exits (the
/// collector's, or the launcher's conversion of the journal), and the exit
/// code is the program's.
#[test]
fn a_program_aborting_in_its_exit_handler_leaves_whole_files() {
    const SRC: &str = "tests/programs/faults.cpp";
    let cwd = fresh_dir("killed-at-exit");
    let dir = cwd.join("out");
    let mut cmd = Command::new(syclgraph_exe());
    cmd.current_dir(&cwd)
        .args(["run", "-o", "out", "--"])
        .arg(program("faults"))
        .args(["abort-at-exit", "300"]);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    let out = output_within(cmd, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(134), "{stderr}");
    assert_files_whole(&dir, &format!(":\n{stderr}"));
    let rows = read_csv(&dir.join("kernels.csv"));
    let kernels = rows_at(&rows, SRC, tag_line(SRC, "fault_kernel"));
    assert_eq!(kernels.len(), 300, "fault_kernel rows:\n{stderr}");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(summary.contains("critical path: "), "{summary}");
    check_pftrace(&dir, false);
}

#[test]
fn sigkill_to_the_program_alone_leaves_whole_files() {
    let cwd = fresh_dir("killed-kill");
    let dir = cwd.join("out");
    let job = Job::start(&launcher(&cwd)).wait_ready(1);
    wait_for_rows(&dir, 20);
    let program = children(job.child.id());
    assert_eq!(program.len(), 1, "the launcher's children: {program:?}");
    assert!(signal_process(program[0], "KILL"));
    let (status, stderr, _) = job.end();
    assert_eq!(status.code(), Some(137), "{stderr}");
    let rows = check_whole(&dir);
    check_line(
        &stderr,
        "the program was killed by signal 9 (SIGKILL)",
        &dir,
        rows,
    );
}

/// `mpiexec -n 2 syclgraph run -o out -- long_running 120`, SIGTERM to
/// `mpiexec`: each rank's launcher gets it from mpiexec, forwards it and
/// completes its own rank directory.
#[test]
fn an_mpi_job_killed_by_sigterm_leaves_each_rank_whole() {
    let cwd = fresh_dir("killed-mpi");
    let mut cmd = mpi_command(&mpiexec(), &cwd);
    cmd.args(["-n", "2"])
        .arg(syclgraph_exe())
        .args(["run", "-o", "out", "--"])
        .arg(program("long_running"))
        .arg("120");
    let job = Job::start(&cmd).wait_ready(2);
    let ranks: Vec<PathBuf> = (0..2)
        .map(|r| cwd.join(format!("out/rank-{r:05}")))
        .collect();
    for dir in &ranks {
        wait_for_rows(dir, 20);
    }
    assert!(signal_process(job.child.id(), "TERM"));
    let (status, stderr, _) = job.end();
    assert!(!status.success(), "{status:?}\n{stderr}");
    for (rank, dir) in ranks.iter().enumerate() {
        let rows = check_whole(dir);
        let line = syclgraph_lines(&stderr)
            .into_iter()
            .find(|l| l.ends_with(&format!(", in {}", dir.display())))
            .unwrap_or_else(|| panic!("no completion line for rank {rank}:\n{stderr}"));
        assert!(
            line.starts_with(&format!(
                "syclgraph: rank {rank} was killed by signal 15 (SIGTERM); syclgraph completed its files from its journal in "
            )) || line.starts_with(
                "syclgraph: the program was killed by signal 15 (SIGTERM); syclgraph completed its files"
            ),
            "{line}"
        );
        assert_eq!(number_before(line, "commands"), rows as u64, "{line}");
    }
}

/// A Ctrl-C typed at the terminal kills the program; a second one, while
/// `syclgraph run` converts its journal, stops the conversion: exit 130,
/// one line saying so, no temporary file left, the journal kept, which
/// `syclgraph report` then converts. `memcpy_loop` (many commands a second)
/// gives a conversion long enough to be interrupted: the second Ctrl-C is
/// typed once its first temporary file is there.
#[test]
fn a_second_ctrl_c_stops_the_conversion_and_leaves_no_half_file() {
    use std::io::{Read, Write};
    let cwd = fresh_dir("killed-ctrl-c");
    let dir = cwd.join("out");
    let [env, defaults] = DEFAULT_SIGNALS;
    let line = format!(
        "exec {env} {defaults} '{}' run -o out -- '{}' 600",
        syclgraph_exe().display(),
        program("memcpy_loop").display()
    );
    // util-linux `script`: a terminal of its own, whose input is typed.
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]).current_dir(&cwd);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux `script` runs");
    let mut out = child.stdout.take().unwrap();
    let output = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let typed = |child: &mut Child| {
        child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
        child.stdin.as_mut().unwrap().flush().unwrap();
    };
    let stop = |child: &mut Child, why: &str| -> ! {
        let _ = child.kill();
        signal_group(child.id(), "KILL");
        panic!("{why}");
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    let rows = || {
        std::fs::read(dir.join("kernels.csv"))
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0)
    };
    while rows() < 200_000 {
        if Instant::now() > deadline {
            stop(&mut child, "memcpy_loop wrote no 200,000 rows in 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    typed(&mut child);
    let tmp = dir.join("trace.pftrace.tmp");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !tmp.exists() {
        if Instant::now() > deadline {
            stop(&mut child, "no conversion began within 30 s of the Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    typed(&mut child);
    let deadline = Instant::now() + GRACE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            stop(&mut child, "still running after the second Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = output.join().unwrap();
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(
        text.contains(
            "syclgraph: interrupted by SIGINT while completing the files from the journal: not completed"
        ),
        "{text}"
    );
    assert!(!text.contains("syclgraph completed its files"), "{text}");
    let left = tmp_files(&dir);
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert!(dir.join(".syclgraph-journal").is_file());
    assert!(!dir.join("summary.txt").exists());
    // What is left converts by hand.
    let mut report = Command::new(syclgraph_exe());
    report.arg("report").arg(&dir);
    let out = output_within(report, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("syclgraph: converted the journal "), "{err}");
    assert!(dir.join("summary.txt").is_file());
}
