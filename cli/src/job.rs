//! `syclgraph run` in an MPI job: where the job directory is, what each
//! rank wrote (its `rank-NNNNN/` directory and `meta.json`), and the one
//! block printed for the whole job: by the outer `syclgraph` after the
//! launcher ended, or by the printing rank's `syclgraph` inside it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use syclgraph_graph::rank_meta::RankMeta;
use syclgraph_graph::ranks::{self, RankInfo, RankSet, RankSummary};

use crate::environment::Env;
use crate::killed::{ended_words, Completion};
use crate::launch::Ended;
use crate::outputs::{self, signal_name, Written};

/// How far a rank's start time (its clock, maybe another host's) may lie
/// before the launcher's start and still count as this job's.
const START_SLACK: Duration = Duration::from_secs(5);

/// One rank directory of a job, as found after the job.
#[derive(Clone, Debug)]
pub struct RankDir {
    /// The rank, from the directory's name.
    pub rank: u32,
    /// The directory.
    pub dir: PathBuf,
    /// Its `meta.json`, or why it cannot be read.
    pub meta: Result<RankMeta, String>,
}

impl RankDir {
    /// True when the rank recorded nothing (outside `--ranks`).
    fn unsampled(&self) -> bool {
        self.meta.as_ref().is_ok_and(|m| !m.sampled)
    }

    /// True when the rank's files were finished.
    fn complete(&self) -> bool {
        self.meta.as_ref().is_ok_and(|m| m.complete)
    }
}

/// The `rank-NNNNN/` directories in `job` written by a job started at
/// `since` or later (by their `meta.json`'s start time; an unreadable one
/// counts), by rank.
pub fn rank_dirs(job: &Path, since: SystemTime) -> Vec<RankDir> {
    let since_ns = since
        .checked_sub(START_SLACK)
        .unwrap_or(since)
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(u64::MAX as u128) as u64);
    let mut found: Vec<RankDir> = std::fs::read_dir(job)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let rank = ranks::rank_of_dir_name(e.file_name().to_str()?)?;
            let dir = e.path();
            dir.is_dir().then(|| RankDir {
                rank,
                meta: RankMeta::read(&dir),
                dir,
            })
        })
        .filter(|r| !r.meta.as_ref().is_ok_and(|m| m.start_time_ns < since_ns))
        .collect();
    found.sort_by_key(|r| r.rank);
    found
}

/// The job directory the ranks write under: the output directory asked
/// for (`-o` or `SYCLGRAPH_OUTPUT_DIR`, from `cwd`), else the subscriber's
/// default for a job (`syclgraph-job-<id>`).
pub fn job_dir(asked: Option<&Path>, env: &Env, cwd: &Path) -> PathBuf {
    match asked {
        Some(dir) => cwd.join(dir),
        None => cwd.join(ranks::default_job_dir_name(|name| {
            env.get(name).map(|v| v.to_string_lossy().into_owned())
        })),
    }
}

/// The rank of this `syclgraph` inside a launcher, from its environment.
pub fn own_rank(env: &Env) -> Option<RankInfo> {
    ranks::detect(|name| env.get(name).map(|v| v.to_string_lossy().into_owned()))
}

/// True when the rank `rank` prints its block: the rule the subscriber
/// follows for its summary, from the same variables (`text` reads one).
pub fn prints(rank: u32, text: impl Fn(&str) -> Option<String>) -> bool {
    if text("SYCLGRAPH_QUIET").is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on")) {
        return false;
    }
    let set = text("SYCLGRAPH_RANKS")
        .and_then(|s| RankSet::parse(&s).ok())
        .unwrap_or_else(RankSet::all);
    let how = text("SYCLGRAPH_RANK_SUMMARY")
        .and_then(|s| RankSummary::parse(&s))
        .unwrap_or(RankSummary::First);
    how.prints(rank, &set)
}

