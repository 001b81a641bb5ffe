//! `syclgraph run`: find the program, the subscriber and the runtime, set
//! the environment, run the program, then print where the outputs are.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::cli::RunArgs;
use crate::env::{self, Settings};
use crate::environment::Env;
use crate::job;
use crate::killed::{self, Completion};
use crate::launch;
use crate::launcher;
use crate::leftover::Bounds;
use crate::locate::{self, Linkage};
use crate::outputs;
use crate::program;

/// syclgraph's exit code when it cannot set the run up.
pub const SETUP_FAILED: u8 = 2;

/// Runs `syclgraph run` and returns the exit code (see the `--help` text).
pub fn run(args: RunArgs) -> u8 {
    let env = Env::current();
    let path_var = env.get("PATH").map(|p| p.as_os_str());
    let (name, program_args) = args.command.split_first().expect("clap requires PROGRAM");
    let program = match program::find(name, path_var) {
        Ok(p) => p,
        Err(e) => {
            say(&format!("syclgraph: {e}\n"));
            return e.exit_code();
        }
    };
    // `syclgraph run -- mpiexec -n 4 ./app`: the runtime to trace is the
    // one of the program the launcher starts (else the launcher's own
    // environment's, as for any program).
    let launch = launcher::launch_of(&args.command, |w| program::find(w, path_var).is_ok());
    let program = launch
        .as_ref()
        .and_then(|l| l.program)
        .and_then(|i| program::find(&args.command[i], path_var).ok())
        .unwrap_or(program);
    let exe = std::env::current_exe();
    // This command as the closing block names it in the commands it prints.
    let me = match &exe {
        Ok(exe) => {
            let started = std::env::args_os().next().unwrap_or_default();
            outputs::own_command(&started, exe, path_var)
        }
        Err(_) => "syclgraph".to_owned(),
    };
    let subscriber = match exe
        .map_err(|e| format!("cannot tell where syclgraph is ({e})"))
        .and_then(|exe| locate::subscriber(&exe))
    {
        Ok(s) => s,
        Err(e) => {
            say(&format!("syclgraph: {e}\n"));
            return SETUP_FAILED;
        }
    };
    let linkage = Linkage::of(&program, &env);
    let runtime = match locate::runtime(&program, &linkage, &env, args.xpti.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            say(&format!("syclgraph: {e}\n"));
            return SETUP_FAILED;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut output_dir = args.output.as_ref().map(|d| cwd.join(d));
    if launch.is_some() && output_dir.is_none() && env.get("SYCLGRAPH_OUTPUT_DIR").is_none() {
        // One job directory for all ranks, which this process must know.
        output_dir = Some(cwd.join(format!("syclgraph-{}", std::process::id())));
    }
    let rank_summary = if args.rank_summaries {
        Some(("all", "--rank-summaries"))
    } else if launch.is_some() {
        Some((
            "none",
            "the job's summary is printed once the launcher ends",
        ))
    } else {
        None
    };
    let quiet = args.quiet || env.get("SYCLGRAPH_QUIET").is_some_and(|v| is_yes(v));
    let settings = Settings {
        output_dir: output_dir.clone(),
        no_device_timing: args.no_device_timing,
        no_force_profiling: args.no_force_profiling,
        max_instances: args.max_instances,
        quiet: args.quiet,
        start_paused: args.start_paused,
        delay: args.delay,
        duration: args.duration,
        region: args.region.clone(),
        ranks: args.ranks.clone(),
        rank_summary,
    };
    let additions = env::additions(
        &env,
        &subscriber,
        &runtime,
        &linkage,
        &settings,
        !args.no_runtime_env,
        env::ICD_VENDORS_DIR.as_ref(),
    );
    if args.verbose {
        if let Some(l) = &launch {
            say(&format!(
                "syclgraph: {} starts {}: its runtime is traced on every rank\n",
                l.launcher,
                program.path.display()
            ));
        }
        say(&format!("syclgraph: subscriber {}\n", subscriber.display()));
        for a in &additions {
            say(&format!(
                "syclgraph: {}={} ({})\n",
                a.name,
                a.value.to_string_lossy(),
                a.why
            ));
        }
    }
    let pairs: Vec<(&str, &OsStr)> = additions
        .iter()
        .map(|a| (a.name, a.value.as_os_str()))
        .collect();
    // The base the subscriber will write under: ours, the user's variable
    // (taken from the program's working directory, which is ours), or none.
    let base = output_dir.or_else(|| env.get("SYCLGRAPH_OUTPUT_DIR").map(|d| cwd.join(d)));
    let since = SystemTime::now();
    let mut child = 0;
    let ended = match launch::run(name, program_args, &pairs, |pid| child = pid) {
        Ok(ended) => ended,
        Err(e) => {
            say(&format!(
                "syclgraph: cannot run {}: {e}\n",
                Path::new(name).display()
            ));
            return if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
        }
    };
    // The variables the program got: ours, else the user's.
    let set = |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
            .or_else(|| env.get(name).map(|v| v.to_string_lossy().into_owned()))
    };
    let bounds = Bounds::from_vars(set);
    let rank = job::own_rank(&env);
    if let (Some(_), Some(job)) = (&launch, &base) {
        // Every rank of this job whose journal is left, some at a time.
        let roots: Vec<PathBuf> = job::rank_dirs(job, since)
            .into_iter()
            .map(|r| r.dir)
            .collect();
        let parallel = std::thread::available_parallelism().map_or(1, |n| n.get());
        let completion = killed::complete(&roots, since, bounds, parallel, &me);
        if !quiet {
            say(&job::job_block(job, ended, since, &completion, &me));
        } else {
            say(&failures_only(&completion, &me));
        }
    } else if let Some(rank) = rank {
        // One rank of a job, inside the launcher.
        let job = job::job_dir(base.as_deref(), &env, &cwd);
        let own = job.join(rank.dir_name());
        let completion = killed::complete(std::slice::from_ref(&own), since, bounds, 1, &me);
        if quiet {
            say(&failures_only(&completion, &me));
            return ended.exit_code();
        }
        let written = outputs::find(Some(&own), &cwd, child, since);
        let prints = job::prints(rank.rank, set);
        say(&job::rank_block(
            &rank,
            &job,
            &written,
            ended,
            &completion,
            prints,
            path_var,
            &me,
        ));
    } else {
        let before = outputs::find(base.as_deref(), &cwd, child, since);
        let mut roots: Vec<PathBuf> = match &base {
            Some(base) => vec![base.clone()],
            None => vec![cwd.join(format!("syclgraph-{child}"))],
        };
        roots.extend(before.main.into_iter().chain(before.others));
        roots.sort();
        roots.dedup();
        let completion = killed::complete(&roots, since, bounds, 1, &me);
        if quiet {
            say(&failures_only(&completion, &me));
            return ended.exit_code();
        }
        let written = outputs::find(base.as_deref(), &cwd, child, since);
        let head = (!completion.is_empty())
            .then(|| completion.lines(&killed::ended_words("the program", ended), &me));
        say(&outputs::end_block(
            &written,
            ended,
            head.as_deref(),
            path_var,
            &me,
        ));
    }
    ended.exit_code()
}

/// With `--quiet`: only the journals that could not be converted.
fn failures_only(completion: &Completion, me: &str) -> String {
    if completion.failed.is_empty() {
        return String::new();
    }
    completion.lines("the files were not finished", me)
}

/// Writes to stderr; a closed stderr (a pipe whose reader is gone) is no
/// reason to fail: the exit code must stay the program's.
fn say(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The subscriber's words for "on".
fn is_yes(value: &OsStr) -> bool {
    matches!(
        value.to_str().map(str::trim),
        Some("1" | "true" | "yes" | "on")
    )
}
