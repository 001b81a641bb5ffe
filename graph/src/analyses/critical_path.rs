//! The critical path of a run, computed as instances are finalised (no
//! instance needs to be kept for it).
//!
//! # The path
//!
//! Each finalised instance with a time span (a device command timed `ok`:
//! its device start and end; a host task: its task_begin..task_end) becomes
//! a *step*. Its predecessor is what it waited for last: among its data
//! dependencies (edges of the instance graph, wait lists included) and the
//! previous command on its in-order queue, the one that finished last (a
//! data dependency wins a tie). The gap before the step is its start minus
//! that end, and its cause is
//! - `host` when the host submitted it after that end (the dependency was
//!   done before the submission); the step before is then the step that
//!   ended last at or before the submission (what the host waited for
//!   before submitting it, as far as the device's timeline tells: the
//!   dependency itself or something that ended later),
//! - `dependency` when the predecessor is a data dependency,
//! - `queue` when it is the previous command on the same queue,
//! - `device` when it was ready (every dependency ended, submitted) and
//!   still did not start because its device was busy: the step before is
//!   the device command that held the device until it started (the one of
//!   the same device that ended last at or before its start), when that
//!   ended after the command was ready and the device ran commands for
//!   most of the wait (more than [`DEVICE_BUSY_NS`] of it, or half of it at
//!   least; a device that sat idle while the command was ready did not hold
//!   it: the runtime was slow). It wins over the others (it ended last of
//!   all it waited for). The gap is the holder's end to the start. The device is the critical path's device
//!   number (one per device key); copy and compute engines of one device
//!   are not told apart,
//! - `none` for a step with no predecessor (the first).
//!
//! A step with neither a dependency nor a queue predecessor seen (a command
//! on an out-of-order queue submitted after a `q.wait()`, say) was held back
//! by its submission alone: its predecessor is likewise the step that ended
//! last at or before its submission, with cause `host`; only when no step
//! ended before its submission is it the first step (`none`). That step is
//! looked up among the last [`WINDOW`] steps finalised, and the step that
//! held a device among the last [`DEVICE_SCAN`] steps that ended (of any
//! device).
//!
//! `graph/tests/critical_path_oracle.rs` holds a reference of this rule
//! over a whole finished run and compares them step by step.
//!
//! An instance without a span (an untimed device command, an allocation, a
//! virtual node) is not a step: it passes on the end and the chain of its
//! latest-finishing dependency, so what depends on it still reaches back
//! through it. The critical path is the chain of the device command that
//! finished last.
//!
//! # Bounded memory
//!
//! Steps are a shared linked list (a tree: every step points to its
//! predecessor), kept in a slab (`chains.rs`) whose unreachable
//! steps are reclaimed. What an instance's dependencies are looked up in is a window
//! of the last [`WINDOW`] instances finalised (a dependency older than that
//! is not seen). A chain longer than twice the step limit (by default
//! `SYCLGRAPH_MAX_INSTANCES`, at most [`MAX_PATH_STEPS`]) is *folded*: its
//! oldest steps are replaced by their totals (steps, time per node, gap per
//! cause, first start), exact, so the per-node critical time and the path's
//! length stay exact for the whole run while only the newest steps are kept
//! one by one.
//!
//! Finalised instances are taken on in the order they started (device
//! start, else submission), [`REORDER`] held at a time (all at
//! [`CriticalPath::finish`]), so that the step that ended last before a
//! submission is known when it is looked up; with all of a run's instances
//! held the result does not depend on the order they were finalised in.
//! An instance taken on before a dependency it names waits for it (at most
//! [`MAX_DEFERRED`] of them, then the oldest goes on without it). The path
//! [`CriticalPath::report`] gives during the run lags by the held ones.
//!
//! # Idle gaps
//!
//! Every timed device command taken on is also kept as a [`Busy`] with what
//! it waited for (its latest data dependency, its submission, the end of
//! the command that held its device), for the idle gaps: see
//! [`CriticalPath::take_busy`].

use std::collections::VecDeque;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::analyses::busy::Busy;
use crate::analyses::chains::{Chains, LinkId};
use crate::analyses::key_slots::KeySlots;
use crate::analyses::start_order::StartOrder;
use crate::instance::Instance;
use crate::instance_graph::InstanceKey;
use crate::kind::NodeKind;
use crate::record::{InstanceEdge, NodeId};
use crate::regions::{RegionId, NO_REGION};

/// An instance's dependencies: (source, is queue order). Mostly one (the
/// previous command of an in-order queue), so no allocation for up to two.
type Deps = SmallVec<[(InstanceKey, bool); 2]>;

/// Finalised instances in which dependencies are looked up.
pub const WINDOW: usize = 4096;

/// Instances held back waiting for a dependency to be finalised.
pub const MAX_DEFERRED: usize = 4096;

/// Most steps of a chain kept one by one (twice this before a fold).
pub const MAX_PATH_STEPS: usize = 65_536;

/// Dependencies held for instances not finalised yet.
pub const MAX_WAITING_EDGES: usize = 1 << 17;

/// Finalised instances held to be taken on in start order.
pub const REORDER: usize = 1024;

/// Steps that ended last looked through, newest first, for the one that
/// held a device until a command started and for the time its device was
/// busy during the wait.
pub const DEVICE_SCAN: usize = 256;

/// A command waited for its device when other commands ran on it for
/// more than this much of its wait (or for half of it at least).
pub const DEVICE_BUSY_NS: u64 = 1_000_000;

/// Slots of the table of dependencies waiting for their target (more
/// targets than this go to its hash map).
const WAITING_SLOTS: usize = 8192;

/// Node ids below this have their entry of [`Evicted`] in a `Vec`.
const DENSE_NODES: u32 = 1 << 16;

