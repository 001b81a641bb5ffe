//! The collector: a background thread that owns the task graph.
//!
//! It takes records from the application's threads out of the
//! [`Inbox`], applies them to the graph, keeps the retained device events of
//! signalled commands and polls them (batched, adaptive interval) until the
//! device finished, then turns their timestamps into [`Record::Device`]. A
//! timed direct-path command (one `SubmittedTask`) is counted on arrival
//! ([`Record::SubmissionAnnounced`]) and its instance kept here until the
//! read, then applied whole ([`Record::TimedTask`]): it never waits in
//! the graph's pending table.
//! It also moves the following of UR calls to the adapter's dispatch table
//! ([`crate::ur_hooks`]) once it can. At exit (a
//! [`FinishRequest`]) it drains everything, gives up on events
//! still running after the drain timeout (timing `lost`), lets the
//! runtime's teardown go on, and writes the outputs beside it.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use syclgraph_graph::kind::SYCL_GRAPH_HINT;
use syclgraph_graph::record::{DeviceTimes, NodeId, Record, TimingStatus};
use ze_bridge::ur::{LoadError, UnifiedRuntime, Uninitialised};
use ze_bridge::{Readout, TimestampSource, Untimed, UrEvent};

use crate::config::Config;
use crate::control::SessionControl;
use crate::counters::Counters;
use crate::inbox::Teardown;
use crate::inbox::{FinishRequest, Inbox, Item};
use crate::recorder::Recorder;
use crate::release_queue::{IdleWatch, ReleaseQueue};
use crate::snapshot_pacing::SnapshotPacing;
use crate::timing_slot::TimingSlot;
use crate::warn;

/// A signalled device event whose command has not been read yet: its
/// command (`node`, `instance`, `event`; the rest only when announced).
struct Pending {
    task: AnnouncedTask,
    /// True when the command is a direct-path command's `SubmittedTask`
    /// applied as a [`Record::SubmissionAnnounced`]: its instance goes to
    /// the graph whole, with the device times, as a [`Record::TimedTask`].
    announced: bool,
}

impl Pending {
    /// The signalled event of an instance not announced.
    fn signalled(node: NodeId, instance: u64, event: u64) -> Pending {
        Pending {
            task: AnnouncedTask {
                node,
                instance,
                thread: 0,
                submit_ns: 0,
                begin_ns: 0,
                end_ns: 0,
                event,
            },
            announced: false,
        }
    }

    /// The event to read.
    fn event(&self) -> UrEvent {
        UrEvent(self.task.event as usize)
    }
}

/// A direct-path command's `SubmittedTask`, but its queue's previous
/// submission: what a [`Record::TimedTask`] carries besides the device
/// times (of a [`Pending`] not announced, only its command and event).
#[derive(Clone, Copy)]
struct AnnouncedTask {
    node: NodeId,
    instance: u64,
    thread: u32,
    submit_ns: u64,
    begin_ns: u64,
    end_ns: u64,
    event: u64,
}

impl AnnouncedTask {
    /// A `SubmittedTask` with a device event, taken apart: the task and its
    /// `after`. Anything else gives `None`.
    #[inline]
    fn of(record: &Record) -> Option<(AnnouncedTask, Option<(NodeId, u64)>)> {
        match *record {
            Record::SubmittedTask {
                node,
                instance,
                thread,
                submit_ns,
                after,
                begin_ns,
                end_ns,
                event: Some(event),
            } => Some((
                AnnouncedTask {
                    node,
                    instance,
                    thread,
                    submit_ns,
                    begin_ns,
                    end_ns,
                    event,
                },
                after,
            )),
            _ => None,
        }
    }

    /// The `SubmittedTask` it came as, with `after`.
    fn record(self, after: Option<(NodeId, u64)>) -> Record {
        Record::SubmittedTask {
            node: self.node,
            instance: self.instance,
            thread: self.thread,
            submit_ns: self.submit_ns,
            after,
            begin_ns: self.begin_ns,
            end_ns: self.end_ns,
            event: Some(self.event),
        }
    }
}

/// How many of the newest pending events a returned wait's event is
/// looked for among ([`Collector::wait_returned`]).
const WAITED_LOOKBACK: usize = 64;

/// Shortest and longest wait between two polls of pending events. The
/// shortest stays short: a retained event slows the OpenCL CPU runtime's
/// release of every other event of its USM pointer (measured: 2 ms instead
/// of 0.5 ms doubled the time per tiny memcpy; 0.1 ms gained nothing).
const POLL_MIN: Duration = Duration::from_micros(500);
const POLL_MAX: Duration = Duration::from_millis(50);
/// The longest wait between two batches with device timing off: no device
/// event is held, so nothing in the program waits for the collector, and
/// every wake takes the second core from the runtime's worker (on the quiet
/// 2-core machine, 40 interleaved rounds of 50,000 tiny memcpys: 1.07 of
/// the empty subscriber polling every 0.5 ms, 1.04 every 20 ms, callbacks
/// pushing nothing 1.04). See [`untimed_batch_wait`].
const UNTIMED_BATCH_WAIT_MAX: Duration = Duration::from_millis(20);

/// The wait between two batches with device timing off, for an inbox of
/// `capacity` records: the time a quarter of it takes to fill at one record
/// a microsecond (faster than any program measured here submits), within
/// [`POLL_MIN`]..[`UNTIMED_BATCH_WAIT_MAX`]. A burst wakes the collector
/// sooner: the inbox does when it is a quarter full ([`Inbox::push`]).
fn untimed_batch_wait(capacity: usize) -> Duration {
    Duration::from_micros((capacity / 4) as u64).clamp(POLL_MIN, UNTIMED_BATCH_WAIT_MAX)
}
/// Records handled between two polls while the queue is busy.
const BATCH: usize = 4096;

