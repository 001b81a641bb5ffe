//! summary.csv groups device commands by (kind, name) across code locations,
//! with totals, means, nearest-rank percentiles and shares computed by hand
//! below; the text table ends with the untimed counts.

mod common;
use common::*;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::{summary_table, write_summary_csv, TaskGraph};

fn timed_runs(node: u32, durations: &[u64], first_instance: u64) -> Vec<Record> {
    durations
        .iter()
        .enumerate()
        .flat_map(|(k, &d)| {
            device_run(
                node,
                first_instance + k as u64,
                0,
                10_000 * (k as u64 + 1),
                d,
            )
        })
        .collect()
}

fn untimed_run(node: u32, instance: u64, status: TimingStatus) -> Vec<Record> {
    vec![
        submitted(node, instance, 0, 1),
        end(node, instance, 0, 2),
        device_untimed(node, instance, status),
    ]
}

fn program() -> TaskGraph {
    let mut r = vec![
        kernel(0, "_ZTS1A", "/s.cpp", 10),
        kernel(1, "_ZTS1A", "/s.cpp", 20), // same kernel, other call site
        node(
            2,
            "memory_transfer_node::memcpy",
            "main",
            None,
            &[("memory_size", "8")],
        ),
        node(
            3,
            "command_group_node",
            "fill",
            None,
            &[("kernel_name", "fill")],
        ),
        node(
            4,
            "command_group_node",
            "host task",
            None,
            &[("kernel_name", "host task")],
        ),
    ];
    r.extend(timed_runs(0, &[10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 1));
    r.extend(timed_runs(1, &[15, 5], 1));
    r.extend(timed_runs(2, &[300], 1));
    r.extend(untimed_run(2, 2, TimingStatus::NoProfiling));
    r.extend(untimed_run(2, 3, TimingStatus::Lost));
    r.extend(untimed_run(3, 1, TimingStatus::NoProfiling));
    r.extend(untimed_run(3, 2, TimingStatus::NoProfiling));
    r.extend(host_run(4, 1, 0, 5, 1_000_000));
    build(r).0
}

#[test]
fn csv_by_hand() {
    // A: 5,10,15,20,30,...,100 → total 570, mean 570/12 = 47.5 → 48,
    // p50 = 6th of 12 = 40, p95 = 12th = 100; share 570/870 = 0.6552.
    // memcpy: one timed 300 of three; share 300/870 = 0.3448.
    // fill: nothing timed. No dependencies, every command submitted after
    // the one before ended: the critical path goes from A's 10th (ends at
    // 100,200) back through what ended last before each submission, A's
    // runs at 10,000 k + 100 (k = 2..10: 20+...+100 = 540 of node 0),
    // the memcpy (10,100..10,400) and B's 15 ns at 10,100 is skipped
    // (it ends before the memcpy); the path starts at the memcpy's 10,100:
    // 90,100 ns, A 540/90,100 = 0.0060, memcpy 300/90,100 = 0.0033.
    let mut out = Vec::new();
    write_summary_csv(&mut out, &program()).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "kind,name,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share,critical_ns,critical_share\n\
         kernel,A,12,570,48,5,100,40,100,0.6552,540,0.0060\n\
         memcpy,memcpy,3,300,300,300,300,300,300,0.3448,300,0.0033\n\
         fill,fill,2,0,,,,,,0.0000,0,0.0000\n"
    );
}

#[test]
fn text_table_by_hand() {
    let table = summary_table(&program());
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 5, "{table}");
    let cells: Vec<Vec<&str>> = lines[..4]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        cells[0],
        ["kind", "name", "count", "total", "mean", "min", "max", "p50", "p95", "share"]
    );
    assert_eq!(
        cells[1],
        [
            "kernel", "A", "12", "570", "ns", "48", "ns", "5", "ns", "100", "ns", "40", "ns",
            "100", "ns", "65.5%"
        ]
    );
    assert_eq!(
        cells[3],
        ["fill", "fill", "2", "-", "-", "-", "-", "-", "-", "0.0%"]
    );
    // Columns line up: every line puts "count" / the counts at the same end.
    let count_end = lines[0].find("count").unwrap() + "count".len();
    for l in &lines[1..4] {
        let before = &l[..count_end];
        assert!(before.ends_with(char::is_numeric), "{l:?}");
    }
    assert_eq!(lines[4], "untimed: 3 no_profiling, 1 lost");
    assert!(!table.contains("dropped"));
}

#[test]
fn empty_graph() {
    let g = TaskGraph::new();
    let mut out = Vec::new();
    write_summary_csv(&mut out, &g).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "kind,name,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share,critical_ns,critical_share\n"
    );
    assert!(summary_table(&g).ends_with("no device commands recorded\n"));
}
