//! `syclgraph report --perfetto merged.pftrace JOB` on a real 4-rank MPI
//! job (`syclgraph run -o out -- mpiexec -n 4 mpi_ranks`, the `mpich`
//! wheel): the merged trace, read with Perfetto's own protos by
//! `tests/scripts/check_merged_pftrace.py`, has one process per chosen rank
//! named `rank R (host, pid P)` after its `meta.json`, and each rank's events
//! are its own trace's (same timestamps, names and tracks, as many slices
//! and flows). The default choice (slowest, median, fastest) is checked
//! against the device times of each rank's own `summary.csv`; `--ranks`
//! out of range is one line; cut and missing traces are merged as far as
//! they read and named, and ranks on two hosts are said to be on two clocks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use syclgraph_tests::*;

/// The job, run once per test process.
fn job() -> &'static PathBuf {
    static JOB: OnceLock<PathBuf> = OnceLock::new();
    JOB.get_or_init(|| {
        let cwd = fresh_dir("mpi-timeline");
        let mut cmd = mpi_command(&syclgraph_exe(), &cwd);
        cmd.args(["run", "-o", "out", "--", "mpiexec", "-n", "4"])
            .arg(program("mpi_ranks"));
        let out = output_within(cmd, Duration::from_secs(180));
        assert!(
            out.status.success(),
            "the job failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        cwd.join("out")
    })
}

fn rank_dir(job: &Path, rank: u64) -> PathBuf {
    job.join(format!("rank-{rank:05}"))
}