/// How long `ur.call.debug` keeps listening at least once the hooks are
/// in: a call that read the tracing layer's entry just before its hook
/// replaced it runs through the layer, not the hook, and is seen only on
/// the stream (its begin comes a few instructions later, or later still
/// when the thread is preempted in between). While the stream listens the
/// runtime keeps an event per UR call (about 60 bytes; ~1.5 MB in 10 ms of
/// tiny memcpys).
const HANDOVER_GRACE: Duration = Duration::from_millis(10);

/// How long at most `ur.call.debug` keeps listening for a SYCL graph call
/// that began in the layer to end (a replay runs inside its call on some
/// adapters; [`Counters::graph_calls_in_layer`]).
const HANDOVER_MAX: Duration = Duration::from_secs(1);
/// How often streamed kernels.csv rows reach the file.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The collector thread's state.
pub struct Collector {
    config: Config,
    slot: TimingSlot,
    timestamps: Option<Arc<dyn TimestampSource>>,
    counters: Arc<Counters>,
    output: crate::output::Output,
    pending: VecDeque<Pending>,
    /// Events read in this pass, released together at its end
    /// ([`Collector::release_read`]): empty between passes.
    releasing: Vec<UrEvent>,
    /// Releases the events queued for the submitting threads here once
    /// no thread took any for a while.
    idle_release: IdleWatch,
    poll_interval: Duration,
    /// True once we unsubscribed from `ur.call.debug` (hooks took over, or
    /// the UR call limit was reached).
    ur_unsubscribed: bool,
    /// How far the move to [`crate::ur_hooks`] got.
    hooks: HookState,
    /// `urQueueCreate` calls the timestamp source was told about.
    queue_creations_seen: u64,
    /// Devices (handles) already sent as [`Record::DeviceDefined`].
    devices_defined: rustc_hash::FxHashSet<u64>,
    /// Whether the timestamp source was loaded yet (see
    /// [`Collector::load_timestamps`]).
    timing: TimingStart,
    /// Our UR loader, opened at start and initialised in
    /// [`Collector::load_timestamps`].
    opened_loader: Option<Result<Uninitialised, LoadError>>,
    /// Why the UR tracing layer we turned on stayed in the call chain once
    /// the hooks were in (see [`Collector::take_out_tracing_layer`]).
    tracing_layer_kept: Option<String>,
    /// True once the start-up wait's give-up was said on stderr.
    start_wait_warned: bool,
    /// A `Submitted`/`SubmittedAfter` kept until the next record: when that
    /// is the same instance's `SignalledTask` from the same thread (a
    /// kernel's records usually come so), the two are applied as the one
    /// `SubmittedTask` they amount to (see [`Collector::handle`]).
    held_submission: Option<Record>,
    /// Timed start/stop, the toggle signal and control file, and the
    /// callbacks removed while stopped ([`crate::control`]).
    timers: crate::control::Timers,
    /// The session this collector serves, once it is published.
    session: fn() -> Option<&'static dyn SessionControl>,
    /// The nodes whose instances are SYCL graph replays: their events are
    /// read as replays ([`TimestampSource::read_as_replay`]).
    replay_nodes: rustc_hash::FxHashSet<NodeId>,
    /// Each submission's place in its in-order queue, filled in here
    /// rather than on the submitting thread.
    queue_order: crate::queue_order::QueueOrder,
    /// The submission of each timed device event, to resolve wait lists
    /// and virtual nodes here rather than on the submitting thread.
    event_owners: crate::event_owners::EventOwners,
    /// [`crate::recorder::Recorder::owners_forgotten`] when last looked at.
    owners_forgotten: u64,
}

/// The CPU time this thread has used so far (zero if it cannot be read).
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        now.tv_sec.max(0) as u64,
        now.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Whether the collector loaded its timestamp source yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimingStart {
    /// Not yet: the runtime's UR loader may still be initialising.
    Waiting,
    /// Loaded, or given up (the slot is filled either way).
    Done,
}

/// True once the runtime's own UR loader is known to be initialised: it
/// made a UR call (`ur.call.debug`). Without that stream (older runtimes,
/// no tracing layer) the first record stands for it: every record comes
/// from a submission, a queue or a wait, all made after the runtime's
/// UR start-up.
fn runtime_ur_ready(counters: &Counters) -> bool {
    counters.runtime_ur_called.load(Ordering::Relaxed)
}

/// Why the UR tracing layer we turned on must stay in the runtime's call
/// chain once the hooks are in, if it must: another XPTI subscriber is
/// loaded (it may listen to the UR streams), the user enabled other UR
/// layers (what the tracing layer calls on may be one of them: a sanitizer
/// lives in a library of its own), or UR's own call logging is on
/// (`UR_LOG_TRACING`, `SYCL_UR_TRACE`: the layer prints the calls). The
/// hooks then call on to the tracing layer, which keeps the chain as the
/// runtime built it.
fn why_the_tracing_layer_stays(counters: &Counters) -> Option<String> {
    let others = std::env::var("XPTI_SUBSCRIBERS")
        .map(|v| v.split([',', ';']).filter(|s| !s.trim().is_empty()).count() > 1)
        .unwrap_or(false);
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
    if others {
        Some("another XPTI subscriber is loaded".to_owned())
    } else if counters.other_ur_layers.load(Ordering::Relaxed) {
        Some("UR_ENABLE_LAYERS names other layers".to_owned())
    } else {
        ["UR_LOG_TRACING", "SYCL_UR_TRACE"]
            .into_iter()
            .find(|n| set(n))
            .map(|name| format!("{name} is set"))
    }
}