/// Per node, the highest instance number that left the window: in a `Vec`
/// by node id (node ids are dense from 0), a hash map for larger ids.
#[derive(Debug, Default)]
struct Evicted {
    dense: Vec<Option<u64>>,
    sparse: FxHashMap<NodeId, u64>,
}

impl Evicted {
    fn get(&self, node: NodeId) -> Option<u64> {
        if node < DENSE_NODES {
            self.dense.get(node as usize).copied().flatten()
        } else {
            self.sparse.get(&node).copied()
        }
    }

    /// Raises the node's highest evicted instance to at least `instance`.
    fn raise(&mut self, node: NodeId, instance: u64) {
        let at = if node < DENSE_NODES {
            let i = node as usize;
            if self.dense.len() <= i {
                self.dense.resize(i + 1, None);
            }
            &mut self.dense[i]
        } else {
            let e = self.sparse.entry(node).or_default();
            *e = (*e).max(instance);
            return;
        };
        *at = Some(at.map_or(instance, |e| e.max(instance)));
    }
}

/// Why a step started when it did (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapCause {
    /// Waited for the step before (a data dependency).
    Dependency,
    /// Waited behind the previous command on its in-order queue.
    Queue,
    /// Was ready (dependencies ended, submitted) but waited for its device,
    /// which the step before (a command of another queue, or of no queue
    /// order with it) occupied until then.
    Device,
    /// The host submitted it after the step before had finished.
    Host,
    /// No step before.
    None,
}

/// How many causes there are (the length of per-cause arrays).
pub const GAP_CAUSES: usize = 5;

impl GapCause {
    /// Every cause, in declaration order.
    pub const ALL: [GapCause; GAP_CAUSES] = [
        GapCause::Dependency,
        GapCause::Queue,
        GapCause::Device,
        GapCause::Host,
        GapCause::None,
    ];

    /// `dependency`, `queue`, `device`, `host` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            GapCause::Dependency => "dependency",
            GapCause::Queue => "queue",
            GapCause::Device => "device",
            GapCause::Host => "host",
            GapCause::None => "none",
        }
    }

    /// Its position in [`GapCause::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One step of the critical path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The instance.
    pub key: InstanceKey,
    /// Its node's kind.
    pub kind: NodeKind,
    /// Start, host ns.
    pub start_ns: u64,
    /// End, host ns.
    pub end_ns: u64,
    /// Start minus the predecessor's end (0 when it overlaps or has none).
    pub gap_before_ns: u64,
    /// Why it started then.
    pub cause: GapCause,
    /// The region it was submitted in ([`NO_REGION`]: none).
    pub region: RegionId,
}

impl Step {
    /// end - start.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Totals of the folded (oldest) part of a chain.
#[derive(Clone, Debug, Default)]
struct Folded {
    steps: u64,
    first_start_ns: u64,
    node_ns: FxHashMap<NodeId, u64>,
    region_ns: FxHashMap<RegionId, u64>,
    gap_ns: [u64; GAP_CAUSES],
}

/// Steps being folded, newest first (the order a chain is walked in, so
/// that they need not be gathered and reversed), to be added to the totals
/// of the steps before them with [`FoldNewestFirst::finish`].
#[derive(Default)]
struct FoldNewestFirst {
    /// The totals of the steps added so far (`first_start_ns`: the oldest
    /// one's start).
    sum: Folded,
    /// The run of steps of one node (or region) being summed: one lookup
    /// per run.
    node: Option<(NodeId, u64)>,
    region: Option<(RegionId, u64)>,
}

impl FoldNewestFirst {
    /// Adds the step before the ones added so far.
    #[inline]
    fn add(&mut self, step: &Step) {
        self.sum.steps += 1;
        self.sum.first_start_ns = step.start_ns;
        let d = step.duration_ns();
        match &mut self.node {
            Some((n, sum)) if *n == step.key.0 => *sum = sum.saturating_add(d),
            run => {
                if let Some((n, sum)) = run.replace((step.key.0, d)) {
                    add_to(&mut self.sum.node_ns, n, sum);
                }
            }
        }
        if step.region != NO_REGION {
            match &mut self.region {
                Some((r, sum)) if *r == step.region => *sum = sum.saturating_add(d),
                run => {
                    if let Some((r, sum)) = run.replace((step.region, d)) {
                        add_to(&mut self.sum.region_ns, r, sum);
                    }
                }
            }
        }
        let gap = &mut self.sum.gap_ns[step.cause.index()];
        *gap = gap.saturating_add(step.gap_before_ns);
    }

    /// Adds the totals to `into`, the totals of the steps before them (the
    /// same as adding the steps to it oldest first: saturating sums of
    /// unsigned times do not depend on the order they are added in).
    fn finish(mut self, into: &mut Folded) {
        let mut sum = self.sum;
        if sum.steps == 0 {
            return;
        }
        if into.steps == 0 {
            into.first_start_ns = sum.first_start_ns;
        }
        into.steps += sum.steps;
        if let Some((n, ns)) = self.node.take() {
            add_to(&mut sum.node_ns, n, ns);
        }
        if let Some((r, ns)) = self.region.take() {
            add_to(&mut sum.region_ns, r, ns);
        }
        for (n, ns) in sum.node_ns {
            add_to(&mut into.node_ns, n, ns);
        }
        for (r, ns) in sum.region_ns {
            add_to(&mut into.region_ns, r, ns);
        }
        for (at, gap) in into.gap_ns.iter_mut().zip(sum.gap_ns) {
            *at = at.saturating_add(gap);
        }
    }
}

/// Adds `ns` to the entry of `key` (saturating).
fn add_to<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, u64>, key: K, ns: u64) {
    let at = map.entry(key).or_default();
    *at = at.saturating_add(ns);
}

/// What comes before a step: the start, the step before, or the folded
/// totals.
type Parent = crate::analyses::chains::Parent<Arc<Folded>>;

