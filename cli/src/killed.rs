//! `syclgraph run` after a program that did not finish its files: killed
//! by a signal syclgraph forwarded (a batch system's `SIGTERM`, a
//! `timeout`), or killed alone while syclgraph lives (`SIGKILL`, the
//! out-of-memory killer), or gone by `_exit`. Such a program leaves its
//! `.syclgraph-journal`; syclgraph converts it before it exits, with the
//! conversion `syclgraph report DIR` runs ([`crate::leftover`]), so the
//! job's files are whole when `syclgraph run` ends: `summary.txt`,
//! `critical_path.csv`, `idle_gaps.csv`, `trace.pftrace` with every
//! recorded row, `kernels.csv` and the graph files. The exit code stays the
//! program's (128 + the signal).
//!
//! Every file is written to a temporary file and renamed; the journal is
//! renamed `run.journal` after the last one. Killed during the conversion
//! (the scheduler's `SIGKILL` after its grace period), syclgraph leaves
//! `*.tmp` files and the journal, which `syclgraph report DIR` converts. A
//! Ctrl-C typed again at the terminal stops it: syclgraph removes its
//! `.tmp` files, keeps the journal and says so in one line. Other signals
//! (a scheduler or an MPI launcher repeating its `SIGTERM`) do not stop it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use signal_hook::consts::{SIGINT, SIGQUIT};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::SignalsInfo;
use signal_hook::low_level::siginfo::Cause;

use crate::launch::Ended;
use crate::leftover::{self, Bounds, Converted, Converter};
use crate::outputs::{shell_word, signal_name};
use syclgraph_graph::output::tmp_path;

/// File times come from the kernel's coarse clock: a journal written just
/// after the program started may look a little older.
const MTIME_SLACK: Duration = Duration::from_millis(100);

/// The files a conversion writes through a `.tmp` file besides the run's
/// files ([`syclgraph_graph::end_of_run::RUN_FILES`]).
const CONVERTED_STREAMS: [&str; 2] = ["trace.pftrace", syclgraph_graph::output::KERNELS_CSV];

/// What the completion did.
#[derive(Debug, Default)]
pub struct Completion {
    /// The journals converted.
    pub converted: Vec<Converted>,
    /// Why the others were not (one line each, without `syclgraph: `).
    pub failed: Vec<String>,
    /// How long it took.
    pub took: Duration,
}

impl Completion {
    /// True when there was nothing to convert.
    pub fn is_empty(&self) -> bool {
        self.converted.is_empty() && self.failed.is_empty()
    }

    /// The commands of every converted journal.
    fn commands(&self) -> u64 {
        self.converted.iter().map(|c| c.commands).sum()
    }

    /// The one line saying what was done after `how` (how the program
    /// ended: [`ended_words`]), then one line per journal that could not
    /// be converted; `me` names this command.
    pub fn lines(&self, how: &str, me: &str) -> String {
        let mut out = String::new();
        if !self.converted.is_empty() {
            let (whose, dirs) = match self.converted.as_slice() {
                [one] => (
                    "its files from its journal".to_string(),
                    format!("in {}", one.dir.display()),
                ),
                many => (
                    format!(
                        "the files of {} directories from their journals",
                        many.len()
                    ),
                    match many[0].dir.parent() {
                        Some(p) => format!("under {}", p.display()),
                        None => "here".to_string(),
                    },
                ),
            };
            let cut: Vec<&str> = self
                .converted
                .iter()
                .filter(|c| c.how != "a clean end")
                .map(|c| c.how.as_str())
                .collect();
            out.push_str(&format!(
                "syclgraph: {how}; syclgraph completed {whose} in {:.1} s: {} commands ({} records{}), {dirs}\n",
                self.took.as_secs_f64(),
                self.commands(),
                self.converted.iter().map(|c| c.records).sum::<u64>(),
                match cut.first() {
                    None => String::new(),
                    Some(how) => format!("; {how}"),
                },
            ));
        } else if self.failed.is_empty() {
            out.push_str(&format!(
                "syclgraph: {how}; the files hold what was written until then\n"
            ));
        }
        for e in &self.failed {
            out.push_str(&format!(
                "syclgraph: {how}; its files could not be completed: {e}\n"
            ));
        }
        if !self.failed.is_empty() {
            out.push_str(&format!(
                "syclgraph: they hold what was written until then; `{me} report DIR` converts a journal left behind\n"
            ));
        }
        out
    }
}

