//! Eight application threads submitting at once (four on private queues,
//! four sharing one queue): the program behaves as untraced, and every
//! submission is recorded exactly once, timed, and attributed to its thread.

use std::collections::BTreeSet;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/threads.cpp";
const THREADS: usize = 8;
const K: usize = 200;

#[test]
fn concurrent_submissions_are_each_recorded_once_and_timed() {
    let traced = run_both(
        "robust-threads",
        || {
            let mut cmd = runtime_command(&program("threads"));
            cmd.arg(K.to_string());
            cmd
        },
        &[],
    );
    let stdout = traced.stdout();
    for t in 0..THREADS {
        let line = format!("thread {t} ");
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&line) && l.ends_with(&format!("last {K} count {K}"))),
            "{stdout}"
        );
    }

    let rows = traced.csv("kernels.csv");
    let graph = traced.graph();
    let want = THREADS * K;
    for (tag, kind) in [("thread_kernel", "kernel"), ("thread_memcpy", "memcpy")] {
        let line = tag_line(SRC, tag);
        let found = rows_at(&rows, SRC, line);
        assert_eq!(found.len(), want, "{tag}: kernels.csv rows");
        let not_ok: Vec<_> = found.iter().filter(|r| r["timing"] != "ok").collect();
        assert!(not_ok.is_empty(), "{tag}: untimed rows {not_ok:?}");
        assert!(found.iter().all(|r| r["kind"] == kind), "{tag}");
        // Instances are numbered once each: no row is written twice.
        let instances: BTreeSet<&str> = found.iter().map(|r| r["instance"].as_str()).collect();
        assert_eq!(instances.len(), want, "{tag}: duplicate instance numbers");
        // Each thread contributed exactly K rows.
        let mut per_thread = std::collections::BTreeMap::<&str, usize>::new();
        for r in &found {
            *per_thread.entry(r["thread_id"].as_str()).or_default() += 1;
        }
        assert_eq!(per_thread.len(), THREADS, "{tag}: {per_thread:?}");
        assert!(
            per_thread.values().all(|&n| n == K),
            "{tag}: {per_thread:?}"
        );

        let (_, node) = node_at(&graph, SRC, line);
        assert_eq!(node["kind"], kind, "{node:?}");
        assert_eq!(node["count"], want.to_string(), "{tag}: graph count");
        if let Some(timed) = node.get("timed") {
            assert_eq!(timed, &want.to_string(), "{tag}: graph timed count");
        }
    }

    let threads: BTreeSet<&str> = rows
        .iter()
        .map(|r| r["thread_id"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    assert!(
        threads.len() >= THREADS,
        "distinct thread_id values: {threads:?}"
    );
    // Half the threads have a queue of their own, half share one: each row
    // names the queue of its own submission, not its code location's first.
    let queues: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["kind"] == "kernel")
        .map(|r| r["queue_id"].as_str())
        .collect();
    assert_eq!(queues.len(), THREADS / 2 + 1, "queue_id values: {queues:?}");
    assert!(
        !traced.stderr().contains("lost:"),
        "nothing may be lost: {}",
        traced.stderr()
    );
}