/// A step and where its chain goes on.
type Link = crate::analyses::chains::Link<Step, Arc<Folded>>;

/// What a finalised instance leaves for those that depend on it.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// When it (or, without a span, its latest dependency) ended.
    end_ns: Option<u64>,
    /// Its chain.
    chain: Option<LinkId>,
    /// It was a host task (or passed one on).
    host_task: bool,
}

/// A finalised instance as the analysis needs it.
#[derive(Clone, Copy, Debug)]
struct Finalised {
    key: InstanceKey,
    kind: NodeKind,
    span: Option<(u64, u64)>,
    submit_ns: Option<u64>,
    begin_ns: Option<u64>,
    device: Option<usize>,
    queue: Option<u64>,
    region: RegionId,
}

/// A step that ended, as the lookups after it need it.
#[derive(Clone, Copy, Debug)]
struct Ended {
    link: LinkId,
    /// Its device number, for a device command with one (else `u32::MAX`).
    device: u32,
    start_ns: u64,
}

/// An instance waiting for dependencies to be finalised.
#[derive(Debug)]
struct Deferred {
    inst: Finalised,
    deps: Deps,
    missing: usize,
}

/// The critical path, computed incrementally.
#[derive(Debug)]
pub struct CriticalPath {
    max_steps: usize,
    window_size: usize,
    max_deferred: usize,
    /// Dependencies (source, is queue order) of instances not finalised yet.
    waiting_edges: KeySlots<Deps>,
    /// Dependencies not kept because `waiting_edges` was full.
    pub edges_not_kept: u64,
    window: KeySlots<Entry>,
    /// The window's keys in the order they came: a ring of up to
    /// `window_size`, the oldest at `window_head` once it is full.
    window_order: Vec<InstanceKey>,
    window_head: usize,
    /// Per node, the highest instance number that left the window.
    evicted: Evicted,
    deferred: FxHashMap<InstanceKey, Deferred>,
    deferred_order: VecDeque<InstanceKey>,
    /// Deferred instance → instances waiting on it.
    waiters: FxHashMap<InstanceKey, Vec<InstanceKey>>,
    /// Instances processed without a dependency they named.
    pub deps_missed: u64,
    /// The device command that ended last: its end, key and chain.
    last: Option<(u64, InstanceKey, LinkId)>,
    /// The steps of every chain.
    chains: Chains<Step, Arc<Folded>>,
    /// Earliest submission or start seen.
    first_ns: Option<u64>,
    /// The device each queue's commands named first.
    queue_devices: FxHashMap<u64, usize>,
    /// The last queue found in `queue_devices` and its device (most
    /// commands are on the queue of the one before): no lookup for them.
    last_queue_device: Option<(u64, usize)>,
    /// Finalised instances held to be taken on in start order, by (start
    /// or submission, key).
    held: StartOrder<(u64, InstanceKey), Finalised>,
    reorder: usize,
    /// The last steps finalised, by (end, key).
    ended: StartOrder<(u64, InstanceKey), Ended>,
    /// Timed device commands taken on and not yet taken by
    /// [`CriticalPath::take_busy`]: (device, queue, what it waited for).
    busy: Vec<(Option<usize>, Option<u64>, Busy)>,
}

impl Default for CriticalPath {
    fn default() -> CriticalPath {
        CriticalPath::new(5000)
    }
}

/// The critical path as it stands: the kept steps and the whole path's
/// totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathReport {
    /// The kept steps, oldest first (the newest ones of the path).
    pub steps: Vec<Step>,
    /// Steps before `steps`, folded into the totals.
    pub folded_steps: u64,
    /// Start of the path's first step (folded or not).
    pub start_ns: Option<u64>,
    /// End of its last step.
    pub end_ns: Option<u64>,
    /// Time on the path per node (durations of its steps), largest first.
    pub node_ns: Vec<(NodeId, u64)>,
    /// Time on the path per region its steps were submitted in (the
    /// innermost: not added to the regions around it), by region id.
    pub region_ns: Vec<(RegionId, u64)>,
    /// Gap time by [`GapCause::index`].
    pub gap_ns: [u64; GAP_CAUSES],
    /// Earliest submission or start of any instance.
    pub first_ns: Option<u64>,
}

impl PathReport {
    /// All steps, folded ones included.
    pub fn total_steps(&self) -> u64 {
        self.folded_steps + self.steps.len() as u64
    }

    /// end - start of the path.
    pub fn length_ns(&self) -> u64 {
        match (self.start_ns, self.end_ns) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => 0,
        }
    }

    /// First submission or start of the run to the path's end.
    pub fn span_ns(&self) -> u64 {
        match (self.first_ns, self.end_ns) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => 0,
        }
    }

    /// Time on the path of `node`.
    pub fn node_time(&self, node: NodeId) -> u64 {
        self.node_ns
            .iter()
            .find(|(n, _)| *n == node)
            .map_or(0, |e| e.1)
    }
}

impl CriticalPath {
    /// Empty, keeping up to `max_steps` steps of a chain one by one (at
    /// least 1, at most [`MAX_PATH_STEPS`]).
    pub fn new(max_steps: usize) -> CriticalPath {
        CriticalPath::with_bounds(max_steps.clamp(1, MAX_PATH_STEPS), WINDOW, MAX_DEFERRED)
    }

    /// Empty, with every bound chosen (for tests of the bounds).
    pub fn with_bounds(max_steps: usize, window: usize, max_deferred: usize) -> CriticalPath {
        CriticalPath {
            max_steps: max_steps.max(1),
            window_size: window.max(1),
            max_deferred,
            waiting_edges: KeySlots::new(WAITING_SLOTS),
            edges_not_kept: 0,
            window: KeySlots::new(2 * window.max(1)),
            window_order: Vec::new(),
            window_head: 0,
            evicted: Evicted::default(),
            deferred: FxHashMap::default(),
            deferred_order: VecDeque::new(),
            waiters: FxHashMap::default(),
            deps_missed: 0,
            last: None,
            chains: Chains::default(),
            first_ns: None,
            queue_devices: FxHashMap::default(),
            last_queue_device: None,
            held: StartOrder::default(),
            reorder: REORDER,
            ended: StartOrder::default(),
            busy: Vec::new(),
        }
    }

