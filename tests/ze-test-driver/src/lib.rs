//! A Level Zero *driver* with scripted timestamps, for tests of the bridge
//! against the real Level Zero loader, and of syclgraph on the Unified
//! Runtime's Level Zero adapter.
//!
//! The loader (Debian `libze1` 1.8.12) loads this library instead of the GPU
//! drivers when a test sets
//! `ZE_ENABLE_ALT_DRIVERS=/path/to/libze_test_driver.so` before the loader
//! initialises. It finds the driver's entry points through the exported
//! `zeGet*ProcAddrTable` functions. This file implements the global, driver,
//! device, context, event pool and event entries the bridge uses; `sim.c`
//! (C, against the loader's own headers) adds what the runtime's Level Zero
//! adapter needs to run USM copies and fills and SYCL graphs of them: more
//! driver, device and context entries, memory, command queues, command lists
//! (immediate and regular), fences, the host side of events, and the mutable
//! command list extension (`ZE_experimental_mutable_command_list` 1.1, which
//! the adapter needs to finalise an updatable graph; its updates are
//! accepted, there being no kernels to change). Every other slot stays null,
//! and the loader answers `ZE_RESULT_ERROR_UNINITIALIZED` for it.
//!
//! It still exports *every* table getter the 1.8.12 loader has (23 `ze`,
//! 13 `zet`, 17 `zes`), most of them filling an all-null table: that loader's
//! `zeInit` fetches all its tables through its own getters, a loader getter
//! fails when no driver exports it, and any failure (except for the optional
//! `ze*Exp` tables and `zetMetricGroupExp`) makes `zeInit` return
//! `ZE_RESULT_ERROR_UNINITIALIZED` and leaves the `ze` tables after the failing
//! one unfetched (`zeEventPoolCreate` then fails too). Measured by leaving
//! getters out one at a time.
//!
//! It has one driver with one GPU device. What the device reports comes from
//! the environment variable `ZE_TEST_DRIVER_SCRIPT`, read once at the first
//! `zeInit`.
//!
//! # Script format
//!
//! Statements separated by newlines or `;`; `#` starts a comment; numbers are
//! decimal or `0x` hexadecimal.
//!
//! | statement | meaning | default |
//! |---|---|---|
//! | `timer_hz N` | device timer frequency in cycles per second | `12500000` |
//! | `kernel_bits N` | `kernelTimestampValidBits` | `32` |
//! | `timestamp_bits N` | `timestampValidBits` | `36` |
//! | `sync HOST DEVICE` | what `zeDeviceGetGlobalTimestamps` returns (host ns, device ticks) | `0 0` |
//! | `event I START END [pending K] [result R]` | the event created with `desc.index == I` | none |
//! | `command N START END` | device times (ticks) of the `N`-th copy or fill executed (from 0) | see below |
//! | `command_ticks N` | how long a copy or fill without a `command` statement takes | `100` |
//!
//! `zeDeviceGetProperties` reports `timerResolution` as `timer_hz` when asked
//! with `stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2` (cycles/s) and as
//! `1_000_000_000 / timer_hz` (ns per cycle, truncated) for any other stype,
//! like a driver of API version ≥ 1.2 does.
//!
//! **Scripted events.** `zeEventQueryKernelTimestamp` on an event with an
//! `event` statement returns `ZE_RESULT_NOT_READY` for its first `K` calls
//! (`pending K`, default 0), then `R` (`result R`, default
//! `ZE_RESULT_SUCCESS`) with `global` and `context` both set to
//! `{START, END}` when `R` is success. `zeEventQueryStatus` returns
//! `NOT_READY` while calls to `zeEventQueryKernelTimestamp` are still owed,
//! `SUCCESS` after, and does not count as one. Each created event counts on its
//! own.
//!
//! **Commands.** Every other event is signalled by the command it is given
//! to (or by the host) and reset by a reset; its kernel timestamps are those
//! of that command. Commands run on the host when they are appended to an
//! immediate command list, or when a queue executes a regular one, so an
//! event is signalled by the time the call returns. The device clock starts
//! at the `sync` statement's device ticks; a copy or fill without a `command`
//! statement starts where the clock is and takes `command_ticks`; a barrier
//! or a signal takes no time. The clock never goes back.
//!
//! A script that does not parse makes `zeInit` fail with
//! `ZE_RESULT_ERROR_UNINITIALIZED` after printing the reason on stderr.
//! `ZE_TEST_DRIVER_LOG` set makes the driver name on stderr the extension
//! functions it was asked for and does not have.
//!
//! Every exported function catches panics and returns
//! `ZE_RESULT_ERROR_UNKNOWN` instead of unwinding into the C++ loader.
#![warn(missing_docs)]

use std::collections::{HashMap, HashSet};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use ze_sys::*;