/// The block of a rank's `syclgraph` inside a launcher: the usual block
/// for its own files plus where every rank's are, when this rank prints;
/// otherwise one line when the rank did not end well (what `completion`
/// did for its files, when it left them unfinished), else nothing. `me`
/// names this command ([`outputs::own_command`]).
#[allow(clippy::too_many_arguments)]
pub fn rank_block(
    rank: &RankInfo,
    job: &Path,
    written: &Written,
    ended: Ended,
    completion: &Completion,
    prints: bool,
    path_var: Option<&OsStr>,
    me: &str,
) -> String {
    let what = format!("rank {}", rank.rank);
    let head = (!completion.is_empty()).then(|| completion.lines(&ended_words(&what, ended), me));
    if prints {
        let mut out = outputs::end_block(written, ended, head.as_deref(), path_var, me);
        out.push_str(&format!(
            "syclgraph:   every rank: {} (rank {}'s files are in {})\n",
            job.display(),
            rank.rank,
            job.join(rank.dir_name()).display()
        ));
        return out;
    }
    if let Some(head) = head {
        return head;
    }
    match ended {
        Ended::Exited(0) => String::new(),
        Ended::Exited(code) => format!(
            "syclgraph: rank {} exited with code {code}; its files are in {}\n",
            rank.rank,
            job.join(rank.dir_name()).display()
        ),
        Ended::Killed(signal) => format!(
            "syclgraph: rank {} was killed by signal {signal} ({}); its files are in {}\n",
            rank.rank,
            signal_name(signal),
            job.join(rank.dir_name()).display()
        ),
    }
}

/// The block the outer `syclgraph` prints once the launcher ended (the
/// job started at `since`): what `completion` did for the ranks that left
/// their files unfinished, the job directory, the ranks found, which are
/// incomplete or not traced, and the job's summary table.
/// `me` names this command ([`outputs::own_command`]).
pub fn job_block(
    job: &Path,
    ended: Ended,
    since: SystemTime,
    completion: &Completion,
    me: &str,
) -> String {
    let mut out = String::new();
    let found = rank_dirs(job, since);
    // The ranks whose files were completed here.
    let completed: Vec<u32> = found
        .iter()
        .filter(|r| {
            completion
                .converted
                .iter()
                .any(|c| c.dir.starts_with(&r.dir))
        })
        .map(|r| r.rank)
        .collect();
    if !completion.is_empty() {
        let how = match ended {
            Ended::Killed(signal) => format!(
                "the launcher was killed by signal {signal} ({})",
                signal_name(signal)
            ),
            Ended::Exited(code) => format!("the launcher exited with code {code}"),
        };
        let ranks = match completed.len() {
            0 => String::new(),
            n => format!(
                ", {n} rank(s) without their files finished: {}",
                list(&completed)
            ),
        };
        out.push_str(&completion.lines(&format!("{how}{ranks}"), me));
    } else if let Ended::Killed(signal) = ended {
        out.push_str(&format!(
            "syclgraph: the launcher was killed by signal {signal} ({}); the files hold what was written until then\n",
            signal_name(signal)
        ));
    }
    if found.is_empty() {
        out.push_str(&format!(
            "syclgraph: no rank wrote to {} (no rank started the SYCL runtime, or tracing could not start: see above)\n",
            job.display()
        ));
        return out;
    }
    let unsampled: Vec<u32> = found
        .iter()
        .filter(|r| r.unsampled())
        .map(|r| r.rank)
        .collect();
    let incomplete: Vec<u32> = found
        .iter()
        .filter(|r| !r.unsampled() && !r.complete() && !completed.contains(&r.rank))
        .map(|r| r.rank)
        .collect();
    out.push_str(&format!(
        "syclgraph: done; {} rank(s) in {} ({} traced{})\n",
        found.len(),
        job.display(),
        found.len() - unsampled.len(),
        match unsampled.len() {
            0 => String::new(),
            n => format!(", {n} not sampled: {}", list(&unsampled)),
        }
    ));
    let size = found
        .iter()
        .find_map(|r| r.meta.as_ref().ok().and_then(|m| m.size));
    if let Some(size) = size {
        let missing: Vec<u32> = (0..size)
            .filter(|r| found.iter().all(|f| f.rank != *r))
            .collect();
        if !missing.is_empty() {
            out.push_str(&format!(
                "syclgraph: ranks without a directory (they did not start the SYCL runtime): {}\n",
                list(&missing)
            ));
        }
    }
    if !incomplete.is_empty() {
        out.push_str(&format!(
            "syclgraph: incomplete (killed, or tracing failed; their files hold what was written until then): rank(s) {}\n",
            list(&incomplete)
        ));
    }
    out.push_str(&job_summary(job, &found));
    out.push_str(&format!(
        "syclgraph:   summary:    {me} report {}\n",
        outputs::shell_word(job)
    ));
    out
}

