//! [`UrTimestampSource`]: device times of signalled events through Unified
//! Runtime, on the host `CLOCK_MONOTONIC` timeline.
//!
//! # Reading an event
//!
//! 1. The event's device (event → queue, then queue → device once per
//!    queue) and, once per device, its platform's backend and its clock
//!    offset (below).
//! 2. On a Level Zero platform with a [`NativeLevelZero`] reader attached,
//!    except for a SYCL graph replay's event
//!    ([`TimestampSource::read_as_replay`]): unless
//!    `urEventGetInfo(COMMAND_EXECUTION_STATUS)` says `COMPLETE` the event
//!    is [`Readout::Pending`]; otherwise the native event and device handles
//!    go to the reader and its [`Readout`] is returned as is.
//! 3. On OpenCL, `urEventGetProfilingInfo(END)` first: a completed command
//!    has it, so one query stands for the status. When it fails the status
//!    decides: not complete is [`Readout::Pending`]; complete means the
//!    command may have completed right after the query, so `END` is asked
//!    once more, and now `PROFILING_INFO_NOT_AVAILABLE` is
//!    [`Untimed::NoProfiling`], any other error (or an `ERROR` status)
//!    [`Untimed::Failed`]. Everywhere else the status first (CUDA's
//!    adapter answers a time query of a running command by waiting for
//!    it), then `END`. Then `(START)`. The host clock read right after the
//!    query that found the command complete is its sighting.
//! 4. [`to_host_times`] converts them (checks: [`Untimed::Invalid`]) with
//!    the offset [`crate::offset_bounds`] chooses from the clock pairs and
//!    the sightings.
//!    A SYCL graph replay's event on an OpenCL platform times a marker
//!    after the replay's work ([`TimestampSource::read_as_replay`]): its
//!    times come back as [`Readout::Marker`].
//!
//! # Clocks
//!
//! UR profiling values are device nanoseconds. `urDeviceGetGlobalTimestamps`
//! returns a device time `D` and a host time `H` read together, but which
//! host clock `H` is on is the adapter's business. So every calibration
//! samples `CLOCK_MONOTONIC` just before (`m0`) and just after (`m1`) the call:
//! if `m0 ≤ H ≤ m1`, `H` is on `CLOCK_MONOTONIC` and is used; otherwise the
//! midpoint of `[m0, m1]` stands for the instant `D` was read. Of three such
//! samples the one with the narrowest `[m0, m1]` wins. The offset is
//! `H − D`; it is kept per device and taken again after
//! [`RECALIBRATE_AFTER_NS`], so a device clock that drifts is followed.
//!
//! Observed with DPC++ 2026.2's OpenCL CPU device (Intel OpenCL 2026.22 on an
//! AMD EPYC): the adapter's `clGetDeviceAndHostTimer` reads `CLOCK_MONOTONIC`
//! for *both* values (an `LD_PRELOAD` shim on `clock_gettime` saw clock id 1
//! twice per call), `H` always fell inside `[m0, m1]`, `D − H` was 30–180 ns,
//! and profiling START of a command lay between two `CLOCK_MONOTONIC` reads
//! around its submission and wait. The device clock *is* `CLOCK_MONOTONIC`
//! there, and the offset is a few tens of ns.
//!
//! The start is converted and the duration (`end − start`) added to it, so
//! `end_ns − start_ns` is exactly the device's duration.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::offset_bounds::OffsetBounds;
use crate::ur::{
    self, Backend, EventStatus, NativeHandle, ProfilingInfo, UnifiedRuntime, UrDevice, UrQueue,
};
use crate::{ClockReport, Readout, TimestampSource, Untimed, UrEvent};

/// Durations above this (one hour) are taken as garbage.
pub const MAX_DURATION_NS: u64 = 3600 * 1_000_000_000;

/// Converted starts further than this (one hour) from the calibration are
/// taken as garbage.
pub const MAX_SYNC_DISTANCE_NS: u64 = 3600 * 1_000_000_000;

/// A device's offset is measured again when it is older than this (250
/// ms): CUDA's event clock on the H200 drifted 4.7–5.7 µs a second against
/// `CLOCK_MONOTONIC`, and not at one rate (see [`crate::offset_bounds`]).
pub const RECALIBRATE_AFTER_NS: u64 = 250_000_000;

/// How many events `retain` asks for their queue's device, at most, while
/// no lookup has succeeded yet.
const RETAIN_LOOKUPS: u32 = 16;

/// How often a queue's device is asked before the event counts as failed.
const QUEUE_DEVICE_ATTEMPTS: usize = 8;

/// Calibration samples taken; the narrowest bracket wins.
const CALIBRATION_SAMPLES: usize = 5;

