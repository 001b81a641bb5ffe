//! `syclgraph run` and `syclgraph report` on the real runtime: programs are
//! traced with none of the XPTI, library-path or OpenCL variables set (the
//! launcher finds and sets what is needed), keep their stdin, stdout and
//! exit code, pass on SIGTERM/SIGINT/SIGHUP sent to syclgraph, get a Ctrl-C
//! typed at a terminal once, and the report reprints the run's table from
//! its files.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use syclgraph_tests::*;

/// Variables that would do the launcher's work for it: none reaches it.
const CLEARED: [&str; 11] = [
    "XPTI_TRACE_ENABLE",
    "XPTI_FRAMEWORK_DISPATCHER",
    "XPTI_SUBSCRIBERS",
    "LD_LIBRARY_PATH",
    "OCL_ICD_FILENAMES",
    "OCL_ICD_VENDORS",
    "CMPLR_ROOT",
    "ONEAPI_ROOT",
    "SYCLGRAPH_OUTPUT_DIR",
    "SYCLGRAPH_QUIET",
    "SYCLGRAPH_VENV",
];

/// `syclgraph <args>` in `cwd`, with [`CLEARED`] removed.
fn syclgraph(cwd: &Path, args: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = Command::new(syclgraph_exe());
    cmd.current_dir(cwd).args(args);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    cmd
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The directory named by the launcher's `syclgraph: done; files in DIR`.
fn files_in(stderr: &str) -> PathBuf {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("syclgraph: done; files in "))
        .unwrap_or_else(|| panic!("no `done; files in` line:\n{stderr}"));
    PathBuf::from(line)
}

fn assert_outputs(dir: &Path) {
    for f in ["graph.dot", "instances.dot", "kernels.csv", "summary.csv"] {
        assert!(
            dir.join(f).is_file(),
            "{} is missing",
            dir.join(f).display()
        );
    }
}

