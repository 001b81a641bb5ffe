//! The command line, parsed with clap: `syclgraph run`, `report`,
//! `whatif`, `diff`, `query` and `export`. Every option and its variable are described here once; the
//! user guide's table repeats them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const ABOUT: &str = "\
syclgraph records the task graph of a DPC++ (SYCL) program and what each
device command cost, without rebuilding the program.";

const AFTER_HELP: &str = "\
To trace a program:            syclgraph run ./my-app --size 1024
To trace a Python (dpnp) run:  syclgraph run python my_script.py
To look at a run again:        syclgraph report syclgraph-12345
What would a faster kernel save: syclgraph whatif syclgraph-12345 --speedup n3=2
What changed between two runs: syclgraph diff before after --fail-slower 10

Use 'syclgraph help <command>' or 'syclgraph <command> --help' for more.
See docs/guide/outputs.md for every output and column.";

const RUN_AFTER_HELP: &str = "\
Outputs: graph.dot and graph.svg (the task graph; graph.svg when Graphviz is
installed), instances.dot (submissions), kernels.csv (one row per device
command), summary.csv (per node), critical_path.csv, idle_gaps.csv,
regions.csv (device time by the program's ITT tasks), windows.csv (when
tracing was on), violations.csv (commands that started before a dependency
ended), trace.pftrace (the timeline, for ui.perfetto.dev),
summary.txt (the summary table printed on stderr) and run.journal (every
record of the run, for syclgraph whatif).

Environment: syclgraph sets XPTI_TRACE_ENABLE, XPTI_FRAMEWORK_DISPATCHER and
XPTI_SUBSCRIBERS for the program, the SYCLGRAPH_* variables of the options
above, INTEL_LIBITTNOTIFY64 (libsyclgraph.so, when unset: the program's ITT
tasks are its regions, regions.csv), and for the PyPI runtime
LD_LIBRARY_PATH and OCL_ICD_FILENAMES when the program needs them and they
are unset (see --no-runtime-env). SYCLGRAPH_*
variables already set are honoured; options override them.

Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to syclgraph are passed to
the program (once: Ctrl-C at a terminal reaches it directly); syclgraph waits
for the program and never ends before it.

Exit status: the program's exit code, or 128 + the number of the signal that
killed it (143 for SIGTERM); 2 when syclgraph cannot set the run up (no
runtime or libsyclgraph.so found, a bad option); 126 when the program cannot
be executed, 127 when it is not found.

MPI jobs: 'mpiexec -n 4 syclgraph run -o out -- ./app' and 'syclgraph run
-o out -- mpiexec -n 4 ./app' (mpirun, srun alike) both write one
out/rank-NNNNN/ directory per rank, with a meta.json, and print one summary
(see docs/guide/mpi.md).

Examples:
  syclgraph run ./my-app --size 1024
  syclgraph run -o out --max-instances 20000 -- python my_script.py
  syclgraph run -o out --ranks 0,8-15 -- mpiexec -n 16 ./my-app";

const REPORT_AFTER_HELP: &str = "\
Each DIR is the output directory of a traced process (syclgraph-<pid>, or the
--output directory); its pid-<pid>/ subdirectories (other processes that wrote
there) are printed too. Nothing is run.

A program killed by a signal leaves .syclgraph-journal: it is converted first
(in DIR and its subdirectories two levels down) into the files the program's
exit would have written (trace.pftrace's slices, critical_path.csv,
idle_gaps.csv, instances.dot, windows.csv, violations.csv, graph.dot,
summary.csv, summary.txt), then removed; one line on stderr says so.