/// How far the collector got in following UR calls through hooks.
enum HookState {
    /// Not yet: the runtime made no UR call so far.
    Waiting,
    /// The hooks are in; `ur.call.debug` still listens until the
    /// hand-over ends ([`Collector::end_handover`]).
    HandingOver(Box<Handover>),
    /// The hooks are in.
    Installed,
    /// Not possible or not wanted here, and why.
    Off(String),
}

/// The rest of the move to hooks, done by [`Collector::end_handover`].
struct Handover {
    /// When the hooks went in.
    since: Instant,
    /// The runtime's table of UR entry points.
    table: ze_bridge::entry_table::EntryTable,
    /// Whether the tracing layer we turned on leaves the other entries too.
    skip_layer: bool,
    /// Why the layer stays otherwise (none: the user's own layer).
    must_stay: Option<String>,
}

impl Collector {
    /// A collector writing to `config.output_dir`.
    pub fn new(
        config: Config,
        slot: TimingSlot,
        counters: Arc<Counters>,
        session: fn() -> Option<&'static dyn SessionControl>,
    ) -> Collector {
        let output = crate::output::Output::new(&config);
        let timers =
            crate::control::Timers::new(config.delay, config.duration, config.output_dir.clone());
        Collector {
            timers,
            session,
            config,
            slot,
            timestamps: None,
            counters,
            output,
            pending: VecDeque::new(),
            releasing: Vec::new(),
            idle_release: IdleWatch::new(Instant::now()),
            poll_interval: POLL_MIN,
            ur_unsubscribed: false,
            hooks: HookState::Waiting,
            timing: TimingStart::Waiting,
            opened_loader: None,
            queue_creations_seen: 0,
            devices_defined: Default::default(),
            tracing_layer_kept: None,
            held_submission: None,
            start_wait_warned: false,
            replay_nodes: Default::default(),
            queue_order: Default::default(),
            event_owners: Default::default(),
            owners_forgotten: 0,
        }
    }

    /// Runs until the exit path asks it to finish ([`Inbox::request_finish`]).
    pub fn run(mut self, inbox: Arc<Inbox>) {
        let _alive = inbox.collector_guard();
        if self.config.device_timing {
            // What takes time, done while the runtime starts: mapping our
            // UR loader, reading the runtime library's symbols (the hooks).
            self.opened_loader = Some(UnifiedRuntime::open_uninitialised());
            if self.config.ur_hooks {
                ze_bridge::entry_table::read_runtime_symbols();
            }
        } else {
            self.load_timestamps();
        }
        let mut last_flush = Instant::now();
        let mut snapshots = SnapshotPacing::new(last_flush, thread_cpu_time());
        let mut idle_wait = POLL_MIN;
        let batch_wait_untimed = untimed_batch_wait(self.config.queue_capacity);
        loop {
            // The program threads' host clock: decided at the first pass,
            // fitted after 10 ms, refitted at doubling intervals up to 50 ms.
            crate::host_clock::global().maintain();
            let mut handled = 0;
            while handled < BATCH {
                let Some(record) = inbox.pop() else {
                    break;
                };
                self.handle(record);
                handled += 1;
            }
            inbox.catch_up();
            if let Some(request) = inbox.take_finish() {
                return self.finish(&inbox, request);
            }
            if self.timing == TimingStart::Waiting
                && (handled > 0 || runtime_ur_ready(&self.counters) || self.slot.requested())
            {
                self.load_timestamps();
            }
            self.warn_if_the_start_wait_gave_up();
            self.poll(inbox.to_release());
            if let Some(session) = (self.session)() {
                session.recorder().forget_old_entries();
            }
            self.follow_ur_calls();
            self.end_handover(false);
            self.unsubscribe_ur_calls_at_limit();
            let now = Instant::now();
            if now.saturating_duration_since(last_flush) >= FLUSH_EVERY {
                self.output.flush_rows();
                last_flush = now;
                // Starts/stops are timed and applied at this pace (not at
                // every pass: a pass can be as frequent as a few records).
                if let Some(session) = (self.session)() {
                    self.start_stop(session);
                }
                // Snapshots are due at most this often too.
                if (self.output.changed() || self.held_submission.is_some())
                    && snapshots.due(now, thread_cpu_time)
                {
                    let began = thread_cpu_time();
                    self.release_held_submission();
                    if self.output.snapshot() {
                        snapshots.done(began, thread_cpu_time(), Instant::now());
                    }
                }
            }
            // Records do not wake the collector one by one: while they come
            // it looks again soon (with device timing off, after a batch
            // wait they do not cut short: see UNTIMED_BATCH_WAIT_MAX); when
            // nothing came it sleeps longer.
            let untimed = !self.output.live();
            idle_wait = match (handled > 0, untimed) {
                (true, false) => POLL_MIN,
                (true, true) => batch_wait_untimed,
                (false, _) => (idle_wait * 2).min(POLL_MAX),
            };
            if handled < BATCH {
                if handled > 0 && untimed {
                    inbox.wait_for_batch(idle_wait);
                } else if self.pending.is_empty() {
                    inbox.wait(idle_wait);
                } else {
                    inbox.wait(idle_wait.min(self.poll_interval));
                }
            }
        }
    }

    /// Applies timed, signalled and file-asked starts/stops, removes or
    /// restores callbacks, and records the windows' bounds.
    fn start_stop(&mut self, session: &dyn SessionControl) {
        let (output, held) = (&self.output, &self.held_submission);
        self.timers.tick(session, || {
            // Without the live model (device timing off) nobody knows:
            // assume so, the callbacks go at the longest wait.
            held.is_some()
                || !output.live()
                || output.graph().pending().any(|(_, i)| i.end_ns.is_none())
        });
        self.apply_toggles(session);
    }