#[test]
fn a_cpp_program_is_traced_with_nothing_set() {
    let cwd = fresh_dir("cli-cpp");
    let untraced = runtime_command(&program("pipeline")).output().unwrap();
    assert!(untraced.status.success(), "{}", text(&untraced.stderr));
    let out = output_within(
        syclgraph(
            &cwd,
            &[os("run"), os("--"), program("pipeline").as_os_str()],
        ),
        Duration::from_secs(120),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        strip_profiling(&text(&out.stdout)),
        strip_profiling(&text(&untraced.stdout)),
        "the program's stdout is unchanged"
    );
    // No -o: ./syclgraph-<pid> of the program, in the working directory.
    let dir = files_in(&stderr);
    assert_eq!(dir.parent(), Some(cwd.as_path()), "{stderr}");
    let name = dir.file_name().unwrap().to_str().unwrap();
    assert!(
        name.strip_prefix("syclgraph-")
            .is_some_and(|pid| pid.parse::<u32>().is_ok()),
        "{name}"
    );
    assert_outputs(&dir);
    let rows = read_csv(&dir.join("kernels.csv"));
    let timed = |kind: &str| {
        rows.iter()
            .filter(|r| r["kind"] == kind && r["timing"] == "ok")
            .count()
    };
    // pipeline: saxpy and scale three times each, four memcpys, all timed.
    assert_eq!(timed("kernel"), 6, "{rows:?}");
    assert_eq!(timed("memcpy"), 4, "{rows:?}");
    // The end block: where the files are, how to see them again, with a
    // command that runs as printed: target/release/ is not on PATH, so it
    // names the launcher by the path it was started with.
    let printed = stderr
        .lines()
        .find_map(|l| l.strip_prefix("syclgraph:   summary:    "))
        .unwrap_or_else(|| panic!("no summary line:\n{stderr}"));
    assert_eq!(
        printed,
        format!("{} report {}", syclgraph_exe().display(), dir.display()),
        "{stderr}"
    );
    if dir.join("trace.pftrace").exists() {
        assert!(stderr.contains("https://ui.perfetto.dev"), "{stderr}");
    } else {
        assert!(!stderr.contains("perfetto"), "{stderr}");
    }

    // That command, run as printed, prints the run's summary again, one row
    // per node: per (kind, name), its rows add up to the count the run
    // printed.
    let report = Command::new("bash")
        .args(["-c", printed])
        .current_dir(&cwd)
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0), "{}", text(&report.stderr));
    let table = text(&report.stdout);
    assert!(
        table.starts_with(&format!("syclgraph: outputs in {}\nkind ", dir.display())),
        "{table}"
    );
    let run_table: String = stderr
        .lines()
        .skip_while(|l| !l.starts_with("kind "))
        .take_while(|l| l.starts_with("kind ") || !l.contains(':'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(run_table.lines().count() >= 4, "{stderr}");
    let counts = |table: &str, node_column: bool| {
        let mut by_group = std::collections::BTreeMap::<(String, String), u64>::new();
        for line in table.lines().filter(|l| !l.starts_with("kind ")) {
            let cells: Vec<&str> = line.split_whitespace().collect();
            // kind, name, count, ... (names of these programs have no spaces)
            if cells.len() < 3 || (node_column && !cells.last().unwrap().starts_with('n')) {
                continue;
            }
            let Ok(count) = cells[2].parse::<u64>() else {
                continue;
            };
            *by_group
                .entry((cells[0].to_owned(), cells[1].to_owned()))
                .or_default() += count;
        }
        by_group
    };
    assert_eq!(
        counts(&table, true),
        counts(&run_table, false),
        "report:\n{table}\nrun:\n{run_table}"
    );
    assert!(table.contains("saxpy"), "{table}");
}

#[test]
fn a_dpnp_script_is_traced_with_nothing_set() {
    let cwd = fresh_dir("cli-dpnp");
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let python = venv().join("bin/python");
    let untraced = python_command(&script).output().unwrap();
    assert!(untraced.status.success(), "{}", text(&untraced.stderr));
    let out_dir = cwd.join("out");
    let out = output_within(
        syclgraph(
            &cwd,
            &[
                os("run"),
                os("-o"),
                os("out"),
                os("--"),
                python.as_os_str(),
                script.as_os_str(),
            ],
        ),
        Duration::from_secs(300),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&out.stdout), text(&untraced.stdout));
    assert_eq!(files_in(&stderr), out_dir, "{stderr}");
    assert_outputs(&out_dir);
    let rows = read_csv(&out_dir.join("kernels.csv"));
    let dpnp_kernels = rows
        .iter()
        .filter(|r| r["kind"] == "kernel" && r["name"].starts_with("dpnp::tensor::kernels::"))
        .count();
    assert!(dpnp_kernels >= 5, "{rows:?}");
    // dpnp's queues have no profiling; syclgraph forced it.
    assert!(rows.iter().any(|r| r["timing"] == "ok"), "{rows:?}");
}

#[test]
fn the_exit_code_of_a_sycl_program_is_kept() {
    let cwd = fresh_dir("cli-exit3");
    // long_running gives up after 1 s, printing `gave up`, with exit code 3.
    let out = output_within(
        syclgraph(
            &cwd,
            &[
                os("run"),
                os("-o"),
                os("out"),
                program("long_running").as_os_str(),
                os("1"),
            ],
        ),
        Duration::from_secs(120),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        text(&out.stdout).ends_with("gave up\n"),
        "{}",
        text(&out.stdout)
    );
    let rows = read_csv(&cwd.join("out/kernels.csv"));
    assert!(rows.iter().any(|r| r["kind"] == "kernel"), "{rows:?}");
}

#[test]
fn the_exit_code_of_any_program_is_kept() {
    let cwd = fresh_dir("cli-sh");
    let xpti = venv().join("lib/libxptifw.so");
    let out = syclgraph(
        &cwd,
        &[
            os("run"),
            os("--xpti"),
            xpti.as_os_str(),
            os("sh"),
            os("-c"),
            os("echo out; echo err >&2; exit 3"),
        ],
    )
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert_eq!(text(&out.stdout), "out\n");
    assert!(stderr.starts_with("err\n"), "{stderr}");
    assert!(
        stderr.contains("syclgraph: no output was written"),
        "{stderr}"
    );
}

