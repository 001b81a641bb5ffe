//! Helpers shared by the integration tests: find the runtime and the built
//! subscriber, build the SYCL test programs, run them with and without
//! tracing, and read what syclgraph wrote.
//!
//! The tests run real programs on the real DPC++ runtime from the project's
//! venv (made by `scripts/setup.sh`). `scripts/test.sh` builds
//! `target/release/libsyclgraph.so` before `cargo test`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use graphviz_rust::dot_structures as dot;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The venv holding the DPC++ runtime.
pub fn venv() -> PathBuf {
    let venv = std::env::var_os("SYCLGRAPH_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv"));
    assert!(
        venv.join("lib/libsycl.so.9").exists(),
        "no DPC++ runtime in {}: run scripts/setup.sh",
        venv.display()
    );
    venv
}

/// The subscriber under test, `target/release/libsyclgraph.so`.
pub fn subscriber() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let lib = target.join("release/libsyclgraph.so");
    assert!(
        lib.exists(),
        "{} is missing: run scripts/test.sh, which builds it before the tests",
        lib.display()
    );
    lib
}

/// The launcher under test, `target/release/syclgraph` (built with the
/// subscriber by `cargo build --release`).
pub fn syclgraph_exe() -> PathBuf {
    let exe = subscriber().with_file_name("syclgraph");
    assert!(
        exe.exists(),
        "{} is missing: run scripts/test.sh, which builds it before the tests",
        exe.display()
    );
    exe
}

/// The compiled test program `name` (from `examples/` or `tests/programs/`),
/// built once per test process by `scripts/build-programs.sh`.
pub fn program(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new("bash")
            .arg(repo_root().join("scripts/build-programs.sh"))
            .status()
            .expect("run scripts/build-programs.sh");
        assert!(status.success(), "building the test programs failed");
    });
    let path = repo_root().join("build/programs").join(name);
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// A command with the runtime's environment (library path, OpenCL CPU device).
pub fn runtime_command(program: &Path) -> Command {
    let venv = venv();
    let mut cmd = Command::new(program);
    let lib = venv.join("lib");
    let ld = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) => {
            let mut paths = vec![lib];
            paths.extend(std::env::split_paths(&old));
            std::env::join_paths(paths).expect("joinable paths")
        }
        None => lib.into_os_string(),
    };
    cmd.env("LD_LIBRARY_PATH", ld)
        .env("OCL_ICD_FILENAMES", venv.join("lib/libintelocl.so"))
        .env_remove("XPTI_TRACE_ENABLE")
        .env_remove("XPTI_SUBSCRIBERS")
        .env_remove("XPTI_FRAMEWORK_DISPATCHER");
    cmd
}

/// `libze_loader.so.1` built from the shim (tests/programs/shims/
/// ze_loader_padding.c: Debian's 1.8.12 loader lacks what the 2026.2
/// adapter needs), in a directory of its own, once per test process.
fn loader_shim_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = fresh_dir("ze-loader-shim");
        let built = Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(dir.join("libze_loader.so.1"))
            .arg(repo_root().join("tests/programs/shims/ze_loader_padding.c"))
            .args(["-ldl", "-lpthread"])
            .status()
            .expect("run cc");
        assert!(built.success(), "building the loader shim failed");
        dir
    })
}

