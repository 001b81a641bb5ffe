//! MPI jobs on real MPI (the `mpich` wheel's `mpiexec`, from
//! scripts/setup.sh): a 4-rank job of the C++ MPI + SYCL program
//! (`tests/programs/mpi/mpi_ranks.cpp`, rank r runs r+1 `rank_work`
//! kernels) and of the mpi4py + dpnp script (`tests/programs/mpi_ranks.py`,
//! rank r runs r+1 `remainder` kernels), launched both ways: syclgraph
//! inside `mpiexec` and `mpiexec` inside syclgraph. Each gives one
//! `rank-NNNNN/` per rank with its `meta.json`, one summary table on
//! stderr, and per-rank files that match the work: the device time each
//! rank's `summary.csv` gives `rank_work` is the sum of the times the
//! program itself read from its events (the oracle). Sampling leaves the
//! other ranks with `meta.json` only; a rank killed by SIGTERM stays
//! `"complete": false` and is named, its files completed by the outer
//! syclgraph from its journal.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use syclgraph_graph::rank_meta::RankMeta;
use syclgraph_tests::*;

/// Longest a job may take on a loaded 2-core machine.
const LIMIT: Duration = Duration::from_secs(120);

/// `mpiexec -n 4 syclgraph run <run_args> -- <app>`.
fn inside(cwd: &Path, run_args: &[&str], app: &[OsString]) -> Command {
    let mut cmd = mpi_command(&mpiexec(), cwd);
    cmd.args(["-n", "4"])
        .arg(syclgraph_exe())
        .arg("run")
        .args(run_args)
        .arg("--")
        .args(app);
    cmd
}

/// `syclgraph run <run_args> -- mpiexec -n 4 <app>`.
fn outside(cwd: &Path, run_args: &[&str], app: &[OsString]) -> Command {
    outside_with("mpiexec", &["-n", "4"], cwd, run_args, app)
}

/// `syclgraph run <run_args> -- <launcher> <launcher_args> <app>`.
fn outside_with(
    launcher: &str,
    launcher_args: &[&str],
    cwd: &Path,
    run_args: &[&str],
    app: &[OsString],
) -> Command {
    let mut cmd = mpi_command(&syclgraph_exe(), cwd);
    cmd.arg("run")
        .args(run_args)
        .arg("--")
        .arg(launcher)
        .args(launcher_args)
        .args(app);
    cmd
}

fn cpp_app(extra: &[&str]) -> Vec<OsString> {
    let mut app = vec![program("mpi_ranks").into_os_string()];
    app.extend(extra.iter().map(OsString::from));
    app
}

fn python_app() -> Vec<OsString> {
    vec![
        venv().join("bin/python").into_os_string(),
        repo_root()
            .join("tests/programs/mpi_ranks.py")
            .into_os_string(),
    ]
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a job to its end; it must succeed.
fn job(cmd: Command) -> Output {
    let out = output_within(cmd, LIMIT);
    assert!(
        out.status.success(),
        "the job failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The `meta.json` of every rank directory of `dir`, by rank; there must be
/// exactly `rank-00000` to `rank-00003` (beside the cross-rank report's
/// `report/` when syclgraph ran outside the launcher).
fn metas(dir: &Path) -> BTreeMap<u32, RankMeta> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "report")
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["rank-00000", "rank-00001", "rank-00002", "rank-00003"],
        "{}",
        dir.display()
    );
    names
        .iter()
        .map(|n| {
            let meta = RankMeta::read(&dir.join(n)).unwrap();
            (meta.rank, meta)
        })
        .collect()
}