    /// A dependency between two instances (a data dependency, or the
    /// order of an in-order queue when `edge.queue_order`).
    pub fn depends(&mut self, edge: InstanceEdge) {
        let from = (edge.source, edge.source_instance);
        let to = (edge.target, edge.target_instance);
        if from == to || self.taken_on(to) {
            return; // the target is on the path already: too late to matter
        }
        if self.waiting_edges.len() >= MAX_WAITING_EDGES && !self.waiting_edges.contains_key(&to) {
            self.edges_not_kept += 1;
            return;
        }
        self.waiting_edges
            .get_or_insert_with(to, Deps::new)
            .push((from, edge.queue_order));
    }

    /// An instance was finalised: `kind` is its node's, `device` the
    /// device it ran on (its index among the run's devices) and `queue`
    /// its queue.
    pub fn finalised(
        &mut self,
        key: InstanceKey,
        instance: &Instance,
        kind: NodeKind,
        mut device: Option<usize>,
        queue: Option<u64>,
    ) {
        let span = match kind {
            NodeKind::HostTask => match (instance.begin_ns, instance.end_ns) {
                (Some(b), Some(e)) if e >= b => Some((b, e)),
                _ => None,
            },
            k if k.is_device_command() => instance.device_span(),
            _ => None,
        };
        // Direct-path USM commands name no device: their queue's, as other
        // commands on that queue named it.
        if let Some(q) = queue {
            match self.last_queue_device {
                // The map's value for `q`, which never changes once set.
                Some((last, d)) if last == q => device = device.or(Some(d)),
                _ => {
                    let named = match device {
                        Some(d) => Some(*self.queue_devices.entry(q).or_insert(d)),
                        None => self.queue_devices.get(&q).copied(),
                    };
                    device = device.or(named);
                    self.last_queue_device = named.map(|d| (q, d));
                }
            }
        }
        let inst = Finalised {
            key,
            kind,
            span,
            submit_ns: instance.submit_ns,
            begin_ns: instance.begin_ns,
            device,
            queue,
            region: instance.region.map_or(NO_REGION, |r| r.region),
        };
        if let Some(first) = instance.submit_ns.or(span.map(|s| s.0)) {
            self.first_ns = Some(self.first_ns.map_or(first, |f| f.min(first)));
        }
        let at = span.map(|s| s.0).or(instance.submit_ns).unwrap_or(0);
        self.held.push((at, key), inst);
        while self.held.len() > self.reorder {
            self.release_one();
        }
    }

    /// Takes the earliest-starting held instance on to the path.
    fn release_one(&mut self) {
        let Some((_, inst)) = self.held.pop() else {
            return;
        };
        let key = inst.key;
        if self.taken_on(key) {
            return; // finalised twice: taken on once
        }
        let deps = self.waiting_edges.remove(&key).unwrap_or_default();
        let mut missing = 0;
        for &(source, _) in &deps {
            if !self.window.contains_key(&source) && !self.gone(source) {
                self.waiters.entry(source).or_default().push(key);
                missing += 1;
            }
        }
        if missing == 0 {
            self.process(&inst, &deps);
        } else {
            self.deferred.insert(
                key,
                Deferred {
                    inst,
                    deps,
                    missing,
                },
            );
            self.deferred_order.push_back(key);
            while self.deferred.len() > self.max_deferred {
                let Some(oldest) = self.deferred_order.pop_front() else {
                    break;
                };
                if let Some(d) = self.deferred.remove(&oldest) {
                    self.process(&d.inst, &d.deps);
                }
            }
        }
    }

    /// Whether `key` was taken on already (in the window, or deferred).
    fn taken_on(&self, key: InstanceKey) -> bool {
        // Mostly nothing is deferred: no lookup then.
        self.window.contains_key(&key)
            || (!self.deferred.is_empty() && self.deferred.contains_key(&key))
    }

    /// Whether `key` left the window (or cannot be waited for).
    fn gone(&self, key: InstanceKey) -> bool {
        self.evicted.get(key.0).is_some_and(|e| key.1 <= e)
    }

    /// The step that held device `device` until a command ready at
    /// `ready_ns` started at `start_ns`: the device command that ended last
    /// at or before the start, if it ended after the command was ready and
    /// the device ran commands for more than [`DEVICE_BUSY_NS`] or half of
    /// the wait (else the device sat idle while the command was ready: the
    /// runtime was slow to start it). Its end and chain.
    fn device_holder(&self, device: u32, start_ns: u64, ready_ns: u64) -> Option<(u64, LinkId)> {
        // Mostly nothing ended after the command was ready: no holder.
        if self.ended.last().is_none_or(|((e, _), _)| *e <= ready_ns) {
            return None;
        }
        let mut holder = None;
        // The time covered by the device's commands within the wait (the
        // union of their spans), walked from the latest end down.
        let mut busy = 0;
        let mut block: Option<(u64, u64)> = None;
        for ((e, _), at) in self.ended.iter_rev().take(DEVICE_SCAN) {
            if *e <= ready_ns {
                break;
            }
            if at.device != device {
                continue;
            }
            if *e <= start_ns && holder.is_none() {
                holder = Some((*e, at.link));
            }
            let (from, to) = (at.start_ns.max(ready_ns), (*e).min(start_ns));
            if from >= to {
                continue;
            }
            block = match block {
                Some((lo, hi)) if to >= lo => Some((lo.min(from), hi)),
                Some((lo, hi)) => {
                    busy += hi - lo;
                    Some((from, to))
                }
                None => Some((from, to)),
            };
        }
        busy += block.map_or(0, |(lo, hi)| hi - lo);
        // A command that started before it was ready (a dependency that
        // ended after its start) has no holder: `holder` is then none.
        let wait = start_ns.saturating_sub(ready_ns);
        holder.filter(|_| busy > DEVICE_BUSY_NS || 2 * busy >= wait)
    }

