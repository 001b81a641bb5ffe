//! `syclgraph report DIR`, first step: converts the `.syclgraph-journal` a
//! program left when it did not exit normally (killed by a signal, an MPI
//! job's time limit, an OOM kill) into the outputs its exit would have
//! written: the journal replayed through the graph crate's
//! [`syclgraph_graph::replay`] and written by
//! [`syclgraph_graph::end_of_run::write_run_files`], the very code the
//! subscriber runs at exit; the trace's slices into `trace.pftrace`, with
//! the process and clock the killed program's trace started with.
//!
//! Looked for in DIR and in its subdirectories two levels down (`pid-N/`,
//! `exec-N/`, an MPI job's rank directories and theirs). A directory whose
//! owner (`.syclgraph-owner`) is still running is left alone: its journal
//! is the live run's (a process on another host cannot be seen: see
//! docs/guide/limitations.md). Every file is written atomically; the
//! journal is renamed to `run.journal` (as a finished run's is, for
//! `syclgraph whatif`) only after the last one. `.syclgraph-owner` stays: a
//! dead owner is ignored by the next run.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use syclgraph_graph::end_of_run::{write_run_files, RunNotes};
use syclgraph_graph::journal::JOURNAL_FILE;
use syclgraph_graph::journal::RUN_JOURNAL;
use syclgraph_graph::kernels_csv::KernelRowWriter;
use syclgraph_graph::output::{tmp_path, OWNER_FILE};
use syclgraph_graph::perfetto::{TraceStart, TraceWriter};
use syclgraph_graph::replay::{replay_journal, JournalEnd, Replay};
use syclgraph_graph::Limits;

/// `SYCLGRAPH_TRACE_MAX_MB`'s default, in bytes: the run's own bound is
/// not on disk.
const TRACE_MAX_BYTES: u64 = 1024 << 20;
/// The bytes read from the left trace to find its start.
const TRACE_START_BYTES: u64 = 64 * 1024;

/// Who converts a journal: named in the converted `summary.txt`'s first
/// line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Converter {
    /// `syclgraph report DIR`, run by hand after the job.
    Report,
    /// `syclgraph run`, once the program it ran ended without finishing
    /// its files ([`crate::killed`]).
    Run,
}

impl Converter {
    fn command(self) -> &'static str {
        match self {
            Converter::Report => "syclgraph report",
            Converter::Run => "syclgraph run",
        }
    }
}

/// The run's own bounds on what it keeps, where they are known (`syclgraph
/// run` knows the program's environment); else the subscriber's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// `SYCLGRAPH_TRACE_MAX_MB`, in bytes.
    pub trace_max_bytes: u64,
    /// `SYCLGRAPH_MAX_INSTANCES`.
    pub max_instances: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            trace_max_bytes: TRACE_MAX_BYTES,
            max_instances: Limits::default().max_instances,
        }
    }
}

impl Bounds {
    /// The bounds the subscriber takes from these variables (`text` reads
    /// one), as it reads them: a number in its range, else the default.
    pub fn from_vars(text: impl Fn(&str) -> Option<String>) -> Bounds {
        let number = |name: &str, max: u64| {
            text(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n <= max)
        };
        let default = Bounds::default();
        Bounds {
            trace_max_bytes: number("SYCLGRAPH_TRACE_MAX_MB", 1 << 30)
                .map_or(default.trace_max_bytes, |mb| mb << 20),
            max_instances: number("SYCLGRAPH_MAX_INSTANCES", 100_000_000)
                .map_or(default.max_instances, |n| n as usize),
        }
    }
}

/// One journal converted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    /// The directory it was in, where the outputs were written.
    pub dir: PathBuf,
    /// Its records that read back.
    pub records: u64,
    /// The commands they hold (instances finalised by the replay).
    pub commands: u64,
    /// How it ended: `a clean end`, or `cut: why`.
    pub how: String,
}

impl Converted {
    /// The line `syclgraph report` prints for it (after `syclgraph: `).
    pub fn report_line(&self) -> String {
        format!(
            "converted the journal {} left by a program that did not exit normally: {} records, {}; outputs written in {}",
            self.dir.join(JOURNAL_FILE).display(),
            self.records,
            self.how,
            self.dir.display()
        )
    }
}

