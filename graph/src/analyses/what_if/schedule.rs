//! [`Schedule`]: what the what-if simulation needs of a run, collected as
//! the analyses see it: every finalised instance with its times, its
//! thread and its device; every dependency between instances (data
//! dependencies and the order of an in-order queue); every host wait.
//! Nothing is computed here: [`Schedule::plan`] resolves it into a
//! [`Plan`](super::plan::Plan) once the run is over.
//!
//! At most [`Schedule::limit`] instances are collected (the subscriber's
//! exit keeps [`EXIT_LIMIT`]; `syclgraph whatif` all of them): past that the
//! schedule is given up and its memory freed, and [`Schedule::plan`] says
//! how many instances the run had.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::instance::Instance;
use crate::instance_graph::InstanceKey;
use crate::kind::NodeKind;
use crate::record::InstanceEdge;

/// Instances the subscriber's exit collects for the "what would pay"
/// block; a longer run's block is computed by `syclgraph report` or
/// `syclgraph whatif` from its journal instead. The block costs about
/// 3,100 instructions per command (the plan and six replays; collecting
/// the schedule 91 more), so at most about 62 million at exit
/// (`graph/examples/what_if_cost.rs`, docs/performance.md).
pub const EXIT_LIMIT: usize = 20_000;

/// Dependencies collected per instance allowed, on average, before the
/// schedule is given up (a run whose records name far more dependencies
/// than instances).
const EDGES_PER_INSTANCE: usize = 16;

/// One finalised instance as the simulation needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collected {
    /// The instance.
    pub key: InstanceKey,
    /// Its node's kind.
    pub kind: NodeKind,
    /// The submitting thread.
    pub thread: Option<u32>,
    /// Its device (the run's device index), as its node or queue named it.
    pub device: Option<usize>,
    /// Its queue.
    pub queue: Option<u64>,
    /// Submission (node_create), host ns.
    pub submit_ns: Option<u64>,
    /// Device start and end, for a device command timed `ok`.
    pub device_span: Option<(u64, u64)>,
    /// task_begin..task_end, for a host task with both, ordered.
    pub host_task_span: Option<(u64, u64)>,
}

/// A host wait that ended: (thread, begin, end), host ns.
pub type HostWait = (u32, u64, u64);

/// The schedule of a run, as collected (see the module docs).
#[derive(Debug)]
pub struct Schedule {
    limit: usize,
    instances: Vec<Collected>,
    edges: Vec<(InstanceKey, InstanceKey)>,
    waits: Vec<HostWait>,
    /// Waits begun and not ended, per thread (innermost last).
    open: FxHashMap<u32, SmallVec<[u64; 2]>>,
    /// Instances finalised in all (collected or not).
    seen: u64,
    /// True once the limit was passed: nothing is kept any more.
    given_up: bool,
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule::new(EXIT_LIMIT)
    }
}

impl Schedule {
    /// Empty, collecting up to `limit` instances.
    pub fn new(limit: usize) -> Schedule {
        Schedule {
            limit,
            instances: Vec::new(),
            edges: Vec::new(),
            waits: Vec::new(),
            open: FxHashMap::default(),
            seen: 0,
            given_up: limit == 0,
        }
    }

