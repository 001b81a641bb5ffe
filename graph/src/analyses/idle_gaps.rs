//! Idle gaps ("bubbles") per device and per queue: the time between device
//! commands when nothing of that device (or queue) ran, each with a cause,
//! summed per cause over the whole run, and the ten longest kept.
//!
//! Commands arrive as they are finalised, which is roughly but not exactly
//! the order they ran in. Each device and queue holds the last
//! [`REORDER`] commands in device-start order and sweeps the oldest
//! out when it is full (and everything at [`IdleGaps::finish`]): a gap is
//! the time from the end of everything swept so far to the start of the
//! next command swept. A command finalised so late that a later-starting
//! one was already swept is counted in [`Sweep::late`] and only extends
//! the busy time, so a gap it would have filled may be counted as idle.
//!
//! The cause of a gap is read from the command after it, from whatever
//! that command waited for last (see [`IdleCause`]).
//!
//! A queue whose commands have all been on one device, which ran no other
//! commands, has the same sweep as that device: the two are twins, the
//! device's sweep holds the commands once and keeps the queue's gaps too,
//! until a command of one is not the other's (then the queue gets a copy).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

pub use crate::analyses::busy::Busy;
use crate::analyses::start_order::StartOrder;
use crate::instance_graph::InstanceKey;

/// Commands held per device or queue to put them back in start order.
pub const REORDER: usize = 4096;

/// Longest gaps kept per scope (device, queue).
pub const LONGEST: usize = 10;

/// Why a device or queue sat idle before a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdleCause {
    /// The host submitted the next command after the device went idle,
    /// and was not blocked in a wait just before.
    HostLate,
    /// The host submitted the next command after the device went idle,
    /// right after a host wait (`wait_begin`..`wait_end`, a `q.wait()` or
    /// `e.wait()`) that ended inside the gap: synchronisation.
    HostWait,
    /// Everything else the next command waited for was ready before the gap
    /// but it depends on a host task (the runtime does not say when a host
    /// task ends: it held the command, or the runtime was slow).
    HostTask,
    /// The next command waited for a dependency on another queue or device
    /// that ended inside the gap.
    Dependency,
    /// The next command was ready (dependencies ended, submitted) but its
    /// device ran other commands (of other queues) until inside the gap: a
    /// queue's gap while the device was busy elsewhere (a device's own gaps
    /// never have this cause).
    DeviceBusy,
    /// Everything the next command waited for was ready before the gap:
    /// the runtime or the driver took that long to start it.
    Runtime,
}

impl IdleCause {
    /// Every cause, in declaration order (the index of [`IdleCause::index`]).
    pub const ALL: [IdleCause; IDLE_CAUSES] = [
        IdleCause::HostLate,
        IdleCause::HostWait,
        IdleCause::HostTask,
        IdleCause::Dependency,
        IdleCause::DeviceBusy,
        IdleCause::Runtime,
    ];

    /// `host_late`, `host_wait`, `host_task`, `dependency`, `device_busy`
    /// or `runtime`.
    pub fn as_str(self) -> &'static str {
        match self {
            IdleCause::HostLate => "host_late",
            IdleCause::HostWait => "host_wait",
            IdleCause::HostTask => "host_task",
            IdleCause::Dependency => "dependency",
            IdleCause::DeviceBusy => "device_busy",
            IdleCause::Runtime => "runtime",
        }
    }

    /// Its position in [`IdleCause::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How many idle causes there are (the length of per-cause arrays).
pub const IDLE_CAUSES: usize = 6;

/// A device or a queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// A device, as the outputs name it: its label and name (`0.1 AMD EPYC`).
    Device(String),
    /// A queue, by the runtime's queue id.
    Queue(u64),
}

impl Resource {
    /// `device` or `queue`.
    pub fn scope(&self) -> &'static str {
        match self {
            Resource::Device(_) => "device",
            Resource::Queue(_) => "queue",
        }
    }

    /// Whether it is a device (else a queue).
    pub fn is_device(&self) -> bool {
        matches!(self, Resource::Device(_))
    }

    /// The device name or the queue id.
    pub fn name(&self) -> String {
        match self {
            Resource::Device(d) => d.clone(),
            Resource::Queue(q) => q.to_string(),
        }
    }
}

