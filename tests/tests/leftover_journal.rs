//! `syclgraph report DIR` on the directory of a program killed by SIGKILL:
//! it converts the `.syclgraph-journal` the program left into the outputs
//! its exit would have written (the analyses, the trace's slices, the graph
//! files, instances.dot, windows.csv, summary.txt), checked against the
//! rows the program streamed before it died: every row's node is in
//! graph.dot, every critical path step is a timed row and lies within its
//! device times (its gap the time since the step before), and the trace's
//! slices are the rows (`tests/scripts/check_pftrace.py`). A journal cut
//! mid-record converts what precedes the cut; a run that exited leaves no
//! journal; a garbage journal is one error line.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/long_running.cpp";
const JOURNAL: &str = ".syclgraph-journal";

/// `long_running` traced into `dir`, killed by SIGKILL once it has run
/// `after` past its `ready` line.
fn run_and_kill(dir: &Path, after: Duration) {
    let mut child = long_running_until_ready(dir);
    std::thread::sleep(after);
    signal_process(child.id(), "KILL");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

/// `syclgraph report DIR`, bounded: (exit code, stdout, stderr).
fn report(dir: &Path) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(syclgraph_exe());
    cmd.arg("report").arg(dir);
    let out = output_within(cmd, Duration::from_secs(120));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn num(row: &BTreeMap<String, String>, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|e| panic!("{column} of {row:?}: {e}"))
}

/// Copies the files of `from` into a fresh directory.
fn copy_dir(from: &Path, test: &str) -> std::path::PathBuf {
    let to = fresh_dir(test);
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    to
}

/// The converted outputs against the rows the program streamed.
fn check_against_rows(dir: &Path) {
    let rows = read_csv(&dir.join("kernels.csv"));
    let timed: BTreeMap<(String, String), &BTreeMap<String, String>> = rows
        .iter()
        .filter(|r| r["timing"] == "ok")
        .map(|r| ((r["node_id"].clone(), r["instance"].clone()), r))
        .collect();
    assert!(
        rows_at(&rows, SRC, tag_line(SRC, "long_kernel"))
            .iter()
            .any(|r| r["timing"] == "ok"),
        "no timed long_kernel row"
    );
    // Every row's node is a node of the converted graph.dot.
    let graph = DotGraph::read(&dir.join("graph.dot"));
    for row in &rows {
        assert!(
            graph.nodes.contains_key(&row["node_id"]),
            "{} not in graph.dot: {row:?}",
            row["node_id"]
        );
    }
    // Every step of the critical path is a timed row, within its device
    // times; the gap before it is the time since the step before ended.
    let path = read_csv(&dir.join("critical_path.csv"));
    assert!(!path.is_empty(), "no critical path");
    let mut before: Option<&BTreeMap<String, String>> = None;
    for step in &path {
        let key = (step["node"].clone(), step["instance"].clone());
        let row = timed
            .get(&key)
            .unwrap_or_else(|| panic!("step {step:?} is no timed kernels.csv row"));
        assert!(
            num(step, "start_ns") >= num(row, "start_ns")
                && num(step, "end_ns") <= num(row, "end_ns")
                && num(step, "start_ns") <= num(step, "end_ns"),
            "step {step:?} outside its row {row:?}"
        );
        if let Some(b) = before {
            if num(step, "step") == num(b, "step") + 1 {
                assert_eq!(
                    num(step, "gap_before_ns"),
                    num(step, "start_ns").saturating_sub(num(b, "end_ns")),
                    "{b:?} then {step:?}"
                );
            }
        }
        before = Some(step);
    }
    assert!(
        path.iter()
            .any(|s| rows_at(&rows, SRC, tag_line(SRC, "long_kernel"))
                .iter()
                .any(|r| r["node_id"] == s["node"])),
        "the long kernels are not on the critical path: {path:?}"
    );
    assert!(std::fs::read_to_string(dir.join("instances.dot"))
        .unwrap()
        .contains("digraph"));
    assert!(read_csv(&dir.join("windows.csv")).len() == 1);
}