The end-of-run summary is read from summary.txt, the table from summary.csv
and the untimed line from kernels.csv. --by region prints regions.csv's
table instead (every region, not the summary's top 8).

A job directory (an MPI job's, with one rank-NNNNN/ per rank) gets the
cross-rank report instead: per operation across ranks, per rank and per
region, computed in SQL over the ranks' files and written to
JOB/report/*.csv (see -o); with --by region, only the regions, all of them:
'syclgraph report --by region JOB' says which rank's 'backward' is slowest.
--perfetto FILE also merges chosen ranks' trace.pftrace into FILE: one
process per rank, each on its own host's clock (ranks on different hosts do
not line up).

Exit status: 0, or 2 when a DIR cannot be read or a journal cannot be
converted (the others are printed).";

const WHATIF_AFTER_HELP: &str = "\
Replays the run's run.journal (kept in DIR at its exit) with the chosen
commands' device durations divided by FACTOR, under every constraint the run
recorded: dependencies, in-order queues, a device that ran one command at a
time, host submission times, host waits (work after a wait moves by what the
waited-for work saved) and host tasks. All the --speedup options are one
scenario. Without any, each of the five nodes with the most device time is
made 2x faster on its own (the summary's \"what would pay\" table), a
scenario each. See docs/guide/what-to-optimise.md for the model and its
assumptions.

Examples:
  syclgraph whatif out --speedup n3=2
  syclgraph whatif out --speedup saxpy=4 --speedup pipeline.cpp:106=inf
  syclgraph whatif out --csv

Exit status: 0, or 2 when DIR is no finished run's directory (one line says
why) or a LOCATION names no node with device time.";

const DIFF_AFTER_HELP: &str = "\
Matches the nodes of the two runs by kind, operation and source location, and
compares their per-instance device durations (kernels.csv's timed rows) with
a Mann-Whitney rank test: a node is slower or faster when the test is
significant at the 0.001 level and its median changed by at least 10%, same
otherwise; added and removed when only one run has it. Also: the graph's
edges added and removed, and the span and the critical path's length of each
run. Two MPI job directories are compared rank by rank (ranks matched by
number). See docs/guide/what-to-optimise.md.

Examples:
  syclgraph diff before after
  syclgraph diff before after --fail-slower 10      # in a CI job
  syclgraph diff before after --csv > changes.csv

Exit status: 1 with --fail-slower PCT when some node is slower by PCT% or
more (by its median); 0 otherwise; 2 when a directory cannot be compared
(one line names it and says why).";

const QUERY_AFTER_HELP: &str = "\
Tables: meta, kernels, summary, critical_path, idle_gaps, windows, regions
(each with a rank column), and the report's views operations, ranks,
op_rank, region_ranks. See the
MPI page of the user guide for their columns.

Example:
  syclgraph query out \"SELECT rank, SUM(duration_ns) FROM kernels GROUP BY rank\"

Exit status: 0, or 2 when the job cannot be read or the SQL fails.";

const EXPORT_AFTER_HELP: &str = "\
Writes JOB/parquet/<table>/rank=<N>/part-0.parquet for the tables meta,
kernels, summary, critical_path, idle_gaps, windows and regions, each with a rank
column, snappy-compressed. DuckDB, Polars, Spark or Dask read them.

Exit status: 0, or 2 when the job cannot be read or a file cannot be written.";

/// `syclgraph`: the command line.
#[derive(Debug, Parser)]
#[command(name = "syclgraph", version, about = ABOUT, after_help = AFTER_HELP)]
#[command(propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Action,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Run a program with tracing on, then say where its outputs are.
    #[command(
        after_help = RUN_AFTER_HELP,
        next_line_help = true,
        override_usage = "syclgraph run [OPTIONS] [--] PROGRAM [ARGS]..."
    )]
    Run(RunArgs),
    /// Print the summary tables of earlier runs from their output directories,
    /// or the cross-rank report of an MPI job directory.
    #[command(after_help = REPORT_AFTER_HELP)]
    Report(ReportArgs),
    /// Predict what making commands faster would save, by replaying a
    /// finished run with their device durations divided.
    #[command(after_help = WHATIF_AFTER_HELP)]
    Whatif(WhatIfArgs),
    /// Compare two runs (or two MPI jobs) node by node, with a rank test on
    /// the per-instance durations, and fail on a slowdown.
    #[command(after_help = DIFF_AFTER_HELP)]
    Diff(DiffArgs),
    /// Run SQL over an MPI job directory's files loaded as tables; the result
    /// is printed as CSV.
    #[command(after_help = QUERY_AFTER_HELP)]
    Query(QueryArgs),
    /// Write an MPI job directory's files as Parquet datasets partitioned by rank.
    #[command(after_help = EXPORT_AFTER_HELP)]
    Export(ExportArgs),
}

/// `syclgraph run [OPTIONS] [--] PROGRAM [ARGS...]`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Write the outputs to DIR, created if missing (SYCLGRAPH_OUTPUT_DIR).
    /// Default: ./syclgraph-<pid>/, <pid> being the process id of the traced
    /// process. A process that finds DIR in use by another traced process
    /// writes to DIR/pid-<pid>/. In an MPI job, each rank writes to
    /// DIR/rank-NNNNN/.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// Read no device timestamps (SYCLGRAPH_DEVICE_TIMING=0): rows get
    /// timing=unavailable; the UR tracing layer is not turned on.
    #[arg(long)]
    pub no_device_timing: bool,

    /// Leave queues as the program made them (SYCLGRAPH_FORCE_PROFILING=0):
    /// queues made without enable_profiling give no device times
    /// (timing=no_profiling). Default: profiling is turned on for them.
    #[arg(long)]
    pub no_force_profiling: bool,

    /// Keep at most N finished submissions in memory and draw the first N in
    /// instances.dot (SYCLGRAPH_MAX_INSTANCES); graph.dot, kernels.csv and
    /// summary.csv stay complete. Default: 5000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
    pub max_instances: Option<u64>,

    /// Start with tracing stopped (SYCLGRAPH_START=paused): the program
    /// starts it with syclgraph_start(), __itt_resume(), the toggle signal or
    /// the control file (see the user guide).
    #[arg(long)]
    pub start_paused: bool,

    /// Start tracing SECONDS after the program starts (SYCLGRAPH_DELAY).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub delay: Option<f64>,

    /// Stop tracing SECONDS after it started (SYCLGRAPH_DURATION).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub duration: Option<f64>,

    /// Record only while an ITT task named NAME is open on the submitting
    /// thread (SYCLGRAPH_REGION): commands outside it are counted, not
    /// recorded; windows.csv lists each stretch. With --start-paused (or a
    /// delay), only inside NAME once tracing was started.
    #[arg(long, value_name = "NAME", value_parser = region_name)]
    pub region: Option<String>,

    /// Print neither the summary table nor the closing block on stderr
    /// (SYCLGRAPH_QUIET=1); warnings still appear.
    #[arg(short, long)]
    pub quiet: bool,

    /// In an MPI job, trace only these ranks (SYCLGRAPH_RANKS), as numbers
    /// and ranges: 0,8-15. The others record nothing and write only
    /// meta.json (marked "sampled": false). Default: every rank.
    #[arg(long, value_name = "RANKS", value_parser = rank_set)]
    pub ranks: Option<String>,

    /// In an MPI job, print every traced rank's summary
    /// (SYCLGRAPH_RANK_SUMMARY=all). Default: one summary for the job.
    #[arg(long)]
    pub rank_summaries: bool,

    /// Use this libxptifw.so, the XPTI dispatcher of the program's DPC++
    /// runtime. Default: XPTI_FRAMEWORK_DISPATCHER if set, else the one
    /// beside the libsycl.so the program loads, else the one in the
    /// program's (or its interpreter's) environment, else
    /// $CMPLR_ROOT/lib or $ONEAPI_ROOT/compiler/latest/lib.
    #[arg(long, value_name = "PATH")]
    pub xpti: Option<PathBuf>,

    /// Set only the tracing variables: not LD_LIBRARY_PATH or
    /// OCL_ICD_FILENAMES, which are otherwise set for the PyPI runtime when
    /// the program needs them and they are unset.
    #[arg(long)]
    pub no_runtime_env: bool,

    /// Print where the runtime was found and each variable set for the
    /// program, before it starts.
    #[arg(short, long)]
    pub verbose: bool,

    /// The program to trace (a path, or a name looked up on PATH), then its
    /// arguments, passed unchanged. Everything from PROGRAM on is the
    /// program's, options included.
    #[arg(
        value_name = "PROGRAM",
        required = true,
        num_args = 1..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<OsString>,
}

/// `syclgraph report DIR [DIR...]`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Output directories of earlier runs, or one MPI job directory (with
    /// rank-NNNNN/ directories in it).
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,

    /// For a job directory: write the report's CSV files to DIR (default:
    /// JOB/report/).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,

    /// For a job directory: print the N most imbalanced operations and the N
    /// ranks furthest from the median (the CSV files have all). Default: 10.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// For a job directory: also write one Perfetto trace of chosen ranks to
    /// FILE, one process per rank (default ranks: the slowest, the median and
    /// the fastest by device time; see --ranks).
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,

    /// With --perfetto: merge these ranks instead, as numbers and ranges
    /// (0,8-15) or all.
    #[arg(long, value_name = "RANKS", requires = "perfetto", value_parser = rank_set)]
    pub ranks: Option<String>,

    /// Print one table instead of the report: `region`, every region (the
    /// program's ITT tasks) from regions.csv; for a job directory, every
    /// region across ranks (its device time on the fastest, median and
    /// slowest rank, and which rank is slowest).
    #[arg(long, value_name = "TABLE", value_parser = ["region"])]
    pub by: Option<String>,
}

/// `syclgraph whatif DIR [--speedup LOCATION=FACTOR]... [--csv]`.
#[derive(Debug, Args)]
pub struct WhatIfArgs {
    /// The output directory of a finished run (it holds run.journal).
    #[arg(value_name = "DIR")]
    pub dir: std::path::PathBuf,

    /// Make the commands at LOCATION FACTOR times faster: LOCATION is a node
    /// id (n3), FILE:LINE (FILE a suffix of the source path) or an operation
    /// name (a kernel's name, memcpy); FACTOR a number of at least 1 (2:
    /// twice as fast) or inf (no time at all). Repeat for more commands, all
    /// in one scenario.
    #[arg(long = "speedup", value_name = "LOCATION=FACTOR", value_parser = speedup)]
    pub speedups: Vec<(String, f64)>,

    /// Print CSV: a header (scenario, speedups, device_ns, critical_ns,
    /// span_ns, predicted_span_ns, saved_ns, saved_share), one row per
    /// scenario.
    #[arg(long)]
    pub csv: bool,
}

/// `syclgraph diff BASE NEW [--fail-slower PCT] [--csv]`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The output directory (or MPI job directory) of the run to compare
    /// against.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,

    /// The output directory (or MPI job directory) of the new run.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,

    /// Exit with status 1 when some node is significantly slower and its
    /// median grew by PCT percent or more.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub fail_slower: Option<f64>,

    /// Print CSV: one row per node (and rank), with its verdict.
    #[arg(long)]
    pub csv: bool,
}

/// `syclgraph query JOB SQL`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The MPI job directory.
    #[arg(value_name = "JOB")]
    pub job: PathBuf,
    /// The SQL statement (SQLite's dialect).
    #[arg(value_name = "SQL")]
    pub sql: String,
}

/// `syclgraph export --parquet JOB`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write Parquet (the only format so far).
    #[arg(long, required = true)]
    pub parquet: bool,
    /// Write the datasets to DIR (default: JOB/parquet/).
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The MPI job directory.
    #[arg(value_name = "JOB")]
    pub job: PathBuf,
}

/// A set of ranks, as `--ranks` takes it (checked, kept as written).
fn rank_set(text: &str) -> Result<String, String> {
    syclgraph_graph::ranks::RankSet::parse(text).map(|set| set.to_string())
}

/// A region name, as `--region` takes it: not empty.
fn region_name(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("an ITT task's name, not empty".to_owned());
    }
    Ok(text.to_owned())
}

/// A `--speedup` value: `LOCATION=FACTOR` (split at the last `=`).
fn speedup(text: &str) -> Result<(String, f64), String> {
    let (location, factor) = text.rsplit_once('=').ok_or_else(|| {
        format!("{text:?} is not LOCATION=FACTOR (such as n3=2 or whatif.cpp:97=inf)")
    })?;
    if location.trim().is_empty() {
        return Err(format!("{text:?} names no LOCATION before ="));
    }
    let factor = syclgraph_graph::what_if::parse_factor(factor)?;
    Ok((location.trim().to_string(), factor))
}

/// A percentage, as `--fail-slower` takes it.
fn percent(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("{text:?} is not a percentage (0 or more)")),
    }
}

/// A number of seconds, as `--delay` and `--duration` take it.
fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("{text:?} is not a number of seconds (0 or more)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(args)
    }

    #[test]
    fn definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn options_before_the_program_are_ours_after_it_are_its() {
        let cli = parse(&[
            "syclgraph",
            "run",
            "-o",
            "out",
            "./app",
            "-o",
            "x",
            "--help",
        ])
        .unwrap();
        let Action::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.output, Some(PathBuf::from("out")));
        assert_eq!(run.command, ["./app", "-o", "x", "--help"]);

        let cli = parse(&["syclgraph", "run", "-q", "--", "python", "-c", "print()"]).unwrap();
        let Action::Run(run) = cli.command else {
            panic!("not run")
        };
        assert!(run.quiet);
        assert_eq!(run.command, ["python", "-c", "print()"]);
    }

    #[test]
    fn speedups_are_location_then_factor() {
        assert_eq!(speedup("n3=2"), Ok(("n3".to_string(), 2.0)));
        assert_eq!(
            speedup("a.cpp:7=inf"),
            Ok(("a.cpp:7".to_string(), f64::INFINITY))
        );
        assert_eq!(speedup("operator==1.5"), Ok(("operator=".to_string(), 1.5)));
        for bad in ["n3", "=2", "n3=0.5", "n3=x", "n3=nan"] {
            assert!(speedup(bad).is_err(), "{bad}");
        }
        assert!(parse(&["syclgraph", "diff", "a", "b", "--fail-slower", "-3"]).is_err());
        let cli = parse(&["syclgraph", "diff", "a", "b", "--fail-slower", "25%"]).unwrap();
        let Action::Diff(diff) = cli.command else {
            panic!("not diff")
        };
        assert_eq!(diff.fail_slower, Some(25.0));
    }

    #[test]
    fn bad_uses_are_refused() {
        assert!(parse(&["syclgraph", "run"]).is_err());
        assert!(parse(&["syclgraph", "run", "--max-instances", "x", "app"]).is_err());
        assert!(parse(&["syclgraph", "report"]).is_err());
        assert!(parse(&["syclgraph", "run", "--ranks", "3-1", "app"]).is_err());
        let cli = parse(&["syclgraph", "run", "--ranks", "8-15,0", "mpiexec"]).unwrap();
        let Action::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.ranks.as_deref(), Some("0,8-15"));
        let cli = parse(&["syclgraph", "run", "--max-instances", "7", "app"]).unwrap();
        let Action::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.max_instances, Some(7));
    }
}
