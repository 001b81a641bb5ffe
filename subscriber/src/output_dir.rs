//! The output directory of one process: claimed at start (an owner file
//! with our pid; a directory in use by a live process, or written by this
//! process before it called exec, is not reused) and given up at the end.

use syclgraph_graph::output::OWNER_FILE;

use crate::config::Config;
use crate::warn;

/// Claims `config.output_dir` for this process, moving to `pid-<pid>` or
/// `exec-<n>` beside it when it is taken.
pub fn prepare_output_dir(config: &mut Config) -> std::io::Result<()> {
    std::fs::create_dir_all(&config.output_dir)?;
    let pid = std::process::id();
    if let Some(owner) = live_owner(&config.output_dir, pid) {
        let own = config.output_dir.join(format!("pid-{pid}"));
        warn(format_args!(
            "{} is in use by process {owner}; writing to {}",
            config.output_dir.display(),
            own.display()
        ));
        config.output_dir = own;
        std::fs::create_dir_all(&config.output_dir)?;
    } else if written_before_exec(&config.output_dir, pid) {
        // This image has not written the owner file yet: the image this
        // process ran before `execve` did. Its files stay as they are.
        let own = (1u32..)
            .map(|n| config.output_dir.join(format!("exec-{n}")))
            .find(|d| !d.exists())
            .expect("a free exec-<n> name");
        warn(format_args!(
            "{} holds this process's outputs from before it called exec; writing to {}",
            config.output_dir.display(),
            own.display()
        ));
        config.output_dir = own;
        std::fs::create_dir_all(&config.output_dir)?;
    }
    std::fs::write(config.output_dir.join(OWNER_FILE), pid.to_string())
}

/// Gives the output directory up (at the end of the exit drain).
pub fn release_output_dir(dir: &std::path::Path) {
    let owner = dir.join(OWNER_FILE);
    if std::fs::read_to_string(&owner).ok().as_deref() == Some(&std::process::id().to_string()) {
        let _ = std::fs::remove_file(owner);
    }
}

/// The pid in `dir`'s owner file, if that process is alive and not us.
fn live_owner(dir: &std::path::Path, pid: u32) -> Option<u32> {
    let owner: u32 = std::fs::read_to_string(dir.join(OWNER_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let alive = std::path::Path::new(&format!("/proc/{owner}")).exists();
    (owner != pid && alive).then_some(owner)
}

/// True when `dir`'s owner file names this very process: called before this
/// image wrote it, that is an earlier image of the process (`execve`
/// without exit leaves the file behind, as no exit handler ran).
fn written_before_exec(dir: &std::path::Path, pid: u32) -> bool {
    std::fs::read_to_string(dir.join(OWNER_FILE))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        == Some(pid)
}
