//! main returns while kernels are still running on a queue that lives until
//! static destruction, and a static destructor submits one more: the program
//! exits as untraced, and the exit drain still times every kernel and writes
//! the summary.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/exit_in_flight.cpp";
const BATCH: usize = 6;
const ROUNDS: u32 = 5000;

#[test]
fn kernels_in_flight_at_exit_are_all_timed_and_the_summary_is_written() {
    let traced = run_both(
        "robust-exit",
        || {
            let mut cmd = runtime_command(&program("exit_in_flight"));
            cmd.arg(BATCH.to_string()).arg(ROUNDS.to_string());
            cmd
        },
        &[],
    );
    assert!(traced
        .stdout()
        .contains(&format!("submitted {BATCH}\nmain returns")));

    let rows = traced.csv("kernels.csv");
    let batch = rows_at(&rows, SRC, tag_line(SRC, "exit_batch"));
    assert_eq!(batch.len(), BATCH, "one row per kernel submitted by main");
    for row in &batch {
        assert_eq!(row["kind"], "kernel", "{row:?}");
        assert_eq!(row["timing"], "ok", "{row:?}\nstderr:\n{}", traced.stderr());
        assert!(row["duration_ns"].parse::<u64>().unwrap() > 0, "{row:?}");
    }
    // Submitted from a static destructor, after main returned but before
    // the exit drain (its object was made after tracing started).
    let dtor = rows_at(&rows, SRC, tag_line(SRC, "exit_dtor"));
    assert_eq!(dtor.len(), 1, "the kernel of the static destructor");
    assert_eq!(dtor[0]["timing"], "ok", "{:?}", dtor[0]);

    // The scenario really happened: the batch was still running after main
    // had returned (the destructor's submission precedes the batch's end).
    let n =
        |r: &std::collections::BTreeMap<String, String>, k: &str| -> u64 { r[k].parse().unwrap() };
    let batch_end = batch.iter().map(|r| n(r, "end_ns")).max().unwrap();
    assert!(
        n(dtor[0], "submit_ns") < batch_end,
        "the batch had finished before main returned; make the kernels longer"
    );

    let summary = traced.csv("summary.csv");
    let kernels: u64 = summary
        .iter()
        .filter(|r| r["kind"] == "kernel")
        .map(|r| r["count"].parse::<u64>().unwrap())
        .sum();
    assert_eq!(kernels, BATCH as u64 + 1, "{summary:?}");
    let graph = traced.graph();
    let (_, node) = node_at(&graph, SRC, tag_line(SRC, "exit_batch"));
    assert_eq!(node["count"], BATCH.to_string());
    assert!(
        !traced.stderr().contains("lost:"),
        "nothing may be lost: {}",
        traced.stderr()
    );
}