/// Reads Level Zero kernel timestamps from native handles.
///
/// [`crate::level_zero::LevelZero`] implements it by forwarding to its
/// `kernel_times(ze_event_handle_t, ze_device_handle_t)`; the handles arrive
/// as UR gives them (`ur_native_handle_t`: the `ze_*_handle_t` pointer as an
/// integer). A trait so that tests can stand in for Level Zero.
pub trait NativeLevelZero: Send + Sync {
    /// Device start/end of a completed command on the host `CLOCK_MONOTONIC`
    /// timeline. `event` is the `ze_event_handle_t` and `device` the
    /// `ze_device_handle_t` of the UR event and device.
    fn kernel_times(&self, event: NativeHandle, device: NativeHandle) -> Readout;
}

impl NativeLevelZero for crate::level_zero::LevelZero {
    fn kernel_times(&self, event: NativeHandle, device: NativeHandle) -> Readout {
        // UR's native handles of a Level Zero event and device are the
        // `ze_event_handle_t` and `ze_device_handle_t` themselves.
        crate::level_zero::LevelZero::kernel_times(
            self,
            event.0 as ze_sys::ze_event_handle_t,
            device.0 as ze_sys::ze_device_handle_t,
        )
    }
}

/// One calibration sample: `CLOCK_MONOTONIC` before, the device/host pair,
/// `CLOCK_MONOTONIC` after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CalibrationSample {
    /// `CLOCK_MONOTONIC` just before `urDeviceGetGlobalTimestamps`.
    pub mono_before: u64,
    /// The device time it returned.
    pub device_ns: u64,
    /// The host time it returned (any clock).
    pub host_ns: u64,
    /// `CLOCK_MONOTONIC` just after.
    pub mono_after: u64,
}

/// Which host value a calibration used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostReference {
    /// The adapter's host time, found inside the `CLOCK_MONOTONIC` bracket.
    AdapterHost,
    /// The bracket's midpoint (the adapter's host time is on another clock).
    BracketMidpoint,
}

/// A device clock's offset to `CLOCK_MONOTONIC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calibration {
    /// `CLOCK_MONOTONIC − device clock`, in ns.
    pub offset_ns: i64,
    /// `CLOCK_MONOTONIC` of the instant the pair stands for.
    pub at_mono_ns: u64,
    /// Width of the bracket of the sample used (the uncertainty bound).
    pub bracket_ns: u64,
    /// Where the host side came from.
    pub host: HostReference,
    /// The largest `mono_before − device` of the samples: the device half
    /// of a pair is read after its `mono_before`, so the offset is at least
    /// this (`None` outside `i64`).
    pub lower_ns: Option<i64>,
    /// The smallest `mono_after − device`: the device half is read before
    /// the call returned, so the offset is at most this.
    pub upper_ns: Option<i64>,
}

/// The offset from the best of `samples` (narrowest bracket; the first on
/// ties). `None` without a usable sample (`mono_after < mono_before`, or an
/// offset outside `i64`).
pub fn calibrate(samples: &[CalibrationSample]) -> Option<Calibration> {
    let best = samples
        .iter()
        .filter(|s| s.mono_after >= s.mono_before)
        .min_by_key(|s| s.mono_after - s.mono_before)?;
    let (host, reference) = if (best.mono_before..=best.mono_after).contains(&best.host_ns) {
        (best.host_ns, HostReference::AdapterHost)
    } else {
        (
            best.mono_before + (best.mono_after - best.mono_before) / 2,
            HostReference::BracketMidpoint,
        )
    };
    let offset = i64::try_from(i128::from(host) - i128::from(best.device_ns)).ok()?;
    let lower_ns = samples
        .iter()
        .filter(|s| s.mono_after >= s.mono_before)
        .filter_map(|s| i64::try_from(i128::from(s.mono_before) - i128::from(s.device_ns)).ok())
        .max();
    let upper_ns = samples
        .iter()
        .filter(|s| s.mono_after >= s.mono_before)
        .filter_map(|s| i64::try_from(i128::from(s.mono_after) - i128::from(s.device_ns)).ok())
        .min();
    Some(Calibration {
        offset_ns: offset,
        at_mono_ns: host,
        bracket_ns: best.mono_after - best.mono_before,
        host: reference,
        lower_ns,
        upper_ns,
    })
}