/// `target/debug/libze_test_driver.so`, which `cargo build -p ze-test-driver`
/// makes (scripts/test.sh does before the tests).
pub fn test_driver() -> PathBuf {
    let path = repo_root().join("target/debug/libze_test_driver.so");
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p ze-test-driver`",
        path.display()
    );
    path
}

/// Points `cmd` (a [`runtime_command`]) at the runtime's Level Zero adapter
/// over our test driver, loaded by the real loader: the loader shim first
/// in the library path, the GPU selector, `ZE_ENABLE_ALT_DRIVERS`. The
/// driver's script (`ZE_TEST_DRIVER_SCRIPT`) is the caller's.
pub fn on_level_zero_test_driver(cmd: &mut Command) {
    let mut paths = vec![loader_shim_dir().to_path_buf(), venv().join("lib")];
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    cmd.env(
        "LD_LIBRARY_PATH",
        std::env::join_paths(paths).expect("paths"),
    )
    .env("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu")
    .env("ZE_ENABLE_ALT_DRIVERS", test_driver());
}

/// The venv's Python, with the runtime's environment.
pub fn python_command(script: &Path) -> Command {
    let mut cmd = runtime_command(&venv().join("bin/python"));
    cmd.arg(script);
    cmd
}

/// Adds the three XPTI variables that load `subscriber` (nothing else).
pub fn with_xpti(cmd: &mut Command, subscriber: &Path) {
    cmd.env("XPTI_TRACE_ENABLE", "1")
        .env("XPTI_FRAMEWORK_DISPATCHER", venv().join("lib/libxptifw.so"))
        .env("XPTI_SUBSCRIBERS", subscriber);
}

/// A fresh, empty output directory for one test.
pub fn fresh_dir(test: &str) -> PathBuf {
    // Tests of one file run in one process, in parallel, and may share a
    // name (two tests tracing the same program): number every directory.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = repo_root()
        .join("target/test-output")
        .join(format!("{test}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the output dir");
    dir
}

/// What a traced run gave.
pub struct Traced {
    /// The process output.
    pub output: Output,
    /// Where syclgraph wrote.
    pub dir: PathBuf,
}

impl Traced {
    /// The traced program's stdout as text.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    /// The traced program's stderr as text.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// graph.dot, parsed.
    pub fn graph(&self) -> DotGraph {
        DotGraph::read(&self.dir.join("graph.dot"))
    }

    /// A CSV file of the output directory as rows of column → value.
    pub fn csv(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        read_csv(&self.dir.join(name))
    }
}

/// The test program `name` run untraced and traced with the default settings
/// ([`run_both`]: same behaviour, outputs checked), once per test process:
/// the tests that only read such a run's outputs share it rather than each
/// running the same program again. Its directory is never written after the
/// run. A failed run panics in the test that made it, and the next test
/// that asks runs it again.
pub fn shared_run(name: &'static str) -> &'static Traced {
    type Runs = BTreeMap<&'static str, &'static OnceLock<Traced>>;
    static RUNS: Mutex<Runs> = Mutex::new(BTreeMap::new());
    let run: &'static OnceLock<Traced> = RUNS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(name)
        .or_insert_with(|| Box::leak(Box::default()));
    run.get_or_init(|| run_both(name, || runtime_command(&program(name)), &[]))
}

/// The dpnp workload (`tests/programs/dpnp_workload.py`) run untraced and
/// traced with the default settings, once per test process, as
/// [`shared_run`] does for the C++ programs.
pub fn shared_dpnp_run() -> &'static Traced {
    static RUN: OnceLock<Traced> = OnceLock::new();
    RUN.get_or_init(|| {
        let script = repo_root().join("tests/programs/dpnp_workload.py");
        run_both("dpnp", || python_command(&script), &[])
    })
}

/// The demo (`pipeline`) as [`shared_run`] gives it.
pub fn pipeline_run() -> &'static Traced {
    shared_run("pipeline")
}

/// Runs `cmd` untraced, then traced with syclgraph writing to a fresh
/// directory; asserts the program behaved the same (stdout, exit code).
pub fn run_both(test: &str, make: impl Fn() -> Command, env: &[(&str, &str)]) -> Traced {
    let untraced = make().output().expect("run untraced");
    assert_untraced_succeeded(&untraced);
    let traced = run_traced(test, make(), env);
    assert_same_behaviour(&untraced, &traced);
    check_outputs(&traced.dir);
    traced
}

/// The untraced run must succeed: it is the reference.
fn assert_untraced_succeeded(untraced: &Output) {
    assert!(
        untraced.status.success(),
        "untraced run failed: {}",
        String::from_utf8_lossy(&untraced.stderr)
    );
}

/// Tracing changed nothing the program shows: exit code and stdout (less
/// measured durations) are the untraced run's.
fn assert_same_behaviour(untraced: &Output, traced: &Traced) {
    assert_eq!(
        traced.output.status.code(),
        untraced.status.code(),
        "exit code changed under tracing; stderr:\n{}",
        traced.stderr()
    );
    assert_eq!(
        strip_profiling(&traced.stdout()),
        strip_profiling(&String::from_utf8_lossy(&untraced.stdout)),
        "stdout changed under tracing; stderr:\n{}",
        traced.stderr()
    );
}

/// Runs `cmd` with syclgraph loaded, writing to a fresh directory.
pub fn run_traced(test: &str, mut cmd: Command, env: &[(&str, &str)]) -> Traced {
    let dir = fresh_dir(test);
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().expect("run traced");
    Traced { output, dir }
}

/// Lines `profiling <label> <instance> <ns>` carry measured durations and
/// lines `clock <label> <instance> <ns>...` the program's own clock, which
/// differ between runs; everything else must be identical.
pub fn strip_profiling(stdout: &str) -> String {
    stdout
        .lines()
        .map(|l| {
            if l.starts_with("profiling ") {
                l.rsplit_once(' ').map(|(head, _)| head).unwrap_or(l)
            } else if l.starts_with("clock ") {
                let end = l.match_indices(' ').nth(2).map_or(l.len(), |(i, _)| i);
                &l[..end]
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The application's own measurements: (label, instance) → duration ns.
pub fn profiling_lines(stdout: &str) -> BTreeMap<(String, u64), u64> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next()? == "profiling").then_some(())?;
            let label = parts.next()?.to_owned();
            let instance = parts.next()?.parse().ok()?;
            let ns = parts.next()?.parse().ok()?;
            Some(((label, instance), ns))
        })
        .collect()
}

/// Lines `<word> <label> <instance> <number>...` a program prints (its own
/// clock, `clock`; its own device times, `times`): (label, instance) →
/// the numbers.
pub fn labelled_numbers(stdout: &str, word: &str) -> BTreeMap<(String, u64), Vec<u64>> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next()? == word).then_some(())?;
            let label = parts.next()?.to_owned();
            let instance = parts.next()?.parse().ok()?;
            let ns = parts
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u64>>>()?;
            Some(((label, instance), ns))
        })
        .collect()
}

/// The program's own clock: lines `clock <label> <instance> <ns>...`.
pub fn clock_lines(stdout: &str) -> BTreeMap<(String, u64), Vec<u64>> {
    labelled_numbers(stdout, "clock")
}

/// Reads a CSV file with a header into rows.
pub fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader =
        csv::Reader::from_path(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let headers = reader.headers().expect("csv header").clone();
    reader
        .records()
        .map(|r| {
            let r = r.expect("csv row");
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// A node or edge of graph.dot: its attributes, unquoted.
pub type Attrs = BTreeMap<String, String>;

/// graph.dot as plain maps.
#[derive(Debug)]
pub struct DotGraph {
    /// Node id → attributes.
    pub nodes: BTreeMap<String, Attrs>,
    /// (from, to, attributes).
    pub edges: Vec<(String, String, Attrs)>,
    /// Subgraph id → the ids of the nodes named in it (also in `nodes`
    /// when declared there with attributes).
    pub subgraphs: BTreeMap<String, Vec<String>>,
}

impl DotGraph {
    /// Parses a DOT file with graphviz-rust's parser.
    pub fn read(path: &Path) -> DotGraph {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let graph = graphviz_rust::parse(&text)
            .unwrap_or_else(|e| panic!("{} is not valid DOT: {e}", path.display()));
        let stmts = match graph {
            dot::Graph::Graph { stmts, .. } | dot::Graph::DiGraph { stmts, .. } => stmts,
        };
        let mut out = DotGraph {
            nodes: BTreeMap::new(),
            edges: Vec::new(),
            subgraphs: BTreeMap::new(),
        };
        out.add(stmts, None);
        out
    }

    /// Adds the statements of the graph or of subgraph `within`.
    fn add(&mut self, stmts: Vec<dot::Stmt>, within: Option<&str>) {
        for stmt in stmts {
            match stmt {
                dot::Stmt::Node(n) => {
                    let id = id_text(&n.id.0);
                    if let Some(sub) = within {
                        let entry = self.subgraphs.entry(sub.to_owned()).or_default();
                        entry.push(id.clone());
                    }
                    // A bare mention in a subgraph adds no node.
                    if within.is_none() || !n.attributes.is_empty() {
                        self.nodes.insert(id, attrs(&n.attributes));
                    }
                }
                dot::Stmt::Edge(e) => {
                    if let dot::EdgeTy::Pair(dot::Vertex::N(a), dot::Vertex::N(b)) = &e.ty {
                        let (a, b) = (id_text(&a.0), id_text(&b.0));
                        self.edges.push((a, b, attrs(&e.attributes)));
                    }
                }
                dot::Stmt::Subgraph(sub) => {
                    let id = id_text(&sub.id);
                    self.add(sub.stmts, Some(&id));
                }
                _ => {}
            }
        }
    }

    /// Nodes whose attribute `key` equals `value`.
    pub fn nodes_where(&self, key: &str, value: &str) -> Vec<(&String, &Attrs)> {
        self.nodes
            .iter()
            .filter(|(_, a)| a.get(key).map(String::as_str) == Some(value))
            .collect()
    }

    /// Edges from a node matching `from` to a node matching `to`.
    pub fn edges_between(
        &self,
        from: impl Fn(&Attrs) -> bool,
        to: impl Fn(&Attrs) -> bool,
    ) -> Vec<&Attrs> {
        self.edges
            .iter()
            .filter(|(a, b, _)| {
                self.nodes.get(a).is_some_and(&from) && self.nodes.get(b).is_some_and(&to)
            })
            .map(|(_, _, attrs)| attrs)
            .collect()
    }
}

fn id_text(id: &dot::Id) -> String {
    match id {
        dot::Id::Html(s) | dot::Id::Escaped(s) | dot::Id::Plain(s) | dot::Id::Anonymous(s) => {
            unquote(s)
        }
    }
}

fn unquote(s: &str) -> String {
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_owned(),
    }
}

fn attrs(list: &[dot::Attribute]) -> Attrs {
    list.iter()
        .map(|dot::Attribute(k, v)| (id_text(k), id_text(v)))
        .collect()
}

/// The command nodes of `tests/programs/buffers.cpp`, by `@node` tag, with
/// their kind: each submitted once (the same on every runtime version).
pub const BUFFERS_NODES: [(&str, &str); 8] = [
    ("write_iota", "kernel"),
    ("fill_b", "fill"),
    ("axpy_rw", "kernel"),
    ("square_discard", "kernel"),
    ("square_no_init", "kernel"),
    ("copy_c_to_a", "copy"),
    ("copy_host_to_b", "copy"),
    ("copy_d_to_host", "copy"),
];

/// The line of `// @node <label>` (or `// @wait <label>`) in a program's
/// source: where the test expects syclgraph to place that command.
pub fn tag_line(source: &str, label: &str) -> u32 {
    let path = repo_root().join(source);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let wanted = [format!("@node {label}"), format!("@wait {label}")];
    let found: Vec<u32> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            wanted.iter().any(|w| {
                l.split_once(w.as_str())
                    .is_some_and(|(_, rest)| rest.trim().is_empty())
            })
        })
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(found.len(), 1, "tag {label} in {source}: {found:?}");
    found[0]
}

