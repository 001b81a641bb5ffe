//! [`Plan`]: a run's [`Schedule`] resolved into what a replay with changed
//! durations needs, and the replay itself ([`Plan::replay`]). The model
//! and its assumptions are in the parent module's documentation; in short,
//! every instance starts when the last of its constraints is met, plus the
//! latency the run showed after that constraint, and every constraint is
//! recomputed from the changed durations:
//!
//! - an instance's *ready* time is the latest of its submission (moved by
//!   what the host waits before it on its thread saved), the ends of its
//!   dependencies (data, in-order queue) and, on a device that ran one
//!   command at a time all run long, the end of the command the device ran
//!   before it;
//! - a timed device command starts at its new ready time plus its recorded
//!   start minus its recorded ready time (the runtime's latency), and lasts
//!   its recorded duration divided by its factor;
//! - anything else (a host task, an untimed command, an allocation) has no
//!   time of its own: it passes its ready time on, and the latency of what
//!   waits for it holds what it really took (a host task's run);
//! - a host wait ends at the latest of its begin (moved as the thread's
//!   work was) and the end of what it waited for (the timed device command
//!   submitted before it that ended last by its end), plus its recorded
//!   latency after that, and never before it began; what the thread does
//!   after it moves by what the wait saved.
//!
//! A constraint the run shows did not hold (it ended more than
//! [`CLOCK_SLACK_NS`] after the command started: a dependency the runtime
//! did not wait for, or clocks apart) is dropped.
//!
//! Nothing changed, every time comes out as recorded, to the nanosecond:
//! each latency is the recorded start minus the recorded ready time, added
//! back to the same ready time (in [`Ns`], wide enough that this holds for
//! any recorded values).

use rustc_hash::FxHashMap;

use super::schedule::Schedule;
use crate::instance_graph::InstanceKey;
use crate::kind::NodeKind;
use crate::record::NodeId;

/// How far device times may lie from host times and still be taken as
/// ordered by them: device times are placed on the host clock by a
/// calibration a few µs wide. A device end up to this much after a wait's
/// end can be what the wait waited for; a constraint that ended more than
/// this after its command started did not hold it (the run showed so) and
/// is dropped.
pub const CLOCK_SLACK_NS: u64 = 20_000;

/// Timed commands looked through, latest end first, for one that was
/// submitted before a wait began.
const WAIT_TARGET_SCAN: usize = 256;

/// "None" in the index arrays.
const NONE: u32 = u32::MAX;

/// A time or a difference of times in the replay, ns: wide enough for any
/// difference of two `u64` host times, exactly.
pub type Ns = i128;

/// A recorded host time as an [`Ns`].
fn ns(t: u64) -> Ns {
    Ns::from(t)
}

/// An [`Ns`] as a host time (clamped to `u64`).
fn host_time(t: Ns) -> u64 {
    t.clamp(0, Ns::from(u64::MAX)) as u64
}

/// One step of the replay, in dependency order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    /// An instance (its index).
    Instance(u32),
    /// A host wait (its index).
    Wait(u32),
}

/// A host wait, resolved.
#[derive(Clone, Copy, Debug)]
struct Wait {
    begin_ns: u64,
    end_ns: u64,
    /// The instance it waited for (`NONE`: none).
    target: u32,
    /// The wait on its thread whose saving moves its begin (`NONE`: none).
    before: u32,
    /// Its end minus its recorded ready time.
    latency: Ns,
}

/// A run's schedule, resolved (see the module docs). Built by
/// [`Schedule::plan`].
#[derive(Clone, Debug)]
pub struct Plan {
    node: Vec<NodeId>,
    /// Device start and end of a timed device command; `None`: it passes
    /// its ready time on.
    span: Vec<Option<(u64, u64)>>,
    submit: Vec<Option<u64>>,
    /// The wait on the instance's thread whose saving moves its
    /// submission (`NONE`: none).
    host_before: Vec<u32>,
    /// Whether its submission constrains it (false when it started well
    /// before it, by the clocks).
    host_holds: Vec<bool>,
    /// What it depends on: `deps[dep_at[i]..dep_at[i + 1]]` (`NONE`: a
    /// dependency dropped because it did not hold).
    dep_at: Vec<u32>,
    deps: Vec<u32>,
    /// Recorded time it passes on (its end for a timed command).
    recorded_end: Vec<Ns>,
    /// Recorded ready time when nothing constrains it (kept as is).
    fixed_ready: Vec<Ns>,
    /// Start minus recorded ready time, for a timed command.
    latency: Vec<Ns>,
    /// Where it counts for the start of the span when it has no
    /// submission: a host task's recorded begin.
    first_fixed: Vec<Option<u64>>,
    waits: Vec<Wait>,
    order: Vec<Item>,
    /// Devices on which the run showed one command at a time.
    serial_devices: usize,
    /// Dependencies dropped because they closed a cycle.
    cycles_broken: u64,
    /// The replay with nothing changed.
    recorded: Replayed,
}

