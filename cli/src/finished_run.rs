//! A finished run's output directory, as `syclgraph whatif` and `syclgraph
//! diff` read it: checked first (one line naming the directory and what is
//! wrong), and its `run.journal` replayed into the run it recorded, with
//! its whole schedule for the what-if simulation.

use std::fs::File;
use std::path::Path;

use syclgraph_graph::journal::{JOURNAL_FILE, RUN_JOURNAL};
use syclgraph_graph::replay::{replay_journal, JournalEnd, Replay};
use syclgraph_graph::{Limits, Run};

use crate::leftover::live_owner;

/// Why `dir` is no finished run's directory, if it is not one: missing,
/// not a directory, its program still running, or killed and not
/// converted yet.
pub fn not_finished(dir: &Path) -> Option<String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Some(format!("{shown}: no such directory"))
        }
        Err(e) => return Some(format!("{shown}: cannot read it ({e})")),
        Ok(m) if !m.is_dir() => return Some(format!("{shown}: not a directory")),
        Ok(_) => {}
    }
    if let Some(pid) = live_owner(dir) {
        return Some(format!(
            "{shown}: its program (pid {pid}) is still running; its outputs are not finished"
        ));
    }
    if dir.join(JOURNAL_FILE).is_file() {
        return Some(format!(
            "{shown}: a killed run not converted yet (it has {JOURNAL_FILE}): run `syclgraph report {shown}` first"
        ));
    }
    None
}

/// `dir`'s run, replayed from its `run.journal` with its whole schedule
/// kept; `Err` is one line naming what is wrong. A journal cut short
/// (converted from a killed run) replays up to the cut: the second value
/// says so.
pub fn replay_run(dir: &Path) -> Result<(Run, Option<String>), String> {
    if let Some(why) = not_finished(dir) {
        return Err(why);
    }
    if syclgraph_report::job::is_job_dir(dir) {
        return Err(format!(
            "{}: an MPI job directory: name one rank's directory ({}/rank-NNNNN)",
            dir.display(),
            dir.display()
        ));
    }
    let path = dir.join(RUN_JOURNAL);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let what = if dir.join("kernels.csv").is_file() {
                "its run was recorded by a syclgraph that kept no journal, or its journal could not be written (the summary says `lost: ... not journalled`)"
            } else {
                "not a syclgraph output directory"
            };
            return Err(format!("{}: no {RUN_JOURNAL} ({what})", dir.display()));
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let replay = Replay::<std::io::Sink>::new(Limits::default(), None).keep_schedule(usize::MAX);
    let replayed = replay_journal(std::io::BufReader::with_capacity(1 << 20, file), replay)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut replay = replayed.replay;
    replay.finish(replayed.latest_ns);
    let note = match replayed.end {
        JournalEnd::Clean => None,
        JournalEnd::CutShort(why) | JournalEnd::Invalid(why) => Some(format!(
            "{}: replayed its first {} records only ({why})",
            path.display(),
            replayed.records
        )),
    };
    Ok((replay.into_run(), note))
}
