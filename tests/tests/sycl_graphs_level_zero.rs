//! SYCL graphs on the runtime's Level Zero adapter
//! (tests/programs/sycl_graphs_level_zero.cpp), over our Level Zero driver
//! `ze-test-driver` loaded by the real loader (`ZE_ENABLE_ALT_DRIVERS`):
//! the driver runs each copy and fill at the device times its script gives,
//! so the script is the answer. The adapter computes a replay's times from
//! the commands it ran (first start to last end); syclgraph's replay rows
//! must say the same.
//!
//! Set-up, besides the driver (`cargo build -p ze-test-driver`): a thin
//! `libze_loader.so.1` (tests/programs/shims/ze_loader_padding.c) in front
//! of Debian's 1.8.12 loader, which the 2026.2 adapter cannot run on alone
//! (the shim's comment says why).
//!
//! The driver's device clock stands still between commands (its
//! `zeDeviceGetGlobalTimestamps` answers the script's fixed pair), so the
//! commands read through their native Level Zero events and the replays
//! read through the runtime's profiling query are each on a timeline of
//! their own here: the tests compare durations, and times within one kind.
//!
//! The program exits right after its last command: syclgraph must read and
//! release the events it holds before the runtime's shutdown releases the
//! context (on Level Zero, releasing them after made the adapter read the
//! freed context: SIGSEGV at exit).

use std::collections::BTreeMap;
use std::process::Command;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/sycl_graphs_level_zero.cpp";
/// The driver's timer: 10 MHz, 100 ns per tick.
const TIMER_HZ: u64 = 10_000_000;
const NS_PER_TICK: u64 = 1_000_000_000 / TIMER_HZ;
const REPLAYS: u64 = 3;

/// What the script makes each copy and fill take, in ticks: the memcpy
/// before the graph, each replay's memcpy and memset, the memcpy after.
struct Plan {
    before: (u64, u64),
    replays: Vec<[(u64, u64); 2]>,
    after: (u64, u64),
}

impl Plan {
    /// Replays 1 ms apart, each with its own lengths and a gap inside.
    fn new() -> Plan {
        let replays = (0..REPLAYS)
            .map(|r| {
                let base = 10_000 + 1_000 * r;
                [(base, base + 20 + r), (base + 50, base + 80 + 2 * r)]
            })
            .collect();
        Plan {
            before: (6_000, 6_100),
            replays,
            after: (13_000, 13_010),
        }
    }

    /// The driver's script: commands numbered in the order they run.
    fn script(&self) -> String {
        let mut commands = vec![self.before];
        for replay in &self.replays {
            commands.extend(replay);
        }
        commands.push(self.after);
        let mut script = format!("timer_hz {TIMER_HZ}; sync 1000000000 5000");
        for (n, (start, end)) in commands.iter().enumerate() {
            script.push_str(&format!("; command {n} {start} {end}"));
        }
        script
    }

    /// A replay's device span: its first command's start to its last
    /// command's end, ns.
    fn replay_ns(&self, r: usize) -> (u64, u64) {
        let [first, last] = self.replays[r];
        (first.0 * NS_PER_TICK, last.1 * NS_PER_TICK)
    }
}

/// The program on the Level Zero adapter over the test driver.
fn level_zero_command(plan: &Plan, args: &[&str]) -> Command {
    let mut cmd = runtime_command(&program("sycl_graphs_level_zero"));
    on_level_zero_test_driver(&mut cmd);
    cmd.env("ZE_TEST_DRIVER_SCRIPT", plan.script()).args(args);
    cmd
}