/// The environment variable holding the script.
pub const SCRIPT_ENV: &str = "ZE_TEST_DRIVER_SCRIPT";

/// One scripted event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedEvent {
    /// Kernel start, device ticks.
    pub start: u64,
    /// Kernel end, device ticks.
    pub end: u64,
    /// Number of `zeEventQueryKernelTimestamp` calls answered `NOT_READY`.
    pub pending: u32,
    /// What the query returns once no longer pending.
    pub result: ze_result_t,
}

/// What the device reports, parsed from [`SCRIPT_ENV`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// Timer frequency, cycles per second.
    pub timer_hz: u64,
    /// `kernelTimestampValidBits`.
    pub kernel_bits: u32,
    /// `timestampValidBits`.
    pub timestamp_bits: u32,
    /// `zeDeviceGetGlobalTimestamps`: (host ns, device ticks).
    pub sync: (u64, u64),
    /// Events by `ze_event_desc_t::index`.
    pub events: HashMap<u32, ScriptedEvent>,
    /// Device times (start, end ticks) of executed commands, by their number
    /// in execution order (from 0).
    pub commands: HashMap<u32, (u64, u64)>,
    /// How long a command not named by a `command` statement takes, ticks.
    pub command_ticks: u64,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            timer_hz: 12_500_000,
            kernel_bits: 32,
            timestamp_bits: 36,
            sync: (0, 0),
            events: HashMap::new(),
            commands: HashMap::new(),
            command_ticks: 100,
        }
    }
}

fn number(word: Option<&str>, what: &str) -> Result<u64, String> {
    let word = word.ok_or_else(|| format!("missing {what}"))?;
    let parsed = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => word.replace('_', "").parse::<u64>(),
    };
    parsed.map_err(|e| format!("bad {what} {word:?}: {e}"))
}

fn small(word: Option<&str>, what: &str) -> Result<u32, String> {
    let n = number(word, what)?;
    u32::try_from(n).map_err(|_| format!("{what} {n} does not fit in 32 bits"))
}

impl Script {
    /// Parses the script format described in the crate documentation.
    pub fn parse(text: &str) -> Result<Script, String> {
        let mut script = Script::default();
        for statement in text.split(['\n', ';']) {
            let statement = statement.split('#').next().unwrap_or("").trim();
            let mut words = statement.split_whitespace();
            let Some(keyword) = words.next() else {
                continue;
            };
            match keyword {
                "timer_hz" => {
                    script.timer_hz = number(words.next(), "timer_hz")?;
                    if script.timer_hz == 0 {
                        return Err("timer_hz must not be 0".into());
                    }
                }
                "kernel_bits" => script.kernel_bits = small(words.next(), "kernel_bits")?,
                "timestamp_bits" => script.timestamp_bits = small(words.next(), "timestamp_bits")?,
                "sync" => {
                    let host = number(words.next(), "sync host ns")?;
                    let device = number(words.next(), "sync device ticks")?;
                    script.sync = (host, device);
                }
                "event" => {
                    let index = small(words.next(), "event index")?;
                    let mut event = ScriptedEvent {
                        start: number(words.next(), "event start")?,
                        end: number(words.next(), "event end")?,
                        pending: 0,
                        result: ze_result_t::SUCCESS,
                    };
                    while let Some(option) = words.next() {
                        match option {
                            "pending" => event.pending = small(words.next(), "pending count")?,
                            "result" => event.result = ze_result_t(small(words.next(), "result")?),
                            other => return Err(format!("unknown event option {other:?}")),
                        }
                    }
                    script.events.insert(index, event);
                }
                "command" => {
                    let index = small(words.next(), "command number")?;
                    let start = number(words.next(), "command start")?;
                    let end = number(words.next(), "command end")?;
                    if end < start {
                        return Err(format!("command {index} ends before it starts"));
                    }
                    script.commands.insert(index, (start, end));
                }
                "command_ticks" => script.command_ticks = number(words.next(), "command_ticks")?,
                other => return Err(format!("unknown statement {other:?}")),
            }
            if let Some(extra) = words.next() {
                return Err(format!("unexpected {extra:?} in {statement:?}"));
            }
        }
        Ok(script)
    }
}

static SCRIPT: OnceLock<Result<Script, String>> = OnceLock::new();

fn script() -> Result<&'static Script, ze_result_t> {
    SCRIPT
        .get_or_init(|| {
            let text = std::env::var(SCRIPT_ENV).unwrap_or_default();
            let parsed = Script::parse(&text);
            if let Err(e) = &parsed {
                eprintln!("ze-test-driver: {SCRIPT_ENV}: {e}");
            }
            parsed
        })
        .as_ref()
        .map_err(|_| ze_result_t::ERROR_UNINITIALIZED)
}

// ---------------------------------------------------------------------------
// Objects behind the handles
// ---------------------------------------------------------------------------

