//! Device timing against the application's own measurements: exact
//! durations on a profiling queue, one host timeline (submit ≤ start ≤ end),
//! and `no_profiling` rows, never made-up numbers, on a queue without it.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/timing.cpp";
const N: usize = 6;

fn traced() -> Traced {
    run_both(
        "timing",
        || {
            let mut cmd = runtime_command(&program("timing"));
            cmd.arg(N.to_string());
            cmd
        },
        &[],
    )
}

#[test]
fn profiled_kernels_have_the_applications_durations_on_one_clock() {
    let traced = traced();
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    for (label, tag) in [("small", "small_profiled"), ("large", "large_profiled")] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), N, "{tag}: {found:?}");
        for (i, row) in found.iter().enumerate() {
            let want = measured[&(label.to_owned(), i as u64)];
            assert_eq!(row["timing"], "ok", "{tag} #{i}");
            assert_eq!(row["kind"], "kernel");
            assert_eq!(row["duration_ns"], want.to_string(), "{tag} #{i}");
            let n = |k: &str| row[k].parse::<u64>().unwrap();
            assert!(n("submit_ns") <= n("start_ns"), "{tag} #{i}: {row:?}");
            assert!(n("start_ns") <= n("end_ns"));
            assert_eq!(n("end_ns") - n("start_ns"), want);
        }
    }
}

#[test]
fn a_queue_without_profiling_gives_rows_without_times() {
    let traced = run_traced(
        "timing-noprof",
        {
            let mut cmd = runtime_command(&program("timing"));
            cmd.arg(N.to_string());
            cmd
        },
        &[("SYCLGRAPH_FORCE_PROFILING", "0")],
    );
    assert!(traced.output.status.success(), "{}", traced.stderr());
    let rows = traced.csv("kernels.csv");
    for tag in ["small_plain", "large_plain"] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), N, "{tag}");
        for row in found {
            assert_eq!(row["timing"], "no_profiling", "{row:?}");
            assert_eq!(row["duration_ns"], "");
            assert_eq!(row["start_ns"], "");
        }
    }
    let summary = traced.csv("summary.csv");
    assert!(summary.iter().any(|r| r["kind"] == "kernel"), "{summary:?}");
    assert!(
        traced.stderr().contains("no_profiling"),
        "the stderr summary counts untimed commands: {}",
        traced.stderr()
    );
}