/// One idle gap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The device or queue that was idle.
    pub resource: Resource,
    /// Its cause.
    pub cause: IdleCause,
    /// When it went idle (the end of the command before).
    pub start_ns: u64,
    /// When the next command started.
    pub end_ns: u64,
    /// The command that ended last before the gap.
    pub before: Option<InstanceKey>,
    /// The command after the gap.
    pub after: InstanceKey,
}

impl Gap {
    /// How long it was idle.
    pub fn idle_ns(&self) -> u64 {
        self.end_ns - self.start_ns
    }

    /// Whether it is a device's gap (else a queue's).
    fn is_device(&self) -> bool {
        self.resource.is_device()
    }
}

/// One device's or queue's sweep.
#[derive(Clone, Debug, Default)]
pub struct Sweep {
    held: StartOrder<Busy, ()>,
    /// End of everything swept so far, and the command that ended then.
    busy_until: Option<(u64, InstanceKey)>,
    /// The first start swept.
    pub first_start_ns: Option<u64>,
    /// Device time covered by at least one command.
    pub busy_ns: u64,
    /// Idle time by cause ([`IdleCause::index`]).
    pub idle_ns: [u64; IDLE_CAUSES],
    /// Gaps by cause.
    pub gaps: [u64; IDLE_CAUSES],
    /// Commands swept.
    pub commands: u64,
    /// Commands that came after a later-starting one was swept.
    pub late: u64,
    /// The last start swept.
    swept_start: u64,
    /// Its twin's place in [`IdleGaps::sweeps`]: a device's queue or a
    /// queue's device (whose sweep is also the queue's).
    twin: Option<usize>,
    /// A device's twin queue's id (whose gaps it keeps too).
    twin_queue: Option<u64>,
}

impl Sweep {
    /// Whether nothing was pushed to it yet.
    fn is_fresh(&self) -> bool {
        self.commands == 0 && self.held.is_empty()
    }

    /// The end of everything swept.
    pub fn last_end_ns(&self) -> Option<u64> {
        self.busy_until.map(|b| b.0)
    }

    /// Idle time in all.
    pub fn idle_total_ns(&self) -> u64 {
        self.idle_ns.iter().sum()
    }
}

/// Host waits remembered to explain idle gaps.
const RECENT_WAITS: usize = 64;

/// Idle gaps of every device and queue.
#[derive(Clone, Debug, Default)]
pub struct IdleGaps {
    sweeps: Vec<(Resource, Sweep)>,
    /// By the caller's device number: its sweep in `sweeps`.
    device_sweeps: Vec<Option<usize>>,
    longest: Longest,
    reorder: usize,
    /// How the outputs name each device, by the caller's device number.
    device_names: Vec<String>,
    /// Open host waits per thread, and the last ones that ended.
    open_waits: FxHashMap<u32, u64>,
    recent_waits: VecDeque<u64>,
    /// How many of `recent_waits` ended before the one before them.
    wait_descents: usize,
    /// The last queue pushed to and its sweep in `sweeps`.
    last_queue: Option<(u64, usize)>,
}

/// The cause of a gap that began at `idle_from` before `next`.
fn cause_of(idle_from: u64, next: &Busy) -> IdleCause {
    let dep = next.dependency.filter(|&d| d > idle_from);
    match dep {
        // Ready but for the device, which another command held until inside
        // the gap (only a queue's gap: the device itself was not idle then).
        Some(end) if end >= next.submit_ns && next.device_busy => IdleCause::DeviceBusy,
        Some(end) if end >= next.submit_ns => IdleCause::Dependency,
        // Submitted after the device went idle, then held longer still by
        // a host task: the host task kept the device idle.
        _ if next.submit_ns > idle_from && held_by_host_task(idle_from, next) => {
            IdleCause::HostTask
        }
        _ if next.submit_ns > idle_from => {
            if next.wait_end_ns.is_some_and(|w| w >= idle_from) {
                IdleCause::HostWait
            } else {
                IdleCause::HostLate
            }
        }
        // Ready but for a host task, whose end is not known: it held it.
        _ if next.host_task => IdleCause::HostTask,
        _ => IdleCause::Runtime,
    }
}

