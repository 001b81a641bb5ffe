//! Device timestamps for the events the SYCL runtime signals.
//!
//! The subscriber receives a `ur_event_handle_t` with every `signal` trace
//! point. A [`TimestampSource`] keeps that event alive ([`TimestampSource::retain`],
//! on the submitting thread, cheap), later reads the device's start/end times
//! once the command completed ([`TimestampSource::read`], on the collector
//! thread) and finally lets go of it ([`TimestampSource::release`]).
//!
//! Two sources exist, both loaded at run time so that the subscriber works in
//! a process where neither library is present:
//! - [`ur`]: Unified Runtime, every backend.
//! - [`level_zero`]: Level Zero directly, for events of the Level Zero backend
//!   (kernel timestamps in device ticks, converted by [`clock`]).
//!
//! [`entry_table`] finds the runtime's table of UR entry points, where the
//! subscriber hooks the few UR calls it needs and from which it takes the
//! UR tracing layer out.
#![warn(missing_docs)]

pub mod adapter_events;
pub mod clock;
pub mod entry_table;
pub mod level_zero;
mod maps;
pub mod offset_bounds;
pub mod ur;
pub mod ur_source;

/// An opaque `ur_event_handle_t`, as delivered by the `signal` trace point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UrEvent(pub usize);

/// Why a completed command has no device times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Untimed {
    /// The queue was created without profiling.
    NoProfiling,
    /// The timestamps failed the sanity checks (end before start, absurd values).
    Invalid,
    /// The command failed, or the source could not read the event.
    Failed,
}

/// What reading an event gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readout {
    /// The command has not completed yet: ask again later.
    Pending,
    /// Device start and end, on the host CLOCK_MONOTONIC timeline, in ns.
    Times {
        /// Start of execution on the device.
        start_ns: u64,
        /// End of execution on the device.
        end_ns: u64,
    },
    /// The event's times are those of a marker the backend signals after
    /// the command's work, not of the work (a SYCL graph replay on
    /// OpenCL: see [`TimestampSource::read_as_replay`]): start and end of
    /// the marker, on the host timeline as [`Readout::Times`].
    Marker {
        /// The marker's start.
        start_ns: u64,
        /// The marker's end: the work had finished by then.
        end_ns: u64,
    },
    /// The command completed (or cannot be read) without times.
    Untimed(Untimed),
}

/// What the host saw of one device clock over the run (see
/// [`offset_bounds`]), for the summary's `host clock:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockReport {
    /// The device (`ur_device_handle_t`).
    pub device: usize,
    /// Its platform's backend (`cuda`, `opencl`, ...).
    pub backend: &'static str,
    /// Commands seen complete, each an upper bound on the offset.
    pub sightings: u64,
    /// Of them, seen complete by the program's own wait
    /// ([`TimestampSource::seen_complete`]) before the collector saw them.
    pub from_waits: u64,
    /// Commands whose own sighting lowered the offset they were placed with.
    pub capped: u64,
    /// Sightings ignored: seen complete before the runtime's end time by
    /// more than the drift allows (the end written after completion).
    pub misordered: u64,
    /// Windows (between two clock pairs) that measured the offset's bounds.
    pub windows: u64,
    /// The widest `upper − lower` of those windows, in ns.
    pub widest_ns: Option<u64>,
    /// The last window's `upper − lower`, in ns.
    pub last_width_ns: Option<u64>,
    /// How much later than the sightings the runtime's clock pair put the
    /// device clock, as last measured, in ns.
    pub pair_lateness_ns: Option<u64>,
    /// The drift the offset was last followed with, in ns per second.
    pub drift_ppb: i64,
}