    /// Records the starts and stops noted since the last pass.
    fn apply_toggles(&mut self, session: &dyn SessionControl) {
        while let Some((on, ns)) = session.next_toggle() {
            self.output.apply(Record::Tracing { on, ns });
        }
    }

    /// Moves the following of UR calls from `ur.call.debug` to hooks in the
    /// runtime's table of UR entry points ([`crate::ur_hooks`]) once the
    /// runtime made its first UR call, then unsubscribes (here, outside any
    /// callback) and takes the tracing layer we turned on out of the other
    /// entries. Only where `ur.call.debug` exists (DPC++ 2026 and later).
    fn follow_ur_calls(&mut self) {
        if !matches!(self.hooks, HookState::Waiting)
            || !self.counters.ur_stream_registered.load(Ordering::Relaxed)
            || !runtime_ur_ready(&self.counters)
        {
            return;
        }
        if !self.config.ur_hooks {
            self.hooks = HookState::Off("SYCLGRAPH_UR_HOOKS=0".into());
            return;
        }
        let table = match ze_bridge::entry_table::find_entry_table() {
            Ok(table) => table,
            Err(e) => {
                self.hooks = HookState::Off(e);
                return;
            }
        };
        // The user's own layer stays, and is no news to them.
        let users_layer = !self
            .counters
            .tracing_layer_turned_on
            .load(Ordering::Relaxed);
        let must_stay = if users_layer {
            None
        } else {
            why_the_tracing_layer_stays(&self.counters)
        };
        let skip_layer = !users_layer && must_stay.is_none();
        let installed = match (self.session)() {
            Some(session) => session.install_ur_hooks(&table, skip_layer),
            None => return,
        };
        if let Err(e) = installed {
            self.hooks = HookState::Off(e);
            return;
        }
        self.hooks = HookState::HandingOver(Box::new(Handover {
            since: Instant::now(),
            table,
            skip_layer,
            must_stay,
        }));
    }

    /// Ends the hand-over to the hooks once [`HANDOVER_GRACE`] passed and
    /// no graph call that began in the layer is still under way (at most
    /// [`HANDOVER_MAX`]; at once with `now_anyway`): unsubscribes from
    /// `ur.call.debug` and takes the tracing layer we turned on out of the
    /// other entries.
    fn end_handover(&mut self, now_anyway: bool) {
        let HookState::HandingOver(handover) = &self.hooks else {
            return;
        };
        let waited = handover.since.elapsed();
        let under_way = self.counters.graph_calls_in_layer.load(Ordering::Relaxed) > 0;
        if !now_anyway && (waited < HANDOVER_GRACE || (under_way && waited < HANDOVER_MAX)) {
            return;
        }
        let HookState::HandingOver(handover) =
            std::mem::replace(&mut self.hooks, HookState::Installed)
        else {
            return;
        };
        self.unsubscribe_ur_calls();
        if handover.skip_layer {
            // SAFETY: we unsubscribed from the UR call stream, and no other
            // subscriber or UR log wants the layer (checked when the hooks
            // went in).
            self.tracing_layer_kept = unsafe { handover.table.bypass() }.err();
        } else {
            self.tracing_layer_kept = handover.must_stay;
        }
    }

    /// Why `ur.call.debug` served all along (see [`Losses`](crate::output::Losses)).
    fn ur_calls_via_layer(&self) -> Option<String> {
        if !self.counters.ur_stream_registered.load(Ordering::Relaxed)
            || self.counters.ur_hooks_active.load(Ordering::Relaxed)
            || self.ur_calls_off_untimed()
        {
            return None;
        }
        Some(match &self.hooks {
            HookState::Off(why) => why.clone(),
            HookState::Waiting | HookState::HandingOver(_) | HookState::Installed => {
                "the runtime made no UR call".into()
            }
        })
    }

    /// True when the runtime sent no UR call on `ur.call.debug` because
    /// device timing was off, so syclgraph left the UR tracing layer off
    /// (see [`Losses`](crate::output::Losses)).
    fn ur_calls_off_untimed(&self) -> bool {
        !self.config.device_timing
            && self.counters.ur_stream_registered.load(Ordering::Relaxed)
            && !runtime_ur_ready(&self.counters)
    }

    /// Unsubscribes from `ur.call.debug` once the callbacks saw
    /// `SYCLGRAPH_MAX_UR_CALLS` calls (here, outside any callback).
    fn unsubscribe_ur_calls_at_limit(&mut self) {
        if self.counters.ur_limit_reached.load(Ordering::Relaxed) {
            self.unsubscribe_ur_calls();
        }
    }

    /// Stops listening on `ur.call.debug`, once.
    fn unsubscribe_ur_calls(&mut self) {
        if self.ur_unsubscribed {
            return;
        }
        self.ur_unsubscribed = true;
        if let Some(session) = (self.session)() {
            session.unsubscribe_ur_calls();
        }
    }

    /// Says once on stderr that a command's callback stopped waiting for
    /// the timestamp source at `SYCLGRAPH_START_WAIT_MS` (here, not in the
    /// callback: no I/O there).
    fn warn_if_the_start_wait_gave_up(&mut self) {
        if self.start_wait_warned || !self.slot.given_up() {
            return;
        }
        self.start_wait_warned = true;
        warn(format_args!(
            "the timestamp source was not ready {} ms after the first device command (SYCLGRAPH_START_WAIT_MS); commands until it is are not timed (timing=not_ready, counted in the summary)",
            self.config.start_wait_ms
        ));
    }