/// The job's summary, for the job directory `job` whose rank directories
/// are `found`: the cross-rank report (as `syclgraph report JOB` prints it,
/// its CSV files under `JOB/report/`). Should the report fail, one line
/// saying why, then the summary of the lowest traced rank whose files are
/// complete (its `summary.txt`), headed by which rank it is.
pub fn job_summary(job: &Path, found: &[RankDir]) -> String {
    let error = match crate::job_report::job_text(job) {
        Ok(text) => return text,
        Err(e) => format!("syclgraph: cross-rank report: {e}\n"),
    };
    let Some(first) = found.iter().find(|r| !r.unsampled() && r.complete()) else {
        return error;
    };
    match std::fs::read_to_string(first.dir.join("summary.txt")) {
        Ok(text) => format!(
            "{error}syclgraph: rank {}'s summary ({}):\n{text}",
            first.rank,
            first.dir.display()
        ),
        Err(_) => error,
    }
}

/// `0-3,7`: ranks as `--ranks` takes them.
fn list(ranks: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j > i {
            out.push_str(&format!("{}-{}", ranks[i], ranks[j]));
        } else {
            out.push_str(&ranks[i].to_string());
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists_are_ranges() {
        assert_eq!(list(&[]), "");
        assert_eq!(list(&[3]), "3");
        assert_eq!(list(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
    }

    /// A job directory of 5 ranks: 0 complete with a summary, 1 not
    /// sampled, 2 killed, 3 from an earlier job, 4 never started.
    #[test]
    fn the_job_block_names_unsampled_incomplete_and_missing_ranks() {
        let job = std::env::temp_dir().join(format!("syclgraph-job-block-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&job);
        let since = SystemTime::now();
        let now_ns = since.duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        let meta = |rank: u32, start_time_ns: u64, sampled: bool, complete: bool| RankMeta {
            rank,
            size: Some(5),
            local_rank: Some(rank),
            host: "h".into(),
            pid: 100 + rank,
            program: "./app".into(),
            args: Vec::new(),
            start_time_ns,
            syclgraph_version: "0.1.0".into(),
            runtime_version: "sycl 9.0".into(),
            rank_from: "PMI_RANK".into(),
            sampled,
            complete,
        };
        for (rank, m) in [
            (0, meta(0, now_ns, true, true)),
            (1, meta(1, now_ns, false, true)),
            (2, meta(2, now_ns + 1, true, false)),
            (3, meta(3, now_ns - 3_600_000_000_000, true, true)),
        ] {
            let dir = job.join(ranks::rank_dir_name(rank, Some(5)));
            std::fs::create_dir_all(&dir).unwrap();
            m.write(&dir).unwrap();
        }
        std::fs::write(job.join("rank-00000/summary.txt"), "the table\n").unwrap();
        let block = job_block(
            &job,
            Ended::Exited(0),
            since,
            &Completion::default(),
            "syclgraph",
        );
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "syclgraph: done; 3 rank(s) in {} (2 traced, 1 not sampled: 1)",
                job.display()
            )
        );
        assert_eq!(
            lines[1],
            "syclgraph: ranks without a directory (they did not start the SYCL runtime): 3-4"
        );
        assert!(lines[2].ends_with("rank(s) 2"), "{block}");
        // The job's summary is the cross-rank report (here over ranks that
        // wrote no CSV file: its tables are empty, never an error).
        assert_eq!(
            lines[3],
            format!(
                "syclgraph: job {}: 4 rank directories (world size 5), 3 traced; not sampled: 1; incomplete: 2; missing: 4",
                job.display()
            ),
            "{block}"
        );
        assert!(!block.contains("cross-rank report:"), "{block}");
        assert!(job.join("report/operations.csv").exists());
        std::fs::remove_dir_all(&job).unwrap();
    }

    #[test]
    fn only_the_printing_rank_prints() {
        let env = |pairs: &[(&str, &str)]| {
            let env = Env::from_pairs(pairs.iter().copied());
            move |name: &str| env.get(name).map(|v| v.to_string_lossy().into_owned())
        };
        assert!(prints(0, env(&[])));
        assert!(!prints(1, env(&[])));
        assert!(prints(2, env(&[("SYCLGRAPH_RANKS", "2-3")])));
        assert!(prints(1, env(&[("SYCLGRAPH_RANK_SUMMARY", "all")])));
        assert!(!prints(0, env(&[("SYCLGRAPH_RANK_SUMMARY", "none")])));
        assert!(!prints(0, env(&[("SYCLGRAPH_QUIET", "1")])));
    }
}