/// Converts every leftover journal under `dir` (see the module's text),
/// one `syclgraph:` line on `err` for each (what was converted, or why
/// not). Returns false when any could not be converted.
pub fn convert_leftovers(dir: &Path, err: &mut dyn Write) -> bool {
    let mut ok = true;
    for journal in leftover_journals(dir) {
        let pdir = journal.parent().unwrap_or(Path::new("."));
        match convert(pdir, Converter::Report, Bounds::default()) {
            Ok(done) => {
                let _ = writeln!(err, "syclgraph: {}", done.report_line());
            }
            Err(e) => {
                let _ = writeln!(err, "syclgraph: {e}");
                ok = false;
            }
        }
    }
    ok
}

/// The journals in `dir` and its subdirectories two levels down, sorted.
pub fn leftover_journals(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![dir.to_path_buf()];
    for depth in 0..3 {
        let mut next = Vec::new();
        for d in &level {
            let journal = d.join(JOURNAL_FILE);
            if journal.is_file() {
                found.push(journal);
            }
            if depth < 2 {
                if let Ok(entries) = std::fs::read_dir(d) {
                    next.extend(
                        entries
                            .flatten()
                            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                            .map(|e| e.path()),
                    );
                }
            }
        }
        next.sort();
        level = next;
    }
    found
}