/// What a replay gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    /// First submission (or start) to last device end, ns.
    pub span_ns: u64,
    /// The first submission (or start), host ns.
    pub first_ns: Option<u64>,
    /// The last device end, host ns.
    pub last_end_ns: Option<u64>,
}

/// A replay's times: the span, and what each instance passes on (a timed
/// command's end) and each wait's end, by their index in the plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayTimes {
    /// The span.
    pub span: Replayed,
    /// Per instance: its end (a timed command) or its ready time.
    pub ends: Vec<u64>,
    /// Per host wait: its end.
    pub wait_ends: Vec<u64>,
}

impl Schedule {
    /// Resolves the collected schedule into a [`Plan`]: `None` when it is
    /// not complete (the run had more instances than the limit).
    pub fn plan(&self) -> Option<Plan> {
        self.is_complete().then(|| Plan::build(self))
    }
}

impl Plan {
    fn build(schedule: &Schedule) -> Plan {
        let collected = schedule.instances();
        let n = collected.len();
        let mut index: FxHashMap<InstanceKey, u32> = FxHashMap::default();
        index.reserve(n);
        for (i, c) in collected.iter().enumerate() {
            index.entry(c.key).or_insert(i as u32);
        }
        let span: Vec<Option<(u64, u64)>> = collected.iter().map(|c| c.device_span).collect();
        let submit: Vec<Option<u64>> = collected.iter().map(|c| c.submit_ns).collect();

        // Dependencies: the collected edges, then the device order.
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(schedule.edges().len());
        for (source, target) in schedule.edges() {
            if let (Some(&s), Some(&t)) = (index.get(source), index.get(target)) {
                if s != t {
                    pairs.push((t, s));
                }
            }
        }
        let devices = devices_of(collected);
        let serial_devices = serial_device_order(&devices, &span, &mut pairs);
        pairs.sort_unstable();
        pairs.dedup();
        let mut dep_at = vec![0u32; n + 1];
        for &(t, _) in &pairs {
            dep_at[t as usize + 1] += 1;
        }
        for i in 0..n {
            dep_at[i + 1] += dep_at[i];
        }
        let deps: Vec<u32> = pairs.iter().map(|&(_, s)| s).collect();

        // Host waits, per thread by end.
        let threads = ThreadWaits::new(schedule.waits());
        let mut waits: Vec<Wait> = schedule
            .waits()
            .iter()
            .map(|&(_, begin_ns, end_ns)| Wait {
                begin_ns,
                end_ns,
                target: NONE,
                before: NONE,
                latency: 0,
            })
            .collect();
        let targets = WaitTargets::new(&span, &submit);
        for (w, &(thread, begin, end)) in schedule.waits().iter().enumerate() {
            waits[w].before = threads.before_wait(thread, w as u32, begin);
            waits[w].target = targets.find(begin, end);
        }
        let host_before: Vec<u32> = collected
            .iter()
            .map(|c| match (c.thread, c.submit_ns) {
                (Some(thread), Some(at)) => threads.before(thread, at),
                _ => NONE,
            })
            .collect();
        let first_fixed = collected
            .iter()
            .map(|c| match (c.kind, c.submit_ns) {
                (NodeKind::HostTask, None) => c.host_task_span.map(|s| s.0),
                _ => None,
            })
            .collect();

        let mut plan = Plan {
            node: collected.iter().map(|c| c.key.0).collect(),
            span,
            submit,
            host_before,
            host_holds: vec![true; n],
            dep_at,
            deps,
            recorded_end: vec![0; n],
            fixed_ready: vec![0; n],
            latency: vec![0; n],
            first_fixed,
            waits,
            order: Vec::new(),
            serial_devices,
            cycles_broken: 0,
            recorded: Replayed::default(),
        };
        plan.order_items();
        plan.record_latencies();
        plan.recorded = plan.replay(|_| 1.0);
        plan
    }