#[test]
fn a_killed_programs_journal_converts_into_its_outputs() {
    let dir = fresh_dir("leftover-sigkill");
    run_and_kill(&dir, Duration::from_millis(1500));

    // What the kill leaves: rows, snapshots, the trace's slices streamed so
    // far (whole packets: it parses, each slice a row), the journal;
    // nothing written at exit.
    let journal = dir.join(JOURNAL);
    let journal_len = std::fs::metadata(&journal).expect("the journal").len();
    assert!(journal_len > 0);
    for absent in ["summary.txt", "critical_path.csv", "instances.dot"] {
        assert!(!dir.join(absent).exists(), "{absent} after a SIGKILL");
    }
    let killed_trace = check_pftrace(&dir, true);
    assert!(
        !killed_trace.contains(" 0 slices"),
        "the killed program's trace holds its slices: {killed_trace}"
    );
    let cut = copy_dir(&dir, "leftover-cut");
    let streamed = std::fs::read_to_string(dir.join("kernels.csv")).unwrap();

    let (code, out, err) = report(&dir);
    assert_eq!(code, Some(0), "{err}");
    let lines = syclgraph_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "syclgraph: converted the journal {} left by a program that did not exit normally: ",
            journal.display()
        )) && lines[0].contains(" records, "),
        "{err}"
    );
    assert!(!journal.exists(), "the journal is removed once converted");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(
        summary.starts_with("converted by `syclgraph report` from .syclgraph-journal, left by a program that did not exit normally"),
        "{summary}"
    );
    assert!(summary.contains("critical path"), "{summary}");
    assert!(
        out.contains(summary.lines().next().unwrap()),
        "the report shows it: {out}"
    );
    // kernels.csv is written again from the journal: the rows the program
    // streamed before the kill are there, byte for byte (the journal is
    // flushed before the rows), with those of commands still pending.
    let converted = std::fs::read_to_string(dir.join("kernels.csv")).unwrap();
    let converted_rows = converted.lines().collect::<std::collections::BTreeSet<_>>();
    assert!(streamed.lines().count() > 1, "{streamed}");
    for line in streamed.lines() {
        assert!(
            converted_rows.contains(line),
            "streamed, not converted: {line}"
        );
    }
    assert!(converted.lines().count() >= streamed.lines().count());
    check_against_rows(&dir);
    // The trace's slices are the rows, its flows the instances' edges.
    let trace = check_pftrace(&dir, false);
    assert!(!trace.contains(" 0 slices"), "{trace}");

    // Nothing left to convert: report does what it did.
    let (code, again, err) = report(&dir);
    assert_eq!((code, syclgraph_lines(&err)), (Some(0), vec![]), "{err}");
    assert_eq!(again, out);

    // The same journal cut inside its last record, as a process killed in
    // the middle of a write leaves it: what precedes the cut converts.
    let cut_journal = cut.join(JOURNAL);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&cut_journal)
        .unwrap();
    file.set_len(journal_len - 1).unwrap();
    drop(file);
    let (code, out, err) = report(&cut);
    assert_eq!(code, Some(0), "{err}");
    let lines = syclgraph_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains(", cut: the last record, from byte offset ")
            && lines[0].contains(" was cut short after "),
        "{err}"
    );
    let summary = std::fs::read_to_string(cut.join("summary.txt")).unwrap();
    assert!(
        summary.contains("lost: the rest of the journal after its "),
        "{summary}"
    );
    assert!(out.contains("lost: the rest of the journal"), "{out}");
    assert!(!cut_journal.exists());
    // kernels.csv may hold the row of the cut record: the trace lacks it.
    check_pftrace(&cut, true);
}

#[test]
fn a_run_that_exits_leaves_no_journal_and_a_garbage_one_is_one_error_line() {
    let traced = run_traced(
        "leftover-exited",
        runtime_command(&program("usm_chain")),
        &[],
    );
    assert!(traced.output.status.success(), "{}", traced.stderr());
    let dir = &traced.dir;
    assert!(!dir.join(JOURNAL).exists(), "a journal after a normal exit");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    let (code, out, err) = report(dir);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert!(out.contains(&summary), "{out}");

    std::fs::write(dir.join(JOURNAL), b"\x00\x01 not a journal at all").unwrap();
    let (code, again, err) = report(dir);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        format!(
            "syclgraph: {}: syclgraph journal: not a journal of this syclgraph (header differs); nothing converted\n",
            dir.join(JOURNAL).display()
        )
    );
    // The outputs are untouched, still reported; the journal is kept.
    assert_eq!(again, out);
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.txt")).unwrap(),
        summary
    );
    assert!(dir.join(JOURNAL).exists());
}