/// A command that depends on a host task and waited longer after its
/// submission than the host took to submit it once the device went idle.
fn held_by_host_task(idle_from: u64, next: &Busy) -> bool {
    next.host_task
        && next.start_ns.saturating_sub(next.submit_ns) > next.submit_ns.saturating_sub(idle_from)
}

impl IdleGaps {
    /// Empty, reordering [`REORDER`] commands per device and queue.
    pub fn new() -> IdleGaps {
        IdleGaps::with_reorder(REORDER)
    }

    /// Empty, reordering `reorder` commands per device and queue (at least 1).
    pub fn with_reorder(reorder: usize) -> IdleGaps {
        IdleGaps {
            reorder: reorder.max(1),
            ..IdleGaps::default()
        }
    }

    /// Names device number `device` `display` (as the outputs name it:
    /// `0.1 AMD EPYC`); the longest name given wins (`0` becomes
    /// `0 AMD EPYC` once the device's name arrived).
    #[inline]
    pub fn name_device(&mut self, device: usize, display: &str) {
        // Mostly named already, as long: one compare.
        if self
            .device_names
            .get(device)
            .is_none_or(|n| n.len() < display.len())
        {
            self.rename_device(device, display);
        }
    }

    /// [`IdleGaps::name_device`] when the name is new or longer.
    #[cold]
    fn rename_device(&mut self, device: usize, display: &str) {
        if self.device_names.len() <= device {
            self.device_names.resize(device + 1, String::new());
        }
        if self.device_names[device].len() < display.len() {
            self.device_names[device] = display.to_string();
        }
    }

    /// A host wait began on `thread`.
    pub fn wait_begin(&mut self, thread: u32, ns: u64) {
        self.open_waits.insert(thread, ns);
    }

    /// A host wait ended on `thread`.
    pub fn wait_end(&mut self, thread: u32, ns: u64) {
        if self.open_waits.remove(&thread).is_some() {
            if self.recent_waits.len() >= RECENT_WAITS {
                if let (Some(&a), Some(&b)) = (self.recent_waits.front(), self.recent_waits.get(1))
                {
                    self.wait_descents -= usize::from(a > b);
                }
                self.recent_waits.pop_front();
            }
            if self.recent_waits.back().is_some_and(|&last| last > ns) {
                self.wait_descents += 1;
            }
            self.recent_waits.push_back(ns);
        }
    }

    /// One timed device command on device number `device` (named by
    /// [`IdleGaps::name_device`]) and `queue`, with the end of the last
    /// host wait that ended by its submission (or start) filled in.
    pub fn add_command(&mut self, device: Option<usize>, queue: Option<u64>, mut busy: Busy) {
        busy.wait_end_ns = self.last_wait_by(busy.submit_ns.max(busy.start_ns));
        let device =
            device.map(|d| self.device_sweep(d, |names| names.get(d).cloned().unwrap_or_default()));
        self.push_to(device, queue, &busy);
    }

    /// The end of the last host wait that ended by `by`, if any.
    #[inline]
    fn last_wait_by(&self, by: u64) -> Option<u64> {
        let w = &self.recent_waits;
        if self.wait_descents > 0 {
            return w.iter().filter(|&&w| w <= by).max().copied();
        }
        // In order (the usual case): the last, or the last not after `by`.
        match w.back() {
            Some(&last) if last <= by => Some(last),
            Some(_) => w
                .partition_point(|&w| w <= by)
                .checked_sub(1)
                .map(|at| w[at]),
            None => None,
        }
    }