    /// Loads the timestamp source (see [`TimingSlot`] for why on this
    /// thread) and publishes it to the callbacks. Called once the runtime's
    /// own UR loader finished its start-up ([`runtime_ur_ready`]), never
    /// alongside it: both loaders open the same adapter libraries, and two
    /// initialisations at once made one fail (with
    /// `UR_LAYER_FULL_VALIDATION` the runtime's then spun for good). Our
    /// loader starts with `UR_ENABLE_LOADER_INTERCEPT` and without the
    /// user's UR layers ([`crate::environment::with_own_loader_environment`]).
    fn load_timestamps(&mut self) {
        self.timing = TimingStart::Done;
        if let Some(opened) = self.opened_loader.take() {
            match load_timestamp_source(opened) {
                Ok(source) => self.timestamps = Some(source),
                Err(e) => warn(format_args!("no device timestamps: {e}")),
            }
        }
        self.slot.fill(self.timestamps.clone());
    }

    /// Applies a record in the order received, except that a submission
    /// waits for the next record: when that is its own `SignalledTask` from
    /// the same thread, both go in as one `SubmittedTask` (the graph's
    /// `property_combined_records` checks that this is the same as the two
    /// records), which a timed device command can then take past the
    /// pending table. A submission first gets its in-order queue's previous
    /// submission ([`crate::queue_order`]); a device event's owner is
    /// learnt ([`crate::event_owners`]); a dependency on a device event is
    /// resolved to that event's submission.
    fn handle(&mut self, item: Item) {
        match item {
            // A direct-path command's one record, the usual one: what
            // `handle_record` and `apply_record` do with it, without taking
            // the record apart in each step.
            Item::Record(record) => match AnnouncedTask::of(&record) {
                Some((task, None)) if self.held_submission.is_none() => {
                    // Nothing of it to free (every field was copied): its
                    // drop would only look at the variant again.
                    std::mem::forget(record);
                    self.handle_submitted_task(task)
                }
                _ => self.handle_record(record),
            },
            Item::WaitsFor { target, event } => {
                let Some(recorder) = (self.session)().map(|s| s.recorder()) else {
                    return;
                };
                if let Some(owner) = self.event_owner(recorder, event) {
                    recorder.wait_list_edge(owner, target, event, |r| self.handle_record(r));
                }
            }
            Item::WaitReturned { event, seen_ns } => self.wait_returned(event, seen_ns),
            Item::FromVirtual {
                virtual_node,
                event,
                target,
                metadata,
            } => {
                let Some(recorder) = (self.session)().map(|s| s.recorder()) else {
                    return;
                };
                let owner = self.event_owner(recorder, event);
                let edge = (virtual_node, target, *metadata);
                recorder.virtual_edge(edge, owner, |r| self.handle_record(r));
            }
        }
    }

    /// The program's wait on `event` returned at `seen_ns`: when the event
    /// is still to be read (the newest pending ones are looked at, the
    /// waited one is usually the last), the timestamp source is told.
    /// An event already read or not traced gives nothing.
    fn wait_returned(&mut self, event: u64, seen_ns: u64) {
        let Some(source) = &self.timestamps else {
            return;
        };
        let event = UrEvent(event as usize);
        if self
            .pending
            .iter()
            .rev()
            .take(WAITED_LOOKBACK)
            .any(|p| p.event() == event)
        {
            source.seen_complete(event, seen_ns);
        }
    }

    /// The submission whose device event `event` is: learnt from the
    /// records, else (an untimed event) from the recorder.
    fn event_owner(&mut self, recorder: &Recorder, event: u64) -> Option<(NodeId, u64)> {
        let forgotten = recorder.owners_forgotten();
        if forgotten != self.owners_forgotten {
            self.owners_forgotten = forgotten;
            self.event_owners.clear();
        }
        recorder
            .untimed_owner(event)
            .or_else(|| self.event_owners.owner(event))
    }

    /// [`Collector::handle_record`] of a `SubmittedTask` with an event and
    /// without its queue's previous submission yet, while no submission is
    /// held: its place in its queue, its event's owner, and its
    /// announcement when it may be announced (else
    /// [`Collector::apply_record`]).
    #[inline]
    fn handle_submitted_task(&mut self, task: AnnouncedTask) {
        let session = self.session;
        let after = self.queue_order.follow(task.node, task.instance, |queue| {
            session().is_some_and(|s| s.recorder().is_in_order(queue))
        });
        self.event_owners
            .learn_event(task.event, (task.node, task.instance));
        if task.event != 0 && crate::timing_slot::untimed_cause(task.event).is_none() {
            let graph = self.output.graph();
            if graph.may_announce(task.node) && !graph.in_region(task.thread) {
                return self.announce(task, after);
            }
        }
        self.apply_record(task.record(after));
    }

    /// Counts a timed direct-path command now ([`Record::SubmissionAnnounced`]);
    /// its instance waits here, not in the graph's pending table, and goes
    /// in whole once timed.
    #[inline]
    fn announce(&mut self, task: AnnouncedTask, after: Option<(NodeId, u64)>) {
        self.output.apply(Record::SubmissionAnnounced {
            node: task.node,
            instance: task.instance,
            after,
        });
        self.pending.push_back(Pending {
            task,
            announced: true,
        });
    }

    /// [`Collector::handle`] of a record.
    fn handle_record(&mut self, mut record: Record) {
        let session = self.session;
        self.queue_order.place(&mut record, |queue| {
            session().is_some_and(|s| s.recorder().is_in_order(queue))
        });
        self.event_owners.learn(&record);
        if let Some(held) = self.held_submission.take() {
            if let Some(combined) = combined_submission(&held, &record) {
                return self.apply_record(combined);
            }
            self.apply_record(held);
        }
        if matches!(
            record,
            Record::Submitted { .. } | Record::SubmittedAfter { .. }
        ) {
            self.held_submission = Some(record);
            return;
        }
        self.apply_record(record);
    }