/// Device `start`/`end` (ns) on the host timeline through `calibration`.
///
/// [`Untimed::Invalid`] when: start and end are both 0 (never written); end
/// before start; a duration above [`MAX_DURATION_NS`]; a converted start more
/// than [`MAX_SYNC_DISTANCE_NS`] from the calibration instant; a result
/// outside `0..=u64::MAX`.
pub fn to_host_times(calibration: &Calibration, start: u64, end: u64) -> Readout {
    const INVALID: Readout = Readout::Untimed(Untimed::Invalid);
    if (start == 0 && end == 0) || end < start {
        return INVALID;
    }
    let duration = end - start;
    if duration > MAX_DURATION_NS {
        return INVALID;
    }
    let Ok(start_ns) = u64::try_from(i128::from(start) + i128::from(calibration.offset_ns)) else {
        return INVALID;
    };
    if start_ns.abs_diff(calibration.at_mono_ns) > MAX_SYNC_DISTANCE_NS {
        return INVALID;
    }
    match start_ns.checked_add(duration) {
        Some(end_ns) => Readout::Times { start_ns, end_ns },
        None => INVALID,
    }
}

/// What is remembered per device.
#[derive(Clone, Copy, Debug)]
struct DeviceEntry {
    backend: Option<Backend>,
    native: Option<NativeHandle>,
    /// `None`: the last calibration failed (retried after the interval).
    calibration: Option<Calibration>,
    calibrated_at_mono: u64,
    /// Where the device's [`OffsetBounds`] are in [`ClockState::bounds`].
    bounds: usize,
}

/// What the host saw of the device clocks (the collector's thread only):
/// each device's [`OffsetBounds`], at the index its [`DeviceEntry`] keeps
/// (no lookup per event), and the event last found still running, with
/// the host time read before the query that said so: when it is read
/// complete its end bounds its clock's offset from below. One lock for a
/// whole batch of reads ([`TimestampSource::read_in_order`]).
#[derive(Default)]
struct ClockState {
    bounds: Vec<(UrDevice, OffsetBounds)>,
    running: Option<(UrEvent, u64)>,
}

impl ClockState {
    /// The index of `device`'s bounds, added when new.
    fn index(&mut self, device: UrDevice) -> usize {
        match self.bounds.iter().position(|(d, _)| *d == device) {
            Some(index) => index,
            None => {
                self.bounds.push((device, OffsetBounds::default()));
                self.bounds.len() - 1
            }
        }
    }
}

/// A [`TimestampSource`] over [`UnifiedRuntime`]; see the module docs.
pub struct UrTimestampSource {
    ur: Arc<UnifiedRuntime>,
    level_zero: Option<Arc<dyn NativeLevelZero>>,
    devices: Mutex<FxHashMap<UrDevice, DeviceEntry>>,
    /// What the host saw of each device's clock.
    clock: Mutex<ClockState>,
    /// Every device a queue lookup gave: when it is one, it stands in for
    /// an event whose queue cannot be asked (seen on DPC++ 2025.0:
    /// urQueueGetInfo answers INVALID_SIZE for some events' queues).
    seen_devices: Mutex<Vec<UrDevice>>,
    /// Set once a queue lookup succeeded (then `retain` stops looking).
    device_seen: AtomicBool,
    /// Lookups `retain` may still try before a success (it runs on the
    /// application's thread: bounded, in case every lookup fails).
    retain_lookups_left: AtomicU32,
    /// Queue → device, valid for one [`Self::queue_generation`].
    queue_devices: Mutex<(u64, FxHashMap<UrQueue, UrDevice>)>,
    /// Bumped by [`TimestampSource::queues_changed`].
    queue_generation: AtomicU64,
    /// Retained events named by [`TimestampSource::read_as_replay`]: never
    /// read natively; on OpenCL, markers. Looked at only while it is not
    /// empty.
    replays: Mutex<FxHashSet<usize>>,
    /// How many events `replays` holds.
    replay_count: AtomicUsize,
    /// Events the program's waits saw complete before they were read, with
    /// the host time of that sighting ([`TimestampSource::seen_complete`]).
    /// Looked at only while it is not empty.
    waited: Mutex<FxHashMap<usize, u64>>,
    /// How many events `waited` holds.
    waited_count: AtomicUsize,
    /// Set once the built-in adapter's event functions were looked for
    /// ([`UrTimestampSource::call_adapter_directly`]).
    adapter_looked_for: AtomicBool,
}

impl std::fmt::Debug for UrTimestampSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrTimestampSource")
            .field("ur", &self.ur)
            .field("level_zero", &self.level_zero.is_some())
            .finish_non_exhaustive()
    }
}