    /// The sweep of device number `number`, added if new under the name
    /// `name` gives (from the names given so far).
    #[inline]
    fn device_sweep(&mut self, number: usize, name: impl FnOnce(&[String]) -> String) -> usize {
        match self.device_sweeps.get(number).copied().flatten() {
            Some(at) => at,
            None => {
                let name = name(&self.device_names);
                self.new_device_sweep(number, name)
            }
        }
    }

    /// Adds the sweep of device number `number`, named `name`.
    fn new_device_sweep(&mut self, number: usize, name: String) -> usize {
        self.sweeps.push((Resource::Device(name), Sweep::default()));
        if self.device_sweeps.len() <= number {
            self.device_sweeps.resize(number + 1, None);
        }
        self.device_sweeps[number] = Some(self.sweeps.len() - 1);
        self.sweeps.len() - 1
    }

    /// Pushes `busy` to the device sweep `device` and the sweep of queue
    /// `queue`: once, to the device's, when they are twins (or become them).
    #[inline(always)]
    fn push_to(&mut self, device: Option<usize>, queue: Option<u64>, busy: &Busy) {
        let queue = queue.map(|q| self.queue_sweep(q));
        match (device, queue) {
            (Some(d), Some(q)) => {
                if self.sweeps[d].1.twin != Some(q) {
                    self.unpair(d);
                    self.unpair(q);
                    if !(self.sweeps[d].1.is_fresh() && self.sweeps[q].1.is_fresh()) {
                        self.push(d, busy);
                        self.push(q, busy);
                        return;
                    }
                    let Resource::Queue(id) = self.sweeps[q].0 else {
                        unreachable!("a queue's sweep")
                    };
                    self.sweeps[d].1.twin = Some(q);
                    self.sweeps[d].1.twin_queue = Some(id);
                    self.sweeps[q].1.twin = Some(d);
                }
                self.push(d, busy);
            }
            (Some(at), None) | (None, Some(at)) => {
                self.unpair(at);
                self.push(at, busy);
            }
            (None, None) => {}
        }
    }

    /// Ends the twinning of sweep `at`, if it has a twin: the queue gets a
    /// copy of the device's sweep.
    #[inline]
    fn unpair(&mut self, at: usize) {
        if let Some(twin) = self.sweeps[at].1.twin {
            self.unpair_from(at, twin);
        }
    }

    /// Ends the twinning of sweep `at` and its twin `twin`.
    #[cold]
    fn unpair_from(&mut self, at: usize, twin: usize) {
        let (d, q) = if self.sweeps[at].0.is_device() {
            (at, twin)
        } else {
            (twin, at)
        };
        let s = &mut self.sweeps[d].1;
        s.twin = None;
        s.twin_queue = None;
        self.sweeps[q].1 = self.sweeps[d].1.clone();
    }

    /// The sweep of queue `q`, added if new (the last queue's found without
    /// a search: most commands are on the queue of the one before).
    #[inline]
    fn queue_sweep(&mut self, q: u64) -> usize {
        match self.last_queue {
            Some((last, at)) if last == q => at,
            _ => {
                let at = match self
                    .sweeps
                    .iter()
                    .position(|(r, _)| *r == Resource::Queue(q))
                {
                    Some(at) => at,
                    None => {
                        self.sweeps.push((Resource::Queue(q), Sweep::default()));
                        self.sweeps.len() - 1
                    }
                };
                self.last_queue = Some((q, at));
                at
            }
        }
    }

    /// One timed device command on `device` (the caller's dense number
    /// for it, and its name) and `queue`.
    pub fn add(&mut self, device: Option<(usize, &str)>, queue: Option<u64>, busy: Busy) {
        let device = device.map(|(number, name)| self.device_sweep(number, |_| name.to_string()));
        self.push_to(device, queue, &busy);
    }

    #[inline(always)]
    fn push(&mut self, at: usize, busy: &Busy) {
        self.sweeps[at].1.held.push(*busy, ());
        if self.sweeps[at].1.held.len() > self.reorder {
            self.sweep_one(at);
        }
    }