    /// Processes every deferred instance with what is known: call once the
    /// records have stopped.
    pub fn finish(&mut self) {
        while !self.held.is_empty() {
            self.release_one();
        }
        while let Some(oldest) = self.deferred_order.pop_front() {
            if let Some(d) = self.deferred.remove(&oldest) {
                self.process(&d.inst, &d.deps);
            }
        }
        self.waiters.clear();
    }

    /// Hands every timed device command taken on since the last call to
    /// `to` (its device number, queue, and what it waited for), in the
    /// order they were taken on: what the idle gaps are made of.
    pub fn take_busy(&mut self, mut to: impl FnMut(Option<usize>, Option<u64>, Busy)) {
        for (device, queue, busy) in self.busy.drain(..) {
            to(device, queue, busy);
        }
    }

    /// Makes a step (or a pass-through entry) of `inst`, puts it in the
    /// window and processes the deferred instances that waited for it.
    #[inline]
    fn process(&mut self, inst: &Finalised, deps: &[(InstanceKey, bool)]) {
        self.process_one(inst, deps);
        if !self.waiters.is_empty() {
            self.process_waiters(inst.key); // not in the usual case
        }
    }

    /// Processes the deferred instances that waited (only) for `key`, and
    /// those that waited for them.
    #[cold]
    #[inline(never)]
    fn process_waiters(&mut self, key: InstanceKey) {
        let mut todo: Vec<(Finalised, Deps)> = Vec::new();
        self.take_waiters(key, &mut todo);
        while let Some((inst, deps)) = todo.pop() {
            self.process_one(&inst, &deps);
            self.take_waiters(inst.key, &mut todo);
        }
    }

    /// Moves the deferred instances that waited only for `key` to `todo`.
    fn take_waiters(&mut self, key: InstanceKey, todo: &mut Vec<(Finalised, Deps)>) {
        let Some(waiting) = self.waiters.remove(&key) else {
            return;
        };
        for w in waiting {
            let ready = match self.deferred.get_mut(&w) {
                Some(d) => {
                    d.missing = d.missing.saturating_sub(1);
                    d.missing == 0
                }
                None => false,
            };
            if ready {
                if let Some(d) = self.deferred.remove(&w) {
                    todo.push((d.inst, d.deps));
                }
            }
        }
    }

    fn process_one(&mut self, inst: &Finalised, deps: &[(InstanceKey, bool)]) {
        // What it waited for last, and its latest data dependency. A host
        // task's recorded times are when the runtime handed it to its
        // thread pool, not when it ran: it is taken to have ended when the
        // instance waiting on it was enqueued (its task_begin).
        let device_command = inst.kind.is_device_command();
        let enqueued = inst.begin_ns.map(|b| inst.span.map_or(b, |s| b.min(s.0)));
        let mut best: Option<(u64, bool, &Entry)> = None;
        let mut data: Option<u64> = None;
        let mut host_task = false;
        for &(source, queue_order) in deps {
            let Some(e) = self.window.get(&source) else {
                self.deps_missed += 1;
                continue;
            };
            let Some(mut end) = e.end_ns else { continue };
            if e.host_task && !queue_order {
                end = end.max(enqueued.unwrap_or(end));
            }
            let better = match best {
                None => true,
                Some((b, bq, _)) => end > b || (end == b && bq && !queue_order),
            };
            if better {
                best = Some((end, queue_order, e));
            }
            if !queue_order {
                if e.host_task {
                    host_task = true;
                } else if data.is_none_or(|d| end > d) {
                    data = Some(end);
                }
            }
        }
        let entry = match inst.span {
            None => match best {
                Some((end, _, e)) => Entry {
                    end_ns: Some(end),
                    chain: e.chain,
                    host_task: e.host_task || inst.kind == NodeKind::HostTask,
                },
                None => Entry {
                    end_ns: None,
                    chain: None,
                    host_task: inst.kind == NodeKind::HostTask,
                },
            },
            Some((mut start_ns, mut end_ns)) => {
                if inst.kind == NodeKind::HostTask {
                    // Handed to the thread pool before its dependencies
                    // ended: it cannot have run before them.
                    if let Some((ready, _, _)) = best {
                        start_ns = start_ns.max(ready);
                        end_ns = end_ns.max(start_ns);
                    }
                }
                let before_submit = || {
                    let submit = inst.submit_ns?;
                    let ((end, _), at) = self
                        .ended
                        .last_at_or_below(&(submit, (NodeId::MAX, u64::MAX)))?;
                    Some((*end, at.link))
                };
                // Ready (every dependency ended, submitted) and still not
                // started: the command that held its device until then.
                let ready = match (best.map(|b| b.0), inst.submit_ns) {
                    (Some(b), Some(s)) => Some(b.max(s)),
                    (b, s) => b.or(s),
                };
                let holder = match (ready, inst.device) {
                    (Some(ready), Some(d)) if device_command => {
                        self.device_holder(d as u32, start_ns, ready)
                    }
                    _ => None,
                };
                let (parent, gap_before_ns, cause) = match (holder, best) {
                    (Some((end, link)), _) => (
                        Parent::Link(link),
                        start_ns.saturating_sub(end),
                        GapCause::Device,
                    ),
                    (None, None) => match before_submit() {
                        Some((end, link)) => (
                            Parent::Link(link),
                            start_ns.saturating_sub(end),
                            GapCause::Host,
                        ),
                        None => (Parent::Start, 0, GapCause::None),
                    },
                    (None, Some((end, queue_order, e))) => {
                        let cause = if inst.submit_ns.is_some_and(|s| s > end) {
                            GapCause::Host
                        } else if queue_order {
                            GapCause::Queue
                        } else {
                            GapCause::Dependency
                        };
                        let waited = if cause == GapCause::Host {
                            before_submit().filter(|w| w.0 >= end)
                        } else {
                            None
                        };
                        match waited {
                            Some((end, link)) => {
                                (Parent::Link(link), start_ns.saturating_sub(end), cause)
                            }
                            None => {
                                // The gap runs from the step's own end (for
                                // a host task: the time it ran is the gap).
                                let recorded = e.end_ns.unwrap_or(end);
                                let parent = e.chain.map_or(Parent::Start, Parent::Link);
                                (parent, start_ns.saturating_sub(recorded), cause)
                            }
                        }
                    }
                };
                let step = Step {
                    key: inst.key,
                    kind: inst.kind,
                    start_ns,
                    end_ns,
                    gap_before_ns,
                    cause,
                    region: inst.region,
                };
                let link = self.link(step, parent);
                let device = match inst.device {
                    Some(d) if device_command => d as u32,
                    _ => u32::MAX,
                };
                let ended = Ended {
                    link,
                    device,
                    start_ns,
                };
                self.ended.push((end_ns, inst.key), ended);
                if self.ended.len() > self.window_size {
                    self.ended.pop();
                }
                if device_command {
                    let later = |l: &(u64, InstanceKey, LinkId)| (end_ns, inst.key) > (l.0, l.1);
                    if self.last.as_ref().is_none_or(later) {
                        self.last = Some((end_ns, inst.key, link));
                    }
                    let busy = Busy {
                        start_ns,
                        end_ns,
                        key: inst.key,
                        submit_ns: inst.submit_ns.unwrap_or(0),
                        dependency: holder.map(|h| h.0).or(data),
                        host_task,
                        // The idle gaps know the host waits.
                        wait_end_ns: None,
                        device_busy: holder.is_some(),
                    };
                    self.busy.push((inst.device, inst.queue, busy));
                }
                Entry {
                    end_ns: Some(end_ns),
                    chain: Some(link),
                    host_task: inst.kind == NodeKind::HostTask,
                }
            }
        };
        self.window.insert(inst.key, entry);
        if self.window_order.len() < self.window_size {
            self.window_order.push(inst.key);
            return;
        }
        // Full: the oldest leaves for the new one.
        let head = self.window_head;
        let old = std::mem::replace(&mut self.window_order[head], inst.key);
        self.window_head = if head + 1 == self.window_size {
            0
        } else {
            head + 1
        };
        self.window.remove(&old);
        self.evicted.raise(old.0, old.1);
    }