    /// Applies the submission kept by [`Collector::handle`], if any.
    fn release_held_submission(&mut self) {
        if let Some(held) = self.held_submission.take() {
            self.apply_record(held);
        }
    }

    fn apply_record(&mut self, mut record: Record) {
        if let Some(untimed) = take_stand_in_event(&mut record) {
            // A device event syclgraph had but did not keep: the instance
            // is complete with this status.
            self.output.apply(record);
            self.output.apply(Record::Device(untimed));
            return;
        }
        if let Some((task, after)) = AnnouncedTask::of(&record) {
            let graph = self.output.graph();
            // A submission inside a region is not announced: the model
            // gives it its region from its thread, named by the
            // SubmittedTask itself.
            if task.event != 0 && graph.may_announce(task.node) && !graph.in_region(task.thread) {
                return self.announce(task, after);
            }
        }
        if let Record::NodeDefined(info) = &record {
            if info.kind_hint == SYCL_GRAPH_HINT {
                self.replay_nodes.insert(info.id);
            }
        }
        if let Some((node, instance, &mut event)) = device_event_of(&mut record) {
            if event != 0 {
                if !self.replay_nodes.is_empty() && self.replay_nodes.contains(&node) {
                    if let Some(source) = &self.timestamps {
                        source.read_as_replay(UrEvent(event as usize));
                    }
                }
                self.pending
                    .push_back(Pending::signalled(node, instance, event));
            }
        }
        if let Record::QueueCreated { device_handle, .. } = record {
            if device_handle != 0 {
                self.define_device(device_handle);
            }
        }
        self.output.apply(record);
    }

    /// Sends the graph a [`Record::DeviceDefined`] for `device` and each of
    /// its parents not defined yet, root first, before the first record
    /// that names it: a sub-device (a GPU's tile) is then labelled under
    /// its parent. The parents come from the timestamp source
    /// (`urDeviceGetInfo(UR_DEVICE_INFO_PARENT_DEVICE)`), loaded here if it
    /// was not yet: a queue was created, so the runtime's UR loader
    /// finished its start-up. The handles stay valid: the runtime keeps
    /// every device it made in its platform's cache until it tears down.
    /// Without a source (device timing off, or none loaded) every device
    /// is a root.
    fn define_device(&mut self, device: u64) {
        if !self.devices_defined.insert(device) {
            return;
        }
        if self.timing == TimingStart::Waiting {
            self.load_timestamps();
        }
        let mut chain = vec![(device, 0)];
        if let Some(source) = &self.timestamps {
            // A few levels at most (GPU, tile, compute slice); bounded all
            // the same.
            while chain.len() < 8 {
                let last = chain.len() - 1;
                match source.device_parent(chain[last].0 as usize) {
                    Some(parent) if parent != 0 => {
                        chain[last].1 = parent as u64;
                        if !self.devices_defined.insert(parent as u64) {
                            break;
                        }
                        chain.push((parent as u64, 0));
                    }
                    _ => break,
                }
            }
        }
        for &(device, parent) in chain.iter().rev() {
            self.output.apply(Record::DeviceDefined { device, parent });
        }
    }

    /// Reads pending events in the order they were signalled, up to the
    /// first one still running: commands mostly complete in order, so each
    /// pass costs one query per completed event plus one. Adapts the
    /// interval to whether anything completed.
    fn poll(&mut self, to_release: &ReleaseQueue) {
        let Some(source) = self.timestamps.clone() else {
            return;
        };
        let creations = self.counters.queue_creations.load(Ordering::Relaxed);
        if creations != self.queue_creations_seen {
            self.queue_creations_seen = creations;
            source.queues_changed();
        }
        let (pending, output, releasing) = (&self.pending, &mut self.output, &mut self.releasing);
        // Events are read in order: the n-th read is pending[n]'s.
        let mut read = pending.iter();
        let completed = source.read_in_order(
            &mut pending.iter().map(Pending::event),
            &mut |event, readout| {
                releasing.push(event);
                if let Some(done) = read.next() {
                    output.apply(timed_record(done, readout));
                }
            },
        );
        self.pending.drain(..completed);
        self.release_read(source.as_ref(), to_release);
        self.poll_interval = if completed > 0 {
            POLL_MIN
        } else {
            (self.poll_interval * 2).min(POLL_MAX)
        };
    }

    /// Hands the events read in this pass to the submitting threads to
    /// release ([`crate::release_queue`]), after the pass and not one by one
    /// between reads; releases them here when the queue is full, and the
    /// queued ones when no thread took any for a while. Released here
    /// between reads, each release that destroyed an event would take a
    /// lock of the device driver that the program's submissions take too:
    /// CUDA's `cuEventDestroy` takes as a writer the read-write lock that
    /// `cuEventRecord` and `cuMemcpyAsync` take as readers; on the H200,
    /// 100,000 tiny memcpys took 1.15 times as long as the program timing
    /// itself that way, 0.97 with the releases together (docs/performance.md).
    fn release_read(&mut self, source: &dyn TimestampSource, to_release: &ReleaseQueue) {
        for event in self.releasing.drain(..) {
            source.forget(event);
            if let Err(event) = to_release.hand_over(event) {
                source.release_forgotten(event);
            }
        }
        self.idle_release.check(to_release, source, Instant::now());
    }