    /// Sweeps the earliest-starting held command of sweep `at`.
    fn sweep_one(&mut self, at: usize) {
        let (resource, s) = &mut self.sweeps[at];
        let Some((b, ())) = s.held.pop() else {
            return;
        };
        s.commands += 1;
        if b.start_ns < s.swept_start {
            s.late += 1;
        }
        s.swept_start = s.swept_start.max(b.start_ns);
        s.first_start_ns = Some(s.first_start_ns.map_or(b.start_ns, |f| f.min(b.start_ns)));
        let end = b.end_ns.max(b.start_ns);
        match s.busy_until {
            None => {
                s.busy_ns = s.busy_ns.saturating_add(end - b.start_ns);
                s.busy_until = Some((end, b.key));
            }
            Some((until, before)) => {
                if b.start_ns > until {
                    let cause = cause_of(until, &b);
                    s.idle_ns[cause.index()] =
                        s.idle_ns[cause.index()].saturating_add(b.start_ns - until);
                    s.gaps[cause.index()] += 1;
                    let idle = b.start_ns - until;
                    let device = resource.is_device();
                    let twin = s.twin_queue;
                    if self.longest.takes(device, idle)
                        || (twin.is_some() && self.longest.takes(false, idle))
                    {
                        let gap = |resource: Resource| Gap {
                            resource,
                            cause,
                            start_ns: until,
                            end_ns: b.start_ns,
                            before: Some(before),
                            after: b.key,
                        };
                        self.longest.keep_gap(resource, twin, idle, gap);
                    }
                }
                if end > until {
                    s.busy_ns = s.busy_ns.saturating_add(end - b.start_ns.max(until));
                    s.busy_until = Some((end, b.key));
                }
            }
        }
    }

    /// Sweeps everything held: call once the commands have stopped.
    pub fn finish(&mut self) {
        for at in 0..self.sweeps.len() {
            self.unpair(at);
        }
        for at in 0..self.sweeps.len() {
            while !self.sweeps[at].1.held.is_empty() {
                self.sweep_one(at);
            }
        }
    }

