//! `syclgraph diff BASE NEW [--fail-slower PCT] [--csv]`: what changed
//! between two finished runs, or two MPI jobs rank by rank
//! ([`syclgraph_diff`]). Exit status 1 with `--fail-slower PCT` when some
//! node is significantly slower by PCT% or more, 2 on bad input (one line
//! naming the directory and what is wrong), 0 otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};

use syclgraph_diff::csv_out::write_diff_csv;
use syclgraph_diff::text::diff_text;
use syclgraph_diff::{compare_jobs, compare_runs, Diff};
use syclgraph_report::job::rank_dirs;

use crate::cli::DiffArgs;
use crate::finished_run::not_finished;

/// Runs `syclgraph diff`; the answer on `out`, one `syclgraph:` line on
/// `err` for bad input. Returns the exit code.
pub fn diff(args: &DiffArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let d = match compare(&args.base, &args.new) {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(err, "syclgraph: diff: {e}");
            return 2;
        }
    };
    let written = if args.csv {
        write_diff_csv(&mut *out, &d)
    } else {
        out.write_all(diff_text(&d).as_bytes())
    };
    if let Err(e) = written {
        let _ = writeln!(err, "syclgraph: diff: cannot write the answer: {e}");
        return 2;
    }
    match args.fail_slower {
        Some(pct) if d.any_slower_by(pct) => {
            let _ = writeln!(
                err,
                "syclgraph: diff: failing: some node is slower by {pct}% or more (--fail-slower {pct})"
            );
            1
        }
        _ => 0,
    }
}

/// `dir`'s rank directories (empty: one run's directory), each checked.
fn ranks_of(dir: &Path) -> Result<Vec<(u64, PathBuf)>, String> {
    if let Some(why) = not_finished(dir) {
        return Err(why);
    }
    let ranks = rank_dirs(dir)?;
    for r in &ranks {
        if let Some(why) = not_finished(&r.dir) {
            return Err(why);
        }
    }
    Ok(ranks.into_iter().map(|r| (r.rank, r.dir)).collect())
}

fn compare(base: &Path, new: &Path) -> Result<Diff, String> {
    let (b, n) = (ranks_of(base)?, ranks_of(new)?);
    match (b.is_empty(), n.is_empty()) {
        (true, true) => Ok(Diff {
            runs: vec![compare_runs(base, new, None)?],
            ranks_only_before: Vec::new(),
            ranks_only_after: Vec::new(),
        }),
        (false, false) => compare_jobs(&b, &n),
        (false, true) => Err(format!(
            "{} is an MPI job directory and {} is not: compare two runs or two jobs",
            base.display(),
            new.display()
        )),
        (true, false) => Err(format!(
            "{} is an MPI job directory and {} is not: compare two runs or two jobs",
            new.display(),
            base.display()
        )),
    }
}