#[test]
fn stdin_reaches_the_program() {
    let cwd = fresh_dir("cli-stdin");
    // The venv's Python: the runtime is found in its environment.
    let python = venv().join("bin/python");
    let mut child = syclgraph(
        &cwd,
        &[
            os("run"),
            os("-q"),
            python.as_os_str(),
            os("-c"),
            os("import sys; print(sys.stdin.read().upper(), end='')"),
        ],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"line one\nline two\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "LINE ONE\nLINE TWO\n");
    assert_eq!(text(&out.stderr), "", "--quiet prints nothing");
}

/// Waits (at most 60 s) until `kernels.csv` holds a kernel row, so that
/// what a signal leaves behind has one however slow the machine is.
fn wait_for_a_kernel_row(kernels: &Path) {
    for _ in 0..3000 {
        let text = std::fs::read_to_string(kernels).unwrap_or_default();
        if text
            .lines()
            .skip(1)
            .any(|l| l.split(',').nth(1) == Some("kernel"))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} has no kernel row after 60 s", kernels.display());
}

/// Starts `syclgraph run -o out -- long_running 120`, waits for `ready` and
/// a first kernel row in kernels.csv, sends `SIG<signal>` to syclgraph (not to the program), and returns how
/// syclgraph ended, its stderr and the output directory.
fn signal_the_launcher(test: &str, signal: &str) -> (Output, PathBuf) {
    let cwd = fresh_dir(test);
    let launcher = syclgraph(
        &cwd,
        &[
            os("run"),
            os("-o"),
            os("out"),
            program("long_running").as_os_str(),
            os("120"),
        ],
    );
    let mut child = with_default_signals(&launcher)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let kill = |sig: &str| {
        signal_process(pid, sig);
    };
    let stdout = child.stdout.take().unwrap();
    let (lines, got) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line.clone());
            all.push(line);
        }
        all
    });
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut BufReader::new(stderr), &mut text);
        text
    });
    if got.recv_timeout(Duration::from_secs(60)).as_deref() != Ok("ready") {
        kill("KILL");
        let _ = child.wait();
        panic!("no `ready` line; stderr:\n{}", text(&err.join().unwrap()));
    }
    wait_for_a_kernel_row(&cwd.join("out/kernels.csv"));
    kill(signal);
    for _ in 0..1500 {
        if let Some(status) = child.try_wait().unwrap() {
            let stdout = reader.join().unwrap().join("\n").into_bytes();
            let output = Output {
                status,
                stdout,
                stderr: err.join().unwrap(),
            };
            return (output, cwd.join("out"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("KILL");
    let _ = child.wait();
    panic!("syclgraph still running 30 s after SIG{signal}");
}

fn killed_by(signal: &str, number: i32) {
    let (out, dir) = signal_the_launcher(&format!("cli-sig{}", signal.to_lowercase()), signal);
    let stderr = text(&out.stderr);
    // syclgraph was not killed: it exited, with 128 + the program's signal.
    assert_eq!(
        out.status.code(),
        Some(128 + number),
        "{:?}\n{stderr}",
        out.status
    );
    assert!(
        stderr.contains(&format!(
            "the program was killed by signal {number} (SIG{signal})"
        )),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("gave up"));
    assert_eq!(files_in(&stderr), dir);
    let rows = read_csv(&dir.join("kernels.csv"));
    assert!(
        rows.iter()
            .any(|r| r["kind"] == "kernel" && r["timing"] == "ok"),
        "{rows:?}"
    );
}

#[test]
fn sigterm_to_syclgraph_ends_the_program_with_143() {
    killed_by("TERM", 15);
}

#[test]
fn sigint_to_syclgraph_ends_the_program_with_130() {
    killed_by("INT", 2);
}

#[test]
fn sighup_to_syclgraph_ends_the_program_with_129() {
    killed_by("HUP", 1);
}

/// Runs `command` (a shell command line) with a terminal of its own, made by
/// util-linux `script`; returns it and a channel of its output lines, once
/// the first line is `ready`. Writing `\x03` to its stdin is typing Ctrl-C.
///
/// `script` starts `$SHELL -c`, or `/bin/sh -c` without `SHELL` (as in CI).
/// Debian's dash does not exec a lone command there: it would stay in the
/// terminal's foreground group and die of the Ctrl-C itself (130 whatever
/// syclgraph does). `exec` makes the command the terminal's only process.
fn under_a_terminal(cwd: &Path, command: &str) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut cmd = Command::new("script");
    let [env, defaults] = DEFAULT_SIGNALS;
    cmd.args([
        "-qec",
        &format!("exec {env} {defaults} {command}"),
        "/dev/null",
    ])
    .current_dir(cwd);
    for var in CLEARED {
        cmd.env_remove(var);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("util-linux `script` (Debian's bsdutils) runs");
    let stdout = child.stdout.take().unwrap();
    let (lines, got) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line.trim_end_matches('\r').to_string());
        }
    });
    match got.recv_timeout(Duration::from_secs(60)) {
        Ok(line) if line.ends_with("ready") => (child, got),
        other => {
            let _ = child.kill();
            panic!("no `ready` line from {command}: {other:?}");
        }
    }
}

