//! The program's own regions (ITT tasks): which region each command was
//! submitted in, and what each region cost, kept incrementally.
//!
//! A *region* is a path of ITT task names, outermost first: the tasks open
//! on a thread when it submitted a command ([`Record::RegionBegin`] /
//! [`Record::RegionEnd`], sent for every ITT task whether tracing is on or
//! not). Each distinct path gets a [`RegionId`] (1, 2, ... in the order
//! they are first entered; [`NO_REGION`] is outside any task). An *entry*
//! is one time a region was entered; a command belongs to the entry that
//! was innermost on its thread at its submission, and through it to every
//! entry around it.
//!
//! Kept per region (the `regions.csv` row): how many times it was entered
//! (and how many of those were never closed), its host time inclusive and
//! exclusive of the entries begun inside it, and over the commands
//! submitted inside it, nested regions included: how many, how many were
//! timed, their device time, and the *projected* device span: for each
//! entry, its commands' first device start to their last device end
//! (Nsight Systems' projection of a range onto the GPU), summed over the
//! entries. Each entry's projection is also kept, the first
//! [`MAX_KEPT_PROJECTIONS`], for the trace.
//!
//! Memory is bounded by the paths (distinct regions) and the entries still
//! open or with commands not finalised: an entry is let go once it ended
//! and every command submitted inside it was finalised.
//!
//! *Overlapped* tasks (`__itt_task_begin_overlapped`) take part in paths
//! like nested ones: a path is the open tasks in the order they began.
//! A nested task's end closes the innermost open nested task of its
//! thread; an overlapped task's end closes the open task with its id,
//! wherever it is, and tasks begun after it carry on with their own path.
//! Tasks still open when the run ends are closed at the latest time the
//! tracker saw and counted as `unclosed`.
//!
//! [`Record::RegionBegin`]: crate::record::Record::RegionBegin
//! [`Record::RegionEnd`]: crate::record::Record::RegionEnd

use rustc_hash::FxHashMap;

use crate::record::StrId;

/// A region (a path of ITT task names): 1, 2, ... in the order they were
/// first entered; [`NO_REGION`] outside any.
pub type RegionId = u32;

/// Outside any region.
pub const NO_REGION: RegionId = 0;

/// The separator between the names of a region's path in every output
/// (`step/backward`).
pub const PATH_SEPARATOR: char = '/';

/// Tasks open on one thread at most; deeper begins (and their ends) are
/// counted in [`RegionTracker::too_deep`] and not regions.
pub const MAX_DEPTH: usize = 256;

/// Entry projections kept one by one for the trace; later ones are only
/// summed.
pub const MAX_KEPT_PROJECTIONS: usize = 65_536;

/// The region a command was submitted in: its path and the entry
/// (a handle valid while the command is not finalised).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionRef {
    /// The region's path.
    pub region: RegionId,
    /// The entry (an index into the tracker's entries).
    entry: u32,
}

/// What one region cost over the run (one row of `regions.csv`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegionTotals {
    /// Times it was entered.
    pub count: u64,
    /// Entries still open when the run ended.
    pub unclosed: u64,
    /// Host time of its entries, begin to end, ns.
    pub host_ns: u64,
    /// The same less the host time of the entries begun inside them.
    pub host_self_ns: u64,
    /// Commands submitted inside it (nested regions included), finalised.
    pub commands: u64,
    /// Of those, the ones with device times (`timing` = `ok`).
    pub timed: u64,
    /// Their device time, ns.
    pub device_ns: u64,
    /// The sum over its entries of each entry's commands' first device
    /// start to last device end, ns.
    pub device_span_ns: u64,
}

/// One region: its place in the tree of paths and its totals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Its id.
    pub id: RegionId,
    /// The region it is inside ([`NO_REGION`] for an outermost one).
    pub parent: RegionId,
    /// Its innermost name (the ITT task's, interned).
    pub label: StrId,
    /// Names in its path (1 for an outermost one).
    pub depth: u32,
    /// What it cost.
    pub totals: RegionTotals,
}

