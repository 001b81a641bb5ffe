//! The critical path and idle gaps on the real runtime, on programs whose
//! answer is known by construction (tests/programs/critical_path.cpp), and
//! on a dpnp workload nobody here wrote.

use std::collections::BTreeMap;

use syclgraph_tests::*;

const SRC: &str = "tests/programs/critical_path.cpp";

type Row = BTreeMap<String, String>;

fn num(row: &Row, column: &str) -> u64 {
    row[column]
        .parse()
        .unwrap_or_else(|_| panic!("{column} in {row:?}"))
}

fn at_line<'r>(rows: &'r [Row], label: &str) -> Vec<&'r Row> {
    let line = tag_line(SRC, label).to_string();
    rows.iter()
        .filter(|r| r["source_file"].ends_with(SRC) && r["source_line"] == line)
        .collect()
}

fn traced(mode: &str) -> Traced {
    let mut cmd = runtime_command(&program("critical_path"));
    cmd.arg(mode);
    let t = run_traced(&format!("critical-{mode}"), cmd, &[]);
    assert!(t.output.status.success(), "{}", t.stderr());
    t
}

/// Every step is an instance of instances.dot (`i<node>_<instance>` for
/// `node` `n<node>`), numbered 1, 2, ... in time order, and the path ends
/// at the device command that ended last.
fn check_steps(t: &Traced, path: &[Row]) {
    assert!(!path.is_empty(), "no critical path:\n{}", t.stderr());
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    for (i, row) in path.iter().enumerate() {
        assert_eq!(num(row, "step"), i as u64 + 1);
        let node = row["node"].strip_prefix('n').expect("node is n<id>");
        let id = format!("i{node}_{}[", row["instance"]);
        assert!(dot.contains(&id), "{id} not in instances.dot: {row:?}");
        assert_eq!(
            num(row, "duration_ns"),
            num(row, "end_ns") - num(row, "start_ns")
        );
        if i == 0 {
            assert_eq!(row["gap_cause"], "none");
        } else {
            assert!(
                ["dependency", "queue", "device", "host"].contains(&row["gap_cause"].as_str()),
                "{row:?}"
            );
            assert!(num(row, "end_ns") >= num(&path[i - 1], "end_ns"), "{row:?}");
        }
    }
    let last_end = t
        .csv("kernels.csv")
        .iter()
        .filter(|r| r["timing"] == "ok")
        .map(|r| num(r, "end_ns"))
        .max()
        .unwrap();
    assert_eq!(num(path.last().unwrap(), "end_ns"), last_end);
    // Device steps are kernels.csv rows: same instance, start and end.
    let rows = t.csv("kernels.csv");
    for row in path.iter().filter(|r| r["kind"] != "host_task") {
        assert!(
            rows.iter().any(|k| k["instance"] == row["instance"]
                && k["start_ns"] == row["start_ns"]
                && k["end_ns"] == row["end_ns"]),
            "{row:?} is no kernels.csv row"
        );
    }
}