/// Every line until the program and `script` end (bounded), and the status.
fn finish(
    mut child: std::process::Child,
    got: mpsc::Receiver<String>,
) -> (Option<i32>, Vec<String>) {
    let mut lines = Vec::new();
    while let Ok(line) = got.recv_timeout(Duration::from_secs(30)) {
        lines.push(line);
    }
    // The output ends a moment before `script` exits.
    for _ in 0..500 {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), lines);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("still running 10 s after its output ended: {lines:?}");
}

#[test]
fn ctrl_c_at_a_terminal_reaches_the_program_once() {
    let cwd = fresh_dir("cli-ctrl-c");
    // A program with a SIGINT handler: it counts what it gets. It uses no
    // SYCL (the linker dropped libsycl), so the runtime is named.
    let command = format!(
        "'{}' run -q --xpti '{}' '{}'",
        syclgraph_exe().display(),
        venv().join("lib/libxptifw.so").display(),
        program("sigint_count").display()
    );
    let (mut child, got) = under_a_terminal(&cwd, &command);
    std::thread::sleep(Duration::from_millis(300));
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    let (code, lines) = finish(child, got);
    assert_eq!(code, Some(0), "{lines:?}");
    assert!(
        lines.last().is_some_and(|l| l.ends_with("total 1")),
        "the terminal's SIGINT, and no second one from syclgraph: {lines:?}"
    );

    // A SYCL program without a handler dies of it: 130, files written.
    let command = format!(
        "'{}' run -o out '{}' 120",
        syclgraph_exe().display(),
        program("long_running").display()
    );
    let (mut child, got) = under_a_terminal(&cwd, &command);
    wait_for_a_kernel_row(&cwd.join("out/kernels.csv"));
    child.stdin.as_mut().unwrap().write_all(b"\x03").unwrap();
    let (code, lines) = finish(child, got);
    assert_eq!(code, Some(130), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("the program was killed by signal 2 (SIGINT)")),
        "{lines:?}"
    );
    let rows = read_csv(&cwd.join("out/kernels.csv"));
    assert!(rows.iter().any(|r| r["kind"] == "kernel"), "{rows:?}");
}