/// One entry's projection onto the device: its commands' first device
/// start to last device end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Projection {
    /// The region.
    pub region: RegionId,
    /// First device start, host ns.
    pub start_ns: u64,
    /// Last device end, host ns.
    pub end_ns: u64,
}

/// A region entry that ended: what the timeline draws on its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClosedEntry {
    /// Its innermost name.
    pub label: StrId,
    /// Its begin, host ns.
    pub begin_ns: u64,
    /// Whether it began while tracing was on (a slice on the timeline).
    pub shown: bool,
}

/// One time a region was entered.
#[derive(Clone, Copy, Debug)]
struct Entry {
    region: RegionId,
    /// The entry it began inside (innermost open then on its thread).
    parent: Option<u32>,
    label: StrId,
    /// 0 for a nested task; an overlapped task's id.
    id: u64,
    begin_ns: u64,
    ended: bool,
    shown: bool,
    /// Host time of the entries begun directly inside it.
    children_ns: u64,
    /// Entries begun directly inside it not let go yet.
    live_children: u32,
    /// Commands submitted inside it (nested included), and how many of
    /// them were finalised.
    submitted: u64,
    finalised: u64,
    /// First device start and last device end of those timed.
    first_start: u64,
    last_end: u64,
}

/// A thread's open entries, in the order they began.
#[derive(Debug, Default)]
struct Stack {
    open: Vec<u32>,
    /// Nested begins past [`MAX_DEPTH`] whose ends are still to come.
    too_deep: u32,
}

/// The regions of a run, fed by the model (see the module docs).
#[derive(Debug, Default)]
pub struct RegionTracker {
    /// Index = id − 1.
    regions: Vec<Region>,
    ids: FxHashMap<(RegionId, StrId), RegionId>,
    threads: FxHashMap<u32, Stack>,
    entries: Vec<Entry>,
    free: Vec<u32>,
    kept: Vec<Projection>,
    /// Projections past [`MAX_KEPT_PROJECTIONS`] (summed only).
    pub projections_not_kept: u64,
    /// Ends with no open task to close on their thread.
    pub unmatched_ends: u64,
    /// Begins past [`MAX_DEPTH`] on one thread (with their ends, ignored).
    pub too_deep: u64,
    /// The latest time seen (a begin, an end, a submission).
    latest_ns: u64,
}

