//! Capture by region name (`SYCLGRAPH_REGION=NAME`, `syclgraph run
//! --region NAME`): a thread's submissions are recorded only while an ITT
//! task named NAME is open on it.
//!
//! Two levels:
//! - per thread ([`begin`], [`end`], on its [`CaptureState`]): which of
//!   its open ITT tasks are NAME's. A nested task's end closes its
//!   innermost open nested task, so a bit per depth says whether that one
//!   was NAME (depths from 64 on are never captured); an overlapped NAME
//!   task is kept by its id (four at once at most). The recorder asks
//!   [`inside`] at each node_create (one load: a thread outside submits
//!   as when tracing is stopped);
//! - per process ([`crate::session::Session`]): how many threads are
//!   inside NAME. Tracing is on while that is above 0 *and* the other
//!   start/stop settings (`SYCLGRAPH_START=paused`, a delay, ITT
//!   pause/resume, the C API, the signal, the control file) have it on;
//!   each change is a start or stop, so `windows.csv` lists the windows
//!   and, between them, everything passes at the stopped cost.

use crate::thread_state::CaptureState;

/// An ITT task began on this thread (`named`: it is NAME's; `id`: 0 for a
/// nested task, the overlapped task's id otherwise). True when the
/// thread just entered NAME (no NAME task was open on it).
#[inline]
pub fn begin(c: &CaptureState, named: bool, id: u64) -> bool {
    if id != 0 {
        if !named {
            return false;
        }
        let Some(slot) = c.overlapped.iter().find(|s| s.get() == 0) else {
            return false;
        };
        slot.set(id);
        return open_one(c);
    }
    let depth = c.nested.get();
    c.nested.set(depth.saturating_add(1));
    if !named || depth >= 64 {
        return false;
    }
    c.named.set(c.named.get() | 1 << depth);
    open_one(c)
}

/// An ITT task ended on this thread (`id` as for [`begin`]). True when
/// the thread just left NAME (the last NAME task open on it ended).
#[inline]
pub fn end(c: &CaptureState, id: u64) -> bool {
    if id != 0 {
        let Some(slot) = c.overlapped.iter().find(|s| s.get() == id) else {
            return false;
        };
        slot.set(0);
        return close_one(c);
    }
    let Some(depth) = c.nested.get().checked_sub(1) else {
        // No nested task open (begun before tracing started): nothing.
        return false;
    };
    c.nested.set(depth);
    if depth >= 64 || c.named.get() & (1 << depth) == 0 {
        return false;
    }
    c.named.set(c.named.get() & !(1 << depth));
    close_one(c)
}

/// Whether a NAME task is open on this thread.
#[inline(always)]
pub fn inside(c: &CaptureState) -> bool {
    c.open.get() > 0
}

fn open_one(c: &CaptureState) -> bool {
    let open = c.open.get();
    c.open.set(open + 1);
    open == 0
}

fn close_one(c: &CaptureState) -> bool {
    let open = c.open.get().saturating_sub(1);
    c.open.set(open);
    open == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_names_enter_once_and_leave_once() {
        let c = CaptureState::new();
        assert!(!begin(&c, false, 0)); // step
        assert!(begin(&c, true, 0)); // backward: entered
        assert!(!begin(&c, false, 0)); // an op inside
        assert!(!begin(&c, true, 0)); // backward inside backward
        assert!(inside(&c));
        assert!(!end(&c, 0));
        assert!(!end(&c, 0)); // the op
        assert!(end(&c, 0)); // backward: left
        assert!(!inside(&c));
        assert!(!end(&c, 0)); // step
        assert!(!end(&c, 0)); // an end with nothing open
        assert_eq!((c.nested.get(), c.named.get(), c.open.get()), (0, 0, 0));
    }

    #[test]
    fn overlapped_names_are_kept_by_id() {
        let c = CaptureState::new();
        assert!(begin(&c, true, 5));
        assert!(!begin(&c, false, 6));
        assert!(!begin(&c, true, 0));
        assert!(!end(&c, 5)); // the nested one is still open
        assert!(!end(&c, 6));
        assert!(end(&c, 0));
        for id in 1..=5 {
            begin(&c, true, id);
        }
        // The fifth one found no slot.
        assert_eq!(c.open.get(), 4);
        assert!(!end(&c, 5));
    }

    #[test]
    fn deep_names_are_not_captured() {
        let c = CaptureState::new();
        for _ in 0..64 {
            begin(&c, false, 0);
        }
        assert!(!begin(&c, true, 0));
        assert!(!inside(&c));
        assert!(!end(&c, 0));
        assert_eq!(c.nested.get(), 64);
    }
}
