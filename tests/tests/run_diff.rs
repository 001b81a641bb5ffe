//! `syclgraph diff` on real runs of `tests/programs/whatif.cpp pair`: a
//! loop of two kernels of the same length (`changed`, `unchanged`), run
//! four times alike and once with `changed` twice as long. The changed
//! kernel must come out `slower` (exit 1 with `--fail-slower 25`) and the
//! other under the gate (`same`, or a false alarm under 25%); every A/A pair of the four alike runs must exit 0 with
//! `--fail-slower 25`, and its verdicts are counted: false alarms (a
//! kernel not `same` in an A/A pair) are printed with their rate, and may
//! be one in four at most (docs/guide/what-to-optimise.md has the rate
//! measured on the loaded machine, 4 in 90, and the test's level). On this
//! machine the device is the loaded CPU: now and then one run meets a
//! burst of load and its kernels are slower all through (2.7x once), which
//! diff rightly reports; a set of A/A runs that fails is made anew, up to
//! twice (in CI one set met CI's other lane, ±15% across its runs, and the
//! next a +138% burst in one run), and the base and longer pair once when
//! its unchanged kernel moved 25% or more.
//! Two MPI job directories made of the same runs are compared rank by rank.
//! Bad input gives exit 2 and one line naming the directory.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use syclgraph_tests::*;

const SOURCE: &str = "tests/programs/whatif.cpp";
const ROUNDS: &str = "800000";

fn pair(test: &str, changed_rounds: &str) -> Traced {
    let mut cmd = runtime_command(&program("whatif"));
    cmd.args(["pair", changed_rounds, "500", "40", ROUNDS]);
    let t = run_traced(test, cmd, &[("SYCLGRAPH_QUIET", "1")]);
    assert!(t.output.status.success(), "{}", t.stderr());
    t
}

fn diff(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut cmd = Command::new(syclgraph_exe());
    cmd.arg("diff");
    for a in args {
        cmd.arg(a);
    }
    cmd.output().unwrap()
}

/// `--csv`'s rows (column → value) by source line.
type Verdicts = BTreeMap<String, BTreeMap<String, String>>;

