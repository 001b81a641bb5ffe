//! The commands on an MPI job directory, over the `syclgraph-report`
//! crate: `syclgraph report JOB` (the cross-rank report), `syclgraph
//! query JOB SQL` and `syclgraph export --parquet JOB`. Each failure is one
//! `syclgraph:` line on stderr and exit code 2.

use std::io::Write;
use std::path::PathBuf;

use syclgraph_report::cross_rank;
use syclgraph_report::export::export_parquet;
use syclgraph_report::job::is_job_dir;
use syclgraph_report::load::{load_job, LoadedJob};
use syclgraph_report::query::write_csv;

use crate::cli::{ExportArgs, QueryArgs, ReportArgs};

/// Whether `syclgraph report` was given one job directory (the cross-rank
/// report) rather than process directories (today's tables).
pub fn is_job(dirs: &[PathBuf]) -> bool {
    dirs.len() == 1 && is_job_dir(&dirs[0])
}

/// `syclgraph report JOB`: prints the report, writes `report/*.csv`.
pub fn report(args: &ReportArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let job = &args.dirs[0];
    let result = open(job).and_then(|loaded| {
        let dir = args.output.clone().unwrap_or_else(|| job.join("report"));
        cross_rank::report(&loaded, &dir, args.top.max(1))
    });
    finish(result.map(|text| write!(out, "{text}")), err)
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