    /// Every device and queue with its sweep, devices first.
    pub fn sweeps(&self) -> Vec<(&Resource, &Sweep)> {
        let mut v: Vec<(&Resource, &Sweep)> = self
            .sweeps
            .iter()
            .map(|(r, s)| match (r, s.twin) {
                (Resource::Queue(_), Some(d)) => (r, &self.sweeps[d].1),
                _ => (r, s),
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// The longest gaps of a scope (`device` or `queue`), longest first.
    pub fn longest(&self, scope: &str) -> Vec<&Gap> {
        let mut v: Vec<&Gap> = self
            .longest
            .gaps
            .iter()
            .filter(|g| g.resource.scope() == scope)
            .collect();
        v.sort_by(|a, b| {
            b.idle_ns()
                .cmp(&a.idle_ns())
                .then(a.start_ns.cmp(&b.start_ns))
        });
        v
    }

    /// Idle time by cause summed over the devices.
    pub fn device_idle_by_cause(&self) -> [u64; IDLE_CAUSES] {
        let mut out = [0; IDLE_CAUSES];
        for (r, s) in &self.sweeps {
            if matches!(r, Resource::Device(_)) {
                for (o, v) in out.iter_mut().zip(s.idle_ns) {
                    *o = u64::saturating_add(*o, v);
                }
            }
        }
        out
    }
}

/// The [`LONGEST`] longest gaps of each scope (devices, queues).
#[derive(Clone, Debug, Default)]
struct Longest {
    gaps: Vec<Gap>,
    /// Gaps kept per scope (index 1: devices, 0: queues).
    count: [usize; 2],
    /// Per scope, once it holds [`LONGEST`]: the shortest kept, which a
    /// gap must exceed to be kept (most gaps are short: one compare).
    floor: [u64; 2],
}

impl Longest {
    /// Whether a gap `idle_ns` long would be kept (see [`Longest::keep`]).
    #[inline]
    fn takes(&self, device: bool, idle_ns: u64) -> bool {
        let scope = usize::from(device);
        self.count[scope] < LONGEST || idle_ns > self.floor[scope]
    }

    /// Keeps the gap `gap` makes for `resource` and, when it has one, for
    /// its twin queue `twin` (see [`Longest::keep`]).
    #[cold]
    #[inline(never)]
    fn keep_gap(
        &mut self,
        resource: &Resource,
        twin: Option<u64>,
        idle_ns: u64,
        gap: impl Fn(Resource) -> Gap,
    ) {
        self.keep(resource.is_device(), idle_ns, || gap(resource.clone()));
        if let Some(q) = twin {
            self.keep(false, idle_ns, || gap(Resource::Queue(q)));
        }
    }

    /// Keeps the gap `make` makes (a device's when `device`, else a
    /// queue's; `idle_ns` long) if it is among the longest of its scope,
    /// in place of the shortest (the first of equal ones). It is made only
    /// then: a device's name is copied into it.
    fn keep(&mut self, device: bool, idle_ns: u64, make: impl FnOnce() -> Gap) {
        let scope = usize::from(device);
        if self.count[scope] < LONGEST {
            self.gaps.push(make());
            self.count[scope] += 1;
        } else if idle_ns > self.floor[scope] {
            let floor = self.floor[scope];
            // The floor is a kept gap's length (set from them just below).
            let Some(shortest) = self
                .gaps
                .iter()
                .position(|g| g.is_device() == device && g.idle_ns() == floor)
            else {
                return;
            };
            self.gaps[shortest] = make();
        } else {
            return;
        }
        if self.count[scope] == LONGEST {
            self.floor[scope] = self
                .gaps
                .iter()
                .filter(|g| g.is_device() == device)
                .map(Gap::idle_ns)
                .min()
                .unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(key: u64, start_ns: u64, end_ns: u64, submit_ns: u64) -> Busy {
        Busy {
            start_ns,
            end_ns,
            key: (0, key),
            submit_ns,
            dependency: None,
            host_task: false,
            wait_end_ns: None,
            device_busy: false,
        }
    }

    #[test]
    fn gaps_between_commands_in_any_arrival_order() {
        let mut g = IdleGaps::new();
        // 1: 0..10, 2: 30..40 submitted at 25 (host late), 3: 35..50
        // (overlaps), 4: 60..70 submitted at 0 waiting on a host task.
        let mut four = busy(4, 60, 70, 0);
        four.host_task = true;
        for b in [
            busy(2, 30, 40, 25),
            four,
            busy(1, 0, 10, 0),
            busy(3, 35, 50, 1),
        ] {
            g.add(Some((0, "cpu")), Some(7), b);
        }
        g.finish();
        let sweeps = g.sweeps();
        assert_eq!(sweeps.len(), 2);
        let (r, s) = sweeps[0];
        assert_eq!(r, &Resource::Device("cpu".into()));
        assert_eq!(s.busy_ns, 10 + 20 + 10);
        assert_eq!(s.idle_ns[IdleCause::HostLate.index()], 20);
        assert_eq!(s.idle_ns[IdleCause::HostTask.index()], 10);
        assert_eq!(s.late, 0);
        let longest = g.longest("device");
        assert_eq!(longest[0].after, (0, 2));
        assert_eq!(longest[0].before, Some((0, 1)));
        assert_eq!(longest[1].before, Some((0, 3)));
    }

    #[test]
    fn a_twin_queue_has_its_device_sweep_until_the_device_runs_another_command() {
        let mut g = IdleGaps::with_reorder(2);
        for i in 0..6 {
            g.add(Some((0, "cpu")), Some(7), busy(i, i * 100, i * 100 + 10, 0));
        }
        let totals = |g: &IdleGaps| -> Vec<(u64, u64, u64)> {
            g.sweeps()
                .iter()
                .map(|(_, s)| (s.commands, s.busy_ns, s.idle_total_ns()))
                .collect()
        };
        // Twins: the same sweep, mid-run too (4 swept, 2 held).
        assert_eq!(totals(&g), [(4, 40, 270), (4, 40, 270)]);
        // The device alone, then both again: the queue has its own sweep.
        g.add(Some((0, "cpu")), None, busy(6, 600, 610, 0));
        g.add(Some((0, "cpu")), Some(7), busy(7, 700, 710, 0));
        g.finish();
        assert_eq!(totals(&g), [(8, 80, 630), (7, 70, 640)]);
        assert_eq!(g.longest("queue").len(), 6);
        assert_eq!(g.longest("queue")[0].resource, Resource::Queue(7));
        assert_eq!(g.longest("queue")[0].before, Some((0, 5)));
    }

    #[test]
    fn causes() {
        let mut b = busy(1, 100, 110, 90);
        assert_eq!(cause_of(95, &b), IdleCause::Runtime);
        assert_eq!(cause_of(80, &b), IdleCause::HostLate);
        b.wait_end_ns = Some(85);
        assert_eq!(cause_of(80, &b), IdleCause::HostWait);
        b.host_task = true;
        assert_eq!(cause_of(95, &b), IdleCause::HostTask);
        assert_eq!(cause_of(80, &b), IdleCause::HostWait);
        b.dependency = Some(97);
        assert_eq!(cause_of(80, &b), IdleCause::Dependency);
        b.dependency = Some(70);
        assert_eq!(cause_of(80, &b), IdleCause::HostWait);
        // Held by its device until 98, inside the gap.
        b.dependency = Some(98);
        b.device_busy = true;
        assert_eq!(cause_of(80, &b), IdleCause::DeviceBusy);
        assert_eq!(cause_of(99, &b), IdleCause::HostTask);
    }

    #[test]
    fn a_late_submission_held_longer_by_a_host_task_waits_for_it() {
        // Submitted at 90, 5 after the device went idle, started at 100.
        let mut b = busy(1, 100, 110, 90);
        assert_eq!(cause_of(85, &b), IdleCause::HostLate);
        b.host_task = true;
        assert_eq!(cause_of(85, &b), IdleCause::HostTask);
        // Submitted 15 after: the host was later than the host task held it.
        assert_eq!(cause_of(75, &b), IdleCause::HostLate);
        b.wait_end_ns = Some(80);
        assert_eq!(cause_of(75, &b), IdleCause::HostWait);
    }

    #[test]
    fn only_the_longest_are_kept() {
        let mut g = IdleGaps::with_reorder(2);
        for i in 0..100 {
            g.add(None, Some(1), busy(i, i * i * 10, i * i * 10 + 5, 0));
        }
        g.finish();
        let l = g.longest("queue");
        assert_eq!(l.len(), LONGEST);
        assert_eq!(l[0].after, (0, 99));
        assert!(g.longest("device").is_empty());
    }

    #[test]
    fn the_kept_gaps_are_the_longest_of_each_scope_whatever_the_order() {
        // Lengths with many ties, in a scrambled order, for both scopes.
        let lengths: Vec<u64> = (0..500u64).map(|i| (i * 7919) % 53).collect();
        let mut longest = Longest::default();
        for (i, &len) in lengths.iter().enumerate() {
            let device = i % 3 == 0;
            let gap = Gap {
                resource: if device {
                    Resource::Device("d".into())
                } else {
                    Resource::Queue(1)
                },
                cause: IdleCause::Runtime,
                start_ns: 1000,
                end_ns: 1000 + len,
                before: None,
                after: (0, i as u64),
            };
            longest.keep(device, len, || gap);
        }
        for device in [false, true] {
            let mut want: Vec<u64> = lengths
                .iter()
                .enumerate()
                .filter(|(i, _)| (i % 3 == 0) == device)
                .map(|(_, &l)| l)
                .collect();
            want.sort_unstable_by(|a, b| b.cmp(a));
            want.truncate(LONGEST);
            let mut got: Vec<u64> = longest
                .gaps
                .iter()
                .filter(|g| g.is_device() == device)
                .map(Gap::idle_ns)
                .collect();
            got.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(got, want, "device {device}");
        }
    }
}
