//! The streaming critical path against an exact reference computed over
//! the whole instance graph of a finished run.
//!
//! The reference ([`reference_path`]) is written for clarity, not speed:
//! it sees every instance at once (no window, no reorder buffer, no
//! deferral) and scans all of them for every step. A step's predecessor is
//! the constraint it was released by last, over four kinds of edges:
//! - dependency (data) and queue (in-order predecessor) edges: released at
//!   the source's end;
//! - host-submission edges: the command could not start before the host
//!   submitted it; the step the host waited for is the one that ended last
//!   at or before the submission;
//! - device-serialisation edges: the command that held its device until it
//!   started (the device command that ended last at or before its start),
//!   when it ended after the command was ready (dependencies ended and
//!   submitted) and the device ran commands for more than 1 ms or half of
//!   the wait at least.
//!
//! The latest release wins (ties: dependency, queue, device, host). In a
//! schedule where every command starts at its latest release (plus a
//! launch latency), walking these edges back from the command that ended
//! last is the longest weighted path (durations plus gaps) into it: every
//! other chain of constraints into it starts later.
//!
//! Schedules are simulated: random DAGs on random in-order and
//! out-of-order queues of one or two devices, each device running one
//! command at a time (as the OpenCL CPU device does), random host delays
//! and host waits. The streaming result must equal the reference step by
//! step, whatever order the instances are finalised in. The streaming
//! analysis differs only when a dependency or the device's previous
//! occupant has left its window (4,096 instances; 256 device commands per
//! device) or was finalised so late that it is deferred past the bound:
//! these schedules stay inside both.

use proptest::collection::vec;
use proptest::prelude::*;
use syclgraph_graph::critical_path::{CriticalPath, GapCause};
use syclgraph_graph::record::{DeviceTimes, InstanceEdge, TimingStatus};
use syclgraph_graph::{Instance, NodeKind};

/// One command of a finished run, as the reference sees it.
#[derive(Clone, Debug)]
struct Cmd {
    submit: u64,
    start: u64,
    end: u64,
    device: usize,
    queue: usize,
    /// Data dependencies (earlier commands).
    deps: Vec<usize>,
    /// The previous command of its in-order queue.
    queue_before: Option<usize>,
}

/// The reference critical path: (command, gap before, cause) per step.
fn reference_path(run: &[Cmd]) -> Vec<(usize, u64, GapCause)> {
    // Steps are ordered by (end, index) wherever "ended last" is asked.
    let later = |a: usize, b: usize| (run[a].end, a) > (run[b].end, b);
    let latest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates.fold(None, |best: Option<usize>, c| match best {
            Some(b) if !later(c, b) => Some(b),
            _ => Some(c),
        })
    };
    let mut before: Vec<Option<(usize, GapCause)>> = Vec::new();
    for v in run {
        // The dependency that ended last (a data dependency wins a tie).
        let mut dep: Option<(usize, GapCause)> = None;
        let data = v.deps.iter().map(|&d| (d, GapCause::Dependency));
        for (u, cause) in data.chain(v.queue_before.map(|q| (q, GapCause::Queue))) {
            if dep.is_none_or(|(b, _)| run[u].end > run[b].end) {
                dep = Some((u, cause));
            }
        }
        let dep_end = dep.map(|(u, _)| run[u].end);
        let ready = dep_end.map_or(v.submit, |e| e.max(v.submit));
        // Device serialisation: the device's previous occupant.
        let holder = latest(
            &mut (0..run.len())
                .filter(|&u| run[u].device == v.device && run[u].end <= v.start)
                .filter(|&u| !std::ptr::eq(&run[u], v)),
        )
        .filter(|&u| run[u].end > ready)
        .filter(|_| {
            // The time the device ran other commands during the wait.
            let mut spans: Vec<(u64, u64)> = run
                .iter()
                .filter(|u| u.device == v.device && !std::ptr::eq(*u, v))
                .map(|u| (u.start.max(ready), u.end.min(v.start)))
                .filter(|(a, b)| a < b)
                .collect();
            spans.sort_unstable();
            let mut busy = 0;
            let mut covered = 0;
            for (a, b) in spans {
                let a = a.max(covered);
                if b > a {
                    busy += b - a;
                }
                covered = covered.max(b);
            }
            busy > 1_000_000 || 2 * busy >= v.start - ready
        });
        // Host submission: what ended last at or before it.
        let waited = latest(&mut (0..run.len()).filter(|&u| run[u].end <= v.submit));
        before.push(match (holder, dep) {
            (Some(h), _) => Some((h, GapCause::Device)),
            (None, Some((u, cause))) if v.submit <= run[u].end => Some((u, cause)),
            (None, Some((u, _))) => match waited.filter(|&w| run[w].end >= run[u].end) {
                Some(w) => Some((w, GapCause::Host)),
                None => Some((u, GapCause::Host)),
            },
            (None, None) => waited.map(|w| (w, GapCause::Host)),
        });
    }
    let Some(mut at) = latest(&mut (0..run.len())) else {
        return Vec::new();
    };
    let mut path = Vec::new();
    loop {
        match before[at] {
            Some((u, cause)) => {
                path.push((at, run[at].start.saturating_sub(run[u].end), cause));
                at = u;
            }
            None => {
                path.push((at, 0, GapCause::None));
                break;
            }
        }
    }
    path.reverse();
    path
}

