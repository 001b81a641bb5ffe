//! A traced program that forks. A child that execs a traced program is a
//! new syclgraph process: the directory is taken by its live parent, so it
//! writes into `<dir>/pid-<pid>/` (and says so on stderr). A child that does
//! not exec is not traced: it prints nothing and exits at once. The parent's
//! outputs describe the parent's commands only; nothing hangs.

use std::path::Path;
use std::time::Duration;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/fork_exec.cpp";
/// Bound of a whole run; the program bounds its own wait for the child to 20 s.
const LIMIT: Duration = Duration::from_secs(90);

fn child_pid(stderr: &str) -> u32 {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("fork_exec: child pid "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no child pid on stderr:\n{stderr}"))
}

/// Subdirectories `pid-*` of the output directory.
fn pid_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("pid-"))
        .collect()
}

/// The parent's own rows: one for each of its two kernels, none of the child's.
fn assert_parent_rows_only(rows: &[std::collections::BTreeMap<String, String>]) {
    for tag in ["fork_parent_before", "fork_parent_after"] {
        let found = rows_at(rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), 1, "{tag}: {rows:?}");
        assert_eq!(found[0]["timing"], "ok", "{tag}: {:?}", found[0]);
    }
    let child = rows_at(rows, SRC, tag_line(SRC, "fork_child_kernel"));
    assert!(
        child.is_empty(),
        "the child's kernel in the parent's rows: {child:?}"
    );
}

#[test]
fn an_execd_child_writes_its_own_outputs_beside_the_parents() {
    let traced = run_both_within(
        "robust-fork-exec",
        || runtime_command(&program("fork_exec")),
        &[],
        LIMIT,
    );
    let stdout = traced.stdout();
    assert!(
        stdout.contains("child kernel 3\nchild exited 0\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("parent kernel after 2\ndone\n"),
        "{stdout}"
    );
    let stderr = traced.stderr();
    let pid = child_pid(&stderr);

    // The parent: its own two kernels, nothing of the child's.
    let rows = traced.csv("kernels.csv");
    assert_parent_rows_only(&rows);
    let graph = traced.graph();
    assert!(
        !graph
            .nodes
            .values()
            .any(|a| a.get("line").map(String::as_str)
                == Some(&tag_line(SRC, "fork_child_kernel").to_string())),
        "the child's kernel in the parent's graph: {graph:?}"
    );
    assert_eq!(
        traced
            .csv("summary.csv")
            .iter()
            .filter(|r| r["kind"] == "kernel")
            .map(|r| r["count"].parse::<u64>().unwrap())
            .sum::<u64>(),
        2
    );

    // The exec'd child: its own directory, its own kernel only.
    let sub = format!("pid-{pid}");
    assert_eq!(pid_dirs(&traced.dir), vec![sub.clone()], "{stderr}");
    let child_dir = traced.dir.join(&sub);
    let child_rows = read_csv(&child_dir.join("kernels.csv"));
    let found = rows_at(&child_rows, SRC, tag_line(SRC, "fork_child_kernel"));
    assert_eq!(found.len(), 1, "{child_rows:?}");
    assert_eq!(found[0]["timing"], "ok", "{:?}", found[0]);
    for tag in ["fork_parent_before", "fork_parent_after"] {
        assert!(
            rows_at(&child_rows, SRC, tag_line(SRC, tag)).is_empty(),
            "{tag}"
        );
    }
    check_outputs(&child_dir);
    let child_graph = DotGraph::read(&child_dir.join("graph.dot"));
    node_at(&child_graph, SRC, tag_line(SRC, "fork_child_kernel"));
    read_csv(&child_dir.join("summary.csv"));
    // ... and the child said where it wrote.
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("syclgraph:") && l.contains(&sub))
        .collect();
    assert!(!said.is_empty(), "no stderr line names {sub}:\n{stderr}");
}

#[test]
fn a_forked_child_that_does_not_exec_exits_at_once_and_prints_nothing() {
    let child_err = fresh_dir("robust-fork-exit-child").join("child-stderr.txt");
    let traced = run_both_within(
        "robust-fork-exit",
        || {
            let mut cmd = runtime_command(&program("fork_exec"));
            cmd.arg("fork-exit").arg(&child_err);
            cmd
        },
        &[],
        LIMIT,
    );
    // The program waited at most 20 s for its child (else "child hung").
    let stdout = traced.stdout();
    assert!(stdout.contains("child exited 0\n"), "{stdout}");
    let child_said = std::fs::read_to_string(&child_err).unwrap();
    assert!(
        child_said.is_empty(),
        "the forked child printed on stderr:\n{child_said}"
    );
    assert!(
        pid_dirs(&traced.dir).is_empty(),
        "the forked child wrote outputs"
    );
    assert_parent_rows_only(&traced.csv("kernels.csv"));
    traced.graph();
}
