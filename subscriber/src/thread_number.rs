//! Small per-process thread numbers (1, 2, 3, ...) in order of first event.
//!
//! OS thread ids are large and get reused; a dense number reads better in
//! kernels.csv and costs one thread-local read.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::thread_state::STATE;

static NEXT: AtomicU32 = AtomicU32::new(1);

/// This thread's number, assigned on first call.
#[inline]
pub fn current() -> u32 {
    STATE.with(|s| {
        let n = &s.number;
        let v = n.get();
        if v != 0 {
            return v;
        }
        let v = NEXT.fetch_add(1, Ordering::Relaxed);
        n.set(v);
        v
    })
}