    /// Instances in the plan.
    pub fn instances(&self) -> usize {
        self.node.len()
    }

    /// Host waits in the plan.
    pub fn waits(&self) -> usize {
        self.waits.len()
    }

    /// Devices on which the run showed one command at a time (their
    /// commands keep their recorded order).
    pub fn serial_devices(&self) -> usize {
        self.serial_devices
    }

    /// Dependencies dropped because they closed a cycle (records whose
    /// times contradict their order; 0 in a coherent run).
    pub fn cycles_broken(&self) -> u64 {
        self.cycles_broken
    }

    /// Orders instances and waits so that everything comes after what it
    /// depends on (Kahn's algorithm, first come first served). A cycle
    /// (times that contradict the dependencies) is broken at its member
    /// that was ready first: its dependencies not ordered yet are dropped.
    fn order_items(&mut self) {
        let n = self.node.len();
        let total = n + self.waits.len();
        let id = |item: Item| match item {
            Item::Instance(i) => i as usize,
            Item::Wait(w) => n + w as usize,
        };
        let item = |k: usize| {
            if k < n {
                Item::Instance(k as u32)
            } else {
                Item::Wait((k - n) as u32)
            }
        };
        // Predecessors of each item, as (pred, succ) pairs, then successor lists.
        let mut links: Vec<(u32, u32)> = Vec::with_capacity(self.deps.len() + n + 2 * total);
        for i in 0..n {
            for &d in self.deps_of(i) {
                links.push((d, i as u32));
            }
            if self.host_before[i] != NONE {
                links.push(((n as u32) + self.host_before[i], i as u32));
            }
        }
        for (w, wait) in self.waits.iter().enumerate() {
            let me = (n + w) as u32;
            if wait.target != NONE {
                links.push((wait.target, me));
            }
            if wait.before != NONE {
                links.push(((n as u32) + wait.before, me));
            }
        }
        let mut indegree = vec![0u32; total];
        let mut succ_at = vec![0u32; total + 1];
        for &(p, s) in &links {
            indegree[s as usize] += 1;
            succ_at[p as usize + 1] += 1;
        }
        for k in 0..total {
            succ_at[k + 1] += succ_at[k];
        }
        let mut fill = succ_at.clone();
        let mut succ = vec![0u32; links.len()];
        for &(p, s) in &links {
            succ[fill[p as usize] as usize] = s;
            fill[p as usize] += 1;
        }
        drop(links);
        let mut order: Vec<Item> = Vec::with_capacity(total);
        let mut placed = vec![false; total];
        let mut queue: std::collections::VecDeque<u32> = (0..total as u32)
            .filter(|&k| indegree[k as usize] == 0)
            .collect();
        // For cycles: every item by the time it was ready, earliest first.
        let mut by_time: Option<Vec<u32>> = None;
        let mut cursor = 0;
        while order.len() < total {
            let Some(k) = queue.pop_front() else {
                let by_time = by_time.get_or_insert_with(|| {
                    let mut all: Vec<u32> = (0..total as u32).collect();
                    all.sort_by_key(|&k| (self.key_time(item(k as usize)), k));
                    all
                });
                while placed[by_time[cursor] as usize] {
                    cursor += 1;
                }
                let k = by_time[cursor];
                self.cycles_broken += u64::from(indegree[k as usize]);
                indegree[k as usize] = 0;
                queue.push_back(k);
                continue;
            };
            if placed[k as usize] {
                continue;
            }
            placed[k as usize] = true;
            order.push(item(k as usize));
            for &s in &succ[succ_at[k as usize] as usize..succ_at[k as usize + 1] as usize] {
                let d = &mut indegree[s as usize];
                if *d > 0 {
                    *d -= 1;
                    if *d == 0 && !placed[s as usize] {
                        queue.push_back(s);
                    }
                }
            }
        }
        // Drop what a broken cycle left after its dependant.
        if self.cycles_broken > 0 {
            let mut position = vec![0u32; total];
            for (p, &it) in order.iter().enumerate() {
                position[id(it)] = p as u32;
            }
            let before = |a: usize, b: usize| position[a] < position[b];
            let mut deps = Vec::with_capacity(self.deps.len());
            let mut dep_at = vec![0u32; n + 1];
            for i in 0..n {
                for &d in self.deps_of(i) {
                    if before(d as usize, i) {
                        deps.push(d);
                    }
                }
                dep_at[i + 1] = deps.len() as u32;
                if self.host_before[i] != NONE && !before(n + self.host_before[i] as usize, i) {
                    self.host_before[i] = NONE;
                }
            }
            self.deps = deps;
            self.dep_at = dep_at;
            for w in 0..self.waits.len() {
                let wait = self.waits[w];
                if wait.target != NONE && !before(wait.target as usize, n + w) {
                    self.waits[w].target = NONE;
                }
                if wait.before != NONE && !before(n + wait.before as usize, n + w) {
                    self.waits[w].before = NONE;
                }
            }
        }
        self.order = order;
    }