/// Checks what every rank's `meta.json` says of a finished job.
fn check_metas(metas: &BTreeMap<u32, RankMeta>, program: &Path, sampled: &[u32]) {
    let pids: std::collections::BTreeSet<u32> = metas.values().map(|m| m.pid).collect();
    assert_eq!(pids.len(), 4, "one process per rank: {metas:?}");
    for (rank, meta) in metas {
        assert_eq!(meta.size, Some(4), "{meta:?}");
        assert_eq!(meta.local_rank, Some(*rank), "one host: {meta:?}");
        assert_eq!(meta.rank_from, "PMI_RANK", "hydra's variable: {meta:?}");
        assert_eq!(Path::new(&meta.program), program, "{meta:?}");
        assert!(meta.runtime_version.starts_with("sycl "), "{meta:?}");
        assert_eq!(meta.syclgraph_version, env!("CARGO_PKG_VERSION"));
        assert!(!meta.host.is_empty());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        assert!(
            meta.start_time_ns < now && now - meta.start_time_ns < 600_000_000_000,
            "started in the last 10 minutes: {meta:?}"
        );
        assert_eq!(meta.sampled, sampled.contains(rank), "{meta:?}");
        assert!(meta.complete, "{meta:?}");
    }
}

/// The summary tables on stderr (their header lines).
fn tables(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("kind ") && (l.contains(" count ") || l.contains(" slowest ")))
        .count()
}

/// The cross-rank report the outer syclgraph prints after the job, for the
/// job directory `dir`: its `rank_work` row names as the slowest rank the
/// one whose own summary.csv has the largest `rank_work` total (the ranks
/// take turns on the device, so that is rank 3, which runs four `rank_work`
/// kernels against rank 0's one, unless another process slowed an earlier
/// turn down: the oracle is the ranks' own files).
fn check_cross_rank_summary(after_job: &str, dir: &Path) {
    assert!(
        after_job.contains("per operation, device time per rank"),
        "the cross-rank report comes after the job:\n{after_job}"
    );
    let row = after_job
        .lines()
        .find(|l| l.starts_with("kernel") && l.contains("rank_work"))
        .unwrap_or_else(|| panic!("no rank_work row:\n{after_job}"));
    let totals: Vec<u64> = (0..4)
        .map(|rank| {
            summary_row(&dir.join(format!("rank-{rank:05}")), "rank_work")["total_ns"]
                .parse()
                .unwrap()
        })
        .collect();
    let slowest = (0..4).max_by_key(|&r| totals[r]).unwrap();
    assert!(
        row.contains(&format!(" rank {slowest} ")),
        "slowest rank: {row} (totals {totals:?})"
    );
}

/// The `summary.csv` row of the kernel whose name contains `kernel`.
fn summary_row(dir: &Path, kernel: &str) -> BTreeMap<String, String> {
    let rows = read_csv(&dir.join("summary.csv"));
    let mut found: Vec<_> = rows
        .into_iter()
        .filter(|r| r["kind"] == "kernel" && r["name"].contains(kernel))
        .collect();
    assert_eq!(found.len(), 1, "one {kernel} row in {}", dir.display());
    found.pop().unwrap()
}

/// The C++ program's per-rank work in the files: rank r's summary.csv has
/// r+1 `rank_work` instances whose total is the sum of the durations the
/// program printed for that rank (its own event profiling); kernels.csv
/// has as many rows; the highest rank is the slowest.
fn check_cpp_work(dir: &Path, stdout: &str) {
    let mut oracle: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let ["profiling", "rank_work", rank, _, ns] = words[..] {
            let entry = oracle.entry(rank.parse().unwrap()).or_default();
            entry.0 += 1;
            entry.1 += ns.parse::<u64>().unwrap();
        }
    }
    assert_eq!(oracle.len(), 4, "every rank printed its times:\n{stdout}");
    let mut totals = Vec::new();
    for (rank, (count, total)) in &oracle {
        assert_eq!(*count, u64::from(rank + 1));
        let rank_dir = dir.join(format!("rank-{rank:05}"));
        let row = summary_row(&rank_dir, "rank_work");
        assert_eq!(row["count"], count.to_string(), "rank {rank}");
        assert_eq!(
            row["total_ns"],
            total.to_string(),
            "rank {rank}: syclgraph's device time is the program's own"
        );
        let rows = read_csv(&rank_dir.join("kernels.csv"))
            .into_iter()
            .filter(|r| r["name"] == "rank_work")
            .count();
        assert_eq!(rows as u64, *count, "rank {rank}'s kernels.csv");
        assert_eq!(summary_row(&rank_dir, "shared_step")["count"], "1");
        totals.push(*total);
    }
    // Four times rank 0's work: slower whatever the load.
    assert!(
        totals[3] > totals[0],
        "rank 3 slower than rank 0: {totals:?}"
    );
}

