//! The commands on an MPI job directory, over the `syclgraph-report`
//! crate: `syclgraph report JOB` (the cross-rank report), `syclgraph
//! query JOB SQL` and `syclgraph export --parquet JOB`; `report
//! --perfetto` merges chosen ranks' timelines. Each failure is one
//! `syclgraph:` line on stderr and exit code 2.

use std::io::Write;
use std::path::{Path, PathBuf};

use syclgraph_graph::ranks::RankSet;
use syclgraph_graph::timing::format_ns;

use syclgraph_report::cross_rank;
use syclgraph_report::export::export_parquet;
use syclgraph_report::job::is_job_dir;
use syclgraph_report::load::{load_job, LoadedJob};
use syclgraph_report::merged_timeline::{default_ranks, listed_ranks, write_merged};
use syclgraph_report::query::write_csv;

use crate::cli::{ExportArgs, QueryArgs, ReportArgs};

/// Whether `syclgraph report` was given one job directory (the cross-rank
/// report) rather than process directories (today's tables).
pub fn is_job(dirs: &[PathBuf]) -> bool {
    dirs.len() == 1 && is_job_dir(&dirs[0])
}

/// `syclgraph report JOB`: prints the report, writes `report/*.csv`, and
/// with `--perfetto FILE` the merged timeline of chosen ranks.
pub fn report(args: &ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let job = &args.dirs[0];
    let result = open(job).and_then(|loaded| {
        let dir = args.output.clone().unwrap_or_else(|| job.join("report"));
        let mut text = cross_rank::report(&loaded, &dir, args.top.max(1))?;
        if let Some(file) = &args.perfetto {
            text.push_str(&merged_timeline(&loaded, file, args.ranks.as_deref(), err)?);
        }
        Ok(text)
    });
    finish(result.map(|text| write!(out, "{text}")), err)
}

/// `syclgraph report --by region JOB`: every region across ranks.
pub fn regions(job: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = open(job).and_then(|loaded| {
        let table = cross_rank::regions(&loaded, None)?;
        if table.is_empty() {
            return Err(format!(
                "{}: no rank entered a region (an ITT task): regions.csv is empty on every rank",
                job.display()
            ));
        }
        Ok(table)
    });
    finish(result.map(|text| write!(out, "{text}")), err)
}

/// `--perfetto` given with directories that are not one job directory:
/// one line, exit code 2.
pub fn perfetto_needs_a_job(args: &ReportArgs, err: &mut dyn Write) -> u8 {
    let dirs: Vec<String> = args.dirs.iter().map(|d| d.display().to_string()).collect();
    finish(
        Err(format!(
            "--perfetto merges the ranks of one MPI job directory (with rank-NNNNN/ in it); {} is not one (a single run's timeline is its trace.pftrace)",
            dirs.join(" ")
        )),
        err,
    )
}

/// Writes the merged timeline to `file` and returns the line that says
/// which ranks are in it; a rank's missing or broken trace is one
/// `syclgraph:` line on `err`, as is a choice that spans hosts.
fn merged_timeline(
    job: &LoadedJob,
    file: &Path,
    ranks: Option<&str>,
    err: &mut dyn Write,
) -> Result<String, String> {
    let chosen = match ranks {
        Some(text) => listed_ranks(
            job,
            &RankSet::parse(text).map_err(|e| format!("--ranks: {e}"))?,
        )?,
        None => default_ranks(job)?,
    };
    if chosen.is_empty() {
        return Err(format!(
            "--ranks {}: no rank of {} is in the set",
            ranks.unwrap_or(""),
            job.dir.display()
        ));
    }
    let merged = write_merged(job, &chosen, file)?;
    for r in merged.incomplete() {
        let _ = writeln!(
            err,
            "syclgraph: merged timeline: rank {}: {}",
            r.rank,
            r.problem.as_deref().unwrap_or("")
        );
    }
    if merged.hosts.len() > 1 {
        let _ = writeln!(
            err,
            "syclgraph: merged timeline: the ranks ran on {} hosts ({}): each keeps its own host's clock, so ranks on different hosts do not line up",
            merged.hosts.len(),
            merged.hosts.join(", ")
        );
    }
    if merged.ranks.iter().all(|r| r.packets == 0) {
        return Err(format!(
            "{}: no chosen rank's trace.pftrace could be read",
            file.display()
        ));
    }
    let listed: Vec<String> = chosen
        .iter()
        .map(|c| {
            let time = c
                .device_ns
                .map(|ns| format!("device {}", format_ns(ns.max(0) as u64)));
            let words: Vec<String> = c.why.iter().map(|w| w.to_string()).chain(time).collect();
            if words.is_empty() {
                c.rank.to_string()
            } else {
                format!("{} ({})", c.rank, words.join(", "))
            }
        })
        .collect();
    Ok(format!(
        "syclgraph: merged timeline of ranks {}: {} (open it at https://ui.perfetto.dev)\n",
        listed.join(", "),
        file.display()
    ))
}

/// The cross-rank report of the job directory `job` as text, with its
/// `report/*.csv` written under `job`: what the outer `syclgraph run --
/// mpiexec ...` prints once the job ended.
pub fn job_text(job: &std::path::Path) -> Result<String, String> {
    let loaded = open(job)?;
    cross_rank::report(&loaded, &job.join("report"), JOB_TOP)
}

/// How many operations and ranks the after-the-job report prints (as
/// `syclgraph report`'s default `--top`).
const JOB_TOP: usize = 10;

/// `syclgraph query JOB SQL`: the result as CSV on stdout.
pub fn query(args: &QueryArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = open(&args.job).and_then(|loaded| {
        write_csv(&loaded.db, &args.sql, out).map_err(|e| format!("query: {e}"))
    });
    finish(result.map(|_| Ok(())), err)
}

/// `syclgraph export --parquet JOB`: the datasets, and one line saying
/// where they are.
pub fn export(args: &ExportArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let dir = args
        .output
        .clone()
        .unwrap_or_else(|| args.job.join("parquet"));
    let result = load_job(&args.job).and_then(|loaded| export_parquet(&loaded, &dir));
    finish(
        result.map(|c| {
            writeln!(
                out,
                "syclgraph: {} rows in {} Parquet files under {}",
                c.rows,
                c.files,
                dir.display()
            )
        }),
        err,
    )
}

/// The job loaded, with the report's views.
fn open(job: &std::path::Path) -> Result<LoadedJob, String> {
    let loaded = load_job(job)?;
    cross_rank::create_views(&loaded)?;
    Ok(loaded)
}

fn finish(result: Result<std::io::Result<()>, String>, err: &mut dyn Write) -> u8 {
    match result {
        Ok(_) => 0,
        Err(e) => {
            let _ = writeln!(err, "syclgraph: {e}");
            2
        }
    }
}