/// `the program was killed by signal 15 (SIGTERM)`, `rank 3 exited with
/// code 1 without finishing its files`: how `what` ended, when it left its
/// files to complete.
pub fn ended_words(what: &str, ended: Ended) -> String {
    match ended {
        Ended::Killed(signal) => {
            format!(
                "{what} was killed by signal {signal} ({})",
                signal_name(signal)
            )
        }
        Ended::Exited(code) => {
            format!("{what} exited with code {code} without finishing its files")
        }
    }
}

/// The journals under `roots` (each, and its subdirectories two levels
/// down) written since `since` and whose program is gone.
fn fresh_journals(roots: &[PathBuf], since: SystemTime) -> Vec<PathBuf> {
    let since = since.checked_sub(MTIME_SLACK).unwrap_or(since);
    let mut found: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| leftover::leftover_journals(r))
        .filter(|j| {
            std::fs::metadata(j)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since)
        })
        .filter_map(|j| j.parent().map(Path::to_path_buf))
        .filter(|d| leftover::live_owner(d).is_none())
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Converts the journals left under `roots` since `since` (the program's
/// start) within `bounds`, up to `parallel` at a time. A Ctrl-C typed at
/// the terminal meanwhile stops it: see [`on_interrupt`]; `me` names this
/// command ([`crate::outputs::own_command`]).
pub fn complete(
    roots: &[PathBuf],
    since: SystemTime,
    bounds: Bounds,
    parallel: usize,
    me: &str,
) -> Completion {
    let dirs = fresh_journals(roots, since);
    let mut done = Completion::default();
    if dirs.is_empty() {
        return done;
    }
    let start = Instant::now();
    let finished = Arc::new(AtomicBool::new(false));
    let _stop = on_interrupt(dirs.clone(), Arc::clone(&finished), me.to_owned());
    let results: Vec<Result<Converted, String>> = if parallel <= 1 || dirs.len() == 1 {
        dirs.iter()
            .map(|d| leftover::convert(d, Converter::Run, bounds))
            .collect()
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<Converted, String>>>> =
            dirs.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..parallel.min(dirs.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let result = leftover::convert(dir, Converter::Run, bounds);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                });
            }
        });
        slots
            .into_iter()
            .filter_map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    };
    finished.store(true, Ordering::SeqCst);
    for r in results {
        match r {
            Ok(c) => done.converted.push(c),
            Err(e) => done.failed.push(e),
        }
    }
    done.took = start.elapsed();
    done
}

/// While the conversion of `dirs` runs: a Ctrl-C (or Ctrl-\) typed at the
/// terminal removes its temporary files, says in one line that the files
/// were not completed, and exits 128 + that signal. Signals sent by a
/// process (a scheduler or an MPI launcher repeating its `SIGTERM`) are
/// not caught here: they stay ignored (see [`crate::signals::Forwarder`]).
/// A signal ignored when syclgraph started stays ignored. The returned
/// guard stops the watch.
fn on_interrupt(
    dirs: Vec<PathBuf>,
    finished: Arc<AtomicBool>,
    me: String,
) -> Option<InterruptWatch> {
    let ignored = crate::signals::ignored_at_start();
    let caught: Vec<i32> = [SIGINT, SIGQUIT]
        .into_iter()
        .filter(|&s| ignored & (1u64 << (s - 1)) == 0)
        .collect();
    let mut signals = SignalsInfo::<WithOrigin>::new(&caught).ok()?;
    let handle = signals.handle();
    let thread = std::thread::Builder::new()
        .name("syclgraph-interrupt".into())
        .spawn(move || {
            for origin in signals.forever() {
                if origin.cause != Cause::Kernel || finished.load(Ordering::SeqCst) {
                    continue;
                }
                for dir in &dirs {
                    let files = CONVERTED_STREAMS.iter().chain(&syclgraph_graph::end_of_run::RUN_FILES);
                    for f in files {
                        let _ = std::fs::remove_file(tmp_path(&dir.join(f)));
                    }
                }
                let shown: Vec<String> = dirs.iter().map(|d| shell_word(d)).collect();
                let line = format!(
                    "syclgraph: interrupted by {} while completing the files from the journal: not completed (each file is whole, as the program left it or converted); `{me} report {}` converts what is left\n",
                    signal_name(origin.signal),
                    shown.join(" ")
                );
                let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
                std::process::exit(128 + origin.signal);
            }
        })
        .ok()?;
    Some(InterruptWatch {
        handle,
        thread: Some(thread),
    })
}

/// Stops the interrupt watch when dropped.
struct InterruptWatch {
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for InterruptWatch {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