/// How many driver tables the loader may fetch, each with its own driver and
/// device handles.
const TABLES: usize = 8;

/// The driver and its device, one pair per driver table the loader fetched:
/// their handles are these statics' addresses.
///
/// The 1.8.12 loader wraps each driver and device handle in an object it
/// keeps by the handle's value, holding a pointer into its list of drivers. A
/// program that calls `zeDriverGet` and then `zeLoaderInit` (the Unified
/// Runtime's Level Zero adapter does) makes the loader fetch the tables again
/// into a reallocated list, and the objects it kept for the first handles
/// then point at freed memory (`zeDeviceGet` jumps to address 8). Handing out
/// a new driver (and device) handle with each fetched driver table, and
/// answering `zeDriverGet` only from the newest table, gives the loader fresh
/// objects instead.
static DRIVERS: [u64; TABLES] = [0xd1; TABLES];
static DEVICES: [u64; TABLES] = [0xde; TABLES];

/// How many times the loader fetched the driver table.
static DRIVER_TABLES: AtomicUsize = AtomicUsize::new(0);

fn driver_handle_of(table: usize) -> ze_driver_handle_t {
    std::ptr::addr_of!(DRIVERS[table]) as ze_driver_handle_t
}

fn device_handle_of(table: usize) -> ze_device_handle_t {
    std::ptr::addr_of!(DEVICES[table]) as ze_device_handle_t
}

fn is_driver(h_driver: ze_driver_handle_t) -> bool {
    (0..TABLES).any(|i| driver_handle_of(i) == h_driver)
}

fn is_device(h_device: ze_device_handle_t) -> bool {
    (0..TABLES).any(|i| device_handle_of(i) == h_device)
}

/// The device of the newest driver table.
fn device_handle() -> ze_device_handle_t {
    let newest = DRIVER_TABLES.load(Ordering::SeqCst).clamp(1, TABLES) - 1;
    device_handle_of(newest)
}

struct Context {
    /// Keeps the type sized, so each `Box` gets its own address.
    _id: u64,
}

struct EventPool {
    count: u32,
}

struct Event {
    /// The `event` statement of its index: its answers then follow the script.
    scripted: Option<ScriptedEvent>,
    /// `NOT_READY` answers still owed (scripted events).
    pending: AtomicU32,
    /// Signalled by a command or the host, cleared by a reset (other events).
    signalled: AtomicBool,
    /// Device times of the command that signalled it, ticks.
    start: AtomicU64,
    end: AtomicU64,
}

/// The device's clock and the number of the next copy or fill, in ticks.
struct DeviceClock {
    now: u64,
    next_command: u32,
}

static CLOCK: Mutex<DeviceClock> = Mutex::new(DeviceClock {
    now: 0,
    next_command: 0,
});
static CLOCK_STARTED: OnceLock<()> = OnceLock::new();

fn clock() -> std::sync::MutexGuard<'static, DeviceClock> {
    let mut clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    CLOCK_STARTED.get_or_init(|| {
        clock.now = script().map(|s| s.sync.1).unwrap_or(0);
    });
    clock
}

/// Runs an entry point's body; a panic becomes `ZE_RESULT_ERROR_UNKNOWN`.
fn guard(body: impl FnOnce() -> Result<(), ze_result_t>) -> ze_result_t {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ze_result_t::SUCCESS,
        Ok(Err(result)) => result,
        Err(_) => ze_result_t::ERROR_UNKNOWN,
    }
}