    /// When an item was ready in the run, roughly: what cycles are broken by.
    fn key_time(&self, item: Item) -> u64 {
        match item {
            Item::Instance(i) => {
                let i = i as usize;
                self.span[i]
                    .map(|s| s.0)
                    .or(self.submit[i])
                    .or(self.first_fixed[i])
                    .unwrap_or(0)
            }
            Item::Wait(w) => self.waits[w as usize].end_ns,
        }
    }

    fn deps_of(&self, i: usize) -> &[u32] {
        &self.deps[self.dep_at[i] as usize..self.dep_at[i + 1] as usize]
    }

    /// The recorded times every replay starts from: what each instance
    /// passes on, and the latencies after its ready time; drops the
    /// constraints of a timed command that ended well after it started.
    fn record_latencies(&mut self) {
        for k in 0..self.order.len() {
            match self.order[k] {
                Item::Instance(i) => {
                    let i = i as usize;
                    if let Some((start, _)) = self.span[i] {
                        let latest = ns(start) + ns(CLOCK_SLACK_NS);
                        let (from, to) = (self.dep_at[i] as usize, self.dep_at[i + 1] as usize);
                        for at in from..to {
                            let d = self.deps[at];
                            if d != NONE && self.recorded_end[d as usize] > latest {
                                self.deps[at] = NONE;
                            }
                        }
                        if self.submit[i].is_some_and(|s| ns(s) > latest) {
                            self.host_holds[i] = false;
                        }
                    }
                    let ready = self.ready(i, &self.recorded_end, |_| 0);
                    match (self.span[i], ready) {
                        (Some((start, end)), Some(ready)) => {
                            self.latency[i] = ns(start) - ready;
                            self.recorded_end[i] = ns(end);
                        }
                        (Some((start, end)), None) => {
                            self.fixed_ready[i] = ns(start);
                            self.recorded_end[i] = ns(end);
                        }
                        (None, Some(ready)) => self.recorded_end[i] = ready,
                        (None, None) => {
                            let at = ns(self.first_fixed[i].unwrap_or(0));
                            self.fixed_ready[i] = at;
                            self.recorded_end[i] = at;
                        }
                    }
                }
                Item::Wait(w) => {
                    let wait = self.waits[w as usize];
                    let ready = match wait.target {
                        NONE => ns(wait.begin_ns),
                        t => ns(wait.begin_ns).max(self.recorded_end[t as usize]),
                    };
                    self.waits[w as usize].latency = ns(wait.end_ns) - ready;
                }
            }
        }
    }

    /// Instance `i`'s ready time: the latest of its submission (less the
    /// thread's saving so far, `saved(wait)`) and what it depends on
    /// (`ends`); `None` when nothing constrains it.
    fn ready(&self, i: usize, ends: &[Ns], saved: impl Fn(u32) -> Ns) -> Option<Ns> {
        let host = self.host_at(i, saved).filter(|_| self.host_holds[i]);
        self.deps_of(i)
            .iter()
            .filter(|&&d| d != NONE)
            .map(|&d| ends[d as usize])
            .chain(host)
            .max()
    }

    /// Instance `i`'s submission, less what the waits before it on its
    /// thread saved (`saved(wait)`).
    fn host_at(&self, i: usize, saved: impl Fn(u32) -> Ns) -> Option<Ns> {
        self.submit[i].map(|s| match self.host_before[i] {
            NONE => ns(s),
            w => ns(s) - saved(w),
        })
    }

    /// Replays the run with instance durations divided by `factor(node)`
    /// (1: unchanged, infinity: no time), and gives the span.
    pub fn replay(&self, factor: impl Fn(NodeId) -> f64) -> Replayed {
        self.replay_times(factor).span
    }