impl RegionTracker {
    /// An ITT task began on `thread` at `ns`: `id` 0 for a nested task,
    /// else the overlapped task's id; `shown` when tracing was on.
    pub fn begin(&mut self, thread: u32, label: StrId, ns: u64, id: u64, shown: bool) {
        self.latest_ns = self.latest_ns.max(ns);
        let stack = self.threads.entry(thread).or_default();
        if stack.open.len() >= MAX_DEPTH {
            self.too_deep += 1;
            if id == 0 {
                stack.too_deep += 1;
            }
            return;
        }
        let parent = stack.open.last().copied();
        let outer = parent.map_or(NO_REGION, |p| self.entries[p as usize].region);
        let region = self.intern(outer, label);
        self.regions[region as usize - 1].totals.count += 1;
        let entry = Entry {
            region,
            parent,
            label,
            id,
            begin_ns: ns,
            ended: false,
            shown,
            children_ns: 0,
            live_children: 0,
            submitted: 0,
            finalised: 0,
            first_start: u64::MAX,
            last_end: 0,
        };
        let index = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = entry;
                i
            }
            None => {
                self.entries.push(entry);
                self.entries.len() as u32 - 1
            }
        };
        if let Some(p) = parent {
            self.entries[p as usize].live_children += 1;
        }
        self.threads
            .get_mut(&thread)
            .expect("made above")
            .open
            .push(index);
    }

    /// The region of `outer` extended by `label`, made on first use.
    fn intern(&mut self, outer: RegionId, label: StrId) -> RegionId {
        if let Some(&id) = self.ids.get(&(outer, label)) {
            return id;
        }
        let depth = match outer {
            NO_REGION => 1,
            o => self.regions[o as usize - 1].depth + 1,
        };
        let id = self.regions.len() as RegionId + 1;
        self.regions.push(Region {
            id,
            parent: outer,
            label,
            depth,
            totals: RegionTotals::default(),
        });
        self.ids.insert((outer, label), id);
        id
    }

    /// Where in `thread`'s open entries the task an end with `id` closes
    /// is: the innermost nested task (`id` 0) or the overlapped task `id`.
    fn closing(&self, thread: u32, id: u64) -> Option<usize> {
        let stack = self.threads.get(&thread)?;
        stack
            .open
            .iter()
            .rposition(|&e| self.entries[e as usize].id == id)
    }

    /// The entry an end on `thread` with `id` would close, without
    /// closing it (what the trace asks before the model applies the end).
    pub fn closing_entry(&self, thread: u32, id: u64) -> Option<ClosedEntry> {
        let at = self.closing(thread, id)?;
        let e = &self.entries[self.threads[&thread].open[at] as usize];
        Some(ClosedEntry {
            label: e.label,
            begin_ns: e.begin_ns,
            shown: e.shown,
        })
    }

    /// An ITT task ended on `thread` at `ns` (`id` as for
    /// [`RegionTracker::begin`]): the entry it closed, if any.
    pub fn end(&mut self, thread: u32, ns: u64, id: u64) -> Option<ClosedEntry> {
        self.latest_ns = self.latest_ns.max(ns);
        if id == 0 {
            if let Some(stack) = self.threads.get_mut(&thread) {
                if stack.too_deep > 0 {
                    stack.too_deep -= 1;
                    return None;
                }
            }
        }
        let Some(at) = self.closing(thread, id) else {
            self.unmatched_ends += 1;
            return None;
        };
        let index = self
            .threads
            .get_mut(&thread)
            .expect("found above")
            .open
            .remove(at);
        let closed = self.close(index, ns, false);
        Some(closed)
    }

    /// Closes the entry `index` at `ns` (`unclosed`: the run ended first).
    fn close(&mut self, index: u32, ns: u64, unclosed: bool) -> ClosedEntry {
        let e = &mut self.entries[index as usize];
        e.ended = true;
        let host = ns.saturating_sub(e.begin_ns);
        let (region, parent, children) = (e.region, e.parent, e.children_ns);
        let closed = ClosedEntry {
            label: e.label,
            begin_ns: e.begin_ns,
            shown: e.shown,
        };
        let t = &mut self.regions[region as usize - 1].totals;
        t.host_ns = t.host_ns.saturating_add(host);
        t.host_self_ns = t.host_self_ns.saturating_add(host.saturating_sub(children));
        t.unclosed += u64::from(unclosed);
        if let Some(p) = parent {
            let p = &mut self.entries[p as usize];
            p.children_ns = p.children_ns.saturating_add(host);
        }
        self.let_go_if_done(index);
        closed
    }

    /// The region `thread` is in now (its innermost open entry), for a
    /// command it submits.
    pub fn current(&self, thread: u32) -> Option<RegionRef> {
        let &entry = self.threads.get(&thread)?.open.last()?;
        Some(RegionRef {
            region: self.entries[entry as usize].region,
            entry,
        })
    }

    /// Whether `thread` is inside a region now.
    pub fn in_region(&self, thread: u32) -> bool {
        self.threads
            .get(&thread)
            .is_some_and(|s| !s.open.is_empty())
    }

    /// A command was submitted in `region` at `ns`: its entry and every
    /// entry around it wait for it before they are let go.
    pub fn submitted(&mut self, region: RegionRef, ns: u64) {
        self.latest_ns = self.latest_ns.max(ns);
        let mut at = Some(region.entry);
        while let Some(i) = at {
            let e = &mut self.entries[i as usize];
            e.submitted += 1;
            at = e.parent;
        }
    }

    /// A command submitted in `region` was finalised, with its device
    /// start and end when it was timed.
    pub fn finalised(&mut self, region: RegionRef, device: Option<(u64, u64)>) {
        let mut id = region.region;
        while id != NO_REGION {
            let r = &mut self.regions[id as usize - 1];
            r.totals.commands += 1;
            if let Some((start, end)) = device {
                r.totals.timed += 1;
                r.totals.device_ns = r.totals.device_ns.saturating_add(end.saturating_sub(start));
            }
            id = r.parent;
        }
        let mut at = Some(region.entry);
        while let Some(i) = at {
            let e = &mut self.entries[i as usize];
            e.finalised += 1;
            if let Some((start, end)) = device {
                e.first_start = e.first_start.min(start);
                e.last_end = e.last_end.max(end);
            }
            at = e.parent;
            self.let_go_if_done(i);
        }
    }

    /// Lets the entry `index` go once it ended, every command inside it
    /// was finalised and no entry begun inside it is kept: its projection
    /// is added to its region's totals.
    fn let_go_if_done(&mut self, index: u32) {
        let e = self.entries[index as usize];
        if !e.ended || e.finalised < e.submitted || e.live_children > 0 {
            return;
        }
        if e.first_start != u64::MAX {
            let t = &mut self.regions[e.region as usize - 1].totals;
            let span = e.last_end.saturating_sub(e.first_start);
            t.device_span_ns = t.device_span_ns.saturating_add(span);
            if self.kept.len() < MAX_KEPT_PROJECTIONS {
                self.kept.push(Projection {
                    region: e.region,
                    start_ns: e.first_start,
                    end_ns: e.last_end,
                });
            } else {
                self.projections_not_kept += 1;
            }
        }
        // Marked free: a later finalisation never names it again.
        self.entries[index as usize].ended = false;
        self.entries[index as usize].submitted = u64::MAX;
        self.free.push(index);
        if let Some(p) = e.parent {
            let parent = &mut self.entries[p as usize];
            parent.live_children -= 1;
            self.let_go_if_done(p);
        }
    }

    /// The run ended: every entry still open is closed at the latest time
    /// seen and counted as unclosed; `closed` is told each (its thread,
    /// the entry, its end). Call after the commands were finalised (the
    /// model's finish); again, it closes what came since.
    pub fn finish(&mut self, mut closed: impl FnMut(u32, ClosedEntry, u64)) {
        let mut threads: Vec<u32> = self.threads.keys().copied().collect();
        threads.sort_unstable();
        for thread in threads {
            let open = std::mem::take(&mut self.threads.get_mut(&thread).expect("listed").open);
            // Innermost first, as they would have ended.
            for &index in open.iter().rev() {
                let entry = self.close(index, self.latest_ns, true);
                closed(thread, entry, self.latest_ns);
            }
        }
    }

    /// Every region, by id.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region with this id.
    pub fn region(&self, id: RegionId) -> Option<&Region> {
        id.checked_sub(1).and_then(|i| self.regions.get(i as usize))
    }

    /// The projections of the entries let go, the first
    /// [`MAX_KEPT_PROJECTIONS`], in the order they were let go.
    pub fn projections(&self) -> &[Projection] {
        &self.kept
    }

    /// Entries open now, over every thread.
    pub fn open_count(&self) -> usize {
        self.threads.values().map(|s| s.open.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timed(t: &mut RegionTracker, thread: u32, ns: u64, device: (u64, u64)) {
        let r = t.current(thread).unwrap();
        t.submitted(r, ns);
        t.finalised(r, Some(device));
    }

    #[test]
    fn nested_regions_add_up_inclusively() {
        let mut t = RegionTracker::default();
        // step ⊃ {forward, backward}, twice.
        for step in 0..2u64 {
            let base = step * 1000;
            t.begin(0, 1, base, 0, true);
            t.begin(0, 2, base + 10, 0, true);
            timed(&mut t, 0, base + 20, (base + 30, base + 40));
            t.end(0, base + 100, 0);
            t.begin(0, 3, base + 110, 0, true);
            timed(&mut t, 0, base + 120, (base + 130, base + 150));
            timed(&mut t, 0, base + 125, (base + 160, base + 200));
            t.end(0, base + 300, 0);
            t.end(0, base + 400, 0);
        }
        let [step, forward, backward] = t.regions() else {
            panic!("{:?}", t.regions());
        };
        assert_eq!((step.depth, forward.depth, forward.parent), (1, 2, step.id));
        assert_eq!(step.totals.count, 2);
        assert_eq!(step.totals.host_ns, 800);
        // 400 less forward's 90 and backward's 190, per step.
        assert_eq!(step.totals.host_self_ns, 2 * (400 - 90 - 190));
        assert_eq!((step.totals.commands, step.totals.device_ns), (6, 2 * 70));
        assert_eq!(
            (backward.totals.commands, backward.totals.device_ns),
            (4, 2 * 60)
        );
        // backward's projection: 130..200 per step; step's 30..200.
        assert_eq!(backward.totals.device_span_ns, 2 * 70);
        assert_eq!(step.totals.device_span_ns, 2 * 170);
        assert_eq!(forward.totals.device_span_ns, 2 * 10);
        assert_eq!(t.projections().len(), 6);
        assert_eq!(t.open_count(), 0);
        // Every entry was let go and its slot reused.
        assert!(t.entries.len() <= 3, "{}", t.entries.len());
    }

    #[test]
    fn an_entry_waits_for_its_commands_before_its_projection() {
        let mut t = RegionTracker::default();
        t.begin(7, 1, 0, 0, true);
        let r = t.current(7).unwrap();
        t.submitted(r, 5);
        t.end(7, 10, 0);
        assert_eq!(t.region(1).unwrap().totals.device_span_ns, 0);
        t.finalised(r, Some((50, 80)));
        assert_eq!(t.region(1).unwrap().totals.device_span_ns, 30);
        assert_eq!(
            t.projections(),
            [Projection {
                region: 1,
                start_ns: 50,
                end_ns: 80
            }]
        );
    }

    #[test]
    fn threads_overlapped_tasks_and_unclosed_ones() {
        let mut t = RegionTracker::default();
        t.begin(1, 1, 0, 0, true);
        t.begin(2, 2, 0, 0, false);
        assert_eq!(t.current(1).unwrap().region, 1);
        assert_eq!(t.current(2).unwrap().region, 2);
        // Overlapped 9 inside 1, then nested 3 inside it; 9 ends first.
        t.begin(1, 9, 10, 0xabc, true);
        t.begin(1, 3, 20, 0, true);
        let inner = t.current(1).unwrap().region;
        assert_eq!(t.region(inner).unwrap().depth, 3);
        assert_eq!(t.closing_entry(1, 0xabc).unwrap().label, 9);
        assert_eq!(t.end(1, 30, 0xabc).unwrap().begin_ns, 10);
        // Still in task 3 (path 1/9/3), then back in 1.
        assert_eq!(t.current(1).unwrap().region, inner);
        t.end(1, 40, 0);
        assert_eq!(t.current(1).unwrap().region, 1);
        assert!(t.end(3, 50, 0).is_none());
        assert_eq!(t.unmatched_ends, 1);
        t.begin(2, 4, 60, 0, true);
        let mut ends = Vec::new();
        t.finish(|thread, e, end| ends.push((thread, e.label, end)));
        assert_eq!(ends, [(1, 1, 60), (2, 4, 60), (2, 2, 60)]);
        assert_eq!(t.open_count(), 0);
        let unclosed: u64 = t.regions().iter().map(|r| r.totals.unclosed).sum();
        assert_eq!(unclosed, 3);
        // Closed at the latest time seen (60).
        assert_eq!(t.region(1).unwrap().totals.host_ns, 60);
    }

    #[test]
    fn too_deep_begins_and_their_ends_are_ignored() {
        let mut t = RegionTracker::default();
        for i in 0..MAX_DEPTH as u64 + 3 {
            t.begin(0, 1, i, 0, true);
        }
        assert_eq!(t.too_deep, 3);
        for i in 0..3 {
            assert!(t.end(0, 1000 + i, 0).is_none());
        }
        assert_eq!(t.open_count(), MAX_DEPTH);
        assert!(t.end(0, 2000, 0).is_some());
        assert_eq!(t.unmatched_ends, 0);
    }
}