/// The `*pCount` / array protocol of `zeDriverGet` and `zeDeviceGet` for a
/// single object.
///
/// # Safety
/// `p_count` must be null or valid for reads and writes; `out`, when non-null
/// and `*p_count > 0`, must be valid for one write.
unsafe fn enumerate_one<T>(p_count: *mut u32, out: *mut T, object: T) -> Result<(), ze_result_t> {
    if p_count.is_null() {
        return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
    }
    // SAFETY: non-null and valid per the caller's contract.
    let count = unsafe { &mut *p_count };
    if *count == 0 || out.is_null() {
        *count = 1;
        return Ok(());
    }
    // SAFETY: `out` is non-null and holds at least `*count >= 1` elements.
    unsafe { out.write(object) };
    *count = 1;
    Ok(())
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

unsafe extern "C" fn ze_init(_flags: ze_init_flags_t) -> ze_result_t {
    guard(|| script().map(|_| ()))
}

/// `zeDriverGet` of the driver table fetched `T`-th: the driver of that table
/// if it is the newest, else none (see [`DRIVERS`]).
unsafe extern "C" fn ze_driver_get<const T: usize>(
    p_count: *mut u32,
    ph_drivers: *mut ze_driver_handle_t,
) -> ze_result_t {
    guard(|| {
        let newest = DRIVER_TABLES.load(Ordering::SeqCst).clamp(1, TABLES) - 1;
        if T != newest {
            if p_count.is_null() {
                return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
            }
            // SAFETY: non-null; the API requires it valid for writes.
            unsafe { p_count.write(0) };
            return Ok(());
        }
        // SAFETY: the loader passes the application's pointers, which the API
        // requires to be valid (`pCount`) or an array of `*pCount` handles.
        unsafe { enumerate_one(p_count, ph_drivers, driver_handle_of(T)) }
    })
}

/// `zeDriverGet` for each driver table the loader may fetch.
const DRIVER_GETS: [ze_pfnDriverGet_t; TABLES] = [
    ze_driver_get::<0>,
    ze_driver_get::<1>,
    ze_driver_get::<2>,
    ze_driver_get::<3>,
    ze_driver_get::<4>,
    ze_driver_get::<5>,
    ze_driver_get::<6>,
    ze_driver_get::<7>,
];

unsafe extern "C" fn ze_device_get(
    h_driver: ze_driver_handle_t,
    p_count: *mut u32,
    ph_devices: *mut ze_device_handle_t,
) -> ze_result_t {
    guard(|| {
        let table = (0..TABLES)
            .find(|&i| driver_handle_of(i) == h_driver)
            .ok_or(ze_result_t::ERROR_INVALID_NULL_HANDLE)?;
        // SAFETY: as for `zeDriverGet`.
        unsafe { enumerate_one(p_count, ph_devices, device_handle_of(table)) }
    })
}

unsafe extern "C" fn ze_device_get_properties(
    h_device: ze_device_handle_t,
    p_props: *mut ze_device_properties_t,
) -> ze_result_t {
    guard(|| {
        if !is_device(h_device) {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if p_props.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        let script = script()?;
        // SAFETY: non-null, and the API requires it to point to a writable
        // `ze_device_properties_t` whose `stype`/`pNext` the caller set.
        let props = unsafe { &mut *p_props };
        props.type_ = ze_device_type_t::GPU;
        props.vendorId = 0x8086;
        props.deviceId = 0x5a5a;
        props.flags = 0;
        props.subdeviceId = 0;
        props.coreClockRate = 1000;
        props.maxMemAllocSize = 1 << 30;
        props.maxHardwareContexts = 1;
        props.maxCommandQueuePriority = 0;
        props.numThreadsPerEU = 8;
        props.physicalEUSimdWidth = 8;
        props.numEUsPerSubslice = 8;
        props.numSubslicesPerSlice = 1;
        props.numSlices = 1;
        props.timerResolution = if props.stype == ze_structure_type_t::DEVICE_PROPERTIES_1_2 {
            script.timer_hz
        } else {
            1_000_000_000 / script.timer_hz
        };
        props.timestampValidBits = script.timestamp_bits;
        props.kernelTimestampValidBits = script.kernel_bits;
        props.uuid = ze_device_uuid_t {
            id: *b"syclgraph-test-1",
        };
        props.name = [0; ZE_MAX_DEVICE_NAME];
        for (dst, src) in props.name.iter_mut().zip(b"syclgraph scripted test device") {
            *dst = *src as std::ffi::c_char;
        }
        // SAFETY: the API requires `pNext` to be null or a chain of valid
        // extension structures.
        unsafe { ztd_device_property_extensions(props.pNext) };
        Ok(())
    })
}

unsafe extern "C" fn ze_device_get_global_timestamps(
    h_device: ze_device_handle_t,
    host: *mut u64,
    device: *mut u64,
) -> ze_result_t {
    guard(|| {
        if !is_device(h_device) {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if host.is_null() || device.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        let (h, d) = script()?.sync;
        // SAFETY: both non-null and, per the API, valid for a `u64` write.
        unsafe {
            host.write(h);
            device.write(d);
        }
        Ok(())
    })
}

unsafe extern "C" fn ze_context_create(
    h_driver: ze_driver_handle_t,
    desc: *const ze_context_desc_t,
    ph_context: *mut ze_context_handle_t,
) -> ze_result_t {
    guard(|| {
        if !is_driver(h_driver) {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if desc.is_null() || ph_context.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        let context = Box::into_raw(Box::new(Context { _id: 0 })) as ze_context_handle_t;
        // SAFETY: non-null and, per the API, valid for one handle write.
        unsafe { ph_context.write(context) };
        Ok(())
    })
}

unsafe extern "C" fn ze_context_destroy(h_context: ze_context_handle_t) -> ze_result_t {
    guard(|| {
        if h_context.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: context handles are only ever made by `ze_context_create`
        // from `Box<Context>`, and the API forbids using one after destroy.
        drop(unsafe { Box::from_raw(h_context as *mut Context) });
        Ok(())
    })
}

unsafe extern "C" fn ze_event_pool_create(
    h_context: ze_context_handle_t,
    desc: *const ze_event_pool_desc_t,
    _num_devices: u32,
    _ph_devices: *mut ze_device_handle_t,
    ph_pool: *mut ze_event_pool_handle_t,
) -> ze_result_t {
    guard(|| {
        if h_context.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if desc.is_null() || ph_pool.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: non-null; the API requires a valid descriptor.
        let desc = unsafe { &*desc };
        if desc.count == 0 {
            return Err(ze_result_t::ERROR_INVALID_SIZE);
        }
        let pool = Box::into_raw(Box::new(EventPool { count: desc.count }));
        // SAFETY: non-null and valid for one handle write.
        unsafe { ph_pool.write(pool as ze_event_pool_handle_t) };
        Ok(())
    })
}

unsafe extern "C" fn ze_event_pool_destroy(h_pool: ze_event_pool_handle_t) -> ze_result_t {
    guard(|| {
        if h_pool.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: pool handles come only from `ze_event_pool_create`.
        drop(unsafe { Box::from_raw(h_pool as *mut EventPool) });
        Ok(())
    })
}

unsafe extern "C" fn ze_event_create(
    h_pool: ze_event_pool_handle_t,
    desc: *const ze_event_desc_t,
    ph_event: *mut ze_event_handle_t,
) -> ze_result_t {
    guard(|| {
        if h_pool.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if desc.is_null() || ph_event.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        // SAFETY: pool handles come only from `ze_event_pool_create` and stay
        // valid until `zeEventPoolDestroy`; the descriptor is valid per API.
        let (pool, desc) = unsafe { (&*(h_pool as *const EventPool), &*desc) };
        if desc.index >= pool.count {
            return Err(ze_result_t::ERROR_INVALID_ARGUMENT);
        }
        let scripted = script()?.events.get(&desc.index).copied();
        let event = Box::into_raw(Box::new(Event {
            scripted,
            pending: AtomicU32::new(scripted.map_or(0, |s| s.pending)),
            signalled: AtomicBool::new(false),
            start: AtomicU64::new(0),
            end: AtomicU64::new(0),
        }));
        live_events().insert(event as usize);
        // SAFETY: non-null and valid for one handle write.
        unsafe { ph_event.write(event as ze_event_handle_t) };
        Ok(())
    })
}

unsafe extern "C" fn ze_event_destroy(h_event: ze_event_handle_t) -> ze_result_t {
    guard(|| {
        if h_event.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        if !live_events().remove(&(h_event as usize)) {
            return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: a live handle made by `ze_event_create` (checked above),
        // which no other call can use any more.
        drop(unsafe { Box::from_raw(h_event as *mut Event) });
        Ok(())
    })
}

/// An event's kernel timestamps: the script's for a scripted event (after its
/// `pending` answers), else those of the command that signalled it.
fn event_times(event: &Event) -> Result<ze_kernel_timestamp_data_t, ze_result_t> {
    let Some(s) = event.scripted else {
        if !event.signalled.load(Ordering::SeqCst) {
            return Err(ze_result_t::NOT_READY);
        }
        return Ok(ze_kernel_timestamp_data_t {
            kernelStart: event.start.load(Ordering::SeqCst),
            kernelEnd: event.end.load(Ordering::SeqCst),
        });
    };
    let was_pending = event
        .pending
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    if was_pending {
        return Err(ze_result_t::NOT_READY);
    }
    if s.result != ze_result_t::SUCCESS {
        return Err(s.result);
    }
    Ok(ze_kernel_timestamp_data_t {
        kernelStart: s.start,
        kernelEnd: s.end,
    })
}

/// # Safety
/// `h_event` must be null or a live handle made by `ze_event_create`.
unsafe fn event<'a>(h_event: ze_event_handle_t) -> Result<&'a Event, ze_result_t> {
    if h_event.is_null() {
        return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
    }
    if !live_events().contains(&(h_event as usize)) {
        if ztd_log_enabled() != 0 {
            eprintln!("ze-test-driver: {h_event:p} is no event of this driver");
        }
        return Err(ze_result_t::ERROR_INVALID_NULL_HANDLE);
    }
    // SAFETY: a live handle made by `ze_event_create` (checked above).
    Ok(unsafe { &*(h_event as *const Event) })
}

/// The events created and not destroyed: a handle that is none of them is
/// refused instead of dereferenced (a loader that wraps handles, or a
/// caller with another library's handle, must not crash the driver).
fn live_events() -> std::sync::MutexGuard<'static, HashSet<usize>> {
    static LIVE: OnceLock<Mutex<HashSet<usize>>> = OnceLock::new();
    LIVE.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn ze_event_query_status(h_event: ze_event_handle_t) -> ze_result_t {
    guard(|| {
        // SAFETY: the API requires a live event handle.
        let event = unsafe { event(h_event) }?;
        let ready = match event.scripted {
            Some(_) => event.pending.load(Ordering::SeqCst) == 0,
            None => event.signalled.load(Ordering::SeqCst),
        };
        if ready {
            Ok(())
        } else {
            Err(ze_result_t::NOT_READY)
        }
    })
}

unsafe extern "C" fn ze_event_query_kernel_timestamp(
    h_event: ze_event_handle_t,
    dst: *mut ze_kernel_timestamp_result_t,
) -> ze_result_t {
    guard(|| {
        // SAFETY: the API requires a live event handle.
        let event = unsafe { event(h_event) }?;
        if dst.is_null() {
            return Err(ze_result_t::ERROR_INVALID_NULL_POINTER);
        }
        let data = event_times(event)?;
        // SAFETY: non-null and, per the API, valid for one result write.
        unsafe {
            dst.write(ze_kernel_timestamp_result_t {
                global: data,
                context: data,
            })
        };
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// What the simulation in sim.c asks of this side
// ---------------------------------------------------------------------------

extern "C" {
    fn ztd_fill_driver(table: *mut ze_driver_dditable_t);
    fn ztd_fill_device(table: *mut ze_device_dditable_t);
    fn ztd_fill_context(table: *mut ze_context_dditable_t);
    fn ztd_fill_event(table: *mut ze_event_dditable_t);
    fn ztd_device_property_extensions(next: *mut c_void);
    fn ztd_command_queue_table(version: ze_api_version_t, table: *mut c_void) -> ze_result_t;
    fn ztd_command_list_table(version: ze_api_version_t, table: *mut c_void) -> ze_result_t;
    fn ztd_fence_table(version: ze_api_version_t, table: *mut c_void) -> ze_result_t;
    fn ztd_mem_table(version: ze_api_version_t, table: *mut c_void) -> ze_result_t;
}

/// Exports a `zeGet*ProcAddrTable` whose table `sim.c` fills (a cdylib exports
/// only Rust's symbols).
macro_rules! sim_tables {
    ($($name:ident => $fill:ident),* $(,)?) => {$(
        /// Fills a table that `sim.c` implements.
        ///
        /// # Safety
        /// Called by the loader with a valid table pointer.
        #[no_mangle]
        pub unsafe extern "C" fn $name(version: ze_api_version_t, table: *mut c_void) -> ze_result_t {
            // SAFETY: forwarded caller contract; `sim.c` writes the loader's layout.
            unsafe { $fill(version, table) }
        }
    )*};
}

sim_tables! {
    zeGetCommandQueueProcAddrTable => ztd_command_queue_table,
    zeGetCommandListProcAddrTable => ztd_command_list_table,
    zeGetFenceProcAddrTable => ztd_fence_table,
    zeGetMemProcAddrTable => ztd_mem_table,
}

/// Marks `h_event` signalled by a command that ran from `start` to `end`
/// (device ticks). A null handle is ignored.
///
/// # Safety
/// `h_event` must be null or a live handle made by `ze_event_create`.
#[no_mangle]
pub unsafe extern "C" fn ztd_event_signal(h_event: ze_event_handle_t, start: u64, end: u64) {
    // SAFETY: per this function's contract.
    if let Ok(event) = unsafe { event(h_event) } {
        event.start.store(start, Ordering::SeqCst);
        event.end.store(end, Ordering::SeqCst);
        event.signalled.store(true, Ordering::SeqCst);
    }
}

/// Clears `h_event`'s signal. A null handle is ignored.
///
/// # Safety
/// `h_event` must be null or a live handle made by `ze_event_create`.
#[no_mangle]
pub unsafe extern "C" fn ztd_event_reset(h_event: ze_event_handle_t) {
    // SAFETY: per this function's contract.
    if let Ok(event) = unsafe { event(h_event) } {
        event.signalled.store(false, Ordering::SeqCst);
    }
}

/// `zeEventQueryStatus` for the C side.
///
/// # Safety
/// `h_event` must be null or a live handle made by `ze_event_create`.
#[no_mangle]
pub unsafe extern "C" fn ztd_event_status(h_event: ze_event_handle_t) -> ze_result_t {
    // SAFETY: forwarded contract.
    unsafe { ze_event_query_status(h_event) }
}

/// `zeEventQueryKernelTimestamp` for the C side.
///
/// # Safety
/// As `zeEventQueryKernelTimestamp`.
#[no_mangle]
pub unsafe extern "C" fn ztd_event_times(
    h_event: ze_event_handle_t,
    dst: *mut ze_kernel_timestamp_result_t,
) -> ze_result_t {
    // SAFETY: forwarded contract.
    unsafe { ze_event_query_kernel_timestamp(h_event, dst) }
}

/// Device times of the next command that signals an event: a copy or fill
/// (`kind` 0 or 1) takes the next command number's `command` statement, or
/// `command_ticks` from the device clock; anything else takes no time.
///
/// # Safety
/// `start` and `end` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn ztd_next_command_times(kind: u32, start: *mut u64, end: *mut u64) {
    let mut clock = clock();
    let (s, e) = if kind <= 1 {
        let number = clock.next_command;
        clock.next_command += 1;
        let scripted = script().ok().and_then(|s| s.commands.get(&number).copied());
        let ticks = script().map_or(100, |s| s.command_ticks);
        scripted.unwrap_or((clock.now, clock.now + ticks))
    } else {
        (clock.now, clock.now)
    };
    clock.now = clock.now.max(e);
    // SAFETY: per this function's contract.
    unsafe {
        start.write(s);
        end.write(e);
    }
}

/// The device clock, ticks.
#[no_mangle]
pub extern "C" fn ztd_device_now() -> u64 {
    clock().now
}

/// The one device's handle.
#[no_mangle]
pub extern "C" fn ztd_device_handle() -> ze_device_handle_t {
    device_handle()
}

/// Whether `ZE_TEST_DRIVER_LOG` is set: the C side then says what it lacks.
#[no_mangle]
pub extern "C" fn ztd_log_enabled() -> i32 {
    static ON: OnceLock<bool> = OnceLock::new();
    i32::from(*ON.get_or_init(|| std::env::var_os("ZE_TEST_DRIVER_LOG").is_some()))
}

// ---------------------------------------------------------------------------
// DDI table exports
// ---------------------------------------------------------------------------

/// Checks the loader's arguments and writes `table` into `out`.
///
/// # Safety
/// `out` must be null or valid for a write of `T`.
unsafe fn fill<T>(version: ze_api_version_t, out: *mut T, table: T) -> ze_result_t {
    if out.is_null() {
        return ze_result_t::ERROR_INVALID_NULL_POINTER;
    }
    if version.major() != 1 {
        return ze_result_t::ERROR_UNSUPPORTED_VERSION;
    }
    // SAFETY: non-null, valid per the caller's contract. The loader passes its
    // own table of the 1.8.12 layout, which `T` matches (ze-sys layout tests);
    // a newer loader's larger table starts with the same fields.
    unsafe { out.write(table) };
    ze_result_t::SUCCESS
}

/// Fills the global table (`zeInit`).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetGlobalProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_global_dditable_t,
) -> ze_result_t {
    let t = ze_global_dditable_t {
        pfnInit: Some(ze_init),
    };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Fills the driver table (`zeDriverGet`).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetDriverProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_driver_dditable_t,
) -> ze_result_t {
    let fetched = DRIVER_TABLES.fetch_add(1, Ordering::SeqCst).min(TABLES - 1);
    let mut t = ze_driver_dditable_t {
        pfnGet: Some(DRIVER_GETS[fetched]),
        ..Default::default()
    };
    // SAFETY: `t` is a valid table of the loader's layout.
    unsafe { ztd_fill_driver(&mut t) };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Fills the device table (get, properties, global timestamps).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetDeviceProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_device_dditable_t,
) -> ze_result_t {
    let mut t = ze_device_dditable_t {
        pfnGet: Some(ze_device_get),
        pfnGetProperties: Some(ze_device_get_properties),
        pfnGetGlobalTimestamps: Some(ze_device_get_global_timestamps),
        ..Default::default()
    };
    // SAFETY: `t` is a valid table of the loader's layout.
    unsafe { ztd_fill_device(&mut t) };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Fills the context table (create, destroy).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetContextProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_context_dditable_t,
) -> ze_result_t {
    let mut t = ze_context_dditable_t {
        pfnCreate: Some(ze_context_create),
        pfnDestroy: Some(ze_context_destroy),
        ..Default::default()
    };
    // SAFETY: `t` is a valid table of the loader's layout.
    unsafe { ztd_fill_context(&mut t) };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Fills the event pool table (create, destroy).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetEventPoolProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_event_pool_dditable_t,
) -> ze_result_t {
    let t = ze_event_pool_dditable_t {
        pfnCreate: Some(ze_event_pool_create),
        pfnDestroy: Some(ze_event_pool_destroy),
        ..Default::default()
    };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Fills the event table (create, destroy, status, kernel timestamp).
///
/// # Safety
/// Called by the loader with a valid table pointer.
#[no_mangle]
pub unsafe extern "C" fn zeGetEventProcAddrTable(
    version: ze_api_version_t,
    table: *mut ze_event_dditable_t,
) -> ze_result_t {
    let mut t = ze_event_dditable_t {
        pfnCreate: Some(ze_event_create),
        pfnDestroy: Some(ze_event_destroy),
        pfnQueryStatus: Some(ze_event_query_status),
        pfnQueryKernelTimestamp: Some(ze_event_query_kernel_timestamp),
        ..Default::default()
    };
    // SAFETY: `t` is a valid table of the loader's layout.
    unsafe { ztd_fill_event(&mut t) };
    // SAFETY: forwarded caller contract.
    unsafe { fill(version, table, t) }
}

/// Exports a `zeGet*ProcAddrTable` for a table this driver implements none of:
/// it writes `$slots` null pointers (the table's size in the 1.8.12 headers).
macro_rules! empty_tables {
    ($($name:ident => $slots:literal),* $(,)?) => {$(
        /// Fills a table this driver implements nothing of with nulls.
        ///
        /// # Safety
        /// Called by the loader with a valid table pointer.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            version: ze_api_version_t,
            table: *mut [Option<ze_pfnUnused_t>; $slots],
        ) -> ze_result_t {
            // SAFETY: forwarded caller contract.
            unsafe { fill(version, table, [None; $slots]) }
        }
    )*};
}

empty_tables! {
    zeGetDeviceExpProcAddrTable => 1,
    zeGetImageProcAddrTable => 4,
    zeGetImageExpProcAddrTable => 2,
    zeGetEventExpProcAddrTable => 1,
    zeGetModuleProcAddrTable => 9,
    zeGetModuleBuildLogProcAddrTable => 2,
    zeGetKernelProcAddrTable => 12,
    zeGetKernelExpProcAddrTable => 2,
    zeGetSamplerProcAddrTable => 2,
    zeGetPhysicalMemProcAddrTable => 2,
    zeGetVirtualMemProcAddrTable => 7,
    zeGetFabricVertexExpProcAddrTable => 4,
    zeGetFabricEdgeExpProcAddrTable => 3,
    zetGetDeviceProcAddrTable => 1,
    zetGetContextProcAddrTable => 1,
    zetGetCommandListProcAddrTable => 4,
    zetGetModuleProcAddrTable => 1,
    zetGetKernelProcAddrTable => 1,
    zetGetMetricGroupProcAddrTable => 3,
    zetGetMetricGroupExpProcAddrTable => 1,
    zetGetMetricProcAddrTable => 2,
    zetGetMetricStreamerProcAddrTable => 3,
    zetGetMetricQueryPoolProcAddrTable => 2,
    zetGetMetricQueryProcAddrTable => 4,
    zetGetTracerExpProcAddrTable => 5,
    zetGetDebugProcAddrTable => 11,
    zesGetDriverProcAddrTable => 2,
    zesGetDeviceProcAddrTable => 29,
    zesGetSchedulerProcAddrTable => 8,
    zesGetPerformanceFactorProcAddrTable => 3,
    zesGetPowerProcAddrTable => 8,
    zesGetFrequencyProcAddrTable => 17,
    zesGetEngineProcAddrTable => 2,
    zesGetStandbyProcAddrTable => 3,
    zesGetFirmwareProcAddrTable => 2,
    zesGetMemoryProcAddrTable => 3,
    zesGetFabricPortProcAddrTable => 6,
    zesGetTemperatureProcAddrTable => 4,
    zesGetPsuProcAddrTable => 2,
    zesGetFanProcAddrTable => 6,
    zesGetLedProcAddrTable => 4,
    zesGetRasProcAddrTable => 4,
    zesGetDiagnosticsProcAddrTable => 3,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_statement() {
        let s = Script::parse(
            "timer_hz 19_200_000\nkernel_bits 32; timestamp_bits 0x40 # comment\n\
             sync 1000 0x10\nevent 3 10 20 pending 2 result 0x78000004\nevent 0 1 2",
        )
        .unwrap();
        assert_eq!(s.timer_hz, 19_200_000);
        assert_eq!(s.kernel_bits, 32);
        assert_eq!(s.timestamp_bits, 64);
        assert_eq!(s.sync, (1000, 16));
        assert_eq!(
            s.events[&3],
            ScriptedEvent {
                start: 10,
                end: 20,
                pending: 2,
                result: ze_result_t::ERROR_INVALID_ARGUMENT
            }
        );
        assert_eq!(s.events[&0].pending, 0);
        assert_eq!(Script::parse("").unwrap(), Script::default());
        let s = Script::parse("command 1 500 900; command_ticks 0x20").unwrap();
        assert_eq!(s.commands[&1], (500, 900));
        assert_eq!(s.command_ticks, 32);
    }

    #[test]
    fn rejects_nonsense() {
        assert!(Script::parse("timer_hz 0").is_err());
        assert!(Script::parse("timer_hz").is_err());
        assert!(Script::parse("bogus 1").is_err());
        assert!(Script::parse("sync 1 2 3").is_err());
        assert!(Script::parse("event 1 2 3 later 4").is_err());
        assert!(Script::parse("kernel_bits 0x1_0000_0000").is_err());
        assert!(Script::parse("command 0 10 5").is_err());
        assert!(Script::parse("command 0 10").is_err());
    }
}