    /// [`Plan::replay`], with every instance's and every wait's new time.
    pub fn replay_times(&self, factor: impl Fn(NodeId) -> f64) -> ReplayTimes {
        let n = self.node.len();
        let mut end: Vec<Ns> = vec![0; n];
        let mut first_ns: Option<Ns> = None;
        let mut last_end_ns: Option<Ns> = None;
        let mut first = |at: Option<Ns>| {
            if let Some(at) = at {
                first_ns = Some(first_ns.map_or(at, |f| f.min(at)));
            }
        };
        // What each wait saved its thread: recorded end minus new end.
        let mut saved: Vec<Ns> = vec![0; self.waits.len()];
        for &item in &self.order {
            match item {
                Item::Instance(i) => {
                    let i = i as usize;
                    let ready = self.ready(i, &end, |w| saved[w as usize]);
                    let host = self.host_at(i, |w| saved[w as usize]);
                    end[i] = match (self.span[i], ready) {
                        (Some((start, finish)), ready) => {
                            let start_now = match ready {
                                Some(r) => r + self.latency[i],
                                None => self.fixed_ready[i],
                            };
                            first(host.or(Some(start_now)));
                            let end_now =
                                start_now + ns(scaled(finish - start, factor(self.node[i])));
                            last_end_ns = Some(last_end_ns.map_or(end_now, |l| l.max(end_now)));
                            end_now
                        }
                        (None, Some(r)) => {
                            first(host.or(self.first_fixed[i].map(ns)));
                            r
                        }
                        (None, None) => {
                            first(self.first_fixed[i].map(ns));
                            self.fixed_ready[i]
                        }
                    };
                }
                Item::Wait(w) => {
                    let wait = &self.waits[w as usize];
                    let begin = match wait.before {
                        NONE => ns(wait.begin_ns),
                        b => ns(wait.begin_ns) - saved[b as usize],
                    };
                    let ready = match wait.target {
                        NONE => begin,
                        t => begin.max(end[t as usize]),
                    };
                    // Never before it began (what it waited for may have
                    // ended after it, within the clocks' slack), unless it
                    // was recorded so.
                    let floor = begin + (ns(wait.end_ns) - ns(wait.begin_ns)).min(0);
                    let end_now = (ready + wait.latency).max(floor);
                    saved[w as usize] = ns(wait.end_ns) - end_now;
                }
            }
        }
        let (first_ns, last_end_ns) = (first_ns.map(host_time), last_end_ns.map(host_time));
        let span = Replayed {
            span_ns: match (first_ns, last_end_ns) {
                (Some(f), Some(l)) => l.saturating_sub(f),
                _ => 0,
            },
            first_ns,
            last_end_ns,
        };
        ReplayTimes {
            span,
            ends: end.into_iter().map(host_time).collect(),
            wait_ends: self
                .waits
                .iter()
                .zip(saved)
                .map(|(w, saved)| host_time(ns(w.end_ns) - saved))
                .collect(),
        }
    }

    /// The node of instance `i` (in the order the schedule collected
    /// them).
    pub fn node_of(&self, i: usize) -> NodeId {
        self.node[i]
    }

    /// What instance `i` passes on in the run as recorded: a timed
    /// command's end, else its ready time.
    pub fn recorded_end(&self, i: usize) -> u64 {
        host_time(self.recorded_end[i])
    }

    /// Wait `w`'s recorded end.
    pub fn recorded_wait_end(&self, w: usize) -> u64 {
        self.waits[w].end_ns
    }

    /// The replay with nothing changed: the run as recorded.
    pub fn recorded(&self) -> &Replayed {
        &self.recorded
    }
}

/// `ns` divided by `factor` (at least 1; infinity gives 0), rounded.
pub fn scaled(ns: u64, factor: f64) -> u64 {
    if factor.is_nan() || factor <= 1.0 {
        return ns;
    }
    (ns as f64 / factor).round() as u64
}

/// Each collected instance's device: its own, else the first device a
/// command of its queue named (direct-path USM commands name none).
fn devices_of(collected: &[super::schedule::Collected]) -> Vec<Option<usize>> {
    let mut queue_device: FxHashMap<u64, usize> = FxHashMap::default();
    collected
        .iter()
        .map(|c| match (c.device, c.queue) {
            (Some(d), Some(q)) => {
                queue_device.entry(q).or_insert(d);
                Some(d)
            }
            (Some(d), None) => Some(d),
            (None, Some(q)) => queue_device.get(&q).copied(),
            (None, None) => None,
        })
        .collect()
}