/// One command to simulate: queue, dependencies, duration, launch
/// latency, host delay before submitting, a host wait for an earlier
/// command before submitting.
type PlannedCmd = (usize, Vec<usize>, u64, u64, u64, Option<usize>);

/// A run to simulate: queues (device, in order) and commands.
#[derive(Clone, Debug)]
struct Plan {
    queues: Vec<(usize, bool)>,
    cmds: Vec<PlannedCmd>,
}

fn plan() -> impl Strategy<Value = Plan> {
    let queues = vec((0usize..2, any::<bool>()), 1..5);
    (queues, 1usize..14).prop_flat_map(|(queues, n)| {
        let q = queues.len();
        let cmd = (
            0..q,
            vec(0usize..64, 0..3),
            prop_oneof![1u64..1000, 1u64..3_000_000],
            prop_oneof![0u64..4, 0u64..1_500_000],
            prop_oneof![Just(0u64), 0u64..50, 0u64..4_000_000],
            proptest::option::weighted(0.2, 0usize..64),
        );
        (Just(queues), vec(cmd, n)).prop_map(|(queues, raw)| Plan {
            queues,
            cmds: raw
                .into_iter()
                .enumerate()
                .map(|(i, (q, deps, dur, lat, delay, wait))| {
                    let mut deps: Vec<usize> = if i == 0 {
                        Vec::new()
                    } else {
                        deps.into_iter().map(|d| d % i).collect()
                    };
                    deps.sort_unstable();
                    deps.dedup();
                    let wait = wait.filter(|_| i > 0).map(|w| w % i);
                    (q, deps, dur, lat, delay, wait)
                })
                .collect(),
        })
    })
}

/// Runs the plan: each device runs one command at a time, in submission
/// order; a command starts (after its latency) once it is submitted, its
/// dependencies and in-order predecessor ended, and its device is free.
fn simulate(p: &Plan) -> Vec<Cmd> {
    let mut run: Vec<Cmd> = Vec::new();
    let mut host = 0u64;
    let mut device_free = [0u64; 2];
    let mut queue_last: Vec<Option<usize>> = vec![None; p.queues.len()];
    for (queue, deps, dur, lat, delay, wait) in &p.cmds {
        let (device, in_order) = p.queues[*queue];
        if let Some(w) = wait {
            host = host.max(run[*w].end);
        }
        let submit = host + delay;
        host = submit;
        let queue_before = if in_order { queue_last[*queue] } else { None };
        let ready = deps
            .iter()
            .chain(queue_before.iter())
            .map(|&d| run[d].end)
            .fold(submit, u64::max);
        let start = ready.max(device_free[device]) + lat;
        let end = start + dur;
        device_free[device] = end;
        queue_last[*queue] = Some(run.len());
        run.push(Cmd {
            submit,
            start,
            end,
            device,
            queue: *queue,
            deps: deps.clone(),
            queue_before,
        });
    }
    run
}

/// The streaming analysis over `run`, finalised in `order`.
fn streaming(run: &[Cmd], order: &[usize]) -> Vec<(usize, u64, GapCause)> {
    let mut cp = CriticalPath::new(1000);
    let edge = |from: usize, to: usize, queue_order| InstanceEdge {
        source: from as u32,
        source_instance: 1,
        target: to as u32,
        target_instance: 1,
        queue_order,
    };
    for (v, c) in run.iter().enumerate() {
        for &d in &c.deps {
            cp.depends(edge(d, v, false));
        }
        if let Some(q) = c.queue_before {
            cp.depends(edge(q, v, true));
        }
    }
    for &v in order {
        let c = &run[v];
        let mut i = Instance::new(1);
        i.submit_ns = Some(c.submit);
        i.device = Some(DeviceTimes {
            node: v as u32,
            instance: 1,
            status: TimingStatus::Ok,
            start_ns: c.start,
            end_ns: c.end,
        });
        cp.finalised(
            (v as u32, 1),
            &i,
            NodeKind::Kernel,
            Some(c.device),
            Some(c.queue as u64),
        );
    }
    cp.finish();
    let r = cp.report();
    r.steps
        .iter()
        .map(|s| (s.key.0 as usize, s.gap_before_ns, s.cause))
        .collect()
}

