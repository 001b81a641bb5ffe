//! SYCL features no other program traces (`tests/programs/features.cpp`):
//! eventless submission through the enqueue free functions, a queue that
//! discards its events, in-order barriers and a profiling tag, USM host
//! memory with prefetch and mem_advise, a second context, a host task with
//! an interop handle and an asynchronous error. Each command is checked
//! against what the program itself printed: its own profiling durations and
//! host clock readings around the work.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/features.cpp";

type Row = BTreeMap<String, String>;

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

/// The command tags of the program with the kind each node must have.
/// In-order barriers, the profiling tag and mem_advise are left out: the
/// runtime sends no node for them (docs/guide/limitations.md); they are
/// counted instead ([`check_enqueues_without_a_node`]).
const COMMANDS: [(&str, &str); 19] = [
    ("free_memset", "memset"),
    ("free_submit_iota", "kernel"),
    ("free_fill", "fill"),
    ("free_memcpy", "memcpy"),
    ("free_copy", "memcpy"),
    ("discard_memset", "memset"),
    ("discard_iota", "kernel"),
    ("discard_memcpy", "memcpy"),
    ("barrier_iota", "kernel"),
    ("barrier_scale", "kernel"),
    ("host_to_device", "memcpy"),
    ("prefetch_shared", "other"),
    ("device_to_shared", "memcpy"),
    ("ctx2_fill", "fill"),
    ("ctx2_memcpy", "memcpy"),
    ("interop_host_task", "host_task"),
    ("interop_check", "memcpy"),
    ("throwing_host_task", "host_task"),
    ("after_throw_memset", "memset"),
];

/// Device commands submitted without an event (the enqueue free
/// functions): there is no event to time them by.
const EVENTLESS: [&str; 5] = [
    "free_memset",
    "free_submit_iota",
    "free_fill",
    "free_memcpy",
    "free_copy",
];

fn traced(test: &str, env: &[(&str, &str)]) -> Traced {
    let t = run_both(test, || runtime_command(&program("features")), env);
    let out = t.stdout();
    // The program's own checks, traced as untraced (run_both compared them).
    assert!(out.contains("async errors 1"), "{out}");
    assert!(out.contains("interop host task 1"), "{out}");
    t
}

/// Every command the program submitted is one node at its line, of its
/// kind, counted once; every device command one kernels.csv row, on the
/// submitting thread.
fn check_every_command_is_a_node_and_a_row(t: &Traced) {
    let graph = t.graph();
    let rows = t.csv("kernels.csv");
    for (label, kind) in COMMANDS {
        let (id, attrs) = node_at(&graph, SRC, tag_line(SRC, label));
        assert_eq!(attrs["kind"], kind, "{label}: {attrs:?}");
        assert_eq!(attrs["count"], "1", "{label}: {attrs:?}");
        let found = rows_at(&rows, SRC, tag_line(SRC, label));
        let device = !matches!(kind, "host_task" | "other");
        assert_eq!(found.len(), usize::from(device), "{label}: {found:?}");
        for row in found {
            assert_eq!(&row["node_id"], id, "{label}");
            assert_eq!(row["thread_id"], "1", "{label}");
        }
    }
    // nd_launch with a kernel object: the runtime reports the location of
    // the free function in its own header, not the caller's line.
    let nd: Vec<&Row> = rows
        .iter()
        .filter(|r| r["name"].starts_with("nd_launch<"))
        .collect();
    assert_eq!(nd.len(), 1, "{rows:#?}");
    assert!(
        nd[0]["source_file"].ends_with("enqueue_functions.hpp"),
        "{:?}",
        nd[0]
    );
    assert_eq!(nd[0]["global_size"], "4096x1x1");
    assert_eq!(nd[0]["local_size"], "64x1x1");
}