/// The single node of graph.dot at `file:line`, with its DOT id.
pub fn node_at<'g>(graph: &'g DotGraph, file: &str, line: u32) -> (&'g String, &'g Attrs) {
    let found: Vec<_> = graph
        .nodes
        .iter()
        .filter(|(_, a)| {
            a.get("file").is_some_and(|f| f.ends_with(file))
                && a.get("line").map(String::as_str) == Some(&line.to_string())
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one node at {file}:{line}, found {found:?}"
    );
    found[0]
}

/// Rows of kernels.csv at `line` of a source file, in instance order.
pub fn rows_at<'r>(
    rows: &'r [BTreeMap<String, String>],
    file: &str,
    line: u32,
) -> Vec<&'r BTreeMap<String, String>> {
    let mut found: Vec<_> = rows
        .iter()
        .filter(|r| r["source_file"].ends_with(file) && r["source_line"] == line.to_string())
        .collect();
    found.sort_by_key(|r| r["instance"].parse::<u64>().unwrap_or(0));
    found
}

impl DotGraph {
    /// True when a chain of edges leads from node `from` to node `to`.
    pub fn reaches(&self, from: &str, to: &str) -> bool {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(n) = stack.pop() {
            if n == to && n != from {
                return true;
            }
            for (a, b, _) in &self.edges {
                if *a == n && seen.insert(b.clone()) {
                    if b == to {
                        return true;
                    }
                    stack.push(b.clone());
                }
            }
        }
        false
    }
}

