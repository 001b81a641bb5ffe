//! After the run: which output directories the program's processes wrote,
//! and the short block on stderr that says where they are and how to open
//! them.
//!
//! The subscriber writes to `SYCLGRAPH_OUTPUT_DIR`, else to
//! `./syclgraph-<pid>/`; a process that finds the directory in use by
//! another live traced process writes to `<dir>/pid-<pid>/` instead. A
//! directory counts as written by this run when one of its files changed
//! after the program was started.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use crate::launch::Ended;
use crate::program;

/// Files the subscriber writes; any of them marks an output directory.
const OUTPUT_FILES: [&str; 4] = ["kernels.csv", "summary.csv", "graph.dot", "instances.dot"];

/// File times come from the kernel's coarse clock, which can lag the
/// precise one by a clock tick: a file written just after the program was
/// started may look a little older.
const MTIME_SLACK: Duration = Duration::from_millis(100);

/// Longest time `dot` may take to render graph.svg.
const DOT_TIME_LIMIT: Duration = Duration::from_secs(20);

/// The output directories of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The directory of the program's own process, if it wrote one.
    pub main: Option<PathBuf>,
    /// Directories other processes of the run wrote (children of a script).
    pub others: Vec<PathBuf>,
}

/// Finds the directories written since `since`: under `base` (the output
/// directory asked for) or, without one, `syclgraph-<pid>` in `cwd`;
/// `child` is the program's pid.
pub fn find(base: Option<&Path>, cwd: &Path, child: u32, since: SystemTime) -> Written {
    let since = since.checked_sub(MTIME_SLACK).unwrap_or(since);
    let fresh = |dir: &Path| written_since(dir, since);
    let mut out = Written::default();
    match base {
        Some(base) => {
            let own = base.join(format!("pid-{child}"));
            if fresh(&own) {
                out.main = Some(own.clone());
            } else if fresh(base) {
                out.main = Some(base.to_path_buf());
            }
            if out.main.as_deref() != Some(base) && fresh(base) {
                out.others.push(base.to_path_buf());
            }
            out.others
                .extend(subdirs(base, "pid-").filter(|d| *d != own && fresh(d)));
        }
        None => {
            let own = cwd.join(format!("syclgraph-{child}"));
            if fresh(&own) {
                out.main = Some(own.clone());
            }
            out.others
                .extend(subdirs(cwd, "syclgraph-").filter(|d| *d != own && fresh(d)));
        }
    }
    out.others.sort();
    out
}

/// Subdirectories of `dir` named `<prefix><number>`.
fn subdirs<'a>(dir: &Path, prefix: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(move |e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(prefix))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path())
        .filter(|p| p.is_dir())
}

/// True when one of the output files in `dir` changed at or after `since`.
fn written_since(dir: &Path, since: SystemTime) -> bool {
    OUTPUT_FILES.iter().any(|f| {
        std::fs::metadata(dir.join(f))
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since)
    })
}

/// How the closing block names this command in the commands it prints, so
/// that they run as printed in the shell `syclgraph run` was started from
/// (its `PATH` is `path_var`): `syclgraph` when that name on `PATH` is this
/// very file (`exe`, symbolic links resolved), else the path it was started
/// by (`started`, its `argv[0]`: `target/release/syclgraph`), or its own
/// path when that was a bare name.
pub fn own_command(started: &OsStr, exe: &Path, path_var: Option<&OsStr>) -> String {
    let real = |p: &Path| p.canonicalize().ok();
    let exe = real(exe).unwrap_or_else(|| exe.to_path_buf());
    if program::on_path("syclgraph".as_ref(), path_var).and_then(|p| real(&p)) == Some(exe.clone())
    {
        return "syclgraph".to_owned();
    }
    if started.as_encoded_bytes().contains(&b'/') {
        shell_word(Path::new(started))
    } else {
        shell_word(&exe)
    }
}

