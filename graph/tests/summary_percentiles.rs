//! summary.csv groups device commands by (kind, name) across code locations,
//! with totals, means, nearest-rank percentiles and shares computed by hand
//! below; the text table ends with the untimed counts.

use crate::common;
use common::*;
use syclgraph_graph::record::{Record, TimingStatus};
use syclgraph_graph::summary::{format_table, read_summary_csv, summary_rows};
use syclgraph_graph::{summary_table, write_summary_csv, Run};

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

fn program() -> Run {
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
    // One row per node. n0 (A at line 10): 10,20,...,100 → total 550, mean
    // 55, p50 = 5th of 10 = 50, p95 = 10th = 100; share 550/870 = 0.6322.
    // Its instance 1 took 10 (first_ns); the other 9: 20..100, total 540,
    // mean 60, p95 = 9th of 9 = 100.
    // memcpy: one timed 300 of three (instance 1); share 300/870 = 0.3448.
    // n1 (A at line 20): 15, 5 → total 20, p50 5, p95 15; first 15, steady 5.
    // Steady total 540 + 0 + 5 = 545: shares 0.9908, 0, 0.0092.
    // fill: nothing timed.
    // No dependencies, every command submitted after
    // the one before ended: the critical path goes from A's 10th (ends at
    // 100,200) back through what ended last before each submission, A's
    // runs at 10,000 k + 100 (k = 2..10: 20+...+100 = 540 of n0),
    // the memcpy (10,100..10,400) and B's 15 ns at 10,100 is skipped
    // (it ends before the memcpy); the path starts at the memcpy's 10,100:
    // 90,100 ns, n0 540/90,100 = 0.0060, memcpy 300/90,100 = 0.0033.
    let mut out = Vec::new();
    write_summary_csv(&mut out, &program()).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "node_id,kind,name,source_file,source_line,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share,first_ns,steady_count,steady_total_ns,steady_mean_ns,steady_p95_ns,steady_share,critical_ns,critical_share\n\
         n0,kernel,A,/s.cpp,10,10,550,55,10,100,50,100,0.6322,10,9,540,60,100,0.9908,540,0.0060\n\
         n2,memcpy,memcpy,,,3,300,300,300,300,300,300,0.3448,300,0,0,,,0.0000,300,0.0033\n\
         n1,kernel,A,/s.cpp,20,2,20,10,5,15,5,15,0.0230,15,1,5,5,5,0.0092,0,0.0000\n\
         n3,fill,fill,,,2,0,,,,,,0.0000,,0,0,,,0.0000,0,0.0000\n"
    );
}

#[test]
fn text_table_by_hand() {
    let table = summary_table(&program());
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 6, "{table}");
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
    // First instances of repeated commands: 10 + 15 + 300 of 870 ns.
    assert_eq!(
        lines[5],
        "warm-up: the first instances of repeated commands took 325 ns of 870 ns device time \
         (summary.csv: first_ns; steady_* columns leave them out)"
    );
    assert!(!table.contains("dropped"));
}

#[test]
fn empty_graph() {
    let g = Run::new();
    let mut out = Vec::new();
    write_summary_csv(&mut out, &g).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "node_id,kind,name,source_file,source_line,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share,first_ns,steady_count,steady_total_ns,steady_mean_ns,steady_p95_ns,steady_share,critical_ns,critical_share\n"
    );
    assert!(summary_table(&g).ends_with("no device commands recorded\n"));
}

#[test]
fn summary_csv_read_back_gives_one_line_per_node() {
    // `syclgraph report` prints the table from summary.csv: one line per
    // node, with the numbers the file holds; per (kind, name) the counts and
    // totals add up to the run's table.
    let g = program();
    let mut csv = Vec::new();
    write_summary_csv(&mut csv, &g).unwrap();
    let lines = read_summary_csv(csv.as_slice()).unwrap();
    let nodes: Vec<&str> = lines
        .iter()
        .map(|l| l.node_id.as_deref().unwrap())
        .collect();
    assert_eq!(nodes, ["n0", "n2", "n1", "n3"]);
    assert_eq!(lines[3].total_ns, None, "nothing timed: total shown as -");
    assert_eq!(lines[1].total_ns, Some(300));
    let a: u64 = lines
        .iter()
        .filter(|l| l.name == "A")
        .map(|l| l.count)
        .sum();
    let group = summary_rows(&g);
    let a_group = group.iter().find(|r| r.name == "A").unwrap();
    assert_eq!(a, a_group.count);
    let table = format_table(&lines);
    assert!(table.lines().nth(1).unwrap().ends_with("  n0"), "{table}");
}

#[test]
fn summary_csv_read_back_shares_come_from_the_totals() {
    // 49 of 100000 ns is 0.049%: the run's table says 0.0%; the CSV's
    // 0.0005 rounded again would say 0.1%.
    let text =
        "node_id,kind,name,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share\n\
        n0,kernel,big,1,99951,99951,99951,99951,99951,99951,0.9995\n\
        n1,kernel,small,1,49,49,49,49,49,49,0.0005\n\
        n2,fill,none,1,0,,,,,,0.0000\n";
    let lines = read_summary_csv(text.as_bytes()).unwrap();
    assert_eq!(lines[1].device_share, 49.0 / 100_000.0);
    assert_eq!(lines[2].device_share, 0.0);
    let table = format_table(&lines);
    let small = table.lines().find(|l| l.contains("small")).unwrap();
    assert!(small.ends_with(" 0.0%  n1"), "{table}");
}

#[test]
fn summary_csv_read_back_names_what_is_wrong() {
    let err = |text: &str| read_summary_csv(text.as_bytes()).unwrap_err();
    assert_eq!(err(""), "the file is empty");
    assert!(err("a,b\n").starts_with("line 1 is not the summary.csv header"));
    let header =
        "node_id,kind,name,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p95_ns,device_share\n";
    assert_eq!(
        err(&format!("{header}n0,kernel,A,x,0,,,,,,0.0\n")),
        "line 2: count \"x\" is not a whole number"
    );
    assert!(err(&format!("{header}n0,kernel,A,1\n")).starts_with("line 2:"));
    assert_eq!(read_summary_csv(header.as_bytes()).unwrap(), vec![]);
    assert_eq!(
        format_table(&[]).lines().last(),
        Some("no device commands recorded")
    );
}

#[test]
fn timing_words_read_back() {
    for status in [
        TimingStatus::Ok,
        TimingStatus::NoProfiling,
        TimingStatus::Invalid,
        TimingStatus::Lost,
        TimingStatus::Unavailable,
    ] {
        assert_eq!(TimingStatus::from_name(status.as_str()), Some(status));
    }
    assert_eq!(TimingStatus::from_name("fine"), None);
}