/// What the path promises, whatever the rule: a step whose cause is not
/// `device` did not wait, after the step before it ended and it was
/// submitted, while commands that ended before it started ran on its
/// device for more than 1 ms and half of that wait.
fn no_hidden_device_wait(run: &[Cmd], path: &[(usize, u64, GapCause)]) -> Result<(), String> {
    for w in path.windows(2) {
        let ((u, _, _), (v, _, cause)) = (w[0], w[1]);
        let c = &run[v];
        let ready = run[u].end.max(c.submit);
        if cause == GapCause::Device || c.start <= ready {
            continue;
        }
        let ran: u64 = (0..run.len())
            .filter(|&x| x != v && run[x].device == c.device)
            .filter(|&x| run[x].end > ready && run[x].end <= c.start)
            .map(|x| run[x].end - run[x].start.max(ready))
            .sum();
        if ran > 1_000_000 && 2 * ran >= c.start - ready {
            return Err(format!(
                "step {v} ({cause:?}) waited {ran} ns for its device"
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]
    #[test]
    fn streaming_equals_the_reference_step_by_step(
        (p, order) in plan().prop_flat_map(|p| {
            let n = p.cmds.len();
            (Just(p), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        }),
    ) {
        let run = simulate(&p);
        let want = reference_path(&run);
        let got = streaming(&run, &order);
        prop_assert_eq!(&got, &want, "run {:#?}", run);
        if let Err(e) = no_hidden_device_wait(&run, &got) {
            return Err(TestCaseError::fail(e));
        }
        // The path's length is its durations and gaps.
        let span = run[want.last().unwrap().0].end - run[want[0].0].start;
        let parts: u64 = want.iter().map(|&(v, gap, _)| gap + run[v].end - run[v].start).sum();
        prop_assert!(parts <= span, "{} > {}", parts, span);
    }
}

fn cmd(submit: u64, start: u64, end: u64, device: usize, queue: usize, deps: &[usize]) -> Cmd {
    Cmd {
        submit,
        start,
        end,
        device,
        queue,
        deps: deps.to_vec(),
        queue_before: None,
    }
}

/// The program, in numbers: one out-of-order queue on a device
/// that runs one kernel at a time. B1 0..1, A1 1..40, B2 (needs B1) 40..41,
/// A2 submitted at 150 (the host slept), A3, a host-task stand-in C needing
/// A3 and B2. B2 waited for the device (A1), not for B1.
#[test]
fn the_contended_program_goes_through_the_command_that_held_the_device() {
    let run = vec![
        cmd(0, 1, 40, 0, 0, &[]),          // 0 A1
        cmd(0, 0, 1, 0, 0, &[]),           // 1 B1
        cmd(0, 40, 41, 0, 0, &[1]),        // 2 B2 after B1
        cmd(150, 151, 190, 0, 0, &[0]),    // 3 A2 after A1, submitted late
        cmd(151, 190, 230, 0, 0, &[3]),    // 4 A3
        cmd(152, 231, 232, 0, 0, &[4, 2]), // 5 needs A3 and B2
    ];
    let want = reference_path(&run);
    assert_eq!(
        want,
        vec![
            (1, 0, GapCause::None),
            (0, 0, GapCause::Device),
            (2, 0, GapCause::Device),
            (3, 110, GapCause::Host),
            (4, 0, GapCause::Dependency),
            (5, 1, GapCause::Dependency),
        ]
    );
    assert_eq!(streaming(&run, &[5, 4, 3, 2, 1, 0]), want);
}

/// Two in-order queues on one device: the second queue's command waits
/// behind the first queue's, not behind its own queue's predecessor.
#[test]
fn two_in_order_queues_on_one_device() {
    let mut run = vec![
        cmd(0, 0, 10, 0, 0, &[]),  // 0 queue 0
        cmd(0, 10, 30, 0, 1, &[]), // 1 queue 1
        cmd(0, 30, 35, 0, 0, &[]), // 2 queue 0, after 0
        cmd(0, 35, 60, 0, 1, &[]), // 3 queue 1, after 1
    ];
    run[2].queue_before = Some(0);
    run[3].queue_before = Some(1);
    let want = reference_path(&run);
    let causes: Vec<_> = want.iter().map(|s| (s.0, s.2)).collect();
    assert_eq!(
        causes,
        vec![
            (0, GapCause::None),
            (1, GapCause::Device),
            (2, GapCause::Device),
            (3, GapCause::Device)
        ]
    );
    assert_eq!(streaming(&run, &[0, 1, 2, 3]), want);
}

/// Two devices: a command waits for its own device's occupant, never for
/// a command of the other device that ended in between.
#[test]
fn two_devices_do_not_hold_each_other() {
    let run = vec![
        cmd(0, 0, 50, 0, 0, &[]),  // 0 device 0, long
        cmd(0, 0, 45, 1, 1, &[]),  // 1 device 1, ends inside 0
        cmd(5, 50, 60, 0, 0, &[]), // 2 device 0: ready at 5, waited for 0
        cmd(5, 45, 49, 1, 1, &[]), // 3 device 1: waited for 1
    ];
    let want = reference_path(&run);
    assert_eq!(want, vec![(0, 0, GapCause::None), (2, 0, GapCause::Device)]);
    assert_eq!(streaming(&run, &[3, 2, 1, 0]), want);
}