impl UrTimestampSource {
    /// A source reading every event through `ur`.
    pub fn new(ur: Arc<UnifiedRuntime>) -> Self {
        UrTimestampSource {
            ur,
            level_zero: None,
            devices: Mutex::new(FxHashMap::default()),
            clock: Mutex::new(ClockState::default()),
            seen_devices: Mutex::new(Vec::new()),
            device_seen: AtomicBool::new(false),
            retain_lookups_left: AtomicU32::new(RETAIN_LOOKUPS),
            queue_devices: Mutex::new((0, FxHashMap::default())),
            queue_generation: AtomicU64::new(0),
            replays: Mutex::new(FxHashSet::default()),
            replay_count: AtomicUsize::new(0),
            waited: Mutex::new(FxHashMap::default()),
            waited_count: AtomicUsize::new(0),
            adapter_looked_for: AtomicBool::new(false),
        }
    }

    /// The first time an event is read: when it is an event of the OpenCL
    /// adapter built into the runtime, the runtime's event calls go to that
    /// adapter directly from now on, not through the loader
    /// ([`crate::adapter_events`]). Anything else keeps the loader.
    fn call_adapter_directly(&self, event: UrEvent) {
        if self.adapter_looked_for.swap(true, Ordering::Relaxed) {
            return;
        }
        // SAFETY: `event` is retained and live (the caller reads it).
        if let Ok(adapter) = unsafe { crate::adapter_events::find_built_in_adapter_events(event.0) }
        {
            // SAFETY: found and checked as the functions the loader
            // dispatches such an event to; they live in the runtime
            // library, mapped until it tears down, after which no call is
            // made (module contract of `ur`).
            unsafe { self.ur.call_adapter_directly(adapter) };
        }
    }