/// `times <label> <instance> <start> <end>` lines: (label, instance) →
/// (start, end) ns, the program's own `get_profiling_info`.
fn program_times(stdout: &str) -> BTreeMap<(String, u64), (u64, u64)> {
    labelled_numbers(stdout, "times")
        .into_iter()
        .filter_map(|(key, ns)| match ns[..] {
            [start, end] => Some((key, (start, end))),
            _ => None,
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

/// The chain itself (driver, loader shim, adapter): the program's own
/// profiling of each command and replay is what the script says.
#[test]
fn the_adapter_reports_the_scripted_times() {
    let plan = Plan::new();
    let out = level_zero_command(&plan, &["record"])
        .output()
        .expect("run the program");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("device syclgraph scripted test device"),
        "{stdout}"
    );
    let times = program_times(&stdout);
    let ns = |(start, end): (u64, u64)| (start * NS_PER_TICK, end * NS_PER_TICK);
    assert_eq!(times[&("before".into(), 0)], ns(plan.before));
    assert_eq!(times[&("after".into(), 0)], ns(plan.after));
    for r in 0..REPLAYS as usize {
        assert_eq!(
            times[&("replay".into(), r as u64)],
            plan.replay_ns(r),
            "replay {r}"
        );
    }
    // The memcpy ran first, then the memset: the replays copy zeros after
    // the first one.
    assert!(stdout.contains("host[0] 0"), "{stdout}");
}

/// syclgraph on Level Zero: each replay is a row whose device duration is
/// the replay's (first command's start to last command's end), read
/// through the runtime's profiling query; the commands around it are timed
/// through their native events; the graph's commands are drawn in their
/// cluster and said to be untimed inside a replay.
#[test]
fn replays_are_timed_as_the_driver_ran_them() {
    let plan = Plan::new();
    let traced = run_both(
        "sycl-graphs-level-zero",
        || level_zero_command(&plan, &["record"]),
        &[],
    );
    let rows = traced.csv("kernels.csv");
    let mut replays: Vec<_> = rows.iter().filter(|r| r["kind"] == "graph").collect();
    replays.sort_by_key(|r| num(r, "instance"));
    assert_eq!(replays.len(), REPLAYS as usize, "{rows:?}");
    for (r, row) in replays.iter().enumerate() {
        let (start, end) = plan.replay_ns(r);
        assert_eq!(row["timing"], "ok", "{row:?}");
        assert_eq!(num(row, "instance"), r as u64 + 1, "{row:?}");
        assert_eq!(num(row, "duration_ns"), end - start, "replay {r}: {row:?}");
        assert_eq!(num(row, "end_ns") - num(row, "start_ns"), end - start);
        if r > 0 {
            // On one timeline: the replays' starts are as far apart as
            // the script put them.
            let (previous, _) = plan.replay_ns(r - 1);
            assert_eq!(
                num(row, "start_ns") - num(replays[r - 1], "start_ns"),
                start - previous,
                "replay {r}"
            );
        }
    }
    let mut memcpys: Vec<_> = rows.iter().filter(|r| r["kind"] == "memcpy").collect();
    memcpys.sort_by_key(|r| num(r, "source_line"));
    assert_eq!(memcpys.len(), 2, "{rows:?}");
    for (row, (start, end)) in memcpys.iter().zip([plan.before, plan.after]) {
        assert_eq!(row["timing"], "ok", "{row:?}");
        assert_eq!(
            num(row, "duration_ns"),
            (end - start) * NS_PER_TICK,
            "{row:?}"
        );
    }

    let graph = traced.graph();
    let members = &graph.subgraphs["cluster_sycl_graph_1"];
    assert_eq!(members.len(), 2, "{members:?}");
    for m in members {
        let node = &graph.nodes[m];
        assert_eq!(node["count"], "0", "{node:?}");
        assert_eq!(
            node["inside_replay"], "not timed by this backend",
            "{node:?}"
        );
    }
    // Finalising is a host span on the graph's node.
    let (_, replay_node) = graph
        .nodes_where("kind", "graph")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no graph node"));
    let finalize_ns: u64 = replay_node["finalize_ns"].parse().expect("finalize_ns");
    assert!(finalize_ns > 0, "{replay_node:?}");
    assert_eq!(replay_node["count"], REPLAYS.to_string(), "{replay_node:?}");
    let lines: Vec<u32> = members
        .iter()
        .map(|m| graph.nodes[m]["line"].parse().expect("line"))
        .collect();
    assert!(
        lines.contains(&tag_line(SRC, "l0_graph_memcpy")),
        "{lines:?}"
    );
    assert!(
        lines.contains(&tag_line(SRC, "l0_graph_memset")),
        "{lines:?}"
    );
    let summary = traced.csv("summary.csv");
    let replay_line = summary
        .iter()
        .find(|r| r["kind"] == "graph")
        .unwrap_or_else(|| panic!("{summary:?}"));
    assert_eq!(replay_line["count"], REPLAYS.to_string(), "{replay_line:?}");
    let total: u64 = (0..REPLAYS as usize)
        .map(|r| plan.replay_ns(r).1 - plan.replay_ns(r).0)
        .sum();
    assert_eq!(num(replay_line, "total_ns"), total, "{replay_line:?}");
}

/// Finalised without `enable_profiling` (a plain `finalize()`), on Level
/// Zero: the in-order command buffer has no sync points, and the graph is
/// still its two commands with their edge; the adapter gives a replay no
/// times (it made the buffer without profiling), and the rows say so.
#[test]
fn a_plain_finalize_keeps_the_edge_and_says_the_replays_are_untimed() {
    let plan = Plan::new();
    let traced = run_both(
        "sycl-graphs-level-zero-plain",
        || level_zero_command(&plan, &["plain"]),
        &[],
    );
    let graph = traced.graph();
    let members = &graph.subgraphs["cluster_sycl_graph_1"];
    let line = |m: &String| graph.nodes[m]["line"].parse::<u32>().expect("line");
    let lines: Vec<u32> = members.iter().map(line).collect();
    let (memcpy, memset) = (
        tag_line(SRC, "l0_graph_memcpy"),
        tag_line(SRC, "l0_graph_memset"),
    );
    assert_eq!(lines, [memcpy, memset], "{members:?}");
    let edges: Vec<(u32, u32)> = graph
        .edges
        .iter()
        .filter(|(_, _, a)| a.get("kind").map(String::as_str) == Some("sycl_graph"))
        .map(|(a, b, _)| (line(a), line(b)))
        .collect();
    assert_eq!(edges, [(memcpy, memset)]);
    let rows = traced.csv("kernels.csv");
    let replays: Vec<_> = rows.iter().filter(|r| r["kind"] == "graph").collect();
    assert_eq!(replays.len(), REPLAYS as usize, "{rows:?}");
    for row in replays {
        assert_eq!(row["timing"], "no_profiling", "{row:?}");
        assert_eq!(row["end_ns"], "", "{row:?}");
    }
}