#[test]
fn the_long_chain_is_the_path() {
    let t = traced("chains");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let long = at_line(&path, "long_link");
    let instances: Vec<&str> = long.iter().map(|r| r["instance"].as_str()).collect();
    assert_eq!(instances, ["1", "2", "3", "4"], "{path:#?}");
    let cmds = check_implied(&t, &path);
    check_no_hidden_device_wait(&path, &cmds);
    // A short link is on the path only when it held the device while a
    // long one was ready (the device runs one kernel at a time), or
    // waited for it.
    let short = at_line(&path, "short_link");
    for r in &short {
        let at = num(r, "step") as usize;
        let next_is_device = path.get(at).is_some_and(|n| n["gap_cause"] == "device");
        assert!(r["gap_cause"] == "device" || next_is_device, "{path:#?}");
    }
    let join = at_line(&path, "join");
    assert_eq!(join.len(), 1, "{path:#?}");
    assert_eq!(join[0]["kind"], "host_task");
    assert_eq!(at_line(&path, "after_join").len(), 1, "{path:#?}");
    // Each link of the long chain waited for the one before (a dependency
    // through buffer a), or for the device (then a short link is between).
    let steps: Vec<u64> = long.iter().map(|r| num(r, "step")).collect();
    assert!(steps.windows(2).all(|w| w[1] > w[0]), "{steps:?}");
    assert!(long[1..]
        .iter()
        .all(|r| ["dependency", "device"].contains(&r["gap_cause"].as_str())));
    // summary.csv: the long-chain node holds most of the path.
    let summary = t.csv("summary.csv");
    let kernel = summary
        .iter()
        .find(|r| r["kind"] == "kernel")
        .expect("a kernel row");
    let long_ns: u64 = long.iter().map(|r| num(r, "duration_ns")).sum();
    assert!(num(kernel, "critical_ns") >= long_ns, "{kernel:?}");
    // Marked in graph.dot (the long-chain node, not the short one) and in
    // instances.dot (its instances, and the edges between consecutive steps).
    let graph = t.graph();
    let critical = |label: &str| {
        node_at(&graph, SRC, tag_line(SRC, label))
            .1
            .get("critical")
            .cloned()
    };
    assert_eq!(critical("long_link").as_deref(), Some("true"));
    if short.is_empty() {
        assert_eq!(critical("short_link"), None);
    }
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    let node = long[0]["node"].strip_prefix('n').unwrap();
    let edge = format!("i{node}_2 -> i{node}_3 [");
    let line = dot.lines().find(|l| l.contains(&edge));
    if steps[2] == steps[1] + 1 {
        assert!(
            line.is_some_and(|l| l.contains("critical=\"true\"")),
            "{edge} marked in\n{dot}"
        );
    }
    check_consumers(&t, &path);
    let stderr = t.stderr();
    assert!(stderr.contains("critical path: "), "{stderr}");
    assert!(
        stderr.contains("device AMD") || stderr.contains("device "),
        "{stderr}"
    );
}

#[test]
fn a_host_sleep_is_a_host_gap() {
    let t = traced("host_sleep");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let second = at_line(&path, "second");
    assert_eq!(second.len(), 1, "{path:#?}");
    assert_eq!(second[0]["gap_cause"], "host", "{path:#?}");
    let before = &path[num(second[0], "step") as usize - 2];
    assert_eq!(before["source_line"], tag_line(SRC, "first").to_string());
    // The host slept 150 ms after submitting the first kernel, so the second
    // started at least 150 ms after that submission: the gap after the first
    // kernel's end is at least 150 ms less the first kernel's submit-to-end.
    let rows = t.csv("kernels.csv");
    let first = rows
        .iter()
        .find(|k| k["start_ns"] == before["start_ns"] && k["end_ns"] == before["end_ns"])
        .expect("the first kernel's row");
    let at_least = 150_000_000u64.saturating_sub(num(first, "end_ns") - num(first, "submit_ns"));
    assert!(
        num(second[0], "gap_before_ns") >= at_least,
        "{at_least}: {path:#?}"
    );
    // The first kernel runs for about 1 ms; on a loaded machine (two busy
    // loops besides a load of 15) its submit-to-end has reached 42 ms. Past
    // 125 ms the sleep would no longer stand out from it.
    assert!(
        at_least > 25_000_000,
        "the first kernel took 125 ms: {first:?}"
    );
    // The device sat idle for it: a host_late gap of at least that.
    let gaps = t.csv("idle_gaps.csv");
    let longest = gaps
        .iter()
        .find(|g| g["row"] == "gap" && g["scope"] == "device" && g["rank"] == "1")
        .expect("a device gap");
    assert_eq!(longest["cause"], "host_late", "{gaps:#?}");
    assert!(num(longest, "idle_ns") >= at_least);
    assert_eq!(longest["after_node"], second[0]["node"]);
}

#[test]
fn a_command_waiting_on_a_host_task_waits_for_it() {
    let t = traced("host_task");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let ht = at_line(&path, "slow_host_task");
    assert_eq!(ht.len(), 1, "{path:#?}");
    let after = &path[num(ht[0], "step") as usize];
    assert_eq!(after["gap_cause"], "dependency", "{path:#?}");
    // The host task slept 30 ms: the step after it waited that long.
    assert!(num(after, "gap_before_ns") >= 30_000_000, "{path:#?}");
    assert_eq!(at_line(&path, "second").len(), 1, "{path:#?}");
    let gaps = t.csv("idle_gaps.csv");
    let longest = gaps
        .iter()
        .find(|g| g["row"] == "gap" && g["scope"] == "device" && g["rank"] == "1")
        .expect("a device gap");
    assert!(num(longest, "idle_ns") >= 30_000_000, "{gaps:#?}");
    // The command after the gap, as kernels.csv has it.
    let rows = t.csv("kernels.csv");
    let next = rows
        .iter()
        .find(|r| {
            r["node_id"] == longest["after_node"] && r["instance"] == longest["after_instance"]
        })
        .expect("the row after the longest gap");
    let (idle_from, submit, start) = (
        num(longest, "start_ns"),
        num(next, "submit_ns"),
        num(next, "start_ns"),
    );
    // Submitted before the device went idle, only the host task held it.
    // Under load the program's thread itself can be tens of ms late (seen:
    // 55 ms, past the host task's end): then the host was late, unless the
    // command waited longer after its submission than that.
    let want = if submit <= idle_from || start - submit > submit - idle_from {
        "host_task"
    } else {
        "host_late"
    };
    assert_eq!(longest["cause"], want, "{next:?}\n{gaps:#?}");
}