    /// Collects up to `limit` instances from now on (call before the first
    /// record).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        self.given_up = limit == 0;
    }

    /// The most instances collected.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Instances finalised in the run so far, collected or not.
    pub fn instances_seen(&self) -> u64 {
        self.seen
    }

    /// Whether every instance so far was collected (the limit was not
    /// passed).
    pub fn is_complete(&self) -> bool {
        !self.given_up
    }

    /// A dependency between two instances (data, or in-order queue).
    pub fn depends(&mut self, edge: InstanceEdge) {
        if self.given_up {
            return;
        }
        if self.edges.len() >= EDGES_PER_INSTANCE.saturating_mul(self.limit.max(1)) {
            self.give_up();
            return;
        }
        self.edges.push((
            (edge.source, edge.source_instance),
            (edge.target, edge.target_instance),
        ));
    }

    /// A host wait began on `thread`.
    pub fn wait_begin(&mut self, thread: u32, ns: u64) {
        if !self.given_up {
            self.open.entry(thread).or_default().push(ns);
        }
    }

    /// A host wait ended on `thread` (ends with no begin are ignored).
    pub fn wait_end(&mut self, thread: u32, ns: u64) {
        if self.given_up {
            return;
        }
        let Some(begin) = self.open.get_mut(&thread).and_then(|open| open.pop()) else {
            return;
        };
        if self.waits.len() >= EDGES_PER_INSTANCE.saturating_mul(self.limit.max(1)) {
            self.give_up();
            return;
        }
        self.waits.push((thread, begin, ns));
    }

    /// An instance of a node of `kind` was finalised, on `device` and
    /// `queue` (as [`crate::Analyses`] found them).
    #[inline]
    pub fn finalised(
        &mut self,
        key: InstanceKey,
        instance: &Instance,
        kind: NodeKind,
        device: Option<usize>,
        queue: Option<u64>,
    ) {
        self.seen += 1;
        // Inlined down to this test: once given up (a run past the limit),
        // each instance costs a count and no call.
        if !self.given_up {
            self.collect(key, instance, kind, device, queue);
        }
    }

    /// Collects a finalised instance ([`Schedule::finalised`]), or gives
    /// the schedule up when it has the most instances already.
    #[inline(never)]
    fn collect(
        &mut self,
        key: InstanceKey,
        instance: &Instance,
        kind: NodeKind,
        device: Option<usize>,
        queue: Option<u64>,
    ) {
        if self.instances.len() >= self.limit {
            self.give_up();
            return;
        }
        let host_task_span = match (kind, instance.begin_ns, instance.end_ns) {
            (NodeKind::HostTask, Some(b), Some(e)) if e >= b => Some((b, e)),
            _ => None,
        };
        self.instances.push(Collected {
            key,
            kind,
            thread: instance.thread,
            device,
            queue,
            submit_ns: instance.submit_ns,
            device_span: if kind.is_device_command() {
                instance.device_span()
            } else {
                None
            },
            host_task_span,
        });
    }

    /// Frees what was collected: the run has more instances than the limit.
    fn give_up(&mut self) {
        self.given_up = true;
        self.instances = Vec::new();
        self.edges = Vec::new();
        self.waits = Vec::new();
        self.open = FxHashMap::default();
    }

    /// The instances collected, in the order they were finalised.
    pub fn instances(&self) -> &[Collected] {
        &self.instances
    }

    /// The dependencies collected: (source, target).
    pub fn edges(&self) -> &[(InstanceKey, InstanceKey)] {
        &self.edges
    }

    /// The host waits that ended, in the order they ended.
    pub fn waits(&self) -> &[HostWait] {
        &self.waits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: InstanceKey, to: InstanceKey) -> InstanceEdge {
        InstanceEdge {
            source: from.0,
            source_instance: from.1,
            target: to.0,
            target_instance: to.1,
            queue_order: false,
        }
    }

    #[test]
    fn nested_waits_pair_innermost_first() {
        let mut s = Schedule::new(10);
        s.wait_begin(1, 10);
        s.wait_begin(1, 20);
        s.wait_begin(2, 25);
        s.wait_end(1, 30);
        s.wait_end(3, 31); // no begin on thread 3
        s.wait_end(1, 40);
        s.wait_end(2, 45);
        assert_eq!(s.waits(), &[(1, 20, 30), (1, 10, 40), (2, 25, 45)]);
    }

    #[test]
    fn past_the_limit_everything_is_given_up_and_counted() {
        let mut s = Schedule::new(2);
        let i = Instance::new(1);
        s.depends(edge((0, 1), (0, 2)));
        s.finalised((0, 1), &i, NodeKind::Kernel, None, None);
        s.finalised((0, 2), &i, NodeKind::Kernel, None, None);
        assert!(s.is_complete());
        assert_eq!(s.instances().len(), 2);
        s.finalised((0, 3), &i, NodeKind::Kernel, None, None);
        s.depends(edge((0, 3), (0, 4)));
        assert!(!s.is_complete());
        assert!(s.instances().is_empty() && s.edges().is_empty());
        assert_eq!(s.instances_seen(), 3);
        assert!(!Schedule::new(0).is_complete());
    }
}
