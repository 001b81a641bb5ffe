//! `syclgraph report`, `query` and `export --parquet` on an MPI job
//! directory made from real runs: four ranks of `timing` whose work grows
//! with the rank (rank 3 launches each kernel 16 times, the others 1 or 2: 8 times rank 2's
//! work, so that a loaded machine's slower kernels cannot turn the order),
//! each traced by `syclgraph run -o job/rank-0000N`, with the `meta.json`
//! the 24-ranks layout gives, and a fifth rank that was not sampled (only
//! its `meta.json`). Every figure of the report is checked against an
//! oracle computed here from each rank's own files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use syclgraph_graph::timing::format_ns;
use syclgraph_tests::*;

const SRC: &str = "tests/programs/timing.cpp";
/// Launches of each kernel per rank: rank 3 is the one built to be slow.
const WORK: [u32; 4] = [1, 2, 2, 16];

fn meta_json(rank: u64, size: u64, sampled: bool) -> String {
    format!(
        "{{\n  \"rank\": {rank},\n  \"size\": {size},\n  \"local_rank\": {rank},\n  \"host\": \"h{}\",\n  \"pid\": {},\n  \"program\": \"timing\",\n  \"args\": [\"{}\"],\n  \"start_time_ns\": 1,\n  \"syclgraph_version\": \"0.1.0\",\n  \"runtime_version\": \"sycl 9.0\",\n  \"rank_from\": \"PMI_RANK\",\n  \"sampled\": {sampled},\n  \"complete\": true\n}}\n",
        rank % 2,
        1000 + rank,
        WORK.get(rank as usize).copied().unwrap_or(0)
    )
}

/// The job directory, made once per test process.
fn job() -> &'static PathBuf {
    static JOB: OnceLock<PathBuf> = OnceLock::new();
    JOB.get_or_init(|| {
        let job = fresh_dir("mpi_report_job");
        for (rank, n) in WORK.iter().enumerate() {
            let dir = job.join(format!("rank-{rank:05}"));
            let mut cmd = runtime_command(&syclgraph_exe());
            cmd.args(["run", "-q", "-o"])
                .arg(&dir)
                .arg("--")
                .arg(program("timing"))
                .arg(n.to_string());
            let out = output_within(cmd, std::time::Duration::from_secs(120));
            assert!(
                out.status.success(),
                "rank {rank}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(dir.join("meta.json"), meta_json(rank as u64, 5, true)).unwrap();
        }
        let unsampled = job.join("rank-00004");
        std::fs::create_dir_all(&unsampled).unwrap();
        std::fs::write(unsampled.join("meta.json"), meta_json(4, 5, false)).unwrap();
        job
    })
}

fn syclgraph(args: &[&str], job: &Path) -> (i32, String, String) {
    let mut cmd = Command::new(syclgraph_exe());
    cmd.args(args).arg(job);
    let out = cmd.output().expect("run syclgraph");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn int(row: &BTreeMap<String, String>, col: &str) -> i64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?} in {row:?}", row[col]))
}

/// Per operation (kind, name, file, line), per rank: device time, from
/// each rank's own summary.csv.
fn oracle_device_times(
    job: &Path,
) -> BTreeMap<(String, String, String, String), BTreeMap<u64, i64>> {
    let mut ops: BTreeMap<_, BTreeMap<u64, i64>> = BTreeMap::new();
    for rank in 0..WORK.len() as u64 {
        for row in read_csv(&job.join(format!("rank-{rank:05}/summary.csv"))) {
            let key = (
                row["kind"].clone(),
                row["name"].clone(),
                row["source_file"].clone(),
                row["source_line"].clone(),
            );
            *ops.entry(key).or_default().entry(rank).or_default() += int(&row, "total_ns");
        }
    }
    ops
}