/// Runs `cmd` (in its own process group) to completion, capturing stdout and
/// stderr; after `limit`, kills the whole group and panics with what the
/// program had printed so far. For programs that may hang.
pub fn output_within(cmd: Command, limit: std::time::Duration) -> Output {
    try_output_within(cmd, limit).unwrap_or_else(|e| panic!("{e}"))
}

/// [`output_within`] that returns the failure instead of panicking: after
/// `limit`, the threads' backtraces (gdb, when installed), then the whole
/// group is killed and the error holds what the program had printed.
pub fn try_output_within(mut cmd: Command, limit: std::time::Duration) -> Result<Output, String> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;

    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot spawn {cmd:?}: {e}"))?;
    let pid = child.id();
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("stdout")));
    let err = reader(Box::new(child.stderr.take().expect("stderr")));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the program") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let Some(status) = status else {
        let backtrace = backtraces(pid);
        signal_group(pid, "KILL");
        let _ = child.wait();
        let stdout = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
        let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
        return Err(format!(
            "still running after {limit:?}; killed.\nstdout:\n{stdout}\nstderr:\n{stderr}\nbacktraces:\n{backtrace}"
        ));
    };
    // Pipes may stay open in a descendant the program left behind: then end
    // that group (ours, made for this run) so the readers finish.
    let grace = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !(out.is_finished() && err.is_finished()) {
        if std::time::Instant::now() > grace {
            signal_group(pid, "KILL");
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Every thread's backtrace of process `pid` by `gdb -batch` (bounded to
/// 60 s), the frames only, or why there is none.
fn backtraces(pid: u32) -> String {
    let mut cmd = Command::new("timeout");
    cmd.args(["60", "gdb", "-p", &pid.to_string(), "-batch"])
        .args(["-ex", "thread apply all bt 30"])
        .stdin(std::process::Stdio::null());
    match cmd.output() {
        Ok(out) => String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("Thread ") || l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("(no gdb: {e})"),
    }
}

/// The signals the tests send, set back to their default action in the
/// processes they start: a shell starts background jobs with SIGINT and
/// SIGQUIT ignored, `nohup` ignores SIGHUP, and an ignored signal stays
/// ignored through `exec` (syclgraph keeps it so, as it should). `env`
/// (GNU coreutils >= 8.31) is put before the program.
pub const DEFAULT_SIGNALS: [&str; 2] = ["env", "--default-signal=HUP,INT,QUIT,TERM"];

/// `cmd` started through [`DEFAULT_SIGNALS`]: the same program, arguments,
/// environment and directory, with the signals the tests send at their
/// default action whatever this test process inherited.
pub fn with_default_signals(cmd: &Command) -> Command {
    let mut wrapped = Command::new(DEFAULT_SIGNALS[0]);
    wrapped
        .arg(DEFAULT_SIGNALS[1])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// `tests/programs/long_running` traced into `dir` (it gives up by itself
/// after 120 s), once it printed its `ready` line: to be killed by a test.
pub fn long_running_until_ready(dir: &Path) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut cmd = runtime_command(&program("long_running"));
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", dir)
        .arg("120")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start long_running");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().and_then(Result::ok);
    if first.as_deref() != Some("ready") {
        let _ = child.kill();
        let _ = child.wait();
        panic!("long_running printed no `ready` line: {first:?}");
    }
    child
}

/// Sends `SIG<signal>` to the process `pid` with `kill`; whether it was
/// sent (false: no such process, or no `kill`).
pub fn signal_process(pid: u32, signal: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

/// Sends `SIG<signal>` to the process group `pgid` (made by
/// [`output_within`]); errors (no such group) are ignored.
pub fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stderr(std::process::Stdio::null())
        .status();
}

/// The stderr lines syclgraph printed (they start with `syclgraph:`).
pub fn syclgraph_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("syclgraph:"))
        .collect()
}