    /// The end of the run: the last drain and every output. Never inlined:
    /// `bench/tools/report.py` tells the collector's end-of-run work from
    /// its work during the run by this function's inclusive cost.
    #[inline(never)]
    fn finish(mut self, inbox: &Inbox, request: FinishRequest) {
        let FinishRequest { teardown, reply } = request;
        // Nobody waits for a source that will not come any more.
        self.slot.fill(self.timestamps.clone());
        while let Some(record) = inbox.pop() {
            self.handle(record);
        }
        self.release_held_submission();
        if teardown == Teardown::RuntimeAlive {
            let deadline = Instant::now() + Duration::from_millis(self.config.drain_timeout_ms);
            while !self.pending.is_empty() && Instant::now() < deadline {
                self.poll(inbox.to_release());
                if !self.pending.is_empty() {
                    std::thread::sleep(POLL_MIN);
                }
            }
            // Nobody takes them any more.
            if let Some(source) = &self.timestamps {
                inbox.to_release().release_all(source.as_ref());
            }
        }
        for lost in std::mem::take(&mut self.pending) {
            if teardown == Teardown::RuntimeAlive {
                if let Some(source) = &self.timestamps {
                    source.release(lost.event());
                }
            }
            self.output
                .apply(timed_record(&lost, Readout::Untimed(Untimed::Failed)));
        }
        if let Some(session) = (self.session)() {
            self.apply_toggles(session);
        }
        if teardown == Teardown::RuntimeAlive {
            self.end_handover(true);
        } else if let HookState::HandingOver(handover) = &self.hooks {
            // The runtime is gone: nothing is taken out any more.
            self.tracing_layer_kept = handover.must_stay.clone();
        }
        let counts = self.counters.snapshot();
        let losses = crate::output::Losses {
            while_stopped: counts.while_stopped,
            edges_while_stopped: counts.edges_while_stopped,
            toggles_lost: counts.toggles_lost,
            queue_full: counts.queue_full,
            after_finish: counts.after_finish,
            without_event: counts.without_event,
            not_retained: counts.not_retained,
            behind: counts.behind,
            before_timing_ready: counts.before_timing_ready,
            start_wait: self.slot.waited(),
            start_wait_given_up: self.slot.given_up().then_some(self.config.start_wait_ms),
            unknown_edge_end: counts.unknown_edge_end,
            unseen_enqueues: counts.unseen_enqueues,
            native_refused: counts.native_refused,
            queues_forced: counts.queues_forced,
            ur_call_limit: counts.ur_limit_reached.then_some(self.config.max_ur_calls),
            timing_unavailable: self.config.device_timing && self.timestamps.is_none(),
            // Our own tallies: no UR call, so after the teardown too.
            host_clock: self
                .timestamps
                .as_ref()
                .map_or_else(Vec::new, |s| s.clock_reports()),
            ur_calls_via_layer: self.ur_calls_via_layer(),
            ur_calls_off_untimed: self.ur_calls_off_untimed(),
            tracing_layer_kept: self.tracing_layer_kept.clone(),
            sycl_graphs: (self.session)()
                .map_or_else(Default::default, |s| s.recorder().graphs.losses()),
            region_never_entered: self.config.region.clone().filter(|_| {
                !self
                    .counters
                    .captured_region_entered
                    .load(Ordering::Relaxed)
            }),
        };
        // Nothing below calls the runtime: its teardown goes on beside the
        // writing (XPTI alone frees its trace points for ~4 µs a kernel
        // there), and the library's unload waits for the second signal.
        // A program that dies in that teardown (a crash in a driver's
        // destructor, an exit handler's `_exit`) leaves a whole journal,
        // which `syclgraph run` converts.
        self.output.flush_journal();
        let _ = reply.send(());
        match self.output.finish(&losses) {
            Ok(()) => crate::job::finished(&self.config.output_dir),
            Err(e) => warn(format_args!(
                "could not write the outputs to {}: {e}",
                self.config.output_dir.display()
            )),
        }
        crate::output_dir::release_output_dir(&self.config.output_dir);
        let _ = reply.send(());
    }
}

/// Unified Runtime for every backend, with Level Zero read directly where
/// its loader is present.
fn load_timestamp_source(
    opened: Result<Uninitialised, LoadError>,
) -> Result<Arc<dyn TimestampSource>, String> {
    let ur = opened
        .and_then(|loader| crate::environment::with_own_loader_environment(|| loader.init()))
        .map_err(|e| e.to_string())?;
    let mut source = ze_bridge::ur_source::UrTimestampSource::new(Arc::new(ur));
    if let Ok(level_zero) = ze_bridge::level_zero::LevelZero::load() {
        source = source.with_level_zero(Arc::new(level_zero));
    }
    Ok(Arc::new(source))
}

/// The command and the device event a record signals (0: none), for the
/// records that carry one from the recorder.
fn device_event_of(record: &mut Record) -> Option<(NodeId, u64, &mut u64)> {
    match record {
        Record::Signal {
            node,
            instance,
            event,
        }
        | Record::SignalledTask {
            node,
            instance,
            event,
            ..
        }
        | Record::SubmittedTask {
            node,
            instance,
            event: Some(event),
            ..
        } => Some((*node, *instance, event)),
        _ => None,
    }
}

/// When `record` carries a stand-in for a device event syclgraph did not
/// keep ([`crate::timing_slot::untimed_cause`]), replaces it by 0 (no event
/// to read) and returns the device times that say why.
fn take_stand_in_event(record: &mut Record) -> Option<DeviceTimes> {
    let (node, instance, event) = device_event_of(record)?;
    let status = crate::timing_slot::untimed_cause(*event)?;
    *event = 0;
    Some(DeviceTimes {
        node,
        instance,
        status,
        start_ns: 0,
        end_ns: 0,
    })
}