/// On each device whose timed commands never overlapped (it ran one at a
/// time all run long), each command depends on the one it ran before:
/// appended to `pairs` as (dependant, dependency). Returns how many
/// devices that was.
fn serial_device_order(
    devices: &[Option<usize>],
    span: &[Option<(u64, u64)>],
    pairs: &mut Vec<(u32, u32)>,
) -> usize {
    let mut per_device: FxHashMap<usize, Vec<(u64, u64, u32)>> = FxHashMap::default();
    for (i, (d, s)) in devices.iter().zip(span).enumerate() {
        if let (Some(d), Some((start, end))) = (d, s) {
            per_device
                .entry(*d)
                .or_default()
                .push((*start, *end, i as u32));
        }
    }
    let mut serial = 0;
    let mut devices: Vec<_> = per_device.into_iter().collect();
    devices.sort_unstable_by_key(|(d, _)| *d);
    for (_, mut commands) in devices {
        commands.sort_unstable();
        // A command that started before every earlier-starting one ended.
        let mut latest_end = 0u64;
        let overlapped = commands.iter().any(|c| {
            let overlaps = c.0 < latest_end;
            latest_end = latest_end.max(c.1);
            overlaps
        });
        if overlapped || commands.len() < 2 {
            continue;
        }
        serial += 1;
        for w in commands.windows(2) {
            pairs.push((w[1].2, w[0].2));
        }
    }
    serial
}

/// Each thread's host waits, by end: which wait's saving moves a later
/// moment of the thread.
struct ThreadWaits {
    /// Per thread: (end, begin, wait index), by end.
    by_thread: FxHashMap<u32, Vec<(u64, u64, u32)>>,
    /// Each wait's place in its thread's list.
    place: Vec<u32>,
}

impl ThreadWaits {
    fn new(waits: &[super::schedule::HostWait]) -> ThreadWaits {
        let mut by_thread: FxHashMap<u32, Vec<(u64, u64, u32)>> = FxHashMap::default();
        for (w, &(thread, begin, end)) in waits.iter().enumerate() {
            by_thread
                .entry(thread)
                .or_default()
                .push((end, begin, w as u32));
        }
        let mut place = vec![0u32; waits.len()];
        for list in by_thread.values_mut() {
            list.sort_unstable();
            for (at, w) in list.iter().enumerate() {
                place[w.2 as usize] = at as u32;
            }
        }
        ThreadWaits { by_thread, place }
    }

    /// The wait of `thread` that ended last at or before `at`.
    fn before(&self, thread: u32, at: u64) -> u32 {
        let Some(list) = self.by_thread.get(&thread) else {
            return NONE;
        };
        match list.partition_point(|w| w.0 <= at) {
            0 => NONE,
            p => list[p - 1].2,
        }
    }

    /// The wait of `thread` that ended last at or before `begin`, ordered
    /// before wait `me` on its thread (never `me` itself, so that no two
    /// waits wait for each other).
    fn before_wait(&self, thread: u32, me: u32, begin: u64) -> u32 {
        let Some(list) = self.by_thread.get(&thread) else {
            return NONE;
        };
        let mine = self.place[me as usize] as usize;
        let p = list.partition_point(|w| w.0 <= begin).min(mine);
        match p {
            0 => NONE,
            p => list[p - 1].2,
        }
    }
}

/// The timed device commands by end, to find what a host wait waited for.
struct WaitTargets<'a> {
    /// (end, index), by end.
    by_end: Vec<(u64, u32)>,
    submit: &'a [Option<u64>],
}

impl<'a> WaitTargets<'a> {
    fn new(span: &[Option<(u64, u64)>], submit: &'a [Option<u64>]) -> WaitTargets<'a> {
        let mut by_end: Vec<(u64, u32)> = span
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|(_, e)| (e, i as u32)))
            .collect();
        by_end.sort_unstable();
        WaitTargets { by_end, submit }
    }

    /// The command a wait from `begin` to `end` waited for: of the timed
    /// commands submitted by its begin, the one that ended last by its end
    /// (give or take [`CLOCK_SLACK_NS`]).
    fn find(&self, begin: u64, end: u64) -> u32 {
        let until = end.saturating_add(CLOCK_SLACK_NS);
        let p = self.by_end.partition_point(|c| c.0 <= until);
        self.by_end[..p]
            .iter()
            .rev()
            .take(WAIT_TARGET_SCAN)
            .find(|(_, i)| self.submit[*i as usize].is_none_or(|s| s <= begin))
            .map_or(NONE, |c| c.1)
    }
}