    /// A new link after `parent`, folding the chain's oldest steps when it
    /// is longer than twice the step limit. Reclaims the links no chain
    /// reaches first, when due: the roots are every chain held (the
    /// window's, the ended steps', the last one's) and `parent`.
    #[inline]
    fn link(&mut self, step: Step, parent: Parent) -> LinkId {
        if self.chains.collection_due() {
            self.collect(&parent);
        }
        let depth = match &parent {
            Parent::Link(l) => self.chains.get(*l).depth + 1,
            _ => 1,
        };
        if depth as usize <= 2 * self.max_steps {
            return self.chains.add(Link {
                step,
                parent,
                depth,
            });
        }
        self.fold(step, parent)
    }

    /// Reclaims the links no chain held (or `parent`) reaches.
    #[cold]
    #[inline(never)]
    fn collect(&mut self, parent: &Parent) {
        let held = self.window.values().filter_map(|e| e.chain);
        let ended = self.ended.values().map(|e| e.link);
        let last = self.last.map(|l| l.2);
        let parent = match parent {
            Parent::Link(l) => Some(*l),
            _ => None,
        };
        self.chains
            .collect(held.chain(ended).chain(last).chain(parent));
    }

    /// The link of `step` after `parent` (its chain `depth` deep), with
    /// the chain's oldest steps folded: the newest `max_steps` are kept. The
    /// kept steps are not copied: the link cuts the chain of `parent` short.
    #[cold]
    #[inline(never)]
    fn fold(&mut self, step: Step, parent: Parent) -> LinkId {
        let Parent::Link(from) = parent else {
            unreachable!("only a chain of links is deep enough to fold");
        };
        // The parent's chain, newest first: all but its newest
        // `max_steps - 1` go into the totals.
        let keep = self.max_steps as u32 - 1;
        let mut older = FoldNewestFirst::default();
        let base = self.chains.walk_after(&parent, keep, |s| older.add(s));
        let mut folded = base.map(|f| (**f).clone()).unwrap_or_default();
        older.finish(&mut folded);
        self.chains.add(Link {
            step,
            parent: Parent::Cut(from, Arc::new(folded)),
            depth: self.max_steps as u32,
        })
    }

