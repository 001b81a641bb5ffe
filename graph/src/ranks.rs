//! Which rank of an MPI job a process is, read from its launcher's
//! environment; which ranks a job traces (`--ranks 0,8-15`); and the name
//! of a rank's directory (`rank-00003`). Pure functions of their inputs:
//! the subscriber and the `syclgraph` command both decide with them.

use std::fmt;

/// One launcher's variables: the rank, then (when it sets them) the world
/// size and the local rank.
struct Launcher {
    rank: &'static str,
    size: Option<&'static str>,
    local_rank: Option<&'static str>,
}

/// The launchers' variables in precedence order: the MPI libraries' own
/// first, the schedulers' (`SLURM_PROCID`, `FLUX_TASK_RANK`) last, since a
/// batch script's values leak into the processes an `mpiexec` inside it
/// starts.
const LAUNCHERS: &[Launcher] = &[
    Launcher {
        rank: "OMPI_COMM_WORLD_RANK",
        size: Some("OMPI_COMM_WORLD_SIZE"),
        local_rank: Some("OMPI_COMM_WORLD_LOCAL_RANK"),
    },
    Launcher {
        rank: "MV2_COMM_WORLD_RANK",
        size: Some("MV2_COMM_WORLD_SIZE"),
        local_rank: Some("MV2_COMM_WORLD_LOCAL_RANK"),
    },
    Launcher {
        rank: "PMIX_RANK",
        size: None,
        local_rank: None,
    },
    Launcher {
        rank: "PALS_RANKID",
        size: None,
        local_rank: Some("PALS_LOCAL_RANKID"),
    },
    Launcher {
        rank: "PMI_RANK",
        size: Some("PMI_SIZE"),
        local_rank: Some("MPI_LOCALRANKID"),
    },
    Launcher {
        rank: "SLURM_PROCID",
        size: Some("SLURM_NTASKS"),
        local_rank: Some("SLURM_LOCALID"),
    },
    Launcher {
        rank: "FLUX_TASK_RANK",
        size: Some("FLUX_JOB_SIZE"),
        local_rank: Some("FLUX_TASK_LOCAL_ID"),
    },
];

/// Every variable [`detect`] reads, for documentation and tests.
pub fn rank_variables() -> impl Iterator<Item = &'static str> {
    LAUNCHERS
        .iter()
        .flat_map(|l| [Some(l.rank), l.size, l.local_rank])
        .flatten()
}

/// Where a process stands in its MPI job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    /// The rank in the job.
    pub rank: u32,
    /// The world size, when the launcher says.
    pub size: Option<u32>,
    /// The rank among the job's processes on this host, when known.
    pub local_rank: Option<u32>,
    /// The variable that gave the rank.
    pub rank_from: &'static str,
}

impl RankInfo {
    /// The rank's directory name: `rank-` and the rank zero-padded to five
    /// digits, or to the digits of the world size when it has more.
    pub fn dir_name(&self) -> String {
        rank_dir_name(self.rank, self.size)
    }
}

/// `rank-00003`: the directory of `rank` in a job of `size` ranks.
pub fn rank_dir_name(rank: u32, size: Option<u32>) -> String {
    let digits = size.map_or(0, |s| s.saturating_sub(1).to_string().len());
    format!("rank-{rank:0width$}", width = digits.max(5))
}

/// The rank number of a directory named by [`rank_dir_name`].
pub fn rank_of_dir_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("rank-")?;
    if digits.len() < 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The process's rank from its environment (`lookup` reads one variable):
/// the first launcher variable of [`LAUNCHERS`] that holds a whole number.
/// The size and local rank come from that launcher's variables, else from
/// the first other launcher that sets them. `None`: not under MPI.
pub fn detect(lookup: impl Fn(&str) -> Option<String>) -> Option<RankInfo> {
    let number = |name: &str| lookup(name).and_then(|v| v.trim().parse::<u32>().ok());
    let (winner, rank) = LAUNCHERS
        .iter()
        .find_map(|l| number(l.rank).map(|r| (l, r)))?;
    let from_any = |pick: fn(&Launcher) -> Option<&'static str>| {
        std::iter::once(winner)
            .chain(LAUNCHERS.iter())
            .find_map(|l| pick(l).and_then(number))
    };
    let size = from_any(|l| l.size).filter(|&s| s > rank);
    let local_rank = from_any(|l| l.local_rank);
    Some(RankInfo {
        rank,
        size,
        local_rank,
        rank_from: winner.rank,
    })
}