#[test]
fn syclgraph_inside_mpiexec_cpp() {
    let cwd = fresh_dir("mpi-inside");
    let out = job(inside(&cwd, &["-o", "out"], &cpp_app(&[])));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let dir = cwd.join("out");
    check_metas(&metas(&dir), &program("mpi_ranks"), &[0, 1, 2, 3]);
    check_cpp_work(&dir, &stdout);
    assert_eq!(tables(&stderr), 1, "one summary table:\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "syclgraph: outputs in {}",
            dir.join("rank-00000").display()
        )),
        "rank 0 prints it:\n{stderr}"
    );
    // Only rank 0's syclgraph says where the files are.
    let done: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("done; files in"))
        .collect();
    assert_eq!(done.len(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("syclgraph:   every rank: {}", dir.display())),
        "{stderr}"
    );
    for rank in 0..4 {
        check_outputs(&dir.join(format!("rank-{rank:05}")));
    }
}

#[test]
fn mpiexec_inside_syclgraph_cpp() {
    let cwd = fresh_dir("mpi-outside");
    let out = job(outside(&cwd, &["-o", "out"], &cpp_app(&[])));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let dir = cwd.join("out");
    check_metas(&metas(&dir), &program("mpi_ranks"), &[0, 1, 2, 3]);
    check_cpp_work(&dir, &stdout);
    assert_eq!(
        tables(&stderr),
        1,
        "one summary table, after the job:\n{stderr}"
    );
    let done = format!("syclgraph: done; 4 rank(s) in {} (4 traced)", dir.display());
    let at = stderr.find(&done).unwrap_or_else(|| panic!("{stderr}"));
    check_cross_rank_summary(&stderr[at..], &dir);
    assert!(!stderr.contains("incomplete"), "{stderr}");
}

#[test]
fn mpirun_inside_syclgraph_cpp() {
    // The wheel's `mpirun` (hydra, as its mpiexec), spelled as users do.
    let cwd = fresh_dir("mpi-mpirun");
    let out = job(outside_with(
        "mpirun",
        &["-np", "4"],
        &cwd,
        &["-o", "out"],
        &cpp_app(&[]),
    ));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let dir = cwd.join("out");
    check_metas(&metas(&dir), &program("mpi_ranks"), &[0, 1, 2, 3]);
    check_cpp_work(&dir, &stdout);
    let done = format!("syclgraph: done; 4 rank(s) in {} (4 traced)", dir.display());
    let at = stderr.find(&done).unwrap_or_else(|| panic!("{stderr}"));
    check_cross_rank_summary(&stderr[at..], &dir);
}

/// A stand-in for Slurm's `srun` (there is no Slurm here): reads `-n N`,
/// `--ntasks=N` or `--ntasks N`, skips its other options (`-N`/`--nodes`
/// take a value), and starts N copies of the program at once, each with
/// SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID set as srun sets them on
/// one node; exits with the first failing copy's status.
const FAKE_SRUN: &str = r#"#!/bin/sh
n=1
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--ntasks) n=$2; shift 2 ;;
    --ntasks=*) n=${1#*=}; shift ;;
    -N|--nodes) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
pids=""
i=0
while [ $i -lt $n ]; do
  SLURM_PROCID=$i SLURM_NTASKS=$n SLURM_LOCALID=$i "$@" &
  pids="$pids $!"
  i=$((i + 1))
