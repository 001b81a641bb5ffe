//! Which file `syclgraph run PROGRAM` will execute: `PROGRAM` itself when it
//! holds a `/`, else the first executable of that name on `PATH` (as
//! `execvp` does), and for a script, the interpreter of its `#!` line
//! (`#!/usr/bin/env python3` is looked up on `PATH` too).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The program to run, as found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The file that will be executed (not canonicalised: a venv's
    /// `bin/python` stays where it is, even when it is a symbolic link).
    pub path: PathBuf,
    /// For a script: the interpreter its `#!` line names, found.
    pub interpreter: Option<PathBuf>,
}

impl Program {
    /// The executables whose libraries and environment decide the runtime:
    /// the program, then its interpreter.
    pub fn executables(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.path.as_path()).chain(self.interpreter.as_deref())
    }
}

/// Why the program cannot be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotRunnable {
    /// No such file, or not on `PATH` (the shell's 127).
    NotFound(String),
    /// There, but not an executable file (the shell's 126).
    NotExecutable(String),
}

impl NotRunnable {
    /// The exit code a shell gives for the same failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            NotRunnable::NotFound(_) => 127,
            NotRunnable::NotExecutable(_) => 126,
        }
    }
}

impl std::fmt::Display for NotRunnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRunnable::NotFound(m) | NotRunnable::NotExecutable(m) => f.write_str(m),
        }
    }
}

/// Finds `name` the way `execvp` would with `path_var` as `PATH`.
pub fn find(name: &OsStr, path_var: Option<&OsStr>) -> Result<Program, NotRunnable> {
    let shown = Path::new(name).display().to_string();
    let path = if name.as_bytes().contains(&b'/') {
        let path = PathBuf::from(name);
        if !path.exists() {
            return Err(NotRunnable::NotFound(format!(
                "{shown}: no such file or directory"
            )));
        }
        if !is_executable(&path) {
            return Err(NotRunnable::NotExecutable(format!(
                "{shown}: not an executable file"
            )));
        }
        path
    } else {
        on_path(name, path_var)
            .ok_or_else(|| NotRunnable::NotFound(format!("{shown}: command not found on PATH")))?
    };
    let interpreter = shebang(&path).and_then(|(interp, arg)| {
        if Path::new(&interp).file_name() == Some(OsStr::new("env")) {
            // `#!/usr/bin/env [-S] name ...`: the first word that is not an option.
            let arg = arg?;
            let word = arg
                .as_bytes()
                .split(|b| b.is_ascii_whitespace())
                .find(|w| !w.is_empty() && !w.starts_with(b"-"))?
                .to_vec();
            on_path(OsStr::from_bytes(&word), path_var)
        } else {
            Some(PathBuf::from(interp))
        }
    });
    Ok(Program { path, interpreter })
}

/// The first executable file `name` in the directories of `path_var`.
pub fn on_path(name: &OsStr, path_var: Option<&OsStr>) -> Option<PathBuf> {
    // execvp's default when PATH is unset.
    let default = OsString::from("/usr/local/bin:/usr/bin:/bin");
    let var = path_var.unwrap_or(&default);
    std::env::split_paths(var)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                PathBuf::from(".").join(name)
            } else {
                dir.join(name)
            }
        })
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The interpreter and optional argument of a `#!` first line.
fn shebang(path: &Path) -> Option<(OsString, Option<OsString>)> {
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = line.trim_ascii();
    let (interp, rest) = match line.iter().position(|b| b.is_ascii_whitespace()) {
        Some(i) => (&line[..i], Some(line[i..].trim_ascii())),
        None => (line, None),
    };
    if interp.is_empty() {
        return None;
    }
    let rest = rest.filter(|r| !r.is_empty());
    Some((
        OsStr::from_bytes(interp).to_owned(),
        rest.map(|r| OsStr::from_bytes(r).to_owned()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-program-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write_exe(path: &Path, text: &str) {
        fs::write(path, text).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn names_are_looked_up_on_path_and_scripts_give_their_interpreter() {
        let dir = scratch("path");
        let bin = dir.join("bin");
        fs::create_dir_all(&bin).unwrap();
        write_exe(&bin.join("python3"), "");
        write_exe(&bin.join("tool"), "#!/usr/bin/env -S python3 -u\nprint()\n");
        write_exe(&bin.join("direct"), "#! /opt/py/bin/python -E\n");
        fs::write(bin.join("plain"), "not executable").unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), &bin]).unwrap();

        let tool = find(OsStr::new("tool"), Some(&path)).unwrap();
        assert_eq!(tool.path, bin.join("tool"));
        assert_eq!(tool.interpreter, Some(bin.join("python3")));

        let direct = find(bin.join("direct").as_os_str(), Some(&path)).unwrap();
        assert_eq!(
            direct.interpreter,
            Some(PathBuf::from("/opt/py/bin/python"))
        );
        assert_eq!(
            direct.executables().collect::<Vec<_>>(),
            [
                bin.join("direct").as_path(),
                Path::new("/opt/py/bin/python")
            ]
        );

        assert_eq!(
            find(OsStr::new("plain"), Some(&path))
                .unwrap_err()
                .exit_code(),
            127
        );
        assert_eq!(
            find(bin.join("plain").as_os_str(), Some(&path)).unwrap_err(),
            NotRunnable::NotExecutable(format!(
                "{}: not an executable file",
                bin.join("plain").display()
            ))
        );
        assert_eq!(
            find(dir.join("nope").as_os_str(), None)
                .unwrap_err()
                .exit_code(),
            127
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