/// `--csv`'s rows by source line.
fn verdicts(base: &Path, new: &Path) -> Verdicts {
    let out = diff(&[&base, &new, &"--csv"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut reader = csv::Reader::from_reader(&out.stdout[..]);
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let row: BTreeMap<String, String> = header
                .iter()
                .zip(r.unwrap().iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
            (row["source_line"].clone(), row)
        })
        .collect()
}

#[test]
fn a_kernel_made_twice_as_long_is_slower_and_a_a_pairs_pass() {
    let alike: Vec<Traced> = (0..4).map(|_| pair("diff-aa", ROUNDS)).collect();
    let changed = tag_line(SOURCE, "changed").to_string();
    let unchanged = tag_line(SOURCE, "unchanged").to_string();

    // The base and the longer run. A run that meets a burst of load has
    // both kernels slower all through (the unchanged one +116% once, in
    // CI), which diff rightly reports: when the unchanged kernel moved by
    // 25% or more, the comparison says nothing of diff and is made once
    // more with two fresh runs, as a failing A/A set is.
    let mut base = &alike[0];
    let fresh_base;
    let mut longer = pair("diff-longer", "1600000");
    let mut rows = verdicts(&base.dir, &longer.dir);
    let moved = |rows: &Verdicts| -> f64 { rows[&unchanged]["change_pct"].parse().unwrap() };
    if moved(&rows).abs() >= 25.0 {
        eprintln!(
            "unchanged kernel moved {:+.1}%: a run met a burst of load; comparing two fresh runs",
            moved(&rows)
        );
        fresh_base = pair("diff-aa", ROUNDS);
        base = &fresh_base;
        longer = pair("diff-longer", "1600000");
        rows = verdicts(&base.dir, &longer.dir);
    }
    let unchanged_pct = moved(&rows);

    let out = diff(&[&base.dir, &longer.dir, &"--fail-slower", &"25"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(rows[&changed]["verdict"], "slower", "{text}");
    assert!(
        rows[&changed]["change_pct"].parse::<f64>().unwrap() > 25.0,
        "{text}"
    );
    // The unchanged kernel must not trip the gate. Under a burst of load
    // its times can shift by a little more than diff's 10% (+10.8% once,
    // with CI's other lane running), which diff rightly calls `slower`:
    // that is counted like an A/A false alarm, not a failure.
    if rows[&unchanged]["verdict"] != "same" {
        eprintln!("unchanged kernel: a false alarm under load ({unchanged_pct:+.1}%)");
    }
    assert!(unchanged_pct < 25.0, "{text}");
    assert!(text.contains("edges: 0 added, 0 removed"), "{text}");
    assert!(text.starts_with("diff: "), "{text}");
    assert!(text.lines().nth(1).unwrap().starts_with("span: "), "{text}");

    // Two MPI job directories, ranks matched by number: rank 0 changed,
    // rank 1 only in the base job, rank 2 only in the new one.
    let jobs = fresh_dir("diff-jobs");
    let rank = |job: &str, r: u32, from: &Path| {
        let to = jobs.join(job).join(format!("rank-{r:05}"));
        std::fs::create_dir_all(&to).unwrap();
        for f in ["kernels.csv", "graph.dot", "summary.txt"] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    };
    rank("a", 0, &base.dir);
    rank("a", 1, &alike[1].dir);
    rank("b", 0, &longer.dir);
    rank("b", 2, &alike[2].dir);
    let out = diff(&[&jobs.join("a"), &jobs.join("b"), &"--fail-slower", &"25"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with("rank 0: "), "{text}");
    assert!(
        text.contains("ranks only in the base job (not compared): 1\n"),
        "{text}"
    );
    assert!(
        text.contains("ranks only in the new job (not compared): 2\n"),
        "{text}"
    );
    let csv = diff(&[&jobs.join("a"), &jobs.join("b"), &"--csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with("0,")),
        "every row of rank 0: {csv}"
    );
    refused(
        &Command::new(syclgraph_exe())
            .arg("whatif")
            .arg(jobs.join("a"))
            .output()
            .unwrap(),
        "an MPI job directory: name one rank's directory",
    );

    // The A/A pairs: a set whose pairs do not all pass is made anew, up to
    // twice (a run that met a burst of load is slower all through, and diff
    // says so: see the module docs); each set is judged as the first.
    let mut sets = vec![alike];
    let mut tried = Vec::new();
    loop {
        let set = sets.last().unwrap();
        let (comparisons, false_alarms, failed) = a_a_pairs(set, &changed, &unchanged);
        eprintln!(
            "A/A: {} false alarm(s) in {comparisons} comparisons of 40 instances, {} pair(s) failing --fail-slower 25: {false_alarms:?}",
            false_alarms.len(),
            failed.len()
        );
        if failed.is_empty() && false_alarms.len() * 4 <= comparisons {
            break;
        }
        tried.push(format!("{failed:?} {false_alarms:?}"));
        assert!(sets.len() < 3, "A/A sets failed three times: {tried:#?}");
        sets.push((0..4).map(|_| pair("diff-aa", ROUNDS)).collect());
    }
}

/// Every pair of `set` diffed: (comparisons, false alarms, the pairs that
/// exited non-zero with `--fail-slower 25` and their text).
fn a_a_pairs(set: &[Traced], changed: &str, unchanged: &str) -> (usize, Vec<String>, Vec<String>) {
    let mut comparisons = 0;
    let mut false_alarms = Vec::new();
    let mut failed = Vec::new();
    for i in 0..set.len() {
        for j in i + 1..set.len() {
            let (a, b) = (&set[i].dir, &set[j].dir);
            let out = diff(&[a, b, &"--fail-slower", &"25"]);
            if out.status.code() != Some(0) {
                failed.push(format!("{i}-{j}: {}", String::from_utf8_lossy(&out.stdout)));
            }
            let rows = verdicts(a, b);
            for line in [changed, unchanged] {
                comparisons += 1;
                let row = &rows[line];
                if row["verdict"] != "same" {
                    false_alarms.push(format!(
                        "{i}-{j} line {line}: {} {}% (p {})",
                        row["verdict"], row["change_pct"], row["p_value"]
                    ));
                }
            }
        }
    }
    (comparisons, false_alarms, failed)
}

/// One `syclgraph:` line on stderr, exit 2.
fn refused(out: &Output, wanted: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("syclgraph: ") && err.contains(wanted),
        "{err}"
    );
}

#[test]
fn bad_input_is_refused_with_one_line_naming_the_directory() {
    let good = &shared_run("usm_chain").dir;
    let scratch = fresh_dir("diff-bad");
    let missing = scratch.join("missing");
    refused(
        &diff(&[&missing, good]),
        &format!("{}: no such directory", missing.display()),
    );
    let empty = scratch.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    refused(
        &diff(&[good, &empty]),
        &format!("{}/kernels.csv: no such file", empty.display()),
    );
    let other = scratch.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("kernels.csv"),
        "name,kind,duration\nk,kernel,3\n",
    )
    .unwrap();
    refused(
        &diff(&[good, &other]),
        "not the kernels.csv this syclgraph writes",
    );
    let killed = scratch.join("killed");
    std::fs::create_dir_all(&killed).unwrap();
    std::fs::write(killed.join(".syclgraph-journal"), b"syclgraph journal 2\n").unwrap();
    refused(&diff(&[&killed, good]), "a killed run not converted yet");
    let job = scratch.join("job");
    std::fs::create_dir_all(job.join("rank-00000")).unwrap();
    refused(&diff(&[&job, good]), "is an MPI job directory and");
    // whatif: no journal, a location that names nothing or no device time.
    let whatif = |args: &[&dyn AsRef<std::ffi::OsStr>]| {
        let mut cmd = Command::new(syclgraph_exe());
        cmd.arg("whatif");
        for a in args {
            cmd.arg(a);
        }
        cmd.output().unwrap()
    };
    refused(
        &whatif(&[&empty]),
        &format!("{}: no run.journal", empty.display()),
    );
    refused(&whatif(&[&killed]), "a killed run not converted yet");
    refused(
        &whatif(&[good, &"--speedup", &"n999=2"]),
        "n999: no node of",
    );
    let out = whatif(&[good, &"--speedup", &"n0=0.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a speedup factor"));
}