    /// The critical path as it stands (the chain of the device command that
    /// ended last).
    pub fn report(&self) -> PathReport {
        let mut report = PathReport {
            first_ns: self.first_ns,
            ..PathReport::default()
        };
        let Some((end, _, chain)) = &self.last else {
            return report;
        };
        report.end_ns = Some(*end);
        let mut node_ns: FxHashMap<NodeId, u64> = FxHashMap::default();
        let mut region_ns: FxHashMap<RegionId, u64> = FxHashMap::default();
        let from = Parent::Link(*chain);
        if let Some(f) = self.chains.walk(&from, |s| report.steps.push(*s)) {
            report.folded_steps = f.steps;
            report.start_ns = Some(f.first_start_ns);
            report.gap_ns = f.gap_ns;
            node_ns.clone_from(&f.node_ns);
            region_ns.clone_from(&f.region_ns);
        }
        report.steps.reverse();
        if report.folded_steps == 0 {
            report.start_ns = report.steps.first().map(|s| s.start_ns);
        }
        for s in &report.steps {
            let at = node_ns.entry(s.key.0).or_default();
            *at = at.saturating_add(s.duration_ns());
            if s.region != NO_REGION {
                let at = region_ns.entry(s.region).or_default();
                *at = at.saturating_add(s.duration_ns());
            }
            let gap = &mut report.gap_ns[s.cause.index()];
            *gap = gap.saturating_add(s.gap_before_ns);
        }
        report.node_ns = node_ns.into_iter().collect();
        report.region_ns = region_ns.into_iter().collect();
        report.region_ns.sort_unstable();
        report
            .node_ns
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{DeviceTimes, TimingStatus};

    fn kernel(instance: u64, submit: u64, start: u64, end: u64) -> Instance {
        let mut i = Instance::new(instance);
        i.submit_ns = Some(submit);
        i.device = Some(DeviceTimes {
            node: 0,
            instance,
            status: TimingStatus::Ok,
            start_ns: start,
            end_ns: end,
        });
        i
    }

    fn edge(from: InstanceKey, to: InstanceKey, queue_order: bool) -> InstanceEdge {
        InstanceEdge {
            source: from.0,
            source_instance: from.1,
            target: to.0,
            target_instance: to.1,
            queue_order,
        }
    }

    #[test]
    fn host_gap_dependency_and_queue() {
        let mut cp = CriticalPath::new(100);
        // a(0,1) 0..10; b(1,1) after a on the queue 10..20; c(2,1) depends
        // on b, submitted at 70, runs 75..80.
        cp.depends(edge((0, 1), (1, 1), true));
        cp.depends(edge((1, 1), (2, 1), false));
        cp.finalised(
            (0, 1),
            &kernel(1, 0, 0, 10),
            NodeKind::Kernel,
            Some(0),
            Some(1),
        );
        cp.finalised(
            (1, 1),
            &kernel(1, 1, 12, 20),
            NodeKind::Kernel,
            Some(0),
            Some(1),
        );
        cp.finalised(
            (2, 1),
            &kernel(1, 70, 75, 80),
            NodeKind::Kernel,
            Some(0),
            Some(1),
        );
        cp.finish();
        cp.finish();
        let r = cp.report();
        let causes: Vec<_> = r
            .steps
            .iter()
            .map(|s| (s.key, s.gap_before_ns, s.cause))
            .collect();
        assert_eq!(
            causes,
            vec![
                ((0, 1), 0, GapCause::None),
                ((1, 1), 2, GapCause::Queue),
                ((2, 1), 55, GapCause::Host)
            ]
        );
        assert_eq!(r.length_ns(), 80);
        assert_eq!(r.node_ns, vec![(0, 10), (1, 8), (2, 5)]);
    }

    /// A command that names no device runs on the device its queue's
    /// commands named first, whichever queue the command before was on;
    /// a command naming another device keeps its own.
    #[test]
    fn unnamed_devices_are_their_queues_first_named_device() {
        let mut cp = CriticalPath::new(100);
        let commands = [
            (1, Some(0)),
            (2, Some(1)),
            (1, None),
            (1, None),
            (2, None),
            (1, Some(5)),
            (1, None),
            (3, None),
            (2, None),
            (3, Some(7)),
            (3, None),
            (2, Some(4)),
            (2, None),
        ];
        for (i, &(queue, device)) in commands.iter().enumerate() {
            let t = 100 * i as u64;
            cp.finalised(
                (0, i as u64 + 1),
                &kernel(i as u64 + 1, t, t + 10, t + 20),
                NodeKind::Kernel,
                device,
                Some(queue),
            );
        }
        cp.finish();
        let mut devices = Vec::new();
        cp.take_busy(|device, _, busy| devices.push((busy.key.1, device)));
        let expected: Vec<(u64, Option<usize>)> = [0, 1, 0, 0, 1, 5, 0, -1, 1, 7, 7, 4, 1]
            .iter()
            .enumerate()
            .map(|(i, &d)| (i as u64 + 1, usize::try_from(d).ok()))
            .collect();
        assert_eq!(devices, expected);
    }

    #[test]
    fn a_target_finalised_before_its_dependency_waits_for_it() {
        let mut cp = CriticalPath::new(100);
        cp.depends(edge((0, 1), (1, 1), false));
        cp.finalised((1, 1), &kernel(1, 0, 20, 30), NodeKind::Kernel, None, None);
        cp.finalised((0, 1), &kernel(1, 0, 0, 15), NodeKind::Kernel, None, None);
        assert!(cp.report().steps.is_empty(), "held until finish");
        cp.finish();
        let r = cp.report();
        assert_eq!(r.steps.len(), 2);
        assert_eq!(r.steps[1].cause, GapCause::Dependency);
        assert_eq!(r.steps[1].gap_before_ns, 5);
    }

    #[test]
    fn without_dependencies_the_host_waited_for_what_ended_before_the_submission() {
        let mut cp = CriticalPath::new(100);
        cp.finalised((0, 1), &kernel(1, 0, 0, 10), NodeKind::Kernel, None, None);
        cp.finalised((1, 1), &kernel(1, 5, 6, 30), NodeKind::Kernel, None, None);
        // Submitted at 31, after both ended: follows the one that ended last.
        cp.finalised((2, 1), &kernel(1, 31, 40, 50), NodeKind::Kernel, None, None);
        cp.finish();
        let r = cp.report();
        let steps: Vec<_> = r
            .steps
            .iter()
            .map(|s| (s.key, s.gap_before_ns, s.cause))
            .collect();
        assert_eq!(
            steps,
            vec![((1, 1), 0, GapCause::None), ((2, 1), 10, GapCause::Host)]
        );
    }

    #[test]
    fn untimed_instances_pass_their_chain_on() {
        let mut cp = CriticalPath::new(100);
        cp.depends(edge((0, 1), (1, 1), false));
        cp.depends(edge((1, 1), (2, 1), false));
        cp.finalised((0, 1), &kernel(1, 0, 0, 10), NodeKind::Kernel, None, None);
        let mut alloc = Instance::new(1);
        alloc.submit_ns = Some(1);
        cp.finalised((1, 1), &alloc, NodeKind::Alloc, None, None);
        cp.finalised((2, 1), &kernel(1, 2, 14, 20), NodeKind::Kernel, None, None);
        cp.finish();
        let r = cp.report();
        let keys: Vec<_> = r.steps.iter().map(|s| s.key).collect();
        assert_eq!(keys, vec![(0, 1), (2, 1)]);
        assert_eq!(r.steps[1].gap_before_ns, 4);
    }

    #[test]
    fn a_long_chain_is_folded_with_exact_totals() {
        let mut cp = CriticalPath::new(3);
        for i in 1..=100u64 {
            if i > 1 {
                cp.depends(edge(
                    ((i % 2) as u32, i - 1),
                    (((i + 1) % 2) as u32, i),
                    true,
                ));
            }
            let key = (((i + 1) % 2) as u32, i);
            cp.finalised(
                key,
                &kernel(i, 0, i * 10, i * 10 + 5),
                NodeKind::Kernel,
                None,
                None,
            );
        }
        cp.finish();
        let r = cp.report();
        assert!(
            r.steps.len() <= 6 && r.steps.len() >= 3,
            "{}",
            r.steps.len()
        );
        assert_eq!(r.total_steps(), 100);
        assert_eq!(r.start_ns, Some(10));
        assert_eq!(r.end_ns, Some(1005));
        assert_eq!(r.node_ns.iter().map(|n| n.1).sum::<u64>(), 500);
        assert_eq!(r.gap_ns[GapCause::Queue.index()], 99 * 5);
        assert_eq!(r.steps.last().unwrap().key, (1, 100));
    }

    /// Enough steps that the step slab is collected many times, with
    /// branches off the path that become garbage: the path and its totals
    /// are exact, and the slab stays bounded.
    #[test]
    fn steps_reclaimed_by_collection_keep_the_path_exact() {
        let n = 20_000u64;
        let mut cp = CriticalPath::with_bounds(50, 64, 64);
        for i in 1..=n {
            // The path: node 0 on one in-order queue, 10 ns each, 5 apart.
            if i > 1 {
                cp.depends(edge((0, i - 1), (0, i), true));
            }
            cp.finalised(
                (0, i),
                &kernel(i, 0, i * 15, i * 15 + 10),
                NodeKind::Kernel,
                None,
                Some(1),
            );
            // A branch: node 1 depends on it and ends before the next step.
            cp.depends(edge((0, i), (1, i), false));
            cp.finalised(
                (1, i),
                &kernel(i, 0, i * 15 + 10, i * 15 + 11),
                NodeKind::Kernel,
                None,
                Some(2),
            );
        }
        cp.finish();
        let r = cp.report();
        // Every step of node 0, then the last branch, which ended last.
        assert_eq!(r.total_steps(), n + 1);
        assert_eq!(r.start_ns, Some(15));
        assert_eq!(r.end_ns, Some(n * 15 + 11));
        assert_eq!(r.node_time(0), n * 10);
        assert_eq!(r.node_time(1), 1);
        assert_eq!(r.steps.last().unwrap().key, (1, n));
        let kept: Vec<u64> = r
            .steps
            .iter()
            .filter(|s| s.key.0 == 0)
            .map(|s| s.key.1)
            .collect();
        let expected: Vec<u64> = (n + 1 - kept.len() as u64..=n).collect();
        assert_eq!(kept, expected);
        assert!(cp.chains.slots() < 4096, "{} slots", cp.chains.slots());
    }

    /// A chain held only by the steps that ended last: each step is
    /// submitted after the one before ended, with no dependency; a long
    /// command on another queue is the path meanwhile, untimed instances
    /// push the steps out of the window, and a short command with no
    /// submission time starts a chain of its own after them (a collection
    /// then finds the steps only through their ends). The path of the
    /// command after them is whole.
    #[test]
    fn steps_reached_only_by_their_end_survive_collection() {
        let n = 3_000u64;
        let mut cp = CriticalPath::with_bounds(5_000, 64, 64);
        let long = kernel(1, 0, 1, 1_000_000_000);
        cp.finalised((3, 1), &long, NodeKind::Kernel, None, Some(2));
        let mut untimed = 0;
        for i in 1..=n {
            let k = kernel(i, i * 20, i * 20 + 2, i * 20 + 14);
            cp.finalised((0, i), &k, NodeKind::Kernel, None, Some(1));
            for _ in 0..100 {
                untimed += 1;
                let mut u = Instance::new(untimed);
                u.submit_ns = Some(i * 20 + 11);
                cp.finalised((2, untimed), &u, NodeKind::Kernel, None, Some(1));
            }
            let mut other = kernel(i, 0, i * 20 + 12, i * 20 + 13);
            other.submit_ns = None;
            cp.finalised((5, i), &other, NodeKind::Kernel, None, Some(3));
        }
        let last = kernel(1, n * 20 + 15, n * 20 + 16, 2_000_000_000);
        cp.finalised((4, 1), &last, NodeKind::Kernel, None, Some(1));
        cp.finish();
        let r = cp.report();
        assert_eq!(r.total_steps(), n + 1);
        let keys: Vec<InstanceKey> = r.steps.iter().map(|s| s.key).collect();
        let mut expected: Vec<InstanceKey> = (1..=n).map(|i| (0, i)).collect();
        expected.push((4, 1));
        assert_eq!(keys, expected);
    }
}