    /// Whether `event` was named by [`TimestampSource::read_as_replay`].
    fn is_replay(&self, event: UrEvent) -> bool {
        self.replay_count.load(Ordering::Relaxed) > 0
            && self
                .replays
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&event.0)
    }

    /// Events of Level Zero platforms are read by `level_zero` instead.
    pub fn with_level_zero(mut self, level_zero: Arc<dyn NativeLevelZero>) -> Self {
        self.level_zero = Some(level_zero);
        self
    }

    /// The runtime this source calls.
    pub fn runtime(&self) -> &Arc<UnifiedRuntime> {
        &self.ur
    }

    /// The current calibration of `device` (measured now if missing or stale).
    pub fn calibration(&self, device: UrDevice) -> Option<Calibration> {
        let mut clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        self.device_entry(&mut clock, device, monotonic_ns())
            .calibration
    }

    /// What is remembered of `device`, calibrated again when the last
    /// calibration is older than [`RECALIBRATE_AFTER_NS`] at `now`.
    fn device_entry(&self, clock: &mut ClockState, device: UrDevice, now: u64) -> DeviceEntry {
        let mut devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = devices.get(&device) {
            if now.saturating_sub(entry.calibrated_at_mono) < RECALIBRATE_AFTER_NS {
                return *entry;
            }
        }
        let (backend, native) = match devices.get(&device) {
            Some(entry) => (entry.backend, entry.native),
            None => {
                let backend = self
                    .ur
                    .device_platform(device)
                    .and_then(|p| self.ur.platform_backend(p))
                    .ok();
                let native = if backend == Some(Backend::LEVEL_ZERO) && self.level_zero.is_some() {
                    self.ur.device_native_handle(device).ok()
                } else {
                    None
                };
                (backend, native)
            }
        };
        let calibration = self.measure(device);
        let bounds = clock.index(device);
        if let Some(c) = &calibration {
            clock.bounds[bounds]
                .1
                .new_window(c.offset_ns, c.lower_ns, c.upper_ns, c.at_mono_ns);
        }
        let entry = DeviceEntry {
            backend,
            native,
            calibration,
            calibrated_at_mono: now,
            bounds,
        };
        devices.insert(device, entry);
        entry
    }

    /// Samples `device`'s clock against the host's ([`RECALIBRATE_AFTER_NS`]
    /// apart). Never inlined: `bench/tools/report.py` tells this work, paced
    /// on the clock and not on commands, by its name.
    #[inline(never)]
    fn measure(&self, device: UrDevice) -> Option<Calibration> {
        let mut samples = [CalibrationSample {
            mono_before: 0,
            device_ns: 0,
            host_ns: 0,
            mono_after: 0,
        }; CALIBRATION_SAMPLES];
        for sample in &mut samples {
            let mono_before = monotonic_ns();
            let (device_ns, host_ns) = self.ur.device_global_timestamps(device).ok()?;
            let mono_after = monotonic_ns();
            *sample = CalibrationSample {
                mono_before,
                device_ns,
                host_ns,
                mono_after,
            };
        }
        calibrate(&samples)
    }

    /// The device seen, when only one was.
    fn only_device(&self) -> Option<UrDevice> {
        match self
            .seen_devices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_slice()
        {
            [device] => Some(*device),
            _ => None,
        }
    }

    fn read_profiling(&self, event: UrEvent, what: ProfilingInfo) -> Result<u64, Untimed> {
        self.ur.event_profiling(event, what).map_err(|e| {
            if e.is_profiling_not_available() {
                Untimed::NoProfiling
            } else {
                Untimed::Failed
            }
        })
    }

    /// `event`, of a command not yet complete when the host clock read
    /// `before`, is the one whose end will bound its clock from below.
    fn note_running(clock: &mut ClockState, event: UrEvent, before: u64) {
        clock.running = Some((event, before));
    }

    /// The offset to place a command of `device` with whose end is `end`
    /// (device ns), seen complete at host `seen_ns` (see
    /// [`OffsetBounds::place`]).
    /// `waited`: when the program's wait saw the event complete; earlier
    /// than the collector's sighting, it moves the sighting to that moment.
    #[allow(clippy::too_many_arguments)]
    fn place(
        clock: &mut ClockState,
        entry: &DeviceEntry,
        event: UrEvent,
        end: u64,
        seen_ns: u64,
        waited: Option<u64>,
        pair: i64,
    ) -> i64 {
        let bounds = &mut clock.bounds[entry.bounds].1;
        let seen_ns = match waited {
            Some(at) if at < seen_ns => {
                bounds.from_waits += 1;
                at
            }
            _ => seen_ns,
        };
        if let Some((seen_running, before)) = clock.running {
            if seen_running == event {
                bounds.still_running(end, before);
                clock.running = None;
            }
        }
        bounds.place(end, seen_ns, pair)
    }

    /// When the program's wait saw `event` complete, if it did; forgets it.
    fn take_waited(&self, event: UrEvent) -> Option<u64> {
        if self.waited_count.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut waited = self.waited.lock().unwrap_or_else(PoisonError::into_inner);
        let at = waited.remove(&event.0);
        if at.is_some() {
            self.waited_count.fetch_sub(1, Ordering::Relaxed);
        }
        at
    }

    /// What the host saw of each device clock, for the summary.
    pub fn clock_reports(&self) -> Vec<ClockReport> {
        let devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        let clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut reports: Vec<ClockReport> = clock
            .bounds
            .iter()
            .filter(|(_, b)| b.total_sightings > 0)
            .map(|(device, b)| ClockReport {
                device: device.0,
                backend: devices
                    .get(device)
                    .and_then(|e| e.backend)
                    .map_or("unknown", backend_name),
                sightings: b.total_sightings,
                from_waits: b.from_waits,
                capped: b.capped,
                misordered: b.misordered,
                windows: b.windows + u64::from(b.open_width_ns().is_some()),
                widest_ns: match (b.widest_ns, b.open_width_ns()) {
                    (Some(w), Some(o)) => Some(w.max(o)),
                    (w, o) => w.or(o),
                },
                last_width_ns: b.open_width_ns().or(b.last_width_ns),
                pair_lateness_ns: b.lateness_ns,
                drift_ppb: b.slope_ppb(),
            })
            .collect();
        reports.sort_by_key(|r| r.device);
        reports
    }

    /// Reads one event (`clock`: the host's view of the clocks, locked by
    /// the caller for the batch); `now` is the time the calibration's age is checked
    /// against, `last` the queue of the previous event of the same batch
    /// with its device's entry (taken without any lookup when this event
    /// is from the same queue), `before` a host time read before this
    /// event's first query (moved on to the time it was seen complete).
    fn read_inner(
        &self,
        clock: &mut ClockState,
        event: UrEvent,
        now: u64,
        last: &mut Option<(UrQueue, DeviceEntry)>,
        before: &mut u64,
    ) -> Result<Readout, Untimed> {
        if !self.adapter_looked_for.load(Ordering::Relaxed) {
            self.call_adapter_directly(event);
        }
        let queue = self.ur.event_queue(event);
        let entry = match (queue, *last) {
            (Ok(queue), Some((last_queue, entry))) if queue == last_queue => entry,
            (queue, _) => {
                let device = match queue.and_then(|q| self.queue_device(q)) {
                    Ok(device) => device,
                    Err(_) => self.only_device().ok_or(Untimed::Failed)?,
                };
                let entry = self.device_entry(clock, device, now);
                *last = queue.ok().map(|q| (q, entry));
                entry
            }
        };

        let replay = self.is_replay(event);
        if let (Some(lz), Some(Backend::LEVEL_ZERO), Some(native_device)) =
            (&self.level_zero, entry.backend, entry.native)
        {
            if !replay {
                if self.status(event)? != EventStatus::Complete {
                    return Ok(Readout::Pending);
                }
                if let Ok(native_event) = self.ur.event_native_handle(event) {
                    return Ok(lz.kernel_times(native_event, native_device));
                }
            }
        }

        let (end, seen_ns) = if entry.backend == Some(Backend::OPENCL) {
            // The end time first: OpenCL has it only once the command
            // completed, so for the usual completed event that one query
            // replaces a status query; the status is asked only when it
            // is not there.
            let end = match self.ur.event_profiling(event, ProfilingInfo::End) {
                Ok(end) => end,
                Err(_) => {
                    if self.status(event)? != EventStatus::Complete {
                        Self::note_running(clock, event, *before);
                        return Ok(Readout::Pending);
                    }
                    // Complete now; it may have completed just after the
                    // first query, so ask again before calling it untimed.
                    self.read_profiling(event, ProfilingInfo::End)?
                }
            };
            (end, monotonic_ns())
        } else {
            // The status first: CUDA's adapter answers a time query by
            // waiting for the event (`cuEventSynchronize`), which would
            // make the collector wait on the device for every command
            // still running, in the driver the program submits through.
            if self.status(event)? != EventStatus::Complete {
                Self::note_running(clock, event, *before);
                return Ok(Readout::Pending);
            }
            let seen_ns = monotonic_ns();
            (self.read_profiling(event, ProfilingInfo::End)?, seen_ns)
        };
        *before = seen_ns;
        let start = self.read_profiling(event, ProfilingInfo::Start)?;
        let mut calibration = entry.calibration.ok_or(Untimed::Failed)?;
        // Level Zero's other events are read natively on the ze-bridge
        // clock's one pair: a replay read here keeps the same offset, so
        // the two stay on one timeline.
        if end >= start && end != 0 && entry.backend != Some(Backend::LEVEL_ZERO) {
            let waited = self.take_waited(event);
            calibration.offset_ns = Self::place(
                clock,
                &entry,
                event,
                end,
                seen_ns,
                waited,
                calibration.offset_ns,
            );
        }
        let times = to_host_times(&calibration, start, end);
        Ok(match times {
            Readout::Times { start_ns, end_ns }
                if replay && entry.backend == Some(Backend::OPENCL) =>
            {
                Readout::Marker { start_ns, end_ns }
            }
            times => times,
        })
    }

    /// The command's status; running, submitted and queued are one answer.
    fn status(&self, event: UrEvent) -> Result<EventStatus, Untimed> {
        match self.ur.event_status(event).map_err(|_| Untimed::Failed)? {
            EventStatus::Complete => Ok(EventStatus::Complete),
            EventStatus::Running | EventStatus::Submitted | EventStatus::Queued => {
                Ok(EventStatus::Running)
            }
            EventStatus::Error | EventStatus::Other(_) => Err(Untimed::Failed),
        }
    }

    /// The device of `queue`, asked once per queue (a retained event keeps
    /// its queue alive; [`TimestampSource::queues_changed`] empties the
    /// cache when queues were made, so a new queue at a freed queue's
    /// address is asked again).
    fn queue_device(&self, queue: UrQueue) -> Result<UrDevice, ur::UrError> {
        let mut cache = self
            .queue_devices
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let generation = self.queue_generation.load(Ordering::Relaxed);
        if cache.0 != generation {
            cache.1.clear();
            cache.0 = generation;
        }
        if let Some(device) = cache.1.get(&queue) {
            return Ok(*device);
        }
        // DPC++ 2025.0's OpenCL adapter answered INVALID_SIZE to 6 of 10
        // calls for one queue in one run, the other 4 succeeding (whether
        // by chance or once the SYCL queue was gone is not known): ask
        // again before `only_device` has to stand in.
        let mut answer = self.ur.queue_device(queue);
        for _ in 0..QUEUE_DEVICE_ATTEMPTS - 1 {
            if answer.is_ok() {
                break;
            }
            answer = self.ur.queue_device(queue);
        }
        let device = answer?;
        cache.1.insert(queue, device);
        let mut seen = self.seen_devices.lock().unwrap_or_else(|e| e.into_inner());
        if !seen.contains(&device) {
            seen.push(device);
        }
        self.device_seen.store(true, Ordering::Relaxed);
        Ok(device)
    }
}

