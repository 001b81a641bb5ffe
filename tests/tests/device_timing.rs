//! Device timing against the application's own measurements: exact
//! durations on a profiling queue, one host timeline (submit ≤ start ≤ end),
//! and `no_profiling` rows, never made-up numbers, on a queue without it.

use syclgraph_tests::*;

const SRC: &str = "tests/programs/timing.cpp";
const N: usize = 6;

fn traced(test: &str) -> Traced {
    run_both(
        test,
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
    let traced = traced("timing-profiled");
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    for (label, tag, global) in [
        ("small", "small_profiled", "4096x1x1"),
        ("large", "large_profiled", "131072x1x1"),
    ] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert_eq!(found.len(), N, "{tag}: {found:?}");
        for (i, row) in found.iter().enumerate() {
            assert_eq!(row["global_size"], global, "{tag}");
            assert_eq!(row["local_size"], "", "no local range was given");
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

#[test]
fn queues_without_profiling_are_timed_and_the_application_cannot_tell() {
    // run_both: the traced program prints exactly what the untraced one
    // does, including that its own get_profiling_info on the plain queue
    // still throws as SYCL specifies.
    let traced = traced("timing-forced");
    assert!(traced
        .stdout()
        .contains("plain queue profiling info throws 1"));
    let rows = traced.csv("kernels.csv");
    for tag in ["small_plain", "large_plain", "probe_plain"] {
        let found = rows_at(&rows, SRC, tag_line(SRC, tag));
        assert!(!found.is_empty(), "{tag}");
        for row in found {
            assert_eq!(row["timing"], "ok", "{tag}: {row:?}");
            let n = |k: &str| row[k].parse::<u64>().unwrap();
            assert!(n("duration_ns") > 0);
            assert!(n("submit_ns") <= n("start_ns") && n("start_ns") <= n("end_ns"));
        }
    }
    // Direct-path USM memcpys send no signal; their UR output event times them.
    let memcpys: Vec<_> = rows.iter().filter(|r| r["kind"] == "memcpy").collect();
    assert_eq!(memcpys.len(), 2, "{memcpys:?}");
    for row in memcpys {
        assert_eq!(row["timing"], "ok", "{row:?}");
        assert_eq!(row["bytes"], "4");
    }
    // One queue with profiling, one without: exactly one was forced (the
    // collector's own probe of the dispatch table is not a queue).
    assert!(
        traced
            .stderr()
            .contains("device profiling: turned on for 1 queue(s) made without it"),
        "{}",
        traced.stderr()
    );
}

#[test]
fn following_ur_calls_stops_at_the_limit_and_says_so() {
    // The runtime keeps a trace event per UR call while anyone listens on
    // ur.call.debug: SYCLGRAPH_MAX_UR_CALLS bounds that memory. The hooks
    // take over from ur.call.debug as soon as the runtime made its first
    // UR call, so the limit is met only where ur.call.debug serves all
    // along (SYCLGRAPH_UR_HOOKS=0, or a runtime table not recognised).
    let traced = run_both(
        "timing-ur-limit",
        || {
            let mut cmd = runtime_command(&program("timing"));
            cmd.arg(N.to_string());
            cmd
        },
        &[
            ("SYCLGRAPH_MAX_UR_CALLS", "50"),
            ("SYCLGRAPH_UR_HOOKS", "0"),
        ],
    );
    assert!(
        traced
            .stderr()
            .contains("UR calls: followed the first 50 only"),
        "{}",
        traced.stderr()
    );
    // Kernels on the profiling queue are still timed exactly.
    let measured = profiling_lines(&traced.stdout());
    let rows = traced.csv("kernels.csv");
    let found = rows_at(&rows, SRC, tag_line(SRC, "small_profiled"));
    assert_eq!(found.len(), N);
    for (i, row) in found.iter().enumerate() {
        assert_eq!(
            row["duration_ns"],
            measured[&("small".to_owned(), i as u64)].to_string()
        );
    }
}