/// `syclgraph report <args> JOB`: exit code, stdout, stderr.
fn report(job: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(syclgraph_exe())
        .arg("report")
        .args(args)
        .arg(job)
        .output()
        .expect("run syclgraph");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The checker's JSON for one rank: `"R": {...}` cut out of the line.
fn rank_json(json: &str, rank: u64) -> &str {
    let at = json
        .find(&format!("\"{rank}\": {{"))
        .unwrap_or_else(|| panic!("rank {rank} not in {json}"));
    let rest = &json[at..];
    &rest[..rest.find('}').unwrap() + 1]
}

/// A number field of one rank's JSON.
fn field(rank: &str, name: &str) -> u64 {
    let at = rank.find(&format!("\"{name}\": ")).unwrap() + name.len() + 4;
    rank[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Each rank merged has the slices of its own trace, and some.
fn check_slices(json: &str, ranks: &[u64]) {
    for &rank in ranks {
        let r = rank_json(json, rank);
        assert_eq!(
            field(r, "slices"),
            field(r, "own_slices"),
            "rank {rank}: {r}"
        );
        assert!(field(r, "slices") > 10, "rank {rank}: {r}");
    }
}

#[test]
fn default_merge_is_the_slowest_median_and_fastest_rank_one_process_each() {
    let job = job();
    let merged = job.join("merged.pftrace");
    let (code, out, err) = report(job, &["--perfetto", merged.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    // The oracle: each rank's device time from its own summary.csv.
    let mut by_time: Vec<(i64, u64)> = (0..4)
        .map(|rank| {
            let total = read_csv(&rank_dir(job, rank).join("summary.csv"))
                .iter()
                .map(|r| r["total_ns"].parse::<i64>().unwrap())
                .sum();
            (total, rank)
        })
        .collect();
    // Slowest first; ties by rank, as the report orders them.
    by_time.sort_by_key(|&(t, r)| (-t, r));
    let (slowest, median, fastest) = (by_time[0].1, by_time[2].1, by_time[3].1);
    // The report's per-rank table agrees with the oracle.
    for row in read_csv(&job.join("report/ranks.csv")) {
        let rank: u64 = row["rank"].parse().unwrap();
        let want = by_time.iter().find(|b| b.1 == rank).unwrap().0;
        assert_eq!(row["device_ns"], want.to_string(), "rank {rank}");
    }
    let line = out
        .lines()
        .find(|l| l.starts_with("syclgraph: merged timeline of ranks "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.starts_with(&format!(
            "syclgraph: merged timeline of ranks {slowest} (slowest, device "
        )) && line.contains(&format!(", {median} (median, device "))
            && line.contains(&format!(", {fastest} (fastest, device ")),
        "{line} vs {by_time:?}"
    );
    assert!(
        line.ends_with("(open it at https://ui.perfetto.dev)"),
        "{line}"
    );
    let json = check_merged_pftrace(
        &merged,
        &[
            rank_dir(job, slowest),
            rank_dir(job, median),
            rank_dir(job, fastest),
        ],
    );
    check_slices(&json, &[slowest, median, fastest]);
    // One host: no clock note.
    assert!(json.contains("\"labels\": []"), "{json}");
}

#[test]
fn ranks_option_chooses_and_out_of_range_is_one_line() {
    let job = job();
    let merged = job.join("chosen.pftrace");
    let (code, out, err) = report(
        job,
        &["--perfetto", merged.to_str().unwrap(), "--ranks", "0,2-3"],
    );
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert!(
        out.contains("syclgraph: merged timeline of ranks 0 (device "),
        "{out}"
    );
    let json = check_merged_pftrace(
        &merged,
        &[rank_dir(job, 0), rank_dir(job, 2), rank_dir(job, 3)],
    );
    check_slices(&json, &[0, 2, 3]);

    let gone = job.join("never.pftrace");
    let (code, out, err) = report(
        job,
        &["--perfetto", gone.to_str().unwrap(), "--ranks", "0,8-15"],
    );
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err,
        format!(
            "syclgraph: --ranks 0,8-15: the job {} has ranks 0-3 only\n",
            job.display()
        )
    );
    assert!(!gone.exists());

    // A rank's own trace as the output: refused before anything is written.
    let own = rank_dir(job, 0).join("trace.pftrace");
    let before = std::fs::read(&own).unwrap();
    let (code, _, err) = report(job, &["--perfetto", own.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("syclgraph: ") && err.contains("that is rank 0's own trace"),
        "{err}"
    );
    assert_eq!(std::fs::read(&own).unwrap(), before);
}

#[test]
fn cut_and_missing_traces_merge_as_far_as_they_read_and_two_hosts_are_said() {
    let job = job();
    let copy = fresh_dir("mpi-timeline-damaged");
    for rank in 0..4 {
        let to = rank_dir(&copy, rank);
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(rank_dir(job, rank)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    // Rank 1 killed while writing: its trace ends inside a packet.
    let trace = rank_dir(&copy, 1).join("trace.pftrace");
    let bytes = std::fs::read(&trace).unwrap();
    std::fs::write(&trace, &bytes[..bytes.len() * 2 / 3]).unwrap();
    // Rank 2 wrote none.
    std::fs::remove_file(rank_dir(&copy, 2).join("trace.pftrace")).unwrap();
    // Rank 3 ran on another host.
    let meta = rank_dir(&copy, 3).join("meta.json");
    let text = std::fs::read_to_string(&meta).unwrap();
    let host = text
        .lines()
        .find(|l| l.trim_start().starts_with("\"host\""))
        .unwrap()
        .to_string();
    std::fs::write(&meta, text.replace(&host, "  \"host\": \"other-host\",")).unwrap();

    let merged = copy.join("merged.pftrace");
    let (code, out, err) = report(
        &copy,
        &["--perfetto", merged.to_str().unwrap(), "--ranks", "all"],
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("syclgraph: merged timeline: rank 1: trace.pftrace is cut after ")
            && lines[0].ends_with(": merged as far as it reads"),
        "{err}"
    );
    assert_eq!(
        lines[1],
        "syclgraph: merged timeline: rank 2: no trace.pftrace"
    );
    assert!(
        lines[2].starts_with("syclgraph: merged timeline: the ranks ran on 2 hosts (other-host, ")
            && lines[2].ends_with("so ranks on different hosts do not line up"),
        "{err}"
    );
    let json = check_merged_pftrace(
        &merged,
        &[rank_dir(&copy, 0), rank_dir(&copy, 1), rank_dir(&copy, 3)],
    );
    check_slices(&json, &[0, 3]);
    // The cut rank: its whole packets, fewer slices than the full trace.
    let cut = rank_json(&json, 1);
    assert_eq!(field(cut, "slices"), field(cut, "own_slices"), "{cut}");
    let whole = job.join("rank1.pftrace");
    let (code, _, err) = report(
        job,
        &["--perfetto", whole.to_str().unwrap(), "--ranks", "1"],
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let whole = check_merged_pftrace(&whole, &[rank_dir(job, 1)]);
    assert!(
        field(cut, "slices") < field(rank_json(&whole, 1), "slices"),
        "{cut} vs {whole}"
    );
    // Every process says whose clock it is on.
    for rank in [0, 1, 3] {
        assert!(
            rank_json(&json, rank).contains("\"labels\": [\"clock: this host's own"),
            "{json}"
        );
    }
    std::fs::remove_dir_all(&copy).unwrap();
}

/// Each rank's `regions.csv` row for `region`: (commands, device_ns).
fn region_of(job: &Path, rank: u64, region: &str) -> (u64, u64) {
    let rows = read_csv(&rank_dir(job, rank).join("regions.csv"));
    let row = rows
        .iter()
        .find(|r| r["region"] == region)
        .unwrap_or_else(|| panic!("rank {rank}: no {region}: {rows:?}"));
    (
        row["commands"].parse().unwrap(),
        row["device_ns"].parse().unwrap(),
    )
}

const REGIONS_PY: &str = r#"
import sys, duckdb
root = sys.argv[1]
con = duckdb.connect()
print("slowest", con.sql(f"""SELECT rank FROM read_parquet('{root}/regions/*/*.parquet', hive_partitioning = false)
  WHERE name = 'backward' ORDER BY device_ns DESC LIMIT 1""").fetchall()[0][0])
print("rows", con.sql(f"""SELECT COUNT(*) FROM read_parquet('{root}/kernels/*/*.parquet', hive_partitioning = false)
  WHERE region = 'step/backward'""").fetchall()[0][0])
"#;

#[test]
fn which_ranks_backward_is_slowest_is_one_command_and_regions_reach_query_and_parquet() {
    // mpi_ranks: "step" holds "forward" (one kernel on every rank) and
    // "backward" (rank r's own r+1 kernels).
    let job = job();
    let backward: Vec<(u64, u64)> = (0..4).map(|r| region_of(job, r, "step/backward")).collect();
    for (rank, &(commands, _)) in backward.iter().enumerate() {
        assert_eq!(commands, rank as u64 + 1, "rank {rank}");
        assert_eq!(region_of(job, rank as u64, "step/forward").0, 1);
    }
    // Rank 3 has the most work, but kernel times on this shared CPU device
    // vary 2x from run to run: the oracle is each rank's own file.
    let slowest = (0..4).max_by_key(|&r| backward[r].1).unwrap();
    // The one command.
    let (code, out, err) = report(job, &["--by", "region"]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("step/backward "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(&format!("rank {slowest}")), "{line}");
    assert!(
        line.contains(&syclgraph_graph::timing::format_ns(backward[slowest].1)),
        "{line} vs {backward:?}"
    );
    // The regions table and the kernels' region column in SQL.
    let query = |sql: &str| {
        let out = Command::new(syclgraph_exe())
            .arg("query")
            .arg(job)
            .arg(sql)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let want: String = backward
        .iter()
        .enumerate()
        .map(|(r, (c, d))| format!("{r},{c},{d}\n"))
        .collect();
    assert_eq!(
        query("SELECT rank, commands, device_ns FROM regions WHERE region = 'step/backward' ORDER BY rank"),
        format!("rank,commands,device_ns\n{want}")
    );
    assert_eq!(
        query("SELECT rank, COUNT(*) AS n FROM kernels WHERE region = 'step/backward' GROUP BY rank ORDER BY rank"),
        "rank,n\n0,1\n1,2\n2,3\n3,4\n"
    );
    // Parquet: DuckDB finds the same.
    let parquet = fresh_dir("mpi-timeline-parquet");
    let out = Command::new(syclgraph_exe())
        .args(["export", "--parquet", "-o"])
        .arg(&parquet)
        .arg(job)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let py = parquet.join("regions.py");
    std::fs::write(&py, REGIONS_PY).unwrap();
    let res = Command::new(venv().join("bin/python"))
        .arg(&py)
        .arg(&parquet)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(
        res.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&res.stderr)
    );
    assert_eq!(text, format!("slowest {slowest}\nrows 10\n"));
}
