//! `syclgraph run -- mpiexec -n 4 ./app`: whether the command syclgraph
//! starts is an MPI launcher (`mpiexec`, `mpirun`, `srun`, ...), and which
//! of its arguments is the program it starts on every rank (the first word
//! after the launcher's own options), whose runtime is the one to trace.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Launchers, by the file name of the command (`mpiexec.hydra` and
/// `mpirun.openmpi` count as `mpiexec` and `mpirun`).
const LAUNCHERS: &[&str] = &["mpiexec", "mpirun", "orterun", "srun", "aprun"];

/// Options that take no value, of hydra, Open MPI, Slurm and ALPS.
const FLAGS: &[&str] = &[
    "-l",
    "-v",
    "-q",
    "-u",
    "-O",
    "-K",
    "-verbose",
    "--verbose",
    "-info",
    "-genvall",
    "-genvnone",
    "-print-all-exitcodes",
    "-prepend-rank",
    "-disable-auto-cleanup",
    "-enable-x",
    "-disable-x",
    "--oversubscribe",
    "-oversubscribe",
    "--allow-run-as-root",
    "--tag-output",
    "--timestamp-output",
    "--report-bindings",
    "--display-map",
    "--use-hwthread-cpus",
    "--quiet",
    "--label",
    "--unbuffered",
    "--exclusive",
    "--overcommit",
    "--kill-on-bad-exit",
];

/// Options that take two values (`-genv NAME VALUE`, `--mca KEY VALUE`).
const TWO_VALUES: &[&str] = &["-genv", "-env", "--mca", "-mca", "--gmca", "-gmca"];

/// A launcher in the command syclgraph runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The launcher's name (`mpiexec`, `srun`, ...).
    pub launcher: &'static str,
    /// Where the program the launcher starts is in the command (`None`
    /// when none was found after its options).
    pub program: Option<usize>,
}

/// The launcher `command` starts, if its first word is one; `is_program`
/// tells whether a word is a program (a path to an executable, or one on
/// `PATH`), for options whose number of values is not known.
pub fn launch_of(command: &[OsString], is_program: impl Fn(&OsStr) -> bool) -> Option<Launch> {
    let name = Path::new(command.first()?).file_name()?.to_str()?;
    let launcher = *LAUNCHERS.iter().find(|l| {
        name == **l
            || name
                .strip_prefix(**l)
                .is_some_and(|rest| rest.starts_with('.'))
    })?;
    let mut i = 1;
    while i < command.len() {
        let word = command[i].to_string_lossy();
        if word == "--" {
            i += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        i += if FLAGS.contains(&word.as_ref()) || word.contains('=') {
            1
        } else if TWO_VALUES.contains(&word.as_ref()) {
            3
        } else if command.get(i + 1).is_some_and(|next| {
            next.to_string_lossy().starts_with('-') || looks_like_program(next, &is_program)
        }) {
            // An unknown flag followed by an option or by the program.
            1
        } else {
            2
        };
    }
    Some(Launch {
        launcher,
        program: (i < command.len()).then_some(i),
    })
}

/// True for a word that names a program rather than an option's value:
/// not a number, and a path or a command found on `PATH`.
fn looks_like_program(word: &OsStr, is_program: &impl Fn(&OsStr) -> bool) -> bool {
    let text = word.to_string_lossy();
    !text.bytes().all(|b| b.is_ascii_digit() || b == b',') && is_program(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(words: &str) -> Option<Launch> {
        let command: Vec<OsString> = words.split_whitespace().map(OsString::from).collect();
        // Programs, for the test: paths, python and hostname.
        launch_of(&command, |w| {
            let w = w.to_string_lossy();
            w.contains('/') || w == "python" || w == "hostname"
        })
    }

    fn program(words: &str) -> Option<String> {
        let l = launch(words)?;
        let command: Vec<&str> = words.split_whitespace().collect();
        l.program.map(|i| command[i].to_string())
    }

    #[test]
    fn only_launchers_are_launchers() {
        assert_eq!(launch("./app -n 4"), None);
        assert_eq!(launch("python mpiexec"), None);
        assert_eq!(launch("mpiexecutor -n 2 ./a"), None);
        assert_eq!(
            launch("/usr/bin/mpiexec.hydra -n 2 ./a").unwrap().launcher,
            "mpiexec"
        );
        assert_eq!(
            launch("mpirun.openmpi -np 2 ./a").unwrap().launcher,
            "mpirun"
        );
        assert_eq!(launch("srun ./a").unwrap().launcher, "srun");
    }

    #[test]
    fn the_program_is_the_first_word_after_the_options() {
        assert_eq!(program("mpiexec -n 4 ./app -n 3").as_deref(), Some("./app"));
        assert_eq!(
            program("mpiexec -np 4 -ppn 2 -l python job.py").as_deref(),
            Some("python")
        );
        assert_eq!(
            program("mpiexec -genv A B -env C D -n 2 ./app").as_deref(),
            Some("./app")
        );
        assert_eq!(
            program("mpirun --mca btl self -x FOO --bind-to core -np 2 --oversubscribe ./app")
                .as_deref(),
            Some("./app")
        );
        assert_eq!(
            program("srun --ntasks=4 -N 1 --mpi=pmi2 -l ./app").as_deref(),
            Some("./app")
        );
        assert_eq!(program("mpiexec -n 2 -- ./app").as_deref(), Some("./app"));
        // Unknown flags: followed by the program, or by another option.
        assert_eq!(program("mpiexec -new-flag ./app").as_deref(), Some("./app"));
        assert_eq!(
            program("mpiexec -new-flag -n 2 hostname").as_deref(),
            Some("hostname")
        );
        // An unknown option's value that is a number is a value.
        assert_eq!(
            program("mpiexec -new-option 4 hostname").as_deref(),
            Some("hostname")
        );
        assert_eq!(program("mpiexec -n 4"), None);
    }
}