/// `path` as one shell word: as is when it holds only characters no shell
/// treats specially, else in single quotes.
pub fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The block printed at the end of `syclgraph run` (each line starts with
/// `syclgraph:`), naming this command `me` ([`own_command`]). `head`: what
/// was done for a program that did not finish its files
/// ([`crate::killed`]), printed first instead of the line saying it was
/// killed. Renders `graph.svg` with Graphviz's `dot` when it is on
/// `path_var`.
pub fn end_block(
    written: &Written,
    ended: Ended,
    head: Option<&str>,
    path_var: Option<&OsStr>,
    me: &str,
) -> String {
    let mut out = String::new();
    if let Some(head) = head {
        out.push_str(head);
    } else if let Ended::Killed(signal) = ended {
        out.push_str(&format!(
            "syclgraph: the program was killed by signal {signal} ({}); the files hold what was written until then\n",
            signal_name(signal)
        ));
    }
    let Some(main) = &written.main else {
        out.push_str(
            "syclgraph: no output was written (the program did not start the SYCL runtime, or tracing could not start: see above)\n",
        );
        for other in &written.others {
            out.push_str(&format!(
                "syclgraph: written by another process of the run: {}\n",
                other.display()
            ));
        }
        return out;
    };
    out.push_str(&format!("syclgraph: done; files in {}\n", main.display()));
    let dot = main.join("graph.dot");
    if dot.is_file() {
        let svg = main.join("graph.svg");
        match program::on_path("dot".as_ref(), path_var) {
            Some(tool) if render_svg(&tool, &dot, &svg) => out.push_str(&format!(
                "syclgraph:   task graph: {} (open it in a browser)\n",
                svg.display()
            )),
            Some(_) => out.push_str(&format!(
                "syclgraph:   task graph: {} (dot could not render it)\n",
                dot.display()
            )),
            None => out.push_str(&format!(
                "syclgraph:   task graph: {} (install Graphviz, then: dot -Tsvg {} -o {})\n",
                dot.display(),
                shell_word(&dot),
                shell_word(&svg)
            )),
        }
    }
    let trace = main.join("trace.pftrace");
    if trace.is_file() {
        out.push_str(&format!(
            "syclgraph:   timeline:   {} (open it at https://ui.perfetto.dev)\n",
            trace.display()
        ));
    }
    out.push_str(&format!(
        "syclgraph:   summary:    {me} report {}\n",
        shell_word(main)
    ));
    for other in &written.others {
        out.push_str(&format!(
            "syclgraph: also written by another process of the run: {}\n",
            other.display()
        ));
    }
    out
}

/// `dot -Tsvg graph.dot -o graph.svg`, bounded in time; true on success.
fn render_svg(dot: &Path, graph: &Path, svg: &Path) -> bool {
    let child = Command::new(dot)
        .arg("-Tsvg")
        .arg(graph)
        .arg("-o")
        .arg(svg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let deadline = Instant::now() + DOT_TIME_LIMIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success() && svg.is_file(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// `SIGTERM` and the like, for the signals a user meets.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-outputs-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn outputs_in(dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("kernels.csv"), "").unwrap();
    }

    #[test]
    fn default_directories_by_pid_and_fresh_only() {
        let cwd = scratch("default");
        outputs_in(&cwd.join("syclgraph-5"));
        let old = SystemTime::now() - Duration::from_secs(60);
        fs::File::options()
            .write(true)
            .open(cwd.join("syclgraph-5/kernels.csv"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let since = SystemTime::now();
        assert_eq!(
            find(None, &cwd, 5, since),
            Written::default(),
            "older than the run"
        );
        outputs_in(&cwd.join("syclgraph-7"));
        outputs_in(&cwd.join("syclgraph-8"));
        outputs_in(&cwd.join("syclgraph-x"));
        let got = find(None, &cwd, 7, since);
        assert_eq!(got.main, Some(cwd.join("syclgraph-7")));
        assert_eq!(got.others, [cwd.join("syclgraph-8")]);
        fs::remove_dir_all(&cwd).unwrap();
    }

    #[test]
    fn a_claimed_directory_sends_the_program_to_its_pid_subdirectory() {
        let base = scratch("claimed");
        let since = SystemTime::now();
        outputs_in(&base);
        outputs_in(&base.join("pid-42"));
        let got = find(Some(&base), Path::new("/"), 42, since);
        assert_eq!(got.main, Some(base.join("pid-42")));
        assert_eq!(got.others, std::slice::from_ref(&base));
        let alone = find(Some(&base), Path::new("/"), 41, since);
        assert_eq!(alone.main, Some(base.clone()));
        assert_eq!(alone.others, [base.join("pid-42")]);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_block_names_the_files_that_exist() {
        let dir = scratch("block");
        outputs_in(&dir);
        let written = Written {
            main: Some(dir.clone()),
            others: vec![],
        };
        let text = end_block(
            &written,
            Ended::Exited(0),
            None,
            Some("/nonexistent".as_ref()),
            "syclgraph",
        );
        assert_eq!(
            text,
            format!(
                "syclgraph: done; files in {d}\nsyclgraph:   summary:    syclgraph report {d}\n",
                d = dir.display()
            )
        );
        fs::write(dir.join("trace.pftrace"), "").unwrap();
        fs::write(dir.join("graph.dot"), "digraph g {}").unwrap();
        let text = end_block(
            &written,
            Ended::Killed(15),
            None,
            Some("/nonexistent".as_ref()),
            "bin/syclgraph",
        );
        assert!(
            text.starts_with("syclgraph: the program was killed by signal 15 (SIGTERM)"),
            "{text}"
        );
        assert!(
            text.contains("trace.pftrace (open it at https://ui.perfetto.dev)"),
            "{text}"
        );
        assert!(text.contains("install Graphviz, then: dot -Tsvg"), "{text}");
        assert!(
            text.contains(&format!(
                "summary:    bin/syclgraph report {}\n",
                dir.display()
            )),
            "{text}"
        );
        let none = end_block(
            &Written::default(),
            Ended::Exited(3),
            None,
            None,
            "syclgraph",
        );
        assert_eq!(
            none,
            "syclgraph: no output was written (the program did not start the SYCL runtime, \
             or tracing could not start: see above)\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_command_is_named_syclgraph_only_when_path_finds_this_file() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = scratch("own-command");
        let exe = dir.join("release/syclgraph");
        fs::create_dir_all(exe.parent().unwrap()).unwrap();
        fs::write(&exe, "").unwrap();
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        let other = dir.join("other/syclgraph");
        fs::create_dir_all(other.parent().unwrap()).unwrap();
        fs::copy(&exe, &other).unwrap();
        let bin = dir.join("bin");
        fs::create_dir_all(&bin).unwrap();
        symlink(&exe, bin.join("syclgraph")).unwrap();
        let started = "target/release/syclgraph".as_ref();
        // Not on PATH, or another syclgraph there: the path it was started by.
        assert_eq!(
            own_command(started, &exe, Some("/nonexistent".as_ref())),
            "target/release/syclgraph"
        );
        let path = std::env::join_paths([other.parent().unwrap(), &bin]).unwrap();
        assert_eq!(
            own_command(started, &exe, Some(&path)),
            "target/release/syclgraph"
        );
        // A link to this file first on PATH: the bare name.
        let path = std::env::join_paths([&bin, other.parent().unwrap()]).unwrap();
        assert_eq!(own_command(started, &exe, Some(&path)), "syclgraph");
        // Started by a bare name that PATH no longer finds: its own path.
        assert_eq!(
            own_command("syclgraph".as_ref(), &exe, Some("/nonexistent".as_ref())),
            exe.canonicalize().unwrap().display().to_string()
        );
        assert_eq!(shell_word(Path::new("my dir/it's")), "'my dir/it'\\''s'");
        fs::remove_dir_all(&dir).unwrap();
    }
}