/// One instance of the run as the test's own oracle sees it.
#[derive(Clone, Debug)]
struct Cmd {
    /// (node, instance): `n<id>` and the instance number.
    key: (String, String),
    /// (submit, start, end) from its kernels.csv row (a host task, which
    /// kernels.csv has no row for: from its critical_path.csv row, submit
    /// unknown, 0); `None`: no times (untimed, an allocation, ...).
    times: Option<(u64, u64, u64)>,
    /// Its device (a row naming none: its queue's); empty for a host task.
    device: String,
    /// Data dependencies (instances.dot edges), by index.
    deps: Vec<usize>,
    /// The previous command of its in-order queue (a `queue_order` edge).
    queue_before: Option<usize>,
}

/// Every instance of instances.dot with its edges, times from kernels.csv
/// (host tasks: from `path`, the only place their times are written).
fn instance_graph(t: &Traced, path: &[Row]) -> Vec<Cmd> {
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    let rows = t.csv("kernels.csv");
    let queue_device = |q: &str| {
        rows.iter()
            .find(|r| r["queue_id"] == q && !r["device"].is_empty())
            .map(|r| r["device"].clone())
            .unwrap_or_default()
    };
    // `i<node>_<instance>` -> (`n<node>`, instance).
    let key_of = |id: &str| {
        let (node, instance) = id
            .trim_start_matches('i')
            .split_once('_')
            .expect("i<n>_<k>");
        (format!("n{node}"), instance.to_string())
    };
    let mut cmds: Vec<Cmd> = Vec::new();
    for line in dot.lines().map(str::trim) {
        let Some((id, _)) = line.split_once('[') else {
            continue;
        };
        if !id.starts_with('i') || id.contains("->") || !id.contains('_') {
            continue;
        }
        let key = key_of(id.trim());
        let row = rows
            .iter()
            .find(|r| r["timing"] == "ok" && (r["node_id"].clone(), r["instance"].clone()) == key);
        let step = path.iter().find(|r| {
            r["kind"] == "host_task" && (r["node"].clone(), r["instance"].clone()) == key
        });
        let (times, device) = match (row, step) {
            (Some(r), _) => {
                let device = if r["device"].is_empty() {
                    queue_device(&r["queue_id"])
                } else {
                    r["device"].clone()
                };
                let times = (num(r, "submit_ns"), num(r, "start_ns"), num(r, "end_ns"));
                (Some(times), device)
            }
            (None, Some(r)) => (
                Some((0, num(r, "start_ns"), num(r, "end_ns"))),
                String::new(),
            ),
            (None, None) => (None, String::new()),
        };
        cmds.push(Cmd {
            key,
            times,
            device,
            deps: Vec::new(),
            queue_before: None,
        });
    }
    for line in dot.lines().map(str::trim) {
        let Some((ends, attrs)) = line.split_once('[') else {
            continue;
        };
        let Some((from, to)) = ends.split_once("->") else {
            continue;
        };
        let at = |id: &str| {
            let key = key_of(id.trim());
            cmds.iter().position(|c| c.key == key).expect("an instance")
        };
        let (from, to) = (at(from), at(to));
        if attrs.contains("kind=\"queue_order\"") {
            cmds[to].queue_before = Some(from);
        } else {
            cmds[to].deps.push(from);
        }
    }
    cmds
}

