//! Starting the program and waiting for it: it keeps syclgraph's stdin,
//! stdout, stderr, working directory and process group; signals reach it
//! through [`crate::signals`]; its end becomes syclgraph's exit code (its
//! own code, or 128 + the signal that killed it, as a shell reports it).

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};

use rustix::process::{Pid, WaitId, WaitIdOptions};

use crate::signals::Forwarder;

/// How the program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Killed(i32),
}

impl Ended {
    /// From a reaped child's status.
    pub fn from_status(status: ExitStatus) -> Ended {
        match (status.code(), status.signal()) {
            (Some(code), _) => Ended::Exited(code),
            (None, Some(signal)) => Ended::Killed(signal),
            // Neither: a stopped or continued status, which `wait` never returns.
            (None, None) => Ended::Exited(1),
        }
    }

    /// syclgraph's exit code for it: the code, or 128 + the signal.
    pub fn exit_code(self) -> u8 {
        match self {
            Ended::Exited(code) => (code & 0xff) as u8,
            Ended::Killed(signal) => (128 + signal).clamp(0, 255) as u8,
        }
    }
}

/// Runs `program` with `args` and the environment additions `env`, and
/// waits for it to end. The program's own pid is passed to `started` as
/// soon as it runs. An error means it could not be started.
pub fn run(
    program: &OsStr,
    args: &[OsString],
    env: &[(&str, &OsStr)],
    started: impl FnOnce(u32),
) -> io::Result<Ended> {
    let forwarder = Forwarder::install()?;
    let mut command = Command::new(program);
    command.args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            forwarder.close();
            return Err(e);
        }
    };
    let pid = child.id();
    forwarder.started(pid);
    started(pid);
    // Wait for the end without reaping, so that the forwarder can never
    // signal a process that took over the pid; then reap under its lock.
    if let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        while let Err(rustix::io::Errno::INTR) = rustix::process::waitid(
            WaitId::Pid(raw),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {}
    }
    let status = forwarder.reap(|| child.wait());
    forwarder.close();
    Ok(Ended::from_status(status?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_as_a_shell_reports_them() {
        assert_eq!(Ended::Exited(3).exit_code(), 3);
        assert_eq!(Ended::Exited(256 + 4).exit_code(), 4);
        assert_eq!(Ended::Killed(15).exit_code(), 143);
        assert_eq!(Ended::Killed(9).exit_code(), 137);
    }

    #[test]
    fn runs_and_reports_exit_and_signal() {
        let mut pid = 0;
        let ended = run(
            OsStr::new("sh"),
            &["-c".into(), "exit 5".into()],
            &[],
            |p| pid = p,
        )
        .unwrap();
        assert_eq!(ended, Ended::Exited(5));
        assert_ne!(pid, 0);
        let killed = run(
            OsStr::new("sh"),
            &["-c".into(), "kill -TERM $$".into()],
            &[("SYCLGRAPH_TEST", OsStr::new("1"))],
            |_| {},
        )
        .unwrap();
        assert_eq!(killed, Ended::Killed(15));
        assert!(run(OsStr::new("/nonexistent/x"), &[], &[], |_| {}).is_err());
    }
}
