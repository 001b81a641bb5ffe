//! Finding the two libraries tracing needs: syclgraph's own
//! `libsyclgraph.so`, and the XPTI dispatcher (`libxptifw.so`) of the DPC++
//! runtime the program will load, which must be that runtime's own.
//!
//! The runtime is looked for, first found wins:
//! 1. `--xpti PATH`;
//! 2. `XPTI_FRAMEWORK_DISPATCHER`, when set;
//! 3. the `libsycl.so` the program (or its script's interpreter) links,
//!    found as the dynamic loader would ([`crate::ldso`]), and the
//!    `libxptifw.so` beside it;
//! 4. the environment the program or interpreter lives in: `<prefix>/lib`
//!    for `<prefix>/bin/<program>` (a venv or conda environment with the
//!    `intel-sycl-rt` wheel), and for a Python, `<sys.prefix>/lib`;
//! 5. an installed oneAPI: `$CMPLR_ROOT/lib`, `$ONEAPI_ROOT/compiler/latest/lib`,
//!    `/opt/intel/oneapi/compiler/latest/lib`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::environment::Env;
use crate::ldso::{Closure, Loader};
use crate::program::Program;

/// The subscriber's file name.
pub const SUBSCRIBER: &str = "libsyclgraph.so";
/// The XPTI dispatcher's file name.
pub const DISPATCHER: &str = "libxptifw.so";

/// `libsyclgraph.so` beside the `syclgraph` executable (`target/release/`
/// of a build), or in `../lib/` of it: every install puts the two under one
/// prefix, `<prefix>/bin` and `<prefix>/lib` (the wheel in the environment
/// it is installed into, the release archive in its folder, the README's
/// `install -D` into `~/.local`). `exe` is the executable's real path
/// (`current_exe`: symbolic links to it resolved). The error lists where it
/// looked.
pub fn subscriber(exe: &Path) -> Result<PathBuf, String> {
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [dir.join(SUBSCRIBER), dir.join("../lib").join(SUBSCRIBER)];
    for c in &candidates {
        if c.is_file() {
            return Ok(c.canonicalize().unwrap_or_else(|_| c.clone()));
        }
    }
    Err(format!(
        "{SUBSCRIBER} is not in {} nor in {} (the wheel and the release archive install both \
         files; a build puts both in target/release/)",
        dir.display(),
        dir.join("../lib").display()
    ))
}

/// How the runtime was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    /// `--xpti`.
    Option,
    /// `XPTI_FRAMEWORK_DISPATCHER`.
    Variable,
    /// Beside the `libsycl.so` this executable loads.
    Linked {
        /// The executable (the program or its interpreter).
        by: PathBuf,
        /// The `libsycl.so` found.
        libsycl: PathBuf,
    },
    /// In the environment (prefix) of this executable.
    Environment {
        /// The executable.
        of: PathBuf,
        /// Its prefix.
        prefix: PathBuf,
    },
    /// In an installed oneAPI, named by this variable (or the default place).
    OneApi(String),
}

impl std::fmt::Display for How {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            How::Option => write!(f, "given with --xpti"),
            How::Variable => write!(f, "named by XPTI_FRAMEWORK_DISPATCHER"),
            How::Linked { by, libsycl } => {
                write!(f, "{} loads {}", by.display(), libsycl.display())
            }
            How::Environment { of, prefix } => {
                write!(
                    f,
                    "in {}, the environment of {}",
                    prefix.display(),
                    of.display()
                )
            }
            How::OneApi(from) => write!(f, "in the oneAPI of {from}"),
        }
    }
}

/// The runtime found for a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// Its `libxptifw.so`.
    pub xpti: PathBuf,
    /// How it was found.
    pub how: How,
}

impl Runtime {
    /// The runtime's library directory (where `libxptifw.so` is).
    pub fn lib_dir(&self) -> &Path {
        self.xpti.parent().unwrap_or(Path::new("/"))
    }
}

/// Nothing found: what was looked at, for the one-line error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFound {
    /// The places, in order.
    pub looked_at: Vec<String>,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no DPC++ runtime ({DISPATCHER}) found: looked at {}; name it with --xpti PATH",
            self.looked_at.join(", ")
        )
    }
}

