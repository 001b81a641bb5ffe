//! Signals while the program runs. `SIGINT`, `SIGTERM`, `SIGHUP` and
//! `SIGQUIT` sent to syclgraph reach the program, and never end syclgraph
//! before it: syclgraph waits for the program and exits with its status.
//!
//! A signal is forwarded once, and only when the program did not get it
//! already:
//! - one the terminal sends (Ctrl-C, Ctrl-\, a hang-up: the kernel is the
//!   sender) goes to the whole foreground process group, which the program
//!   shares with syclgraph: not forwarded (samply's rule for Ctrl-C);
//! - one a process sends to syclgraph (`kill PID`, a batch system, a
//!   timeout) is forwarded, unless the program itself sent it.
//!
//! A signal that was ignored when syclgraph started (`nohup` ignores
//! `SIGHUP`) stays ignored, so the program inherits that, as it would
//! untraced.

use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::{Cause, Origin};

/// The signals syclgraph forwards to the program.
pub const FORWARDED: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// Where the signals go.
enum Target {
    /// The program is not started yet: signals wait here.
    NotYet(Vec<i32>),
    /// The program runs (or is a zombie not yet reaped) with this pid.
    Running(u32),
    /// The program was reaped: its pid may be anyone's now.
    Gone,
}

/// Forwards signals to the program from a thread of its own, from before
/// the program starts until it has been reaped.
pub struct Forwarder {
    target: Arc<Mutex<Target>>,
    handle: Handle,
    thread: JoinHandle<()>,
}

impl Forwarder {
    /// Catches [`FORWARDED`] (less those ignored at start). Call before the
    /// program is started, so that nothing sent in between is lost.
    pub fn install() -> std::io::Result<Forwarder> {
        let ignored = ignored_at_start();
        let caught: Vec<i32> = FORWARDED
            .into_iter()
            .filter(|&s| ignored & (1u64 << (s - 1)) == 0)
            .collect();
        let mut signals = SignalsInfo::<WithOrigin>::new(&caught)?;
        let handle = signals.handle();
        let target = Arc::new(Mutex::new(Target::NotYet(Vec::new())));
        let shared = Arc::clone(&target);
        let thread = std::thread::Builder::new()
            .name("syclgraph-signals".into())
            .spawn(move || {
                for origin in signals.forever() {
                    let mut target = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    match &mut *target {
                        Target::NotYet(waiting) => waiting.push(origin.signal),
                        Target::Running(pid) => {
                            if should_forward(&origin, *pid) {
                                send(*pid, origin.signal);
                            }
                        }
                        Target::Gone => {}
                    }
                }
            })?;
        Ok(Forwarder {
            target,
            handle,
            thread,
        })
    }

    /// The program runs as `pid`: signals caught so far are sent now.
    pub fn started(&self, pid: u32) {
        let mut target = self.lock();
        if let Target::NotYet(waiting) = &*target {
            for &signal in waiting {
                send(pid, signal);
            }
        }
        *target = Target::Running(pid);
    }

    /// Runs `reap` (which reaps the program) while no signal can be sent,
    /// so none reaches a process that took the program's pid after it.
    pub fn reap<T>(&self, reap: impl FnOnce() -> T) -> T {
        let mut target = self.lock();
        let out = reap();
        *target = Target::Gone;
        out
    }

    /// Stops the forwarding thread. The handlers stay: a signal that comes
    /// while syclgraph prints its last lines is ignored.
    pub fn close(self) {
        self.handle.close();
        let _ = self.thread.join();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Target> {
        self.target.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a signal caught while `child` runs must be sent to it (see the
/// module documentation).
pub fn should_forward(origin: &Origin, child: u32) -> bool {
    if origin.cause == Cause::Kernel {
        return false;
    }
    origin
        .process
        .is_none_or(|p| u32::try_from(p.pid).ok() != Some(child))
}

fn send(pid: u32, signal: i32) {
    let (Some(pid), Some(signal)) = (
        i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw),
        rustix::process::Signal::from_named_raw(signal),
    ) else {
        return;
    };
    // ESRCH: it ended meanwhile; nothing else can fail for our own child.
    let _ = rustix::process::kill_process(pid, signal);
}

/// The signals this process ignores (`SigIgn` of `/proc/self/status`, bit
/// `n - 1` for signal `n`); none when it cannot be read.
pub fn ignored_at_start() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|text| parse_sig_ign(&text))
        .unwrap_or(0)
}

fn parse_sig_ign(status: &str) -> Option<u64> {
    let line = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
    u64::from_str_radix(line.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sig_ign_mask() {
        let status = "Name:\tx\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000001001\nSigCgt:\t0\n";
        let mask = parse_sig_ign(status).unwrap();
        assert_ne!(mask & (1 << (SIGHUP - 1)), 0);
        assert_eq!(mask & (1 << (SIGTERM - 1)), 0);
        assert_eq!(mask & (1 << 12), 1 << 12, "SIGPIPE (13)");
        assert_eq!(parse_sig_ign("Name:\tx\n"), None);
    }
}