/// A set of ranks, as `--ranks` and `SYCLGRAPH_RANKS` give it: numbers and
/// inclusive ranges separated by commas (`0,8-15`), or `all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankSet {
    /// Inclusive ranges, sorted and merged; empty means every rank.
    ranges: Vec<(u32, u32)>,
}

impl RankSet {
    /// Every rank.
    pub fn all() -> RankSet {
        RankSet { ranges: Vec::new() }
    }

    /// Reads `0,8-15` or `all`; the error says what is wrong in one line.
    pub fn parse(text: &str) -> Result<RankSet, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("all") {
            return Ok(RankSet::all());
        }
        let mut ranges = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let number = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("{part:?} is not a rank or a range of ranks like 8-15"))
            };
            let range = match part.split_once('-') {
                Some((low, high)) => (number(low)?, number(high)?),
                None => (number(part)?, number(part)?),
            };
            if range.0 > range.1 {
                return Err(format!("{part:?} is an empty range"));
            }
            ranges.push(range);
        }
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (low, high) in ranges {
            match merged.last_mut() {
                Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
                _ => merged.push((low, high)),
            }
        }
        Ok(RankSet { ranges: merged })
    }

    /// True when `rank` is in the set.
    pub fn contains(&self, rank: u32) -> bool {
        self.ranges.is_empty() || self.ranges.iter().any(|&(l, h)| (l..=h).contains(&rank))
    }

    /// The lowest rank in the set (0 for every rank).
    pub fn first(&self) -> u32 {
        self.ranges.first().map_or(0, |r| r.0)
    }

    /// The highest rank in the set (`None` for every rank).
    pub fn last(&self) -> Option<u32> {
        self.ranges.last().map(|r| r.1)
    }

    /// True when the set holds every rank.
    pub fn is_all(&self) -> bool {
        self.ranges.is_empty()
    }
}

impl fmt::Display for RankSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ranges.is_empty() {
            return f.write_str("all");
        }
        for (i, &(low, high)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if low == high {
                write!(f, "{low}")?;
            } else {
                write!(f, "{low}-{high}")?;
            }
        }
        Ok(())
    }
}

/// Which ranks of an MPI job print their summary on stderr
/// (`SYCLGRAPH_RANK_SUMMARY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankSummary {
    /// `first` (default): the lowest traced rank only.
    First,
    /// `all`: every traced rank, as without MPI.
    All,
    /// `none`: no rank (`syclgraph run` outside the launcher prints the
    /// job's summary once the job ended).
    None,
}

impl RankSummary {
    /// Reads `first`, `all` or `none`.
    pub fn parse(text: &str) -> Option<RankSummary> {
        match text.trim() {
            "first" => Some(RankSummary::First),
            "all" => Some(RankSummary::All),
            "none" => Some(RankSummary::None),
            _ => None,
        }
    }

    /// True when `rank` prints its summary, `ranks` being the traced ones.
    pub fn prints(self, rank: u32, ranks: &RankSet) -> bool {
        match self {
            RankSummary::First => rank == ranks.first(),
            RankSummary::All => ranks.contains(rank),
            RankSummary::None => false,
        }
    }
}