done
status=0
for p in $pids; do
  wait $p || { s=$?; [ $status -eq 0 ] && status=$s; }
done
exit $status
"#;

#[test]
fn srun_inside_syclgraph_with_srun_options() {
    use std::os::unix::fs::PermissionsExt;
    let cwd = fresh_dir("mpi-srun");
    let bin = cwd.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let srun = bin.join("srun");
    std::fs::write(&srun, FAKE_SRUN).unwrap();
    std::fs::set_permissions(&srun, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = outside_with(
        "srun",
        &["--ntasks=4", "-N", "1", "--mpi=pmi2", "-l"],
        &cwd,
        &["-o", "out"],
        &[program("timing").into_os_string(), "1".into()],
    );
    // The fake srun first on PATH, as Slurm's would be.
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(|v| v.to_os_string()))
        .unwrap();
    let mut with_srun = OsString::from(&bin);
    with_srun.push(":");
    with_srun.push(path);
    cmd.env("PATH", with_srun);
    // No launcher variable leaks in from the test's own environment.
    for var in syclgraph_graph::ranks::rank_variables() {
        cmd.env_remove(var);
    }
    let out = job(cmd);
    let stderr = text(&out.stderr);
    let dir = cwd.join("out");
    let metas = metas(&dir);
    for (rank, meta) in &metas {
        assert_eq!(meta.rank_from, "SLURM_PROCID", "{meta:?}");
        assert_eq!(
            (meta.size, meta.local_rank),
            (Some(4), Some(*rank)),
            "{meta:?}"
        );
        assert_eq!(Path::new(&meta.program), program("timing"), "{meta:?}");
        assert!(meta.sampled && meta.complete, "{meta:?}");
        check_outputs(&dir.join(format!("rank-{rank:05}")));
    }
    assert_eq!(tables(&stderr), 1, "one table, after the job:\n{stderr}");
    let done = format!("syclgraph: done; 4 rank(s) in {} (4 traced)", dir.display());
    let at = stderr.find(&done).unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        stderr[at..].contains("per operation, device time per rank"),
        "{stderr}"
    );
}

#[test]
fn dpnp_job_both_ways() {
    for (name, how) in [
        (
            "mpi-py-outside",
            outside as fn(&Path, &[&str], &[OsString]) -> Command,
        ),
        ("mpi-py-inside", inside),
    ] {
        let cwd = fresh_dir(name);
        let out = job(how(&cwd, &["-o", "out"], &python_app()));
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        for rank in 0..4 {
            assert!(
                stdout.contains(&format!("rank {rank} of 4: remainder {}", rank + 1)),
                "{name}:\n{stdout}"
            );
        }
        let dir = cwd.join("out");
        check_metas(&metas(&dir), &venv().join("bin/python"), &[0, 1, 2, 3]);
        for (rank, meta) in metas(&dir) {
            let script = repo_root().join("tests/programs/mpi_ranks.py");
            assert_eq!(meta.args, [script.display().to_string()], "{name}");
            let row = summary_row(&dir.join(format!("rank-{rank:05}")), "remainder");
            assert_eq!(row["count"], (rank + 1).to_string(), "{name} rank {rank}");
        }
        assert_eq!(tables(&stderr), 1, "{name}: one summary table:\n{stderr}");
    }
}