/// The path the timestamps imply, back from the command that ended last:
/// (index, cause, gap). A command waited for whatever released it last:
/// its latest dependency (an instance without times passes on its own
/// latest dependency's), its submission (then for what ended last before
/// it), or the command that occupied its device from the moment it was
/// ready until it started (for more than 1 ms or half of that wait).
fn implied_path(cmds: &[Cmd]) -> Vec<(usize, &'static str, u64)> {
    let times = |i: usize| cmds[i].times.expect("timed");
    let end = |i: usize| times(i).2;
    // The timed instance an instance stands for (itself, or through its
    // latest dependency when it has no times), among those that ended by
    // `bound` (what a command started at `bound` can have waited for).
    fn through(cmds: &[Cmd], i: usize, bound: u64, depth: usize) -> Option<usize> {
        if let Some((_, _, end)) = cmds[i].times {
            return (end <= bound).then_some(i);
        }
        if depth > cmds.len() {
            return None;
        }
        let deps = cmds[i].deps.iter().chain(cmds[i].queue_before.iter());
        deps.filter_map(|&d| through(cmds, d, bound, depth + 1))
            .max_by_key(|&d| cmds[d].times.map(|t| t.2))
    }
    let timed: Vec<usize> = (0..cmds.len())
        .filter(|&i| cmds[i].times.is_some())
        .collect();
    let mut at = *timed
        .iter()
        .filter(|&&i| !cmds[i].device.is_empty())
        .max_by_key(|&&i| (end(i), i))
        .expect("a timed device command");
    let mut out = Vec::new();
    loop {
        assert!(out.len() <= cmds.len(), "a cycle: {out:?}\n{cmds:#?}");
        let c = &cmds[at];
        let (submit, start, _) = times(at);
        let mut dep: Option<(usize, &str)> = None;
        let data = c.deps.iter().map(|&d| (d, "dependency"));
        for (d, cause) in data.chain(c.queue_before.map(|q| (q, "queue"))) {
            let Some(d) = through(cmds, d, start, 0) else {
                continue;
            };
            if dep.is_none_or(|(b, _)| end(d) > end(b)) {
                dep = Some((d, cause));
            }
        }
        let ready = dep.map_or(submit, |(d, _)| end(d).max(submit));
        let same_device = |i: &usize| !c.device.is_empty() && cmds[*i].device == c.device;
        let holder = timed
            .iter()
            .copied()
            .filter(|&i| i != at && end(i) <= start && same_device(&i))
            .max_by_key(|&i| (end(i), i))
            .filter(|&h| end(h) > ready);
        let busy: u64 = timed
            .iter()
            .copied()
            .filter(|&i| i != at && same_device(&i))
            .map(|i| (times(i).1.max(ready), end(i).min(start)))
            .filter(|(a, b)| a < b)
            .map(|(a, b)| b - a)
            .sum();
        let held = holder.filter(|_| busy > 1_000_000 || 2 * busy >= start.saturating_sub(ready));
        let waited = timed
            .iter()
            .copied()
            .filter(|&i| i != at && end(i) <= submit)
            .max_by_key(|&i| (end(i), i));
        let before = match (held, dep) {
            (Some(h), _) => Some((h, "device")),
            (None, Some((d, cause))) if submit <= end(d) => Some((d, cause)),
            (None, Some((d, _))) => match waited.filter(|&w| end(w) >= end(d)) {
                Some(w) => Some((w, "host")),
                None => Some((d, "host")),
            },
            (None, None) => waited.map(|w| (w, "host")),
        };
        match before {
            Some((b, cause)) => {
                out.push((at, cause, start.saturating_sub(end(b))));
                at = b;
            }
            None => {
                out.push((at, "none", 0));
                break;
            }
        }
    }
    out.reverse();
    out
}

/// critical_path.csv is the path the timestamps imply: the same steps,
/// causes and gaps. Returns the instances, by index.
fn check_implied(t: &Traced, path: &[Row]) -> Vec<Cmd> {
    let cmds = instance_graph(t, path);
    let implied = implied_path(&cmds);
    let steps: Vec<(String, String, String, u64)> = path
        .iter()
        .map(|r| {
            let gap = num(r, "gap_before_ns");
            (
                r["node"].clone(),
                r["instance"].clone(),
                r["gap_cause"].clone(),
                gap,
            )
        })
        .collect();
    let want: Vec<(String, String, String, u64)> = implied
        .iter()
        .map(|&(i, cause, gap)| {
            let (node, instance) = cmds[i].key.clone();
            (node, instance, cause.to_string(), gap)
        })
        .collect();
    assert_eq!(steps, want, "{path:#?}\n{cmds:#?}");
    cmds
}

