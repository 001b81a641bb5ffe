//! Small per-process thread numbers (1, 2, 3, ...) in order of first event.
//!
//! OS thread ids are large and get reused; a dense number reads better in
//! kernels.csv and costs one read of the thread's state
//! ([`crate::thread_state`]).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::thread_state::ThreadState;

static NEXT: AtomicU32 = AtomicU32::new(1);

/// The number of the thread whose state `t` is, assigned on first call.
#[inline]
pub fn current(t: &ThreadState) -> u32 {
    let v = t.number.get();
    if v != 0 {
        return v;
    }
    assign(t)
}

/// Gives the thread its number (once per thread).
#[cold]
fn assign(t: &ThreadState) -> u32 {
    let v = NEXT.fetch_add(1, Ordering::Relaxed);
    t.number.set(v);
    v
}