#[test]
fn unsampled_ranks_write_only_meta_json() {
    let cwd = fresh_dir("mpi-sampled");
    let out = job(inside(
        &cwd,
        &["-o", "out", "--ranks", "0,2"],
        &cpp_app(&["--rounds", "2000"]),
    ));
    let stderr = text(&out.stderr);
    let dir = cwd.join("out");
    let metas = metas(&dir);
    check_metas(&metas, &program("mpi_ranks"), &[0, 2]);
    for rank in [1, 3] {
        let files: Vec<String> = std::fs::read_dir(dir.join(format!("rank-{rank:05}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(files, ["meta.json"], "rank {rank} recorded nothing");
    }
    for rank in [0, 2] {
        check_outputs(&dir.join(format!("rank-{rank:05}")));
        let row = summary_row(&dir.join(format!("rank-{rank:05}")), "rank_work");
        assert_eq!(row["count"], (rank + 1).to_string());
    }
    assert_eq!(tables(&stderr), 1, "{stderr}");
}

#[test]
fn a_rank_killed_by_sigterm_stays_incomplete_and_is_named() {
    let cwd = fresh_dir("mpi-killed");
    let cmd = outside(
        &cwd,
        &["-o", "out"],
        &cpp_app(&["--rounds", "2000", "--hold-rank", "3"]),
    );
    let mut cmd = with_default_signals(&cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = std::os::unix::process::CommandExt::process_group(&mut cmd, 0)
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut { stderr }, &mut text);
        text
    });
    // Rank 3 says "holding" once every rank passed MPI_Finalize.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if line == "holding" {
                let _ = tx.send(());
            }
        }
    });
    let held = rx.recv_timeout(LIMIT);
    let dir = cwd.join("out");
    let deadline = Instant::now() + LIMIT;
    // The other ranks end and finish their files.
    let finished =
        |rank: u32| RankMeta::read(&dir.join(format!("rank-{rank:05}"))).is_ok_and(|m| m.complete);
    // Rank 3's rows reach kernels.csv within 100 ms of its kernels' ends.
    let rank_work_rows = || {
        read_csv(&dir.join("rank-00003/kernels.csv"))
            .iter()
            .filter(|r| r["name"] == "rank_work")
            .count()
    };
    while held.is_ok()
        && !((0..3).all(finished) && rank_work_rows() == 4)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let victim = RankMeta::read(&dir.join("rank-00003"));
    if let Ok(victim) = &victim {
        assert!(!victim.complete, "{victim:?}");
        assert!(signal_process(victim.pid, "TERM"));
    }
    if held.is_err() || victim.is_err() {
        signal_group(child.id(), "KILL");
    }
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(held.is_ok(), "rank 3 never held:\n{stderr}");
    assert!(!status.success(), "mpiexec reports the killed rank");
    let metas = metas(&dir);
    for (rank, meta) in &metas {
        assert_eq!(meta.complete, *rank != 3, "{meta:?}");
    }
    // The outer syclgraph completed the files rank 3 left unfinished,
    // from its journal, before the job's report.
    let rank3 = dir.join("rank-00003");
    let line = syclgraph_lines(&stderr)
        .into_iter()
        .find(|l| l.contains(" syclgraph completed its files from its journal in "))
        .unwrap_or_else(|| panic!("no completion line:\n{stderr}"));
    assert!(
        line.contains(", 1 rank(s) without their files finished: 3; ")
            && line.ends_with(&format!(", in {}", rank3.display())),
        "{line}"
    );
    assert!(!stderr.contains("syclgraph: incomplete ("), "{stderr}");
    // The report reads every rank and names the killed one.
    assert!(
        stderr.contains("per operation, device time per rank"),
        "{stderr}"
    );
    assert!(stderr.contains("; incomplete: 3"), "{stderr}");
    assert!(!stderr.contains("cross-rank report:"), "{stderr}");
    // What rank 3 recorded before it was killed stays.
    assert_eq!(rank_work_rows(), 4);
    assert!(!rank3.join(".syclgraph-journal").exists());
    let summary = std::fs::read_to_string(rank3.join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("converted by `syclgraph run`"),
        "{summary}"
    );
    let path = read_csv(&rank3.join("critical_path.csv"));
    assert!(path.iter().any(|r| r["name"] == "rank_work"), "{path:?}");
    // The rank stays incomplete (its losses died with it); `syclgraph
    // report` has nothing left to convert.
    let mut report = Command::new(syclgraph_exe());
    report.arg("report").arg(&dir);
    let out = output_within(report, LIMIT);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("converted the journal"), "{err}");
    assert!(!RankMeta::read(&rank3).unwrap().complete);
}