/// Rows with an event are timed exactly as the program saw them; rows
/// without one say `unavailable` and are counted on the `untimed:` line.
fn check_times(t: &Traced) {
    let rows = t.csv("kernels.csv");
    let measured = profiling_lines(&t.stdout());
    let row = |label: &str| rows_at(&rows, SRC, tag_line(SRC, label))[0].clone();
    for label in [
        "barrier_iota",
        "barrier_scale",
        "host_to_device",
        "device_to_shared",
        "ctx2_fill",
        "ctx2_memcpy",
    ] {
        let r = row(label);
        assert_eq!(r["timing"], "ok", "{label}: {r:?}");
        let want = measured[&(label.to_owned(), 0)];
        assert_eq!(num(&r, "duration_ns"), want, "{label}");
    }
    // The discard_events queue: timed anyway, inside the host clock
    // readings around its work, in its in-order queue's order.
    let (begin, end) = (
        measured[&("discard_begin".to_owned(), 0)],
        measured[&("discard_end".to_owned(), 0)],
    );
    let mut previous_end = begin;
    for label in ["discard_memset", "discard_iota", "discard_memcpy"] {
        let r = row(label);
        assert_eq!(r["timing"], "ok", "{label}: {r:?}");
        let (start, stop) = (num(&r, "start_ns"), num(&r, "end_ns"));
        assert!(
            previous_end <= start && start <= stop && stop <= end,
            "{label}: {previous_end} <= {start} <= {stop} <= {end}"
        );
        previous_end = stop;
    }
    // Eventless commands: a row each, submitted inside the readings around
    // them and in program order, untimed.
    let (begin, end) = (
        measured[&("eventless_begin".to_owned(), 0)],
        measured[&("eventless_end".to_owned(), 0)],
    );
    let mut previous = begin;
    for label in EVENTLESS {
        let r = row(label);
        assert_eq!(r["timing"], "unavailable", "{label}: {r:?}");
        let submit = num(&r, "submit_ns");
        assert!(previous <= submit && submit <= end, "{label}: {r:?}");
        previous = submit;
    }
    let stderr = t.stderr();
    let untimed = stderr
        .lines()
        .find(|l| l.starts_with("untimed:"))
        .unwrap_or_else(|| panic!("no untimed line in:\n{stderr}"));
    let unavailable: u64 = untimed
        .split([':', ','])
        .filter_map(|part| part.trim().strip_suffix(" unavailable"))
        .map(|n| n.trim().parse::<u64>().expect("a count"))
        .sum();
    // The five eventless commands and the nd_launch kernel (eventless too).
    assert_eq!(unavailable, 6, "{untimed}");
}

/// The enqueues the runtime sends no node for, counted by UR function on
/// the summary's `without a node:` line (stderr and summary.txt): the
/// in-order barriers and the profiling tag (`urEnqueueEventsWaitWithBarrierExt`:
/// two calls for the three, see docs/guide/limitations.md), `mem_advise`,
/// the marker `ext_oneapi_get_last_event` makes after eventless commands
/// (`urEnqueueEventsWait`), and the barrier the runtime puts on an in-order
/// queue behind each of the two host tasks (`urEnqueueEventsWaitWithBarrier`).
/// Nothing that has a node is counted.
fn check_enqueues_without_a_node(t: &Traced) {
    let want = [
        ("urEnqueueEventsWaitWithBarrierExt", 2),
        ("urEnqueueEventsWaitWithBarrier", 2),
        ("urEnqueueEventsWait", 1),
        ("urEnqueueUSMAdvise", 1),
    ];
    let total: u64 = want.iter().map(|(_, n)| n).sum();
    let summary = std::fs::read_to_string(t.dir.join("summary.txt")).unwrap();
    for text in [t.stderr(), summary] {
        let line = text
            .lines()
            .find(|l| l.starts_with("without a node:"))
            .unwrap_or_else(|| panic!("no `without a node:` line in:\n{text}"));
        let (head, each) = line.rsplit_once("): ").expect("counts after the colon");
        assert!(
            head.starts_with(&format!("without a node: {total} UR enqueue(s)")),
            "{line}"
        );
        let mut counted: Vec<(&str, u64)> = each
            .split(", ")
            .map(|part| {
                let (name, n) = part.rsplit_once(' ').expect("<function> <count>");
                (name, n.parse().expect("a count"))
            })
            .collect();
        counted.sort();
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(counted, want, "{line}");
    }
}

/// A second context on the same device: its own queue, the same device.
fn check_contexts(t: &Traced) {
    let rows = t.csv("kernels.csv");
    let row = |label: &str| rows_at(&rows, SRC, tag_line(SRC, label))[0].clone();
    let (first, second) = (row("host_to_device"), row("ctx2_fill"));
    assert_ne!(first["queue_id"], second["queue_id"]);
    assert_eq!(first["device_id"], second["device_id"]);
    assert_eq!(row("ctx2_memcpy")["queue_id"], second["queue_id"]);
}

#[test]
fn every_feature_is_a_node_a_row_and_timed_where_the_runtime_allows() {
    let t = traced("features", &[]);
    check_every_command_is_a_node_and_a_row(&t);
    check_times(&t);
    check_contexts(&t);
    check_enqueues_without_a_node(&t);
}

/// The same through the UR tracing layer (`ur.call.debug`) instead of the
/// hooks: an eventless USM command was dropped there too.
#[test]
fn eventless_commands_are_kept_through_the_tracing_layer() {
    let t = traced("features-layer", &[("SYCLGRAPH_UR_HOOKS", "0")]);
    check_every_command_is_a_node_and_a_row(&t);
    check_times(&t);
    check_enqueues_without_a_node(&t);
}
