//! Ordering violations: a device command that started before one of its
//! recorded dependencies ended. The runtime (or the program) broke the
//! order it was asked for: on DPC++'s CUDA backend, for example, a native
//! command that `depends_on` a command of another queue started while that
//! command still ran (the adapter's `urEnqueueNativeCommandExp` did not
//! hold it back).
//!
//! Checked at the end of the run over the dependencies between the
//! submissions kept (the instance graph, bounded like `instances.dot` by
//! `SYCLGRAPH_MAX_INSTANCES`), both ends timed `ok` on the device. Two
//! commands of one device are compared exactly (one device clock); across
//! devices their times are each on the host clock through its own
//! calibration, so an overlap must exceed [`CROSS_DEVICE_SLACK_NS`].

use std::collections::HashMap;

use crate::instance_graph::InstanceKey;
use crate::model::TaskGraph;

/// The overlap two commands of different devices must exceed to count:
/// what their host-clock placements may disagree by.
pub const CROSS_DEVICE_SLACK_NS: u64 = 2_000;

/// One command that started before a dependency of it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The dependency (node, instance): it should have ended first.
    pub source: InstanceKey,
    /// Its device end, host ns.
    pub source_end_ns: u64,
    /// The command that started too early.
    pub target: InstanceKey,
    /// Its device start, host ns.
    pub target_start_ns: u64,
    /// The dependency is the order of an in-order queue (not a data or
    /// event dependency).
    pub queue_order: bool,
}

impl Violation {
    /// How long the two ran together: the dependency's end minus the
    /// command's start.
    pub fn overlap_ns(&self) -> u64 {
        self.source_end_ns.saturating_sub(self.target_start_ns)
    }
}

/// Every violation among the kept submissions, longest overlap first.
pub fn find_violations(graph: &TaskGraph) -> Vec<Violation> {
    let edges = graph.instance_graph().edges();
    if edges.is_empty() {
        return Vec::new();
    }
    // The device span and device of every kept, timed instance.
    let mut spans: HashMap<InstanceKey, (u64, u64, Option<usize>)> = HashMap::new();
    for node in graph.nodes() {
        if !node.kind.is_device_command() {
            continue;
        }
        for instance in &node.instances {
            if let Some((start, end)) = instance.device_span() {
                let device = graph.device_index(node, instance);
                spans.insert((node.id, instance.instance), (start, end, device));
            }
        }
    }
    let mut found: Vec<Violation> = edges
        .into_iter()
        .filter_map(|(source, target, queue_order)| {
            let &(_, source_end_ns, source_device) = spans.get(&source)?;
            let &(target_start_ns, _, target_device) = spans.get(&target)?;
            let slack = if source_device.is_some() && source_device == target_device {
                0
            } else {
                CROSS_DEVICE_SLACK_NS
            };
            (source_end_ns > target_start_ns.saturating_add(slack)).then_some(Violation {
                source,
                source_end_ns,
                target,
                target_start_ns,
                queue_order,
            })
        })
        .collect();
    found.sort_by_key(|v| (std::cmp::Reverse(v.overlap_ns()), v.target, v.source));
    found
}
