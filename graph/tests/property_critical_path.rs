//! The critical path on random DAGs against a brute-force longest path.
//!
//! Every instance starts the moment its last dependency ends (roots at 0)
//! and was submitted at 0, so the chain of the command that ended last is
//! a longest path by duration: its length must equal the longest path
//! found by trying every path, its steps must follow edges of the DAG with
//! no gap, and the per-node times must add up to it. That must hold
//! whatever order the instances are finalised in, and with chains folded
//! after two steps (the totals stay exact).

use proptest::collection::vec;
use proptest::prelude::*;
use syclgraph_graph::critical_path::{CriticalPath, GapCause};
use syclgraph_graph::record::{DeviceTimes, InstanceEdge, TimingStatus};
use syclgraph_graph::{Instance, NodeKind};

/// A DAG on `n` instances: `deps[j]` are the instances before `j` it waits
/// for; `dur[j]` its duration.
#[derive(Clone, Debug)]
struct Dag {
    deps: Vec<Vec<usize>>,
    dur: Vec<u64>,
}

fn dag() -> impl Strategy<Value = Dag> {
    (1usize..10).prop_flat_map(|n| {
        (vec(vec(any::<bool>(), n), n), vec(1u64..1000, n)).prop_map(move |(adj, dur)| Dag {
            deps: (0..n)
                .map(|j| (0..j).filter(|&i| adj[j][i]).collect())
                .collect(),
            dur,
        })
    })
}

/// Start and end of every instance.
fn times(d: &Dag) -> Vec<(u64, u64)> {
    let mut t: Vec<(u64, u64)> = Vec::new();
    for j in 0..d.dur.len() {
        let start = d.deps[j].iter().map(|&i| t[i].1).max().unwrap_or(0);
        t.push((start, start + d.dur[j]));
    }
    t
}

/// The heaviest path ending at `j`, by trying every path into it.
fn heaviest_into(d: &Dag, j: usize) -> u64 {
    d.dur[j]
        + d.deps[j]
            .iter()
            .map(|&i| heaviest_into(d, i))
            .max()
            .unwrap_or(0)
}

fn instance(j: usize, (start, end): (u64, u64)) -> Instance {
    let mut i = Instance::new(1);
    i.submit_ns = Some(0);
    i.device = Some(DeviceTimes {
        node: j as u32,
        instance: 1,
        status: TimingStatus::Ok,
        start_ns: start,
        end_ns: end,
    });
    i
}

fn run(d: &Dag, order: &[usize], mut cp: CriticalPath) -> CriticalPath {
    let t = times(d);
    for (j, deps) in d.deps.iter().enumerate() {
        for &i in deps {
            cp.depends(InstanceEdge {
                source: i as u32,
                source_instance: 1,
                target: j as u32,
                target_instance: 1,
                queue_order: false,
            });
        }
    }
    for &j in order {
        cp.finalised(
            (j as u32, 1),
            &instance(j, t[j]),
            NodeKind::Kernel,
            Some(0),
            None,
        );
    }
    cp.finish();
    cp
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn the_path_is_a_longest_path(
        (d, order) in dag().prop_flat_map(|d| {
            let n = d.dur.len();
            (Just(d), Just((0..n).collect::<Vec<_>>()).prop_shuffle())
        }),
    ) {
        let longest = (0..d.dur.len()).map(|j| heaviest_into(&d, j)).max().unwrap();
        let r = run(&d, &order, CriticalPath::new(100)).report();
        prop_assert_eq!(r.length_ns(), longest);
        prop_assert_eq!(r.start_ns, Some(0));
        prop_assert_eq!(r.node_ns.iter().map(|n| n.1).sum::<u64>(), longest);
        prop_assert_eq!(r.folded_steps, 0);
        for (k, s) in r.steps.iter().enumerate() {
            prop_assert_eq!(s.gap_before_ns, 0);
            if k == 0 {
                prop_assert_eq!(s.cause, GapCause::None);
                prop_assert!(d.deps[s.key.0 as usize].is_empty());
            } else {
                prop_assert_eq!(s.cause, GapCause::Dependency);
                let before = r.steps[k - 1].key.0 as usize;
                prop_assert!(d.deps[s.key.0 as usize].contains(&before));
            }
        }
        // Folding after two steps keeps the totals exact.
        let folded = run(&d, &order, CriticalPath::with_bounds(1, 4096, 4096)).report();
        prop_assert_eq!(folded.length_ns(), longest);
        prop_assert_eq!(folded.total_steps(), r.total_steps());
        let mut a = folded.node_ns.clone();
        let mut b = r.node_ns.clone();
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
        prop_assert!(folded.steps.len() <= 2);
        prop_assert_eq!(folded.steps.last(), r.steps.last());
    }
}