#[test]
fn a_signal_ignored_at_start_stays_ignored_for_the_program() {
    // As under nohup: SIGHUP ignored when syclgraph starts. The program
    // inherits that, as it would untraced, and survives its own SIGHUP.
    let cwd = fresh_dir("cli-ignored");
    let xpti = venv().join("lib/libxptifw.so");
    let line = format!(
        "trap '' HUP; exec '{}' run -q --xpti '{}' sh -c 'kill -HUP $$; echo alive'",
        syclgraph_exe().display(),
        xpti.display()
    );
    // SIGHUP at its default action whatever this test inherited (CI run
    // under nohup ignores it): the first case ignores it itself.
    let run = |script: &str| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).current_dir(&cwd);
        with_default_signals(&cmd).output().unwrap()
    };
    let ignored = run(&line);
    assert_eq!(ignored.status.code(), Some(0), "{}", text(&ignored.stderr));
    assert_eq!(text(&ignored.stdout), "alive\n");
    let default = run(line.trim_start_matches("trap '' HUP; "));
    assert_eq!(
        default.status.code(),
        Some(129),
        "{}",
        text(&default.stderr)
    );
    assert_eq!(text(&default.stdout), "");
}

#[test]
fn no_runtime_found_is_one_line_and_runs_nothing() {
    let cwd = fresh_dir("cli-noruntime");
    let out = syclgraph(&cwd, &[os("run"), os("sh"), os("-c"), os("echo ran")])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(text(&out.stdout), "", "the program did not run");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with(
            "syclgraph: no DPC++ runtime (libxptifw.so) found: looked at the libraries "
        ),
        "{stderr}"
    );
    assert!(lines[0].contains("CMPLR_ROOT (not set)"), "{stderr}");
    assert!(lines[0].ends_with("; name it with --xpti PATH"), "{stderr}");

    let missing = syclgraph(&cwd, &[os("run"), os("./no-such-program")])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
    assert_eq!(
        text(&missing.stderr),
        "syclgraph: ./no-such-program: no such file or directory\n"
    );
}

#[test]
fn report_on_bad_directories_says_why_in_one_line_each() {
    let cwd = fresh_dir("cli-report-bad");
    std::fs::create_dir_all(cwd.join("empty")).unwrap();
    let out = syclgraph(&cwd, &[os("report"), os("nope"), os("empty")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "syclgraph: nope: cannot read it (no such file or directory)\n\
         syclgraph: empty: no summary.csv in it (not a syclgraph output directory, \
         or its program ended before the first snapshot)\n"
    );
}

#[test]
fn help_and_version() {
    let cwd = fresh_dir("cli-help");
    let help = syclgraph(&cwd, &[os("--help")]).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let help = text(&help.stdout);
    for word in ["run", "report", "syclgraph run ./my-app"] {
        assert!(help.contains(word), "{help}");
    }
    let run_help = text(
        &syclgraph(&cwd, &[os("run"), os("--help")])
            .output()
            .unwrap()
            .stdout,
    );
    for option in [
        "--output <DIR>",
        "--no-device-timing",
        "--no-force-profiling",
        "--max-instances <N>",
        "--quiet",
        "--xpti <PATH>",
        "Exit status:",
    ] {
        assert!(run_help.contains(option), "{run_help}");
    }
    let version = syclgraph(&cwd, &[os("--version")]).output().unwrap();
    assert_eq!(
        text(&version.stdout),
        format!("syclgraph {}\n", env!("CARGO_PKG_VERSION"))
    );
    let bad = syclgraph(&cwd, &[os("run")]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// `--start-paused` reaches the subscriber: nothing is recorded, every
/// submission is counted, and the program runs as untraced.
#[test]
fn start_paused_records_nothing_and_counts_the_submissions() {
    let cwd = fresh_dir("cli-start-paused");
    let dir = cwd.join("out");
    let out = syclgraph(
        &cwd,
        &[
            os("run"),
            os("--start-paused"),
            os("-o"),
            dir.as_os_str(),
            os("--"),
            program("pipeline").as_os_str(),
        ],
    )
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let rows = read_csv(&dir.join("kernels.csv"));
    assert!(rows.is_empty(), "{rows:?}");
    assert!(stderr.contains("not recorded: "), "{stderr}");
}