/// The pid in `dir`'s owner file, if that process is alive (a zombie, a
/// killed process its parent has not waited for yet, is not).
pub fn live_owner(dir: &Path) -> Option<u32> {
    let owner: u32 = std::fs::read_to_string(dir.join(OWNER_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{owner}/stat")).ok()?;
    // `pid (comm) state ...`: the state follows the last `)`.
    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    (!matches!(state, 'Z' | 'X')).then_some(owner)
}

/// What the killed program's `trace.pftrace` started with, if it left one.
fn trace_start(dir: &Path) -> Option<TraceStart> {
    let mut bytes = Vec::new();
    File::open(dir.join("trace.pftrace"))
        .ok()?
        .take(TRACE_START_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    TraceStart::read(&bytes)
}

/// Converts `dir`'s journal for `by`, within the run's `bounds`: what was
/// converted, or the line saying why not.
pub fn convert(dir: &Path, by: Converter, bounds: Bounds) -> Result<Converted, String> {
    let journal_path = dir.join(JOURNAL_FILE);
    let shown = journal_path.display();
    if let Some(pid) = live_owner(dir) {
        return Err(format!(
            "{shown}: not converted: its program (pid {pid}) is still running, and converts it at its exit"
        ));
    }
    let journal = File::open(&journal_path).map_err(|e| format!("{shown}: {e}"))?;
    let trace_path = dir.join("trace.pftrace");
    let trace_tmp = tmp_path(&trace_path);
    let start = trace_start(dir);
    let trace = match &start {
        Some(s) => Some(
            File::create(&trace_tmp)
                .and_then(|f| {
                    TraceWriter::new(f, s.pid, &s.process_name, &s.clocks, bounds.trace_max_bytes)
                })
                .map_err(|e| format!("{}: {e}", trace_tmp.display()))?,
        ),
        None => None,
    };
    // The rows again, from the journal: a program without device timing
    // streams none (they come from its replay at exit), and a timed one
    // streamed those of its instances that had finished, the journal's
    // replay the same bytes (`graph/tests/replay_rows.rs`) and the rest.
    // Only where the program wrote a kernels.csv (it was not turned off).
    let kernels_path = dir.join("kernels.csv");
    let kernels_tmp = tmp_path(&kernels_path);
    let rows = match kernels_path.exists() {
        true => Some(
            File::create(&kernels_tmp)
                .and_then(KernelRowWriter::new)
                .map_err(|e| format!("{}: {e}", kernels_tmp.display()))?,
        ),
        false => None,
    };
    let result = (|| {
        // For `report`, the whole schedule: the "what would pay" block for
        // any length (this is not the program's time).
        let limits = Limits {
            max_instances: bounds.max_instances,
            ..Limits::default()
        };
        let replay = match by {
            Converter::Report => Replay::new(limits, trace).keep_schedule(usize::MAX),
            // The job's grace period: the exit's own bound (a longer run's
            // block is computed by `syclgraph report`, from run.journal).
            Converter::Run => Replay::new(limits, trace),
        };
        let replay = match rows {
            Some(rows) => replay.with_rows(rows),
            None => replay,
        };
        let replayed = replay_journal(std::io::BufReader::new(journal), replay)
            .map_err(|e| format!("{shown}: {e}; nothing converted"))?;
        let (mut replay, records, end, now) = (
            replayed.replay,
            replayed.records,
            replayed.end,
            replayed.latest_ns,
        );
        replay.finish(now);
        let mut notes = RunNotes::default();
        let how = match &end {
            JournalEnd::Clean => "a clean end".to_string(),
            JournalEnd::CutShort(why) | JournalEnd::Invalid(why) => {
                let why = why.trim_start_matches("syclgraph journal: ");
                notes.losses.push_str(&format!(
                    "lost: the rest of the journal after its {records} records ({why})\n"
                ));
                format!("cut: {why}")
            }
        };
        notes.heading = format!(
            "converted by `{}` from {JOURNAL_FILE}, left by a program that did not exit normally ({records} records; {how}): kernels.csv's rows, the analyses, the trace's slices and the graph files below come from it\n",
            by.command()
        );
        notes.losses.push_str(
            "lost: not known: the program's counts of what it could not record were in its memory (a killed program writes none)\n",
        );
        if let Some(mut trace) = replay.take_trace() {
            let written = trace.flush().and_then(|()| {
                if trace.dropped() > 0 {
                    notes.losses.push_str(&format!(
                        "dropped: {} trace.pftrace slices (the file reached {} MiB, {})\n",
                        trace.dropped(),
                        bounds.trace_max_bytes >> 20,
                        match by {
                            Converter::Report => "SYCLGRAPH_TRACE_MAX_MB's default",
                            Converter::Run => "SYCLGRAPH_TRACE_MAX_MB",
                        }
                    ));
                }
                durable(by, trace.get_ref())?;
                std::fs::rename(&trace_tmp, &trace_path)
            });
            written.map_err(|e| format!("{}: {e}", trace_path.display()))?;
        } else {
            notes.losses.push_str(
                "trace.pftrace: not written (the program left none, or its start did not read back)\n",
            );
        }
        if let Some(rows) = replay
            .take_rows()
            .map_err(|e| format!("{}: {e}", kernels_tmp.display()))?
        {
            let file = rows
                .into_inner()
                .and_then(|f| durable(by, &f))
                .and_then(|()| std::fs::rename(&kernels_tmp, &kernels_path));
            file.map_err(|e| format!("{}: {e}", kernels_path.display()))?;
        }
        let run = replay.into_run();
        let commands = run.stats().instances;
        write_run_files(dir, &run, now, &notes).map_err(|e| format!("{}: {e}", dir.display()))?;
        // Kept as a finished run's journal is, for `syclgraph whatif`.
        std::fs::rename(&journal_path, dir.join(RUN_JOURNAL))
            .map_err(|e| format!("{shown}: converted, but not renamed to {RUN_JOURNAL}: {e}"))?;
        Ok(Converted {
            dir: dir.to_path_buf(),
            records,
            commands,
            how,
        })
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&trace_tmp);
        let _ = std::fs::remove_file(&kernels_tmp);
    }
    result
}

/// Syncs a large converted file to disk before its rename, for `report`.
/// In a killed job's grace period (`run`) the rename alone: it is atomic
/// against the launcher's own death (the scheduler's `SIGKILL`, all that
/// can come then), which leaves the journal and a `.tmp` file; the kernel
/// writes the page cache back as for any file (a sync of the two large
/// files, about 130 bytes each per command, took ~1 s per 1,000,000
/// commands here).
fn durable(by: Converter, file: &File) -> std::io::Result<()> {
    match by {
        Converter::Report => file.sync_all(),
        Converter::Run => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_owner_keeps_its_journal_and_a_gone_one_does_not() {
        let dir = std::env::temp_dir().join(format!("syclgraph-leftover-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("pid-7")).unwrap();
        std::fs::write(dir.join("pid-7").join(JOURNAL_FILE), b"x").unwrap();
        // A rank's own pid-N/ is found, one level deeper is not.
        let deep = dir.join("rank-00001/pid-3/pid-4");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.with_file_name(JOURNAL_FILE), b"x").unwrap();
        std::fs::write(deep.join(JOURNAL_FILE), b"x").unwrap();
        assert_eq!(
            leftover_journals(&dir),
            [
                dir.join("pid-7").join(JOURNAL_FILE),
                deep.with_file_name(JOURNAL_FILE)
            ]
        );
        std::fs::write(dir.join(OWNER_FILE), std::process::id().to_string()).unwrap();
        assert_eq!(live_owner(&dir), Some(std::process::id()));
        std::fs::write(dir.join(JOURNAL_FILE), b"x").unwrap();
        let mut err = Vec::new();
        assert!(!convert_leftovers(&dir, &mut err));
        let err = String::from_utf8(err).unwrap();
        assert!(err.contains("is still running"), "{err}");
        assert!(dir.join(JOURNAL_FILE).exists());
        std::fs::write(dir.join(OWNER_FILE), "0").unwrap();
        assert_eq!(live_owner(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
