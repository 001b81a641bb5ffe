//! The starts and stops of tracing, in the order they happened, on their
//! way to the collector (which records them as the tracing windows).

use crossbeam_queue::ArrayQueue;

/// Starts and stops kept for the collector (it turns them into
/// [`Record::Tracing`](syclgraph_graph::record::Record::Tracing)); full:
/// the caller counts it (`Counters::toggles_lost`).
pub struct Toggles {
    queue: ArrayQueue<(bool, u64)>,
}

impl Default for Toggles {
    fn default() -> Self {
        Toggles {
            queue: ArrayQueue::new(4096),
        }
    }
}

impl Toggles {
    /// Notes a start (`on`) or stop at `ns`; false when the queue is full.
    #[must_use]
    pub fn push(&self, on: bool, ns: u64) -> bool {
        self.queue.push((on, ns)).is_ok()
    }

    /// The next start/stop noted, oldest first.
    pub fn pop(&self) -> Option<(bool, u64)> {
        self.queue.pop()
    }
}