#[test]
fn report_names_the_rank_and_kernel_built_to_be_slow_with_each_ranks_own_figures() {
    let job = job();
    let (code, out, err) = syclgraph(&["report"], job);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let first = out.lines().next().unwrap();
    assert!(
        first.ends_with("5 rank directories (world size 5), 4 traced; not sampled: 4"),
        "{first}"
    );
    let ops = read_csv(&job.join("report/operations.csv"));
    let large = [
        tag_line(SRC, "large_profiled"),
        tag_line(SRC, "large_plain"),
    ];
    let top = &ops[0];
    assert!(
        large.contains(&(int(top, "source_line") as u32)) && int(top, "slowest_rank") == 3,
        "the most imbalanced operation is a large kernel on rank 3: {top:?}"
    );
    assert!(
        out.contains(&format!("timing.cpp:{}", top["source_line"])),
        "{out}"
    );
    // Every operation against the oracle.
    let oracle = oracle_device_times(job);
    assert_eq!(ops.len(), oracle.len());
    for op in &ops {
        let key = (
            op["kind"].clone(),
            op["name"].clone(),
            op["source_file"].clone(),
            op["source_line"].clone(),
        );
        let per_rank = &oracle[&key];
        let mut times: Vec<i64> = per_rank.values().copied().collect();
        times.sort();
        let n = times.len();
        let median = (times[(n - 1) / 2] + times[n / 2]) as f64 / 2.0;
        let mean = times.iter().sum::<i64>() as f64 / n as f64;
        let var = times
            .iter()
            .map(|t| (*t as f64 - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let max = *times.last().unwrap();
        let slowest = per_rank
            .iter()
            .filter(|(_, t)| **t == max)
            .map(|(r, _)| *r)
            .min()
            .unwrap();
        assert_eq!(int(op, "ranks"), n as i64, "{op:?}");
        assert_eq!(int(op, "min_ns"), times[0], "{op:?}");
        assert_eq!(int(op, "max_ns"), max, "{op:?}");
        assert!(
            (int(op, "median_ns") as f64 - median).abs() <= 0.5,
            "{op:?} median {median}"
        );
        assert!(
            (int(op, "mean_ns") as f64 - mean).abs() <= 0.5,
            "{op:?} mean {mean}"
        );
        assert!(
            (int(op, "stddev_ns") as f64 - var.sqrt()).abs() <= 1.0,
            "{op:?} sd {}",
            var.sqrt()
        );
        assert_eq!(int(op, "slowest_rank") as u64, slowest, "{op:?}");
        assert!(
            (int(op, "excess_ns") as f64 - (max as f64 - median)).abs() <= 0.5,
            "{op:?}"
        );
    }
    // Per rank against the rank's own files.
    let ranks = read_csv(&job.join("report/ranks.csv"));
    assert_eq!(ranks.len(), 5);
    for row in &ranks[..4] {
        let dir = job.join(format!("rank-{:05}", int(row, "rank")));
        let device: i64 = read_csv(&dir.join("summary.csv"))
            .iter()
            .map(|r| int(r, "total_ns"))
            .sum();
        assert_eq!(int(row, "device_ns"), device);
        let kernels = read_csv(&dir.join("kernels.csv"));
        let end = kernels
            .iter()
            .filter(|k| !k["end_ns"].is_empty())
            .map(|k| int(k, "end_ns"))
            .max()
            .unwrap();
        let submit = kernels.iter().map(|k| int(k, "submit_ns")).min().unwrap();
        assert_eq!(int(row, "span_ns"), end - submit);
        let untimed = kernels.iter().filter(|k| k["timing"] != "ok").count() as i64;
        assert_eq!(int(row, "untimed"), untimed);
        // The run's own summary.txt says the same, in its words.
        let text = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("critical path: "))
            .unwrap();
        let wanted = format!(
            "{} of a {} span",
            format_ns(int(row, "critical_path_ns") as u64),
            format_ns(int(row, "span_ns") as u64)
        );
        assert!(line.contains(&wanted), "{line} vs {wanted}");
        assert_eq!(int(row, "dropped"), 0);
    }
    assert_eq!(
        (ranks[4]["sampled"].as_str(), ranks[4]["device_ns"].as_str()),
        ("0", "")
    );
    // The rank furthest from the median device time is printed first.
    let furthest = ranks[..4]
        .iter()
        .max_by_key(|r| int(r, "vs_median_ns").abs())
        .unwrap();
    let block = out.split("furthest from the median").nth(1).unwrap();
    let first_rank = block.lines().nth(2).unwrap();
    assert!(
        first_rank.starts_with(&format!("{} ", furthest["rank"])),
        "{out}"
    );
}

#[test]
fn query_runs_sql_over_the_tables_and_bad_sql_is_one_line() {
    let job = job();
    let (code, out, err) = syclgraph(
        &[
            "query",
            "SELECT rank, COUNT(*) AS n FROM kernels GROUP BY rank ORDER BY rank",
        ],
        job,
    );
    // `query JOB SQL`: the job comes first.
    assert_eq!(code, 2, "{out}{err}");
    let mut cmd = Command::new(syclgraph_exe());
    cmd.arg("query")
        .arg(job)
        .arg("SELECT rank, COUNT(*) AS n FROM kernels GROUP BY rank ORDER BY rank");
    let res = cmd.output().unwrap();
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let text = String::from_utf8(res.stdout).unwrap();
    let mut wanted = String::from("rank,n\n");
    for rank in 0..WORK.len() {
        let rows = read_csv(&job.join(format!("rank-{rank:05}/kernels.csv"))).len();
        wanted.push_str(&format!("{rank},{rows}\n"));
    }
    assert_eq!(text, wanted);
    let mut cmd = Command::new(syclgraph_exe());
    cmd.arg("query").arg(job).arg("SELEC nonsense");
    let res = cmd.output().unwrap();
    assert_eq!(res.status.code(), Some(2));
    let err = String::from_utf8(res.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("syclgraph: query: "), "{err}");
}

const IMBALANCE_PY: &str = r#"
import math, sys, duckdb, polars as pl
root = sys.argv[1]
# The report rounds as SQLite's ROUND does, halves away from zero (an even
# number of ranks gives a median ending in .5); Python's round() would
# round halves to even.
def ns(x):
    return int(math.floor(x + 0.5))
con = duckdb.connect()
print("compression", con.sql(f"SELECT DISTINCT compression FROM parquet_metadata('{root}/summary/*/*.parquet')").fetchall())
d = con.sql(f"""
  WITH per_rank AS (
    SELECT kind, name, source_file, source_line, rank, SUM(total_ns) AS device_ns
    FROM read_parquet('{root}/summary/*/*.parquet', hive_partitioning = false)
    GROUP BY ALL)
  SELECT kind, name, source_line, arg_max(rank, device_ns) AS slowest_rank,
         MAX(device_ns) - MEDIAN(device_ns) AS excess_ns
  FROM per_rank GROUP BY kind, name, source_file, source_line
  ORDER BY excess_ns DESC LIMIT 1""").fetchall()[0]
print("duckdb", d[0], d[1], d[2], d[3], ns(d[4]))
p = (pl.scan_parquet(f"{root}/summary/*/*.parquet", hive_partitioning=False)
     .group_by("kind", "name", "source_file", "source_line", "rank")
     .agg(pl.col("total_ns").sum().alias("device_ns"))
     .group_by("kind", "name", "source_file", "source_line")
     .agg(pl.col("rank").sort_by("device_ns").last().alias("slowest_rank"),
          (pl.col("device_ns").max() - pl.col("device_ns").median()).alias("excess_ns"))
     .sort("excess_ns", descending=True).head(1).collect())
r = p.row(0, named=True)
print("polars", r["kind"], r["name"], r["source_line"], r["slowest_rank"], ns(r["excess_ns"]))
"#;

#[test]
fn parquet_export_gives_duckdb_and_polars_the_reports_imbalance() {
    let job = job();
    let out_dir = fresh_dir("mpi_report_parquet");
    let mut cmd = Command::new(syclgraph_exe());
    cmd.args(["export", "--parquet", "-o"])
        .arg(&out_dir)
        .arg(job);
    let res = cmd.output().unwrap();
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    for table in [
        "meta",
        "kernels",
        "summary",
        "critical_path",
        "idle_gaps",
        "windows",
    ] {
        assert!(
            out_dir.join(table).join("rank=0/part-0.parquet").is_file(),
            "{table}"
        );
    }
    assert!(out_dir.join("meta/rank=4/part-0.parquet").is_file());
    assert!(
        !out_dir.join("summary/rank=4").exists(),
        "an unsampled rank has only meta"
    );
    let (code, report, _) = syclgraph(
        &["report", "-o", out_dir.join("report").to_str().unwrap()],
        job,
    );
    assert_eq!(code, 0);
    let _ = report;
    let ops = read_csv(&out_dir.join("report/operations.csv"));
    let wanted = format!(
        "{} {} {} {} {}",
        ops[0]["kind"],
        ops[0]["name"],
        ops[0]["source_line"],
        ops[0]["slowest_rank"],
        ops[0]["excess_ns"]
    );
    let py = out_dir.join("imbalance.py");
    std::fs::write(&py, IMBALANCE_PY).unwrap();
    let res = Command::new(venv().join("bin/python"))
        .arg(&py)
        .arg(&out_dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&res.stdout);
    assert!(
        res.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(text.contains("compression [('SNAPPY',)]"), "{text}");
    assert!(
        text.contains(&format!("duckdb {wanted}\n")),
        "{text} vs {wanted}"
    );
    assert!(
        text.contains(&format!("polars {wanted}\n")),
        "{text} vs {wanted}"
    );
}

#[test]
fn a_thousand_ranks_report_and_export() {
    // 1,024 rank directories: copies of the real ranks' files, each rank's
    // device times scaled by its own factor so that the report has a known
    // answer (rank 1023 is the slowest in every operation).
    let job = job();
    let big = fresh_dir("mpi_report_1024");
    for rank in 0..1024u64 {
        let src = job.join(format!("rank-{:05}", rank % 4));
        let dir = big.join(format!("rank-{rank:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        for file in [
            "kernels.csv",
            "critical_path.csv",
            "idle_gaps.csv",
            "summary.txt",
            "windows.csv",
        ] {
            std::fs::copy(src.join(file), dir.join(file)).unwrap();
        }
        let summary = std::fs::read_to_string(src.join("summary.csv")).unwrap();
        let mut lines = summary.lines();
        let header = lines.next().unwrap();
        let total = header.split(',').position(|c| c == "total_ns").unwrap();
        let mut text = format!("{header}\n");
        for line in lines {
            let mut fields: Vec<String> = line.split(',').map(String::from).collect();
            fields[total] = (1_000_000 + rank * 1000 + rank % 7).to_string();
            text.push_str(&fields.join(","));
            text.push('\n');
        }
        std::fs::write(dir.join("summary.csv"), text).unwrap();
        std::fs::write(dir.join("meta.json"), meta_json(rank, 1024, true)).unwrap();
    }
    let (code, out, err) = syclgraph(&["report"], &big);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let ops = read_csv(&big.join("report/operations.csv"));
    for op in &ops {
        assert_eq!(
            (int(op, "ranks"), int(op, "slowest_rank")),
            (1024, 1023),
            "{op:?}"
        );
        assert_eq!(int(op, "min_ns"), 1_000_000);
        assert_eq!(int(op, "max_ns"), 1_000_000 + 1023 * 1000 + 1023 % 7);
    }
    assert_eq!(read_csv(&big.join("report/ranks.csv")).len(), 1024);
    let mut cmd = Command::new(syclgraph_exe());
    cmd.args(["export", "--parquet"]).arg(&big);
    let res = cmd.output().unwrap();
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    assert!(big
        .join("parquet/kernels/rank=1023/part-0.parquet")
        .is_file());
    std::fs::remove_dir_all(&big).unwrap();
}

#[test]
fn an_untimed_job_reports_no_device_time_rather_than_zero() {
    // A real job without device timing: the launcher outside mpiexec.
    let job = fresh_dir("mpi_report_untimed");
    let mut cmd = mpi_command(&syclgraph_exe(), &repo_root());
    cmd.args(["run", "-q", "--no-device-timing", "-o"])
        .arg(&job)
        .arg("--")
        .arg(mpiexec())
        .args(["-n", "2"])
        .arg(program("mpi_ranks"));
    let out = output_within(cmd, std::time::Duration::from_secs(180));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, stdout, stderr) = syclgraph(&["report"], &job);
    assert_eq!(code, 0, "{stderr}");
    let printed = format!("{stdout}{stderr}");
    // Each operation is counted on both ranks, and has no device figure:
    // not 0 ns, not a slowest rank.
    let ops = read_csv(&job.join("report/operations.csv"));
    assert!(ops.len() >= 4, "{ops:?}");
    for op in &ops {
        assert_eq!(int(op, "ranks"), 2, "{op:?}");
        assert!(int(op, "calls") >= 2, "{op:?}");
        for col in [
            "min_ns",
            "median_ns",
            "max_ns",
            "mean_ns",
            "stddev_ns",
            "slowest_rank",
            "excess_ns",
            "fastest_rank",
        ] {
            assert_eq!(op[col], "", "{col}: {op:?}");
        }
    }
    let ranks = read_csv(&job.join("report/ranks.csv"));
    assert_eq!(ranks.len(), 2, "{ranks:?}");
    for rank in &ranks {
        assert_eq!(rank["device_ns"], "", "{rank:?}");
        assert_eq!(rank["vs_median_ns"], "", "{rank:?}");
        // The untimed count is each rank's kernels.csv rows.
        let rows = read_csv(&job.join(format!("rank-{:05}/kernels.csv", int(rank, "rank"))));
        assert_eq!(int(rank, "untimed"), rows.len() as i64, "{rank:?}");
    }
    assert!(!printed.contains("0 ns"), "{printed}");
    assert!(!printed.contains("rank 0 "), "{printed}");
}