/// What the program's executables load: per executable, the loader's walk.
pub struct Linkage {
    /// (executable, what its libraries gave).
    pub closures: Vec<(PathBuf, Closure)>,
}

impl Linkage {
    /// Follows the libraries of the program and its interpreter with the
    /// program's `LD_LIBRARY_PATH`, looking for `libsycl.so*`.
    pub fn of(program: &Program, env: &Env) -> Linkage {
        let mut loader = Loader::new(env.get("LD_LIBRARY_PATH"));
        let closures = program
            .executables()
            .map(|exe| {
                let closure = loader.closure(exe, |name| name.starts_with("libsycl.so"));
                (exe.to_path_buf(), closure)
            })
            .collect();
        Linkage { closures }
    }

    /// Needed libraries the loader would not find.
    pub fn missing(&self) -> impl Iterator<Item = &str> {
        self.closures
            .iter()
            .flat_map(|(_, c)| c.missing.iter().map(String::as_str))
    }
}

/// Finds the runtime's `libxptifw.so` for `program` (see the module doc).
pub fn runtime(
    program: &Program,
    linkage: &Linkage,
    env: &Env,
    option: Option<&Path>,
) -> Result<Runtime, NotFound> {
    let mut looked_at = Vec::new();
    if let Some(path) = option {
        if path.is_file() {
            return Ok(found(path, How::Option));
        }
        looked_at.push(format!("--xpti {} (no such file)", path.display()));
        return Err(NotFound { looked_at });
    }
    if let Some(var) = env.get("XPTI_FRAMEWORK_DISPATCHER") {
        let path = Path::new(var);
        if path.is_file() {
            return Ok(found(path, How::Variable));
        }
        looked_at.push(format!(
            "XPTI_FRAMEWORK_DISPATCHER={} (no such file)",
            path.display()
        ));
        return Err(NotFound { looked_at });
    }
    for (exe, closure) in &linkage.closures {
        match &closure.found {
            Some(libsycl) => {
                let beside = libsycl.parent().unwrap_or(Path::new("/"));
                let real = libsycl
                    .canonicalize()
                    .ok()
                    .and_then(|p| p.parent().map(Path::to_path_buf));
                let dirs = std::iter::once(beside.to_path_buf()).chain(real);
                for dir in dirs {
                    let xpti = dir.join(DISPATCHER);
                    if xpti.is_file() {
                        let how = How::Linked {
                            by: exe.clone(),
                            libsycl: libsycl.clone(),
                        };
                        return Ok(found(&xpti, how));
                    }
                }
                looked_at.push(format!("beside {}", libsycl.display()));
            }
            None => looked_at.push(format!("the libraries {} loads", exe.display())),
        }
    }
    for exe in program.executables() {
        let mut prefixes: Vec<PathBuf> = bin_prefix(exe).into_iter().collect();
        if is_python(exe) {
            prefixes.extend(python_prefix(exe));
        }
        for prefix in prefixes {
            let xpti = prefix.join("lib").join(DISPATCHER);
            if xpti.is_file() {
                let how = How::Environment {
                    of: exe.to_path_buf(),
                    prefix,
                };
                return Ok(found(&xpti, how));
            }
            let place = prefix.join("lib").display().to_string();
            if !looked_at.contains(&place) {
                looked_at.push(place);
            }
        }
    }
    let oneapi: [(String, Option<PathBuf>); 3] = [
        (
            "CMPLR_ROOT".into(),
            env.get("CMPLR_ROOT").map(|r| Path::new(r).join("lib")),
        ),
        (
            "ONEAPI_ROOT".into(),
            env.get("ONEAPI_ROOT")
                .map(|r| Path::new(r).join("compiler/latest/lib")),
        ),
        (
            "/opt/intel/oneapi".into(),
            Some(PathBuf::from("/opt/intel/oneapi/compiler/latest/lib")),
        ),
    ];
    for (from, dir) in oneapi {
        match dir {
            Some(dir) => {
                let xpti = dir.join(DISPATCHER);
                if xpti.is_file() {
                    return Ok(found(&xpti, How::OneApi(from)));
                }
                looked_at.push(dir.display().to_string());
            }
            None => looked_at.push(format!("{from} (not set)")),
        }
    }
    Err(NotFound { looked_at })
}

fn found(path: &Path, how: How) -> Runtime {
    let xpti = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Runtime { xpti, how }
}