/// A source of device timestamps for signalled events.
pub trait TimestampSource: Send + Sync {
    /// A short name for messages ("unified-runtime", "level-zero").
    fn name(&self) -> &'static str;
    /// Keeps `event` alive until [`TimestampSource::release`]. Called on the
    /// application's submitting thread: must not block. Returns false when
    /// the event could not be retained (then it must not be read).
    fn retain(&self, event: UrEvent) -> bool;
    /// Reads a retained event if its command completed. Never blocks.
    fn read(&self, event: UrEvent) -> Readout;
    /// Reads retained events in order, as [`TimestampSource::read`] reads
    /// one, until one is still pending (or none are left): calls `done`
    /// with each event read and its readout, and returns how many were.
    /// A source may share per-batch work among them (the clock read, the
    /// lookups of a run of events from one queue). Never blocks.
    fn read_in_order(
        &self,
        events: &mut dyn Iterator<Item = UrEvent>,
        done: &mut dyn FnMut(UrEvent, Readout),
    ) -> usize {
        read_until_pending(events, done, |event| self.read(event))
    }
    /// The retained `event` stands for a whole SYCL graph replay
    /// (`urEnqueueCommandBufferExp`'s output event): read it only through
    /// the runtime's own profiling query. A source that reads some events
    /// natively must not do so for this one: on Level Zero the replay
    /// event's native event is the one signalled after the replay's last
    /// command, and its kernel timestamps span no command. What the query
    /// spans depends on the backend (measured with DPC++ 2026.2):
    /// - Level Zero: the commands the replay ran (the adapter takes the
    ///   first start and the last end of its commands' events) when the
    ///   graph was finalised with `enable_profiling`; without it the
    ///   adapter gives no times (`NoProfiling`);
    /// - OpenCL (`clEnqueueCommandBufferKHR`'s event; Intel's CPU
    ///   runtime): a marker of 40–500 ns at the end, after the graph's
    ///   work, with or without `enable_profiling`: [`Readout::Marker`];
    /// - CUDA: a `cuEventRecord` pair around `cuGraphLaunch` on the
    ///   queue's stream (the adapter's code; not yet measured here).
    ///
    /// Called on the collector thread.
    fn read_as_replay(&self, event: UrEvent) {
        let _ = event;
    }
    /// The program saw the retained, not yet read `event` complete at
    /// host `CLOCK_MONOTONIC` `seen_ns` (its `urEventWait` returned then):
    /// when the event is read, its end is placed no later than that, and
    /// the sighting bounds its device clock's offset like the collector's
    /// own ([`crate::offset_bounds`]). Called on the collector thread.
    fn seen_complete(&self, event: UrEvent, seen_ns: u64) {
        let _ = (event, seen_ns);
    }
    /// Lets go of a retained event: [`TimestampSource::forget`] and
    /// [`TimestampSource::release_forgotten`].
    fn release(&self, event: UrEvent) {
        self.forget(event);
        self.release_forgotten(event);
    }
    /// Forgets what was remembered about a retained event that will not be
    /// read again (its sighting, its being a replay), before its release:
    /// after that its handle may name a new event. Collector thread.
    fn forget(&self, event: UrEvent) {
        let _ = event;
    }
    /// The runtime's release of a retained event already forgotten. Safe on
    /// any thread, the submitting ones included
    /// (`syclgraph::release_queue`); never blocks on the collector.
    fn release_forgotten(&self, event: UrEvent);
    /// What was seen of each device clock so far (collector thread).
    fn clock_reports(&self) -> Vec<ClockReport> {
        Vec::new()
    }
    /// Queues were created since the last call: forget anything remembered
    /// per queue handle (a handle may now name a new queue).
    fn queues_changed(&self) {}
    /// The parent of the device `device` (a `ur_device_handle_t` the
    /// runtime named, such as metadata `sycl_device`): `Some(0)` for a root
    /// device, `Some(parent)` for a sub-device (a GPU's tile), `None` when
    /// this source cannot tell. Called on the collector thread; never blocks.
    fn device_parent(&self, device: usize) -> Option<usize> {
        let _ = device;
        None
    }
}

/// The loop of [`TimestampSource::read_in_order`]: reads `events` in order
/// with `read` until one is still pending, hands each read one to `done`,
/// and returns how many were read.
pub fn read_until_pending(
    events: &mut dyn Iterator<Item = UrEvent>,
    done: &mut dyn FnMut(UrEvent, Readout),
    mut read: impl FnMut(UrEvent) -> Readout,
) -> usize {
    let mut count = 0;
    for event in events {
        let readout = read(event);
        if readout == Readout::Pending {
            break;
        }
        done(event, readout);
        count += 1;
    }
    count
}