/// What the path promises: no step waited, after it was ready, more than
/// 1 ms (and half of that wait) while other commands ran on its device,
/// unless its cause is `device`.
fn check_no_hidden_device_wait(path: &[Row], cmds: &[Cmd]) {
    for w in path.windows(2) {
        let (before, row) = (&w[0], &w[1]);
        if row["gap_cause"] == "device" || row["kind"] == "host_task" {
            continue;
        }
        let key = (row["node"].clone(), row["instance"].clone());
        let c = cmds
            .iter()
            .find(|c| c.key == key)
            .expect("a step is an instance");
        let (submit, start, _) = c.times.expect("a step has times");
        let ready = num(before, "end_ns").max(submit);
        let ran: u64 = cmds
            .iter()
            .filter(|o| o.key != c.key && o.device == c.device)
            .filter_map(|o| o.times)
            .filter(|&(_, _, e)| e > ready && e <= start)
            .map(|(_, s, e)| e - s.max(ready))
            .sum();
        assert!(
            ran <= 1_000_000 || 2 * ran < start.saturating_sub(ready),
            "{row:?} ({}) waited {ran} ns for its device",
            row["gap_cause"]
        );
    }
}

/// The row of `label`'s `instance`-th submission on the path, if there.
fn step_of<'r>(path: &'r [Row], label: &str, instance: u64) -> Option<&'r Row> {
    at_line(path, label)
        .into_iter()
        .find(|r| num(r, "instance") == instance)
}

/// The kernels.csv row of `label`'s `instance`-th submission.
fn row_of(t: &Traced, label: &str, instance: u64) -> Row {
    let line = tag_line(SRC, label).to_string();
    t.csv("kernels.csv")
        .into_iter()
        .filter(|r| r["source_file"].ends_with(SRC) && r["source_line"] == line)
        .nth(instance as usize - 1)
        .unwrap_or_else(|| panic!("no kernels.csv row {instance} of {label}"))
}

#[test]
fn a_command_waiting_for_the_device_follows_the_command_that_held_it() {
    let t = traced("contended");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let cmds = check_implied(&t, &path);
    check_no_hidden_device_wait(&path, &cmds);
    let (a1, b1, b2, a2) = (
        row_of(&t, "chain_a", 1),
        row_of(&t, "chain_b", 1),
        row_of(&t, "chain_b", 2),
        row_of(&t, "chain_a", 2),
    );
    // The sleep kept A2 apart: A1 and B2 had both ended before it was
    // submitted (else the machine was too slow for this test to mean
    // anything).
    let ended = num(&a1, "end_ns").max(num(&b2, "end_ns"));
    assert!(num(&a2, "submit_ns") > ended, "{a1:?} {b2:?} {a2:?}");
    // When the device ran A1 while B2 was ready (B1 ended and B2
    // submitted before A1 ended, B2 started after it), B2 follows A1 on
    // the path with cause `device`, and A1 is on the path.
    let b2_ready = num(&b1, "end_ns").max(num(&b2, "submit_ns"));
    if num(&b2, "start_ns") >= num(&a1, "end_ns") && num(&a1, "end_ns") > b2_ready {
        let b2_step = step_of(&path, "chain_b", 2).expect("B2 on the path");
        assert_eq!(b2_step["gap_cause"], "device", "{path:#?}");
        let at = num(b2_step, "step") as usize;
        assert_eq!(
            path[at - 2]["source_line"],
            tag_line(SRC, "chain_a").to_string()
        );
    }
    // A2 waited for the host's sleep.
    let a2_step = step_of(&path, "chain_a", 2).expect("A2 on the path");
    assert!(num(a2_step, "start_ns") >= num(&a2, "submit_ns"));
    check_consumers(&t, &path);
}