impl TimestampSource for UrTimestampSource {
    fn name(&self) -> &'static str {
        "unified-runtime"
    }

    fn retain(&self, event: UrEvent) -> bool {
        if self.ur.event_retain(event).is_err() {
            return false;
        }
        if !self.device_seen.load(Ordering::Relaxed)
            && self
                .retain_lookups_left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
        {
            // Until one queue lookup succeeded, try one here, while the
            // event's queue surely lives: the collector may read the event
            // only after the application destroyed the queue, when asking
            // it can fail, and `only_device` then needs a device seen.
            let _ = self
                .ur
                .event_queue(event)
                .and_then(|q| self.queue_device(q));
        }
        true
    }

    fn read(&self, event: UrEvent) -> Readout {
        let mut clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut before = monotonic_ns();
        self.read_inner(&mut clock, event, before, &mut None, &mut before)
            .unwrap_or_else(Readout::Untimed)
    }

    fn read_in_order(
        &self,
        events: &mut dyn Iterator<Item = UrEvent>,
        done: &mut dyn FnMut(UrEvent, Readout),
    ) -> usize {
        // One clock read and, per run of events from one queue, one
        // queue and device lookup for the whole batch.
        let mut clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        let now = monotonic_ns();
        let mut last = None;
        let mut before = now;
        crate::read_until_pending(events, done, |event| {
            self.read_inner(&mut clock, event, now, &mut last, &mut before)
                .unwrap_or_else(Readout::Untimed)
        })
    }

    fn read_as_replay(&self, event: UrEvent) {
        let mut replays = self.replays.lock().unwrap_or_else(PoisonError::into_inner);
        if replays.insert(event.0) {
            self.replay_count.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn seen_complete(&self, event: UrEvent, seen_ns: u64) {
        let mut waited = self.waited.lock().unwrap_or_else(PoisonError::into_inner);
        let at = waited.entry(event.0).or_insert_with(|| {
            self.waited_count.fetch_add(1, Ordering::Relaxed);
            seen_ns
        });
        *at = (*at).min(seen_ns);
    }

    fn forget(&self, event: UrEvent) {
        // An event released unread (untimed, lost) forgets its sighting.
        let _ = self.take_waited(event);
        if self.replay_count.load(Ordering::Relaxed) > 0 {
            let mut replays = self.replays.lock().unwrap_or_else(PoisonError::into_inner);
            if replays.remove(&event.0) {
                self.replay_count.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    fn release_forgotten(&self, event: UrEvent) {
        // Nothing to do about a failed release: the event is not read again.
        let _ = self.ur.event_release(event);
    }

    fn queues_changed(&self) {
        self.queue_generation.fetch_add(1, Ordering::Relaxed);
    }

    fn clock_reports(&self) -> Vec<ClockReport> {
        UrTimestampSource::clock_reports(self)
    }

    fn device_parent(&self, device: usize) -> Option<usize> {
        match self.ur.device_parent(UrDevice(device)) {
            Ok(parent) => Some(parent.map_or(0, |p| p.0)),
            Err(_) => None,
        }
    }
}

/// The backend's short name in the summary.
fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::OPENCL => "opencl",
        Backend::LEVEL_ZERO => "level_zero",
        Backend::CUDA => "cuda",
        Backend::HIP => "hip",
        Backend::NATIVE_CPU => "native_cpu",
        _ => "unknown",
    }
}

/// Now on the host `CLOCK_MONOTONIC` timeline, in ns: the one host clock
/// every syclgraph time is on (the subscriber reads it too).
#[inline]
pub fn monotonic_ns() -> u64 {
    // CLOCK_MONOTONIC cannot fail on Linux; 0 would only mean "unknown".
    ze_sys::host::now_ns(ze_sys::host::CLOCK_MONOTONIC).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(
        mono_before: u64,
        device_ns: u64,
        host_ns: u64,
        mono_after: u64,
    ) -> CalibrationSample {
        CalibrationSample {
            mono_before,
            device_ns,
            host_ns,
            mono_after,
        }
    }

    fn cal(offset_ns: i64, at_mono_ns: u64) -> Calibration {
        Calibration {
            offset_ns,
            at_mono_ns,
            bracket_ns: 0,
            host: HostReference::AdapterHost,
            lower_ns: None,
            upper_ns: None,
        }
    }

    const INVALID: Readout = Readout::Untimed(Untimed::Invalid);

    #[test]
    fn host_inside_bracket_is_used() {
        // As observed on the OpenCL CPU device: host on CLOCK_MONOTONIC,
        // device 180 ns later.
        let c = calibrate(&[sample(1_000, 1_250, 1_070, 1_500)]).unwrap();
        assert_eq!(c.host, HostReference::AdapterHost);
        assert_eq!(c.offset_ns, -180);
        assert_eq!(c.at_mono_ns, 1_070);
        assert_eq!(c.bracket_ns, 500);
    }

    #[test]
    fn host_on_another_clock_falls_back_to_the_midpoint() {
        // Host value on CLOCK_MONOTONIC_RAW, far from the bracket.
        let c = calibrate(&[sample(10_000, 7_000_000, 9_000_000_000, 10_400)]).unwrap();
        assert_eq!(c.host, HostReference::BracketMidpoint);
        assert_eq!(c.at_mono_ns, 10_200);
        assert_eq!(c.offset_ns, 10_200 - 7_000_000);
    }

    #[test]
    fn narrowest_bracket_wins() {
        let c = calibrate(&[
            sample(0, 100, 50, 1_000),
            sample(2_000, 2_100, 2_010, 2_030),
            sample(3_000, 3_100, 3_050, 3_900),
        ])
        .unwrap();
        assert_eq!(c.bracket_ns, 30);
        assert_eq!(c.offset_ns, 2_010 - 2_100);
        // Ties keep the first; backwards brackets are ignored.
        let c = calibrate(&[sample(10, 0, 12, 5), sample(0, 7, 1, 2), sample(3, 9, 4, 5)]).unwrap();
        assert_eq!(c.offset_ns, 1 - 7);
        assert_eq!(calibrate(&[]), None);
        assert_eq!(calibrate(&[sample(10, 0, 12, 5)]), None);
    }

    #[test]
    fn every_sample_bounds_the_offset() {
        // The device half of each pair is read inside its bracket: the
        // offset is at least the largest `before - device` and at most the
        // smallest `after - device` of all samples, whichever was used.
        let c = calibrate(&[
            sample(1_000, 930, 1_020, 1_100),
            sample(2_000, 1_950, 2_010, 2_040),
            sample(3_000, 2_950, 3_010, 3_500),
        ])
        .unwrap();
        assert_eq!(c.offset_ns, 60);
        assert_eq!(c.lower_ns, Some(70));
        assert_eq!(c.upper_ns, Some(90));
    }

    #[test]
    fn offset_outside_i64_is_no_calibration() {
        assert_eq!(
            calibrate(&[sample(u64::MAX - 1, 0, u64::MAX, u64::MAX)]),
            None
        );
    }

    #[test]
    fn conversion_keeps_the_duration_exact() {
        let c = cal(-180, 5_000_000_000);
        assert_eq!(
            to_host_times(&c, 5_000_000_180, 5_000_021_200),
            Readout::Times {
                start_ns: 5_000_000_000,
                end_ns: 5_000_021_020
            }
        );
        // A device clock far behind the host.
        let c = cal(4_000_000_000, 5_000_000_000);
        assert_eq!(
            to_host_times(&c, 1_000_000_000, 1_000_000_001),
            Readout::Times {
                start_ns: 5_000_000_000,
                end_ns: 5_000_000_001
            }
        );
        // Zero-length commands are fine.
        assert_eq!(
            to_host_times(&cal(0, 10), 10, 10),
            Readout::Times {
                start_ns: 10,
                end_ns: 10
            }
        );
    }

    #[test]
    fn sanity_checks() {
        let c = cal(0, 2 * MAX_DURATION_NS);
        // never written, end before start
        assert_eq!(to_host_times(&c, 0, 0), INVALID);
        assert_eq!(
            to_host_times(&c, MAX_DURATION_NS + 2, MAX_DURATION_NS + 1),
            INVALID
        );
        // exactly one hour is accepted, one ns more is not
        let s = MAX_DURATION_NS;
        assert_eq!(
            to_host_times(&c, s, s + MAX_DURATION_NS),
            Readout::Times {
                start_ns: s,
                end_ns: s + MAX_DURATION_NS
            }
        );
        assert_eq!(to_host_times(&c, s, s + MAX_DURATION_NS + 1), INVALID);
        // start more than an hour from the calibration instant
        assert_eq!(to_host_times(&c, s - 1, s), INVALID);
        assert_eq!(to_host_times(&c, 3 * s + 1, 3 * s + 2), INVALID);
        // before host time 0, past u64::MAX
        assert_eq!(to_host_times(&cal(-1_000, 0), 500, 600), INVALID);
        assert_eq!(
            to_host_times(&cal(10, u64::MAX), u64::MAX - 5, u64::MAX - 1),
            INVALID
        );
    }

    #[test]
    fn monotonic_clock_moves_forward() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(a > 0 && b >= a);
        // Same clock as std's Instant on Linux: within a second of each other
        // is all we can say without a raw view of Instant.
        let t = std::time::Instant::now();
        let c = monotonic_ns();
        assert!(t.elapsed().as_secs() < 1 && c >= b);
    }
}
