//! What speeding commands up would save, by simulation: the run's
//! instances replayed with the chosen commands' device durations divided
//! by a factor, under every constraint the run recorded, and the span
//! (first submission to last device end) compared with the recorded one.
//!
//! # The model
//!
//! [`schedule`] collects the run as the analyses see it; [`plan`] resolves
//! it and replays it ([`plan::Plan::replay`]). Each instance starts when
//! the last of its constraints is met, plus the latency the run showed
//! after it:
//!
//! - **dependencies**: the ends of the instances it depends on (data
//!   dependencies, wait lists, `depends_on`);
//! - **in-order queues**: the end of the previous command on its queue;
//! - **a device's serialisation**, where the run showed it: on a device
//!   whose timed commands never overlapped, each waits for the one the
//!   device ran before it (the recorded order is kept);
//! - **host submission times**: fixed, unless a host wait came before on
//!   the same thread;
//! - **host waits**: a wait ends when what it waited for ends (the timed
//!   command submitted before it that ended last by its end), plus the
//!   latency it showed; everything the thread does after it moves by what
//!   the wait saved;
//! - **host tasks**: their run is not recorded (the runtime reports when
//!   it queued them); they pass on when their dependencies ended, and the
//!   latency of what waits for them holds their run, which does not change.
//!
//! The assumptions: a command's latency after its last constraint is what
//! the run showed (the runtime and the device are no slower or faster to
//! start it); a faster command takes exactly its duration divided by the
//! factor; host work between two waits takes as long as it did; threads
//! are coupled only through the device work they wait for; a serial
//! device keeps its recorded order; commands without device times
//! (untimed, host tasks) keep theirs. With no change the replay gives every
//! recorded time back, to the nanosecond
//! (`graph/tests/property_what_if.rs`).

pub mod plan;
pub mod schedule;

use crate::kind::NodeKind;
use crate::model::TaskGraph;
use crate::record::NodeId;
use crate::run::Run;

pub use plan::{Plan, Replayed};
pub use schedule::{Schedule, EXIT_LIMIT};

/// A speedup factor as `--speedup` takes it: a number of at least 1 (`2`:
/// twice as fast) or `inf` (the command takes no time).
pub fn parse_factor(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("infinity") {
        return Ok(f64::INFINITY);
    }
    match t.parse::<f64>() {
        Ok(f) if f >= 1.0 && f.is_finite() => Ok(f),
        _ => Err(format!(
            "{text:?} is not a speedup factor (a number of at least 1, or inf)"
        )),
    }
}

/// A factor as the outputs write it: `2`, `1.5`, `inf`.
pub fn factor_text(factor: f64) -> String {
    if factor.is_infinite() {
        "inf".to_string()
    } else {
        format!("{factor}")
    }
}

/// The nodes `location` names: a node id (`n3`), `FILE:LINE` (`FILE` a
/// suffix of the source path, whole path components: `whatif.cpp:97` or
/// `programs/whatif.cpp:97`), or an operation name (`memcpy`, a kernel's
/// name); by id.
pub fn nodes_at(graph: &TaskGraph, location: &str) -> Vec<NodeId> {
    let location = location.trim();
    if let Some(id) = location
        .strip_prefix('n')
        .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|d| d.parse::<NodeId>().ok())
    {
        return graph.node(id).map(|n| vec![n.id]).unwrap_or_default();
    }
    let file_line = location.rsplit_once(':').and_then(|(file, line)| {
        let line: u32 = line.parse().ok()?;
        (!file.is_empty()).then_some((file, line))
    });
    let mut found: Vec<NodeId> = graph
        .nodes()
        .filter(|n| match file_line {
            Some((file, line)) => {
                n.source_line == Some(line)
                    && n.source_file.as_deref().is_some_and(|f| {
                        f == file || f.strip_suffix(file).is_some_and(|head| head.ends_with('/'))
                    })
            }
            None => n.operation == location,
        })
        .map(|n| n.id)
        .collect();
    found.sort_unstable();
    found
}

/// The speedups of one scenario: (node, factor), every node once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scenario {
    speedups: Vec<(NodeId, f64)>,
}

