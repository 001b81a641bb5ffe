//! A job directory: the `rank-NNNNN/` directories that one MPI job's ranks
//! wrote under it (docs/guide/mpi.md).

use std::path::{Path, PathBuf};

/// One rank's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankDir {
    /// The rank, from the directory's name.
    pub rank: u64,
    /// The directory.
    pub dir: PathBuf,
}

/// The rank directories under `job`, by rank; empty when `job` is not a
/// job directory (a single process's outputs).
pub fn rank_dirs(job: &Path) -> Result<Vec<RankDir>, String> {
    let entries =
        std::fs::read_dir(job).map_err(|e| format!("{}: cannot list it ({e})", job.display()))?;
    let mut ranks: Vec<RankDir> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let digits = name.to_str()?.strip_prefix("rank-")?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let rank = digits.parse().ok()?;
            let dir = e.path();
            dir.is_dir().then_some(RankDir { rank, dir })
        })
        .collect();
    ranks.sort_by_key(|r| r.rank);
    Ok(ranks)
}

/// Whether `dir` holds rank directories (`rank-<digits>/`).
pub fn is_job_dir(dir: &Path) -> bool {
    rank_dirs(dir).is_ok_and(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_directories_by_number() {
        let dir = std::env::temp_dir().join(format!("syclgraph-job-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["rank-00010", "rank-00002", "rank-x", "pid-3", "rank-"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("rank-00007"), "").unwrap();
        let ranks: Vec<u64> = rank_dirs(&dir).unwrap().iter().map(|r| r.rank).collect();
        assert_eq!(ranks, [2, 10]);
        assert!(is_job_dir(&dir));
        assert!(!is_job_dir(&dir.join("pid-3")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