/// [`run_traced`] bounded by `limit` (see [`output_within`]).
pub fn run_traced_within(
    test: &str,
    mut cmd: Command,
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> Traced {
    let dir = fresh_dir(test);
    with_xpti(&mut cmd, &subscriber());
    cmd.env("SYCLGRAPH_OUTPUT_DIR", &dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = output_within(cmd, limit);
    Traced { output, dir }
}

/// [`run_both`] with each run bounded by `limit` (see [`output_within`]).
pub fn run_both_within(
    test: &str,
    make: impl Fn() -> Command,
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> Traced {
    let untraced = output_within(make(), limit);
    assert_untraced_succeeded(&untraced);
    let traced = run_traced_within(test, make(), env, limit);
    assert_same_behaviour(&untraced, &traced);
    check_outputs(&traced.dir);
    traced
}

/// Every check a finished run's outputs must pass, whatever the program:
/// [`check_dot_files`] and [`check_joins`]. [`run_both`] and
/// [`run_both_within`] call it on every run.
pub fn check_outputs(dir: &Path) {
    check_dot_files(dir);
    check_joins(dir);
}

/// Files larger than this are parsed by Graphviz (`gc`) but not laid out,
/// and not loaded in pydot: laying out and pyparsing a 1 MB instances.dot
/// (3,200 instances) take minutes of CPU, and the writer that made it is the
/// one that made the small files checked in full.
pub const DOT_FULL_CHECK_BYTES: u64 = 256 * 1024;

/// Every `*.dot` file in `dir` renders with Graphviz's own `dot` (exit 0,
/// nothing on stderr: no syntax error, no warning) and loads in pydot (one
/// graph) and networkx, which see as many nodes and edges as graphviz-rust's
/// parser. A file over [`DOT_FULL_CHECK_BYTES`] is instead read by Graphviz's
/// parser (`gc`: no syntax error, nothing on stderr), which sees as many nodes
/// and edges as graphviz-rust's.
/// Returns how many DOT files there were.
pub fn check_dot_files(dir: &Path) -> usize {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "dot"))
        .collect();
    files.sort();
    let total = files.len();
    let (files, large): (Vec<PathBuf>, Vec<PathBuf>) = files
        .into_iter()
        .partition(|f| std::fs::metadata(f).map_or(0, |m| m.len()) <= DOT_FULL_CHECK_BYTES);
    for file in &large {
        let out = Command::new("gc")
            .arg("-ne")
            .arg(file)
            .output()
            .expect("graphviz `gc` is installed by scripts/setup.sh");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "gc -n {}: {}{}",
            file.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // `gc -ne` prints "<nodes> <edges> <graph name> (<file>)".
        let counts = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut words = counts.split_whitespace();
        let mut number = || -> usize { words.next().and_then(|w| w.parse().ok()).unwrap() };
        let (nodes, edges) = (number(), number());
        let parsed = DotGraph::read(file);
        assert_eq!(
            (nodes, edges),
            (parsed.nodes.len(), parsed.edges.len()),
            "Graphviz and graphviz-rust disagree on {}",
            file.display()
        );
    }
    for file in &files {
        let out = Command::new("dot")
            .arg("-Tsvg")
            .arg(file)
            .arg("-o")
            .arg("/dev/null")
            .output()
            .expect("graphviz `dot` is installed by scripts/setup.sh");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "dot -Tsvg {}: {}{}",
            file.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if files.is_empty() {
        return total;
    }
    let check = r#"
import sys, pydot, networkx
for path in sys.argv[1:]:
    graphs = pydot.graph_from_dot_file(path)
    assert graphs is not None and len(graphs) == 1, path
    g = networkx.drawing.nx_pydot.read_dot(path)
    print(path, g.number_of_nodes(), g.number_of_edges())
"#;
    let out = python_command_c(check).args(&files).output().unwrap();
    assert!(
        out.status.success(),
        "pydot/networkx could not load {files:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let counts = String::from_utf8_lossy(&out.stdout).into_owned();
    for (file, line) in files.iter().zip(counts.lines()) {
        let parsed = DotGraph::read(file);
        let mut parts = line.rsplitn(3, ' ');
        let edges: usize = parts.next().unwrap().parse().unwrap();
        let nodes: usize = parts.next().unwrap().parse().unwrap();
        assert_eq!(
            (nodes, edges),
            (parsed.nodes.len(), parsed.edges.len()),
            "networkx and graphviz-rust disagree on {}",
            file.display()
        );
    }
    total
}

/// The venv's Python running `code` (`python -c`), with the runtime's
/// environment.
pub fn python_command_c(code: &str) -> Command {
    let mut cmd = runtime_command(&venv().join("bin/python"));
    cmd.arg("-c").arg(code);
    cmd
}

/// The node id of graph.dot (`n<id>`) that an instance id of instances.dot
/// (`i<id>_<instance>`) belongs to, and the instance.
pub fn split_instance_id(id: &str) -> Option<(String, u64)> {
    let (node, instance) = id.strip_prefix('i')?.split_once('_')?;
    Some((format!("n{node}"), instance.parse().ok()?))
}

/// The one key joins every file: each `kernels.csv` row's `node_id` names
/// one graph.dot node of the same kind and operation, and (`node_id`,
/// `instance`) is one row only and, unless instances.dot was cut, one
/// instances.dot node whose `node_id` and `instance` say the same; each
/// `summary.csv` row's `node_id` names one device command node, once, and
/// its `count` is that node's number of kernels.csv rows.
pub fn check_joins(dir: &Path) {
    let graph = DotGraph::read(&dir.join("graph.dot"));
    let rows = read_csv(&dir.join("kernels.csv"));
    let instances_path = dir.join("instances.dot");
    let instances = instances_path
        .exists()
        .then(|| DotGraph::read(&instances_path));
    let cut = instances_path.exists()
        && std::fs::read_to_string(&instances_path)
            .unwrap()
            .contains("cut=\"true\"");
    let mut seen = std::collections::BTreeSet::new();
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    for row in &rows {
        let id = &row["node_id"];
        let node = graph
            .nodes
            .get(id)
            .unwrap_or_else(|| panic!("kernels.csv row {row:?}: no node {id} in graph.dot"));
        assert_eq!(node["kind"], row["kind"], "{row:?} vs {node:?}");
        assert_eq!(node["operation"], row["name"], "{row:?} vs {node:?}");
        let instance: u64 = row["instance"].parse().expect("instance number");
        assert!(
            seen.insert((id.clone(), instance)),
            "two kernels.csv rows for {id} #{instance}"
        );
        *per_node.entry(id.clone()).or_default() += 1;
        if let (Some(instances), false) = (&instances, cut) {
            let key = format!("i{}_{instance}", &id[1..]);
            let node = instances
                .nodes
                .get(&key)
                .unwrap_or_else(|| panic!("kernels.csv row {row:?}: no {key} in instances.dot"));
            assert_eq!(node["node_id"], *id, "{key}");
            assert_eq!(node["instance"], instance.to_string(), "{key}");
        }
    }
    if let Some(instances) = &instances {
        for (key, attrs) in &instances.nodes {
            let (node, instance) = split_instance_id(key).expect("i<node>_<instance>");
            assert_eq!(attrs["node_id"], node, "{key}");
            assert_eq!(attrs["instance"], instance.to_string(), "{key}");
            assert!(
                graph.nodes.contains_key(&node),
                "{key}: no {node} in graph.dot"
            );
        }
    }
    let summary = read_csv(&dir.join("summary.csv"));
    let mut summarised = std::collections::BTreeSet::new();
    for row in &summary {
        let id = &row["node_id"];
        let node = graph
            .nodes
            .get(id)
            .unwrap_or_else(|| panic!("summary.csv row {row:?}: no node {id} in graph.dot"));
        assert!(summarised.insert(id.clone()), "summary.csv: {id} twice");
        assert_eq!(node["kind"], row["kind"], "{row:?} vs {node:?}");
        assert_eq!(node["operation"], row["name"], "{row:?} vs {node:?}");
        assert_eq!(
            row["count"],
            per_node.get(id).copied().unwrap_or(0).to_string(),
            "summary.csv count of {id} against its kernels.csv rows"
        );
    }
    assert_eq!(
        summarised,
        per_node.keys().cloned().collect(),
        "nodes with kernels.csv rows and summary.csv rows"
    );
}

/// Runs `tests/scripts/check_pftrace.py` (Perfetto's own protos) on the
/// `trace.pftrace` of `dir`; panics with its report unless it passes.
/// Returns its summary line.
pub fn check_pftrace(dir: &Path, partial: bool) -> String {
    let mut cmd = Command::new(venv().join("bin/python"));
    cmd.arg(repo_root().join("tests/scripts/check_pftrace.py"))
        .arg(dir);
    if partial {
        cmd.arg("--partial");
    }
    let out = cmd.output().expect("run check_pftrace.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "check_pftrace.py {}:\n{text}",
        dir.display()
    );
    text
}

/// One busy-loop process per core, killed on drop: the loaded machine
/// every rank of an MPI job starts on. A loop also ends by itself once the
/// test process is gone (a killed test runs no drop).
pub struct Load(Vec<std::process::Child>);

impl Load {
    /// Starts one busy loop per core.
    pub fn every_core() -> Load {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let test_process = std::process::id().to_string();
        Load(
            (0..cores)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args([
                            "-c",
                            "while kill -0 \"$1\" 2>/dev/null; do :; done",
                            "busy-loop",
                            &test_process,
                        ])
                        .stdin(std::process::Stdio::null())
                        .spawn()
                        .expect("start a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Variables that would do syclgraph's work for it in an MPI job: none
/// reaches a command made by [`mpi_command`].
pub const MPI_CLEARED: [&str; 8] = [
    "XPTI_TRACE_ENABLE",
    "XPTI_FRAMEWORK_DISPATCHER",
    "XPTI_SUBSCRIBERS",
    "LD_LIBRARY_PATH",
    "OCL_ICD_FILENAMES",
    "SYCLGRAPH_OUTPUT_DIR",
    "SYCLGRAPH_QUIET",
    "SYCLGRAPH_RANKS",
];

/// `mpiexec` of the venv (the `mpich` wheel).
pub fn mpiexec() -> PathBuf {
    let exe = venv().join("bin/mpiexec");
    assert!(
        exe.exists(),
        "{} is missing: run scripts/setup.sh (it installs the mpich wheel)",
        exe.display()
    );
    exe
}

/// A command in `cwd` with the venv's `bin` first on PATH (as after
/// activating it) and [`MPI_CLEARED`] removed: how a user starts a job.
pub fn mpi_command(program: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(program);
    let mut path = std::ffi::OsString::from(venv().join("bin"));
    if let Some(old) = std::env::var_os("PATH") {
        path.push(":");
        path.push(old);
    }
    cmd.current_dir(cwd).env("PATH", path);
    for var in MPI_CLEARED {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `tests/scripts/check_merged_pftrace.py` on the merged timeline
/// `merged` with the rank directories it should hold, in order; panics
/// with its report unless it passes. Returns its JSON line: per rank,
/// the process name, pid, labels, and slices merged and in its own trace.
pub fn check_merged_pftrace(merged: &Path, rank_dirs: &[PathBuf]) -> String {
    let out = Command::new(venv().join("bin/python"))
        .arg(repo_root().join("tests/scripts/check_merged_pftrace.py"))
        .arg(merged)
        .args(rank_dirs)
        .output()
        .expect("run check_merged_pftrace.py");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "check_merged_pftrace.py {}:\n{text}{}",
        merged.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines().next().unwrap_or_default().to_string()
}