impl Scenario {
    /// No change.
    pub fn new() -> Scenario {
        Scenario::default()
    }

    /// Also divide `node`'s durations by `factor` (a node named twice
    /// takes the later factor).
    pub fn speed_up(&mut self, node: NodeId, factor: f64) {
        match self.speedups.iter_mut().find(|(n, _)| *n == node) {
            Some(s) => s.1 = factor,
            None => self.speedups.push((node, factor)),
        }
    }

    /// The speedups, in the order given.
    pub fn speedups(&self) -> &[(NodeId, f64)] {
        &self.speedups
    }

    /// The factor of `node` (1 when it is not sped up).
    pub fn factor(&self, node: NodeId) -> f64 {
        self.speedups
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(1.0, |s| s.1)
    }
}

/// One scenario's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// The recorded span (first submission to last device end), ns.
    pub span_ns: u64,
    /// The span of the replay with the speedups, ns.
    pub predicted_span_ns: u64,
}

impl Prediction {
    /// What the speedups save: recorded minus predicted span (0 at least).
    pub fn saved_ns(&self) -> u64 {
        self.span_ns.saturating_sub(self.predicted_span_ns)
    }

    /// The saving as a share of the recorded span, 0..1.
    pub fn saved_share(&self) -> f64 {
        if self.span_ns == 0 {
            0.0
        } else {
            self.saved_ns() as f64 / self.span_ns as f64
        }
    }
}

/// Replays `plan` with `scenario`'s speedups.
pub fn predict(plan: &Plan, scenario: &Scenario) -> Prediction {
    let recorded = *plan.recorded();
    let changed = if scenario.speedups.is_empty() {
        recorded
    } else {
        let mut factors: Vec<f64> = Vec::new();
        for &(node, factor) in &scenario.speedups {
            let at = node as usize;
            if factors.len() <= at {
                factors.resize(at + 1, 1.0);
            }
            factors[at] = factor;
        }
        plan.replay(|node| factors.get(node as usize).copied().unwrap_or(1.0))
    };
    Prediction {
        span_ns: recorded.span_ns,
        predicted_span_ns: changed.span_ns,
    }
}

/// Nodes shown by the "what would pay" table.
pub const PAYOFF_NODES: usize = 5;

/// The factor of the "what would pay" table.
pub const PAYOFF_FACTOR: f64 = 2.0;

/// One row of the "what would pay" table: a node made faster alone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Payoff {
    /// The node.
    pub node: NodeId,
    /// Its timed device time in the run, ns.
    pub device_ns: u64,
    /// Its time on the critical path, ns.
    pub critical_ns: u64,
    /// The factor.
    pub factor: f64,
    /// The prediction.
    pub prediction: Prediction,
}

/// The device command nodes with the most timed device time, most first
/// (then by id), at most `top`.
pub fn top_device_nodes(graph: &TaskGraph, top: usize) -> Vec<NodeId> {
    let mut nodes: Vec<(u64, NodeId)> = graph
        .nodes()
        .filter(|n| n.kind.is_device_command() && n.times.device.total_ns > 0)
        .map(|n| (n.times.device.total_ns, n.id))
        .collect();
    nodes.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    nodes.into_iter().take(top).map(|(_, id)| id).collect()
}

/// Each of the `top` nodes with the most device time made `factor` times
/// faster on its own, with what it would save.
pub fn what_would_pay(run: &Run, plan: &Plan, top: usize, factor: f64) -> Vec<Payoff> {
    let path = run.critical_path().report();
    top_device_nodes(run, top)
        .into_iter()
        .map(|node| {
            let mut scenario = Scenario::new();
            scenario.speed_up(node, factor);
            Payoff {
                node,
                device_ns: run.node(node).map_or(0, |n| n.times.device.total_ns),
                critical_ns: path.node_time(node),
                factor,
                prediction: predict(plan, &scenario),
            }
        })
        .collect()
}

/// Whether `kind`'s nodes have device durations a speedup can change.
pub fn can_speed_up(kind: NodeKind) -> bool {
    kind.is_device_command()
}
