//! Where the timestamp source lives once loaded.
//!
//! Loading Unified Runtime's second loader instance calls back into the XPTI
//! framework (its tracing layer registers streams), which deadlocks while
//! the framework is still running our `xptiTraceInit`. So the collector
//! thread loads it right after start-up, and the callbacks look it up here:
//! one atomic load.

use std::sync::{Arc, OnceLock};

use ze_bridge::TimestampSource;

/// The state of the timestamp source.
pub enum Timing<'a> {
    /// The collector is still loading it.
    Loading,
    /// Loaded and usable.
    Ready(&'a Arc<dyn TimestampSource>),
    /// Turned off, or it could not be loaded.
    Unavailable,
}

/// A shared, set-once slot for the timestamp source.
#[derive(Clone, Default)]
pub struct TimingSlot(Arc<OnceLock<Option<Arc<dyn TimestampSource>>>>);

impl TimingSlot {
    /// An empty slot (state [`Timing::Loading`]).
    pub fn new() -> TimingSlot {
        TimingSlot::default()
    }

    /// Fills the slot once; later calls do nothing.
    pub fn fill(&self, source: Option<Arc<dyn TimestampSource>>) {
        let _ = self.0.set(source);
    }

    /// The state of the source.
    #[inline]
    pub fn state(&self) -> Timing<'_> {
        match self.0.get() {
            None => Timing::Loading,
            Some(Some(source)) => Timing::Ready(source),
            Some(None) => Timing::Unavailable,
        }
    }
}