/// `held` (a `Submitted` or `SubmittedAfter`) and `next` as the one
/// `SubmittedTask` they amount to, when `next` is the same instance's
/// `SignalledTask` on the same thread.
fn combined_submission(held: &Record, next: &Record) -> Option<Record> {
    let (node, instance, thread, submit_ns, after) = match *held {
        Record::Submitted {
            node,
            instance,
            thread,
            ns,
        } => (node, instance, thread, ns, None),
        Record::SubmittedAfter {
            node,
            instance,
            thread,
            ns,
            after,
        } => (node, instance, thread, ns, Some(after)),
        _ => return None,
    };
    match *next {
        Record::SignalledTask {
            node: task_node,
            instance: task_instance,
            thread: task_thread,
            begin_ns,
            end_ns,
            event,
        } if (task_node, task_instance, task_thread) == (node, instance, thread) => {
            Some(Record::SubmittedTask {
                node,
                instance,
                thread,
                submit_ns,
                after,
                begin_ns,
                end_ns,
                event: Some(event),
            })
        }
        _ => None,
    }
}

/// The record that gives the graph what reading `done`'s event gave: a
/// [`Record::Device`], or the whole instance of an announced command.
fn timed_record(done: &Pending, readout: Readout) -> Record {
    let (status, start_ns, end_ns) = match readout {
        Readout::Times { start_ns, end_ns } => (TimingStatus::Ok, start_ns, end_ns),
        Readout::Marker { start_ns, end_ns } => (TimingStatus::Marker, start_ns, end_ns),
        Readout::Untimed(Untimed::NoProfiling) => (TimingStatus::NoProfiling, 0, 0),
        Readout::Untimed(Untimed::Invalid) => (TimingStatus::Invalid, 0, 0),
        Readout::Untimed(Untimed::Failed) | Readout::Pending => (TimingStatus::Lost, 0, 0),
    };
    let task = &done.task;
    match done.announced {
        true => Record::TimedTask {
            node: task.node,
            instance: task.instance,
            thread: task.thread,
            submit_ns: task.submit_ns,
            begin_ns: task.begin_ns,
            end_ns: task.end_ns,
            event: task.event,
            device_status: status,
            device_start_ns: start_ns,
            device_end_ns: end_ns,
        },
        false => Record::Device(DeviceTimes {
            node: task.node,
            instance: task.instance,
            status,
            start_ns,
            end_ns,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_untimed_batch_wait_follows_the_inbox_size() {
        // The default inbox (65,536 records) waits 16.4 ms, under the cap.
        assert_eq!(untimed_batch_wait(65_536), Duration::from_micros(16_384));
        assert_eq!(untimed_batch_wait(1 << 26), UNTIMED_BATCH_WAIT_MAX);
        // A small inbox is drained as often as with device timing on.
        assert_eq!(untimed_batch_wait(1_024), POLL_MIN);
        assert_eq!(untimed_batch_wait(16), POLL_MIN);
    }

    fn submitted(thread: u32) -> Record {
        Record::Submitted {
            node: 3,
            instance: 7,
            thread,
            ns: 100,
        }
    }

    fn signalled_task(instance: u64, thread: u32) -> Record {
        Record::SignalledTask {
            node: 3,
            instance,
            thread,
            begin_ns: 110,
            end_ns: 150,
            event: 0xabc0,
        }
    }

    #[test]
    fn a_submission_and_its_signalled_task_on_its_thread_make_one_record() {
        assert_eq!(
            combined_submission(&submitted(1), &signalled_task(7, 1)),
            Some(Record::SubmittedTask {
                node: 3,
                instance: 7,
                thread: 1,
                submit_ns: 100,
                after: None,
                begin_ns: 110,
                end_ns: 150,
                event: Some(0xabc0),
            })
        );
        let after = Record::SubmittedAfter {
            node: 3,
            instance: 7,
            thread: 1,
            ns: 100,
            after: (2, 9),
        };
        match combined_submission(&after, &signalled_task(7, 1)) {
            Some(Record::SubmittedTask { after, .. }) => assert_eq!(after, Some((2, 9))),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_stand_in_event_becomes_no_event_and_its_status() {
        use crate::timing_slot::{NOT_READY_EVENT, NOT_RETAINED_EVENT};
        let mut record = signalled_task(7, 1);
        assert_eq!(take_stand_in_event(&mut record), None, "a real event stays");
        assert_eq!(record, signalled_task(7, 1));
        for (event, status) in [
            (NOT_READY_EVENT, TimingStatus::NotReady),
            (NOT_RETAINED_EVENT, TimingStatus::NotRetained),
        ] {
            let mut record = Record::SubmittedTask {
                node: 3,
                instance: 7,
                thread: 1,
                submit_ns: 100,
                after: None,
                begin_ns: 110,
                end_ns: 150,
                event: Some(event),
            };
            let times = take_stand_in_event(&mut record).expect("a stand-in");
            assert_eq!((times.node, times.instance, times.status), (3, 7, status));
            assert!(matches!(
                record,
                Record::SubmittedTask { event: Some(0), .. }
            ));
            let mut signal = Record::Signal {
                node: 3,
                instance: 8,
                event,
            };
            assert_eq!(
                take_stand_in_event(&mut signal).map(|t| t.status),
                Some(status)
            );
            assert!(matches!(signal, Record::Signal { event: 0, .. }));
        }
    }

    #[test]
    fn anything_else_is_not_combined() {
        for (held, next) in [
            (submitted(1), signalled_task(8, 1)),
            (submitted(1), signalled_task(7, 2)),
            (submitted(1), submitted(1)),
            (signalled_task(7, 1), signalled_task(7, 1)),
        ] {
            assert_eq!(combined_submission(&held, &next), None);
        }
    }
}