/// `<prefix>` for an executable in `<prefix>/bin/`, as given (a venv's
/// `bin/python` is a symbolic link out of the venv; its prefix is the venv).
fn bin_prefix(exe: &Path) -> Option<PathBuf> {
    let exe = std::path::absolute(exe).ok()?;
    let bin = exe.parent()?;
    (bin.file_name()? == "bin").then(|| bin.parent().map(Path::to_path_buf))?
}

fn is_python(exe: &Path) -> bool {
    exe.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("python"))
}

/// The interpreter's own `sys.prefix` (it runs for this, briefly, with no
/// input; nothing it prints reaches the user).
fn python_prefix(python: &Path) -> Option<PathBuf> {
    let output = Command::new(python)
        .args(["-c", "import sys; print(sys.prefix)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let prefix = text.trim();
    (!prefix.is_empty()).then(|| PathBuf::from(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("syclgraph-locate-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn program(path: &Path) -> Program {
        Program {
            path: path.to_path_buf(),
            interpreter: None,
        }
    }

    #[test]
    fn option_and_variable_win_and_a_missing_file_is_named() {
        let dir = scratch("option");
        let xpti = dir.join(DISPATCHER);
        fs::write(&xpti, "").unwrap();
        let p = program(Path::new("/bin/true"));
        let env = Env::from_pairs([("XPTI_FRAMEWORK_DISPATCHER", "/nowhere/libxptifw.so")]);
        let linkage = Linkage::of(&p, &env);
        let got = runtime(&p, &linkage, &env, Some(&xpti)).unwrap();
        assert_eq!(
            (got.xpti.as_path(), &got.how),
            (xpti.as_path(), &How::Option)
        );
        let err = runtime(&p, &linkage, &env, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no DPC++ runtime (libxptifw.so) found: looked at \
             XPTI_FRAMEWORK_DISPATCHER=/nowhere/libxptifw.so (no such file); name it with --xpti PATH"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_program_in_an_environment_finds_its_lib_dir() {
        let dir = scratch("prefix");
        fs::create_dir_all(dir.join("env/bin")).unwrap();
        fs::create_dir_all(dir.join("env/lib")).unwrap();
        fs::write(dir.join("env/lib").join(DISPATCHER), "").unwrap();
        let tool = dir.join("env/bin/tool");
        fs::write(&tool, "#!/bin/sh\n").unwrap();
        let p = program(&tool);
        let env = Env::from_pairs::<&str>([]);
        let got = runtime(&p, &Linkage::of(&p, &env), &env, None).unwrap();
        assert_eq!(got.xpti, dir.join("env/lib").join(DISPATCHER));
        assert_eq!(got.lib_dir(), dir.join("env/lib"));
        assert!(matches!(got.how, How::Environment { .. }));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nothing_found_lists_every_place() {
        let dir = scratch("none");
        let p = program(Path::new("/bin/true"));
        let env = Env::from_pairs([("ONEAPI_ROOT", dir.join("oneapi").to_str().unwrap())]);
        let err = runtime(&p, &Linkage::of(&p, &env), &env, None).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("the libraries /bin/true loads"), "{text}");
        assert!(text.contains("CMPLR_ROOT (not set)"), "{text}");
        assert!(
            text.contains(&format!("{}/oneapi/compiler/latest/lib", dir.display())),
            "{text}"
        );
        assert!(text.ends_with("name it with --xpti PATH"), "{text}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_subscriber_is_beside_the_executable_or_in_lib() {
        let dir = scratch("subscriber");
        fs::create_dir_all(dir.join("bin")).unwrap();
        fs::create_dir_all(dir.join("lib")).unwrap();
        let exe = dir.join("bin/syclgraph");
        assert!(subscriber(&exe).unwrap_err().contains("is not in"));
        fs::write(dir.join("lib").join(SUBSCRIBER), "").unwrap();
        assert_eq!(
            subscriber(&exe).unwrap(),
            dir.join("lib").join(SUBSCRIBER).canonicalize().unwrap()
        );
        fs::write(dir.join("bin").join(SUBSCRIBER), "").unwrap();
        assert_eq!(
            subscriber(&exe).unwrap(),
            dir.join("bin").join(SUBSCRIBER).canonicalize().unwrap()
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