/// The job directory's default name when the output directory is not
/// given: `syclgraph-job-<id>` with the batch system's job id, else
/// `syclgraph-job`.
pub fn default_job_dir_name(lookup: impl Fn(&str) -> Option<String>) -> String {
    ["SLURM_JOB_ID", "PBS_JOBID", "FLUX_JOB_ID"]
        .iter()
        .find_map(|name| {
            lookup(name)
                .map(|id| {
                    id.trim().replace(
                        |c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '-',
                        "_",
                    )
                })
                .filter(|id| !id.is_empty())
        })
        .map_or_else(
            || "syclgraph-job".to_string(),
            |id| format!("syclgraph-job-{id}"),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn no_launcher_no_rank() {
        assert_eq!(detect(env(&[])), None);
        assert_eq!(detect(env(&[("PMI_RANK", "x"), ("PMI_SIZE", "4")])), None);
    }

    #[test]
    fn hydra_gives_rank_size_and_local_rank() {
        let info = detect(env(&[
            ("PMI_RANK", "3"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALRANKID", "1"),
        ]))
        .unwrap();
        assert_eq!(
            info,
            RankInfo {
                rank: 3,
                size: Some(4),
                local_rank: Some(1),
                rank_from: "PMI_RANK"
            }
        );
        assert_eq!(info.dir_name(), "rank-00003");
    }

    #[test]
    fn the_mpi_library_wins_over_the_scheduler_of_the_batch_script() {
        // `mpiexec` inside an `sbatch` script: SLURM_PROCID=0 leaks to every rank.
        let info = detect(env(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
            ("SLURM_LOCALID", "0"),
            ("PMI_RANK", "5"),
            ("PMI_SIZE", "8"),
        ]))
        .unwrap();
        assert_eq!(
            (info.rank, info.size, info.rank_from),
            (5, Some(8), "PMI_RANK")
        );
        // Open MPI before PMIx (Open MPI 5 sets both).
        let info = detect(env(&[
            ("PMIX_RANK", "2"),
            ("OMPI_COMM_WORLD_RANK", "2"),
            ("OMPI_COMM_WORLD_SIZE", "3"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "0"),
        ]))
        .unwrap();
        assert_eq!(info.rank_from, "OMPI_COMM_WORLD_RANK");
        assert_eq!((info.size, info.local_rank), (Some(3), Some(0)));
    }

    #[test]
    fn size_and_local_rank_come_from_other_launchers_when_the_winner_has_none() {
        // PALS under an aprun/mpiexec that also sets PMI_SIZE.
        let info = detect(env(&[
            ("PALS_RANKID", "7"),
            ("PALS_LOCAL_RANKID", "3"),
            ("PMI_SIZE", "12"),
        ]))
        .unwrap();
        assert_eq!(
            (info.rank, info.size, info.local_rank, info.rank_from),
            (7, Some(12), Some(3), "PALS_RANKID")
        );
        // A size that cannot hold the rank is not believed.
        let info = detect(env(&[("PMIX_RANK", "7"), ("SLURM_NTASKS", "4")])).unwrap();
        assert_eq!(info.size, None);
        for var in ["SLURM_PROCID", "FLUX_TASK_RANK", "MV2_COMM_WORLD_RANK"] {
            assert_eq!(detect(env(&[(var, " 1 ")])).unwrap().rank_from, var);
        }
    }

    #[test]
    fn directory_names_pad_to_five_or_the_size() {
        assert_eq!(rank_dir_name(0, None), "rank-00000");
        assert_eq!(rank_dir_name(12, Some(100_000)), "rank-00012");
        assert_eq!(rank_dir_name(12, Some(100_001)), "rank-000012");
        assert_eq!(rank_dir_name(123_456, Some(1_000_000)), "rank-123456");
        assert_eq!(rank_of_dir_name("rank-00012"), Some(12));
        assert_eq!(rank_of_dir_name("rank-000012"), Some(12));
        assert_eq!(rank_of_dir_name("rank-12"), None);
        assert_eq!(rank_of_dir_name("rank-0001x"), None);
        assert_eq!(rank_of_dir_name("pid-00012"), None);
    }

    #[test]
    fn rank_sets_parse_merge_and_print() {
        let set = RankSet::parse("8-15, 0,9,16").unwrap();
        assert_eq!(set.to_string(), "0,8-16");
        assert!(set.contains(0) && set.contains(12) && set.contains(16));
        assert!(!set.contains(1) && !set.contains(17));
        assert_eq!((set.first(), set.last()), (0, Some(16)));
        assert_eq!(RankSet::parse("all").unwrap().last(), None);
        assert!(RankSet::parse("all").unwrap().contains(12345));
        assert!(RankSet::parse("all").unwrap().is_all());
        assert_eq!(RankSet::parse("3").unwrap().first(), 3);
        for bad in ["", "x", "1,", "5-2", "-3", "1-", "1--2"] {
            assert!(RankSet::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn job_directory_default_names_the_batch_job() {
        assert_eq!(default_job_dir_name(env(&[])), "syclgraph-job");
        assert_eq!(
            default_job_dir_name(env(&[("PBS_JOBID", "1234.aurora-pbs/x")])),
            "syclgraph-job-1234.aurora-pbs_x"
        );
        assert_eq!(
            default_job_dir_name(env(&[("SLURM_JOB_ID", "77"), ("PBS_JOBID", "1")])),
            "syclgraph-job-77"
        );
    }

    #[test]
    fn every_documented_variable_is_read() {
        let names: Vec<&str> = rank_variables().collect();
        for var in [
            "PMI_RANK",
            "PMI_SIZE",
            "PMIX_RANK",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_LOCAL_RANK",
            "PALS_RANKID",
            "MPI_LOCALRANKID",
            "SLURM_PROCID",
            "SLURM_NTASKS",
            "SLURM_LOCALID",
            "FLUX_TASK_RANK",
            "MV2_COMM_WORLD_RANK",
        ] {
            assert!(names.contains(&var), "{var}");
        }
    }
}