/// The instance graph has no cycle: the edges of instances.dot lead from
/// earlier commands to later ones. A buffer's release, created long before
/// it runs, chained into its queue's order made one (kernel -> release ->
/// allocation -> the same kernel), and the critical path then depended on
/// the order instances were finalised in.
fn check_acyclic(cmds: &[Cmd]) {
    // 0: not seen, 1: on the current walk, 2: done.
    fn visit(cmds: &[Cmd], at: usize, state: &mut [u8], walk: &mut Vec<usize>) {
        match state[at] {
            2 => return,
            1 => {
                let keys: Vec<_> = walk.iter().map(|&i| &cmds[i].key).collect();
                panic!("a cycle through {:?}: {keys:?}", cmds[at].key);
            }
            _ => {}
        }
        state[at] = 1;
        walk.push(at);
        for &d in cmds[at].deps.iter().chain(cmds[at].queue_before.iter()) {
            visit(cmds, d, state, walk);
        }
        walk.pop();
        state[at] = 2;
    }
    let mut state = vec![0u8; cmds.len()];
    for at in 0..cmds.len() {
        visit(cmds, at, &mut state, &mut Vec::new());
    }
}

#[test]
fn two_in_order_queues_of_one_device_follow_their_timestamps() {
    let t = traced("two_queues");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    check_acyclic(&instance_graph(&t, &path));
    let cmds = check_implied(&t, &path);
    check_no_hidden_device_wait(&path, &cmds);
    check_consumers(&t, &path);
}

#[test]
fn a_host_bound_loop_is_a_chain_of_host_gaps() {
    let t = traced("host_loop");
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    let cmds = check_implied(&t, &path);
    check_no_hidden_device_wait(&path, &cmds);
    let loop_steps = at_line(&path, "loop_kernel");
    assert_eq!(loop_steps.len(), 5, "{path:#?}");
    for row in &loop_steps[1..] {
        assert_eq!(row["gap_cause"], "host", "{path:#?}");
        // The host slept 20 ms between a kernel's end and the next submission.
        assert!(num(row, "gap_before_ns") >= 20_000_000, "{path:#?}");
    }
    check_consumers(&t, &path);
}

/// summary.csv's critical_ns, the marks of graph.dot and instances.dot,
/// the Perfetto track's slices, the stderr block and `syclgraph report`
/// show the path of critical_path.csv.
fn check_consumers(t: &Traced, path: &[Row]) {
    // Per node: the durations of its steps.
    let mut per_node: BTreeMap<String, u64> = BTreeMap::new();
    for r in path {
        *per_node.entry(r["node"].clone()).or_default() += num(r, "duration_ns");
    }
    for row in t.csv("summary.csv") {
        let want = per_node.get(&row["node_id"]).copied().unwrap_or(0);
        assert_eq!(num(&row, "critical_ns"), want, "{row:?}");
    }
    let graph = std::fs::read_to_string(t.dir.join("graph.dot")).unwrap();
    for node in per_node.keys() {
        let line = graph
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{node}[")))
            .unwrap_or_else(|| panic!("{node} not in graph.dot"));
        assert!(line.contains("critical=\"true\""), "{line}");
    }
    let dot = std::fs::read_to_string(t.dir.join("instances.dot")).unwrap();
    for r in path {
        let id = format!("i{}_{}[", r["node"].trim_start_matches('n'), r["instance"]);
        let line = dot
            .lines()
            .find(|l| l.trim_start().starts_with(&id))
            .unwrap_or_else(|| panic!("{id} not in instances.dot"));
        assert!(line.contains("critical=\"true\""), "{line}");
    }
    let marked = dot
        .lines()
        .filter(|l| !l.contains("->") && l.contains("critical=\"true\""))
        .count();
    assert_eq!(marked, path.len(), "instances.dot marks other instances");
    // The Perfetto track: one slice per row, named by its operation,
    // instance and cause (the checker compares them with critical_path.csv).
    let checked = check_pftrace(&t.dir, false);
    let slices = format!("{} critical path slices", path.len());
    assert!(checked.contains(&slices), "{slices} in {checked}");
    let stderr = t.stderr();
    let steps = format!("critical path: {} steps", path.len());
    assert!(stderr.contains(&steps), "{steps} in\n{stderr}");
    let report = std::process::Command::new(syclgraph_exe())
        .arg("report")
        .arg(&t.dir)
        .output()
        .expect("run syclgraph report");
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    assert!(text.contains(&steps), "{steps} in\n{text}");
}

#[test]
fn a_dpnp_path_ends_at_the_last_command_through_real_instances() {
    let script = repo_root().join("tests/programs/dpnp_workload.py");
    let t = run_traced("critical-dpnp", python_command(&script), &[]);
    assert!(t.output.status.success(), "{}", t.stderr());
    let path = t.csv("critical_path.csv");
    check_steps(&t, &path);
    assert!(path.iter().any(|r| r["kind"] == "kernel"), "{path:#?}");
}
