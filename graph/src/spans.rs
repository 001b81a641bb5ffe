//! Host-side blocking spans (waits and barriers): begin/end records paired per
//! thread and aggregated per label.

use rustc_hash::FxHashMap as HashMap;

use crate::record::{SpanKind, StrId};

/// Open spans kept per (thread, kind) before the oldest is given up; a thread
/// that begins spans without ever ending them cannot grow memory without bound.
const MAX_OPEN_PER_THREAD: usize = 256;

/// The aggregate of one kind of host span with one label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpan {
    /// Wait or barrier.
    pub kind: SpanKind,
    /// What the runtime said it waits for.
    pub label: String,
    /// Completed spans.
    pub count: u64,
    /// Their total duration, ns.
    pub total_ns: u64,
    /// The longest one, ns.
    pub max_ns: u64,
}

/// The word for a span kind in the outputs: `wait` or `barrier`.
pub fn span_kind_str(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Wait => "wait",
        SpanKind::Barrier => "barrier",
        SpanKind::Task => "task",
    }
}

/// Completed spans kept one by one (for a timeline such as a Perfetto
/// trace); past this many, later ones are only aggregated and counted.
pub const MAX_KEPT_SPANS: usize = 65_536;

/// One completed host span, as it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanRecord {
    /// Wait, barrier or ITT task.
    pub kind: SpanKind,
    /// Its label (what was waited for, or the ITT task's name).
    pub label: String,
    /// Thread number.
    pub thread: u32,
    /// Begin, host CLOCK_MONOTONIC ns.
    pub begin_ns: u64,
    /// End, host CLOCK_MONOTONIC ns.
    pub end_ns: u64,
}

/// Count, total and maximum for one (kind, label).
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    count: u64,
    total_ns: u64,
    max_ns: u64,
}

/// Pairs begin/end records and keeps the totals.
#[derive(Debug, Default)]
pub(crate) struct SpanTracker {
    /// Open spans per (thread, kind), innermost last.
    open: HashMap<(u32, SpanKind), Vec<(StrId, u64)>>,
    /// Totals per (kind, label).
    totals: HashMap<(SpanKind, StrId), Totals>,
    /// Ends with no open begin on their thread.
    pub unmatched_ends: u64,
    /// Begins given up because too many were open on one thread.
    pub abandoned_begins: u64,
    /// The first [`MAX_KEPT_SPANS`] completed spans: (kind, label, thread,
    /// begin, end).
    kept: Vec<(SpanKind, StrId, u32, u64, u64)>,
    /// Completed spans past [`MAX_KEPT_SPANS`] (aggregated only).
    pub not_kept: u64,
}

impl SpanTracker {
    /// A span begins.
    pub fn begin(&mut self, kind: SpanKind, label: StrId, thread: u32, ns: u64) {
        let stack = self.open.entry((thread, kind)).or_default();
        if stack.len() >= MAX_OPEN_PER_THREAD {
            stack.remove(0);
            self.abandoned_begins += 1;
        }
        stack.push((label, ns));
    }

    /// A span ends: pairs with the innermost open span of the same kind on the
    /// same thread.
    pub fn end(&mut self, kind: SpanKind, thread: u32, ns: u64) {
        let Some((label, begin)) = self.open.get_mut(&(thread, kind)).and_then(Vec::pop) else {
            self.unmatched_ends += 1;
            return;
        };
        self.completed(kind, label, thread, begin, ns);
    }

    /// A span paired elsewhere (an ITT task, paired by the region
    /// tracker) completed: kept and aggregated as an ended one.
    pub fn completed(&mut self, kind: SpanKind, label: StrId, thread: u32, begin: u64, ns: u64) {
        let d = ns.saturating_sub(begin);
        if self.kept.len() < MAX_KEPT_SPANS {
            self.kept.push((kind, label, thread, begin, ns));
        } else {
            self.not_kept += 1;
        }
        let t = self.totals.entry((kind, label)).or_default();
        t.count += 1;
        t.total_ns = t.total_ns.saturating_add(d);
        t.max_ns = t.max_ns.max(d);
    }

    /// The completed spans kept one by one, in the order they ended,
    /// labels resolved with `label`.
    pub fn kept(&self, label: impl Fn(StrId) -> String) -> Vec<SpanRecord> {
        self.kept
            .iter()
            .map(|&(kind, id, thread, begin_ns, end_ns)| SpanRecord {
                kind,
                label: label(id),
                thread,
                begin_ns,
                end_ns,
            })
            .collect()
    }

    /// The innermost open span of `kind` on `thread`: its label and begin
    /// (the one an end would close).
    pub fn innermost(&self, kind: SpanKind, thread: u32) -> Option<(StrId, u64)> {
        self.open.get(&(thread, kind))?.last().copied()
    }

    /// Spans begun and not ended yet.
    pub fn open_count(&self) -> usize {
        self.open.values().map(Vec::len).sum()
    }

    /// The aggregates, labels resolved with `label`, sorted by total time
    /// (largest first), then kind and label.
    pub fn spans(&self, label: impl Fn(StrId) -> String) -> Vec<HostSpan> {
        let mut out: Vec<HostSpan> = self
            .totals
            .iter()
            .map(|(&(kind, id), t)| HostSpan {
                kind,
                label: label(id),
                count: t.count,
                total_ns: t.total_ns,
                max_ns: t.max_ns,
            })
            .collect();
        out.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| span_kind_str(a.kind).cmp(span_kind_str(b.kind)))
                .then_with(|| a.label.cmp(&b.label))
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_spans_pair_innermost_first() {
        let mut t = SpanTracker::default();
        t.begin(SpanKind::Wait, 1, 0, 100);
        t.begin(SpanKind::Wait, 2, 0, 110);
        t.end(SpanKind::Wait, 0, 130); // closes label 2: 20
        t.end(SpanKind::Wait, 0, 200); // closes label 1: 100
        t.end(SpanKind::Wait, 0, 300); // nothing open
        let spans = t.spans(|id| format!("s{id}"));
        assert_eq!(spans.len(), 2);
        assert_eq!((spans[0].label.as_str(), spans[0].total_ns), ("s1", 100));
        assert_eq!((spans[1].label.as_str(), spans[1].total_ns), ("s2", 20));
        assert_eq!(t.unmatched_ends, 1);
        assert_eq!(t.open_count(), 0);
    }

    #[test]
    fn threads_and_kinds_do_not_mix() {
        let mut t = SpanTracker::default();
        t.begin(SpanKind::Wait, 1, 0, 100);
        t.begin(SpanKind::Barrier, 1, 1, 100);
        t.end(SpanKind::Wait, 1, 150); // other thread: unmatched
        t.end(SpanKind::Barrier, 0, 150); // other kind: unmatched
        assert_eq!(t.unmatched_ends, 2);
        assert_eq!(t.open_count(), 2);
        t.end(SpanKind::Barrier, 1, 170);
        let spans = t.spans(|_| "x".into());
        assert_eq!(spans[0].kind, SpanKind::Barrier);
        assert_eq!(
            (spans[0].count, spans[0].total_ns, spans[0].max_ns),
            (1, 70, 70)
        );
    }

    #[test]
    fn endless_begins_stay_bounded() {
        let mut t = SpanTracker::default();
        for i in 0..(MAX_OPEN_PER_THREAD as u64 + 10) {
            t.begin(SpanKind::Wait, 0, 0, i);
        }
        assert_eq!(t.open_count(), MAX_OPEN_PER_THREAD);
        assert_eq!(t.abandoned_begins, 10);
    }
}
