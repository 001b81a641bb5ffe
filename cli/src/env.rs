//! The program's environment: what it would see untraced (syclgraph's own),
//! and the few variables `syclgraph run` adds to it.
//!
//! Always added: the three XPTI variables that load the subscriber, and the
//! `SYCLGRAPH_*` variables of the options given. When unset,
//! `INTEL_LIBITTNOTIFY64=<libsyclgraph.so>`: the ittnotify part of the
//! program (or of a library: `ittapi`, PyTorch) then loads syclgraph as
//! its ITT collector, whose tasks are the program's regions (another
//! collector already named, VTune's say, is left as it is). For the PyPI runtime, two
//! more, each only when the user has not set it, the program needs it, and
//! `--no-runtime-env` is not given (what `scripts/env.sh` and the README's
//! manual steps set, and no more):
//!
//! - `LD_LIBRARY_PATH=<runtime lib dir>`: when it is unset and a library the
//!   program needs is found nowhere else but is in the runtime's directory
//!   (the wheel's `libOpenCL.so.1` needs `libsvml.so` from there, and has no
//!   RUNPATH: without it a C++ program does not start at all);
//! - `OCL_ICD_FILENAMES=<runtime lib dir>/libintelocl.so`: when neither it
//!   nor `OCL_ICD_VENDORS` is set, the runtime's directory has the OpenCL
//!   CPU device and no ICD file in `/etc/OpenCL/vendors` registers it (the
//!   wheel registers none: without it the program finds no SYCL device).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::environment::Env;
use crate::locate::{Linkage, Runtime};

/// Where the OpenCL ICD loader looks for vendor files by default.
pub const ICD_VENDORS_DIR: &str = "/etc/OpenCL/vendors";

/// The OpenCL CPU device library of the Intel runtime.
const CPU_DEVICE: &str = "libintelocl.so";

/// The `SYCLGRAPH_*` settings chosen on the command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// `SYCLGRAPH_OUTPUT_DIR` (absolute).
    pub output_dir: Option<PathBuf>,
    /// `SYCLGRAPH_DEVICE_TIMING=0`.
    pub no_device_timing: bool,
    /// `SYCLGRAPH_FORCE_PROFILING=0`.
    pub no_force_profiling: bool,
    /// `SYCLGRAPH_MAX_INSTANCES`.
    pub max_instances: Option<u64>,
    /// `SYCLGRAPH_QUIET=1`.
    pub quiet: bool,
    /// `SYCLGRAPH_START=paused`.
    pub start_paused: bool,
    /// `SYCLGRAPH_DELAY`, seconds.
    pub delay: Option<f64>,
    /// `SYCLGRAPH_DURATION`, seconds.
    pub duration: Option<f64>,
    /// `SYCLGRAPH_REGION`: the region captured by name.
    pub region: Option<String>,
    /// `SYCLGRAPH_RANKS`: the ranks of an MPI job to trace (`--ranks`).
    pub ranks: Option<String>,
    /// `SYCLGRAPH_RANK_SUMMARY`, and why (`--rank-summaries`, or the
    /// launcher run from syclgraph).
    pub rank_summary: Option<(&'static str, &'static str)>,
}

/// One variable set for the program, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addition {
    /// The variable.
    pub name: &'static str,
    /// Its value.
    pub value: OsString,
    /// Why it is set (shown with `--verbose`).
    pub why: String,
}

/// What to add to `env` for the program: see the module documentation.
/// `vendors_dir` is [`ICD_VENDORS_DIR`] but for tests.
pub fn additions(
    env: &Env,
    subscriber: &Path,
    runtime: &Runtime,
    linkage: &Linkage,
    settings: &Settings,
    runtime_env: bool,
    vendors_dir: &Path,
) -> Vec<Addition> {
    let mut out = Vec::new();
    let mut add = |name: &'static str, value: OsString, why: String| {
        out.push(Addition { name, value, why });
    };
    add(
        "XPTI_TRACE_ENABLE",
        "1".into(),
        "turns XPTI tracing on".into(),
    );
    add(
        "XPTI_FRAMEWORK_DISPATCHER",
        runtime.xpti.clone().into_os_string(),
        format!("the runtime's XPTI dispatcher: {}", runtime.how),
    );
    add(
        "XPTI_SUBSCRIBERS",
        subscribers(env.get("XPTI_SUBSCRIBERS"), subscriber),
        "loads syclgraph, after any other subscriber already listed".into(),
    );
    if env.get("INTEL_LIBITTNOTIFY64").is_none() {
        add(
            "INTEL_LIBITTNOTIFY64",
            subscriber.as_os_str().to_owned(),
            "syclgraph is the program's ITT collector: its ITT tasks are its regions".into(),
        );
    }
    if let Some(dir) = &settings.output_dir {
        add(
            "SYCLGRAPH_OUTPUT_DIR",
            dir.clone().into_os_string(),
            "--output".into(),
        );
    }
    if settings.no_device_timing {
        add(
            "SYCLGRAPH_DEVICE_TIMING",
            "0".into(),
            "--no-device-timing".into(),
        );
    }
    if settings.no_force_profiling {
        add(
            "SYCLGRAPH_FORCE_PROFILING",
            "0".into(),
            "--no-force-profiling".into(),
        );
    }
    if let Some(n) = settings.max_instances {
        add(
            "SYCLGRAPH_MAX_INSTANCES",
            n.to_string().into(),
            "--max-instances".into(),
        );
    }
    if settings.quiet {
        add("SYCLGRAPH_QUIET", "1".into(), "--quiet".into());
    }
    if settings.start_paused {
        add("SYCLGRAPH_START", "paused".into(), "--start-paused".into());
    }
    if let Some(s) = settings.delay {
        add("SYCLGRAPH_DELAY", s.to_string().into(), "--delay".into());
    }
    if let Some(s) = settings.duration {
        add(
            "SYCLGRAPH_DURATION",
            s.to_string().into(),
            "--duration".into(),
        );
    }
    if let Some(name) = &settings.region {
        add("SYCLGRAPH_REGION", name.into(), "--region".into());
    }
    if let Some(ranks) = &settings.ranks {
        add("SYCLGRAPH_RANKS", ranks.into(), "--ranks".into());
    }
    if let Some((value, why)) = settings.rank_summary {
        add("SYCLGRAPH_RANK_SUMMARY", value.into(), why.into());
    }
    if !runtime_env {
        return out;
    }
    let lib = runtime.lib_dir();
    if env.get("LD_LIBRARY_PATH").is_none() {
        let only_there: Vec<&str> = linkage
            .missing()
            .filter(|name| lib.join(name).is_file())
            .collect();
        if let Some(first) = only_there.first() {
            add(
                "LD_LIBRARY_PATH",
                lib.as_os_str().to_owned(),
                format!(
                    "the program needs {first}{}, found only in the runtime's directory",
                    if only_there.len() > 1 {
                        " and more"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    let device = lib.join(CPU_DEVICE);
    if env.get("OCL_ICD_FILENAMES").is_none()
        && env.get("OCL_ICD_VENDORS").is_none()
        && device.is_file()
        && !registered(vendors_dir, CPU_DEVICE)
    {
        add(
            "OCL_ICD_FILENAMES",
            device.into_os_string(),
            format!(
                "the runtime's OpenCL CPU device, which no ICD file in {} registers",
                vendors_dir.display()
            ),
        );
    }
    out
}

/// `XPTI_SUBSCRIBERS` with `ours` last: other subscribers already listed
/// stay, another `libsyclgraph.so` is replaced.
fn subscribers(existing: Option<&OsString>, ours: &Path) -> OsString {
    let mut list: Vec<OsString> = existing
        .map(|v| {
            v.as_bytes()
                .split(|&b| b == b',')
                .map(|s| OsStr::from_bytes(s).to_owned())
                .filter(|s| !s.is_empty() && Path::new(s).file_name() != ours.file_name())
                .collect()
        })
        .unwrap_or_default();
    list.push(ours.as_os_str().to_owned());
    let mut joined = OsString::new();
    for (i, s) in list.iter().enumerate() {
        if i > 0 {
            joined.push(",");
        }
        joined.push(s);
    }
    joined
}

/// True when an `.icd` file in `dir` names a library called `name`.
fn registered(dir: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        e.path().extension() == Some(OsStr::new("icd"))
            && std::fs::read_to_string(e.path()).is_ok_and(|text| text.contains(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ldso::Closure;
    use crate::locate::How;
    use std::fs;

    struct Fixture {
        dir: PathBuf,
        runtime: Runtime,
    }

    fn fixture(test: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("syclgraph-env-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("lib")).unwrap();
        fs::create_dir_all(dir.join("vendors")).unwrap();
        for f in ["libxptifw.so", "libintelocl.so", "libsvml.so"] {
            fs::write(dir.join("lib").join(f), "").unwrap();
        }
        let runtime = Runtime {
            xpti: dir.join("lib/libxptifw.so"),
            how: How::Option,
        };
        Fixture { dir, runtime }
    }

    fn linkage(missing: &[&str]) -> Linkage {
        Linkage {
            closures: vec![(
                PathBuf::from("/app"),
                Closure {
                    found: None,
                    missing: missing.iter().map(|s| s.to_string()).collect(),
                },
            )],
        }
    }

    fn names(list: &[Addition]) -> Vec<&str> {
        list.iter().map(|a| a.name).collect()
    }

    #[test]
    fn runtime_variables_only_when_unset_and_needed() {
        let f = fixture("runtime");
        let sub = Path::new("/x/libsyclgraph.so");
        let vendors = f.dir.join("vendors");
        let s = Settings::default();
        let empty = Env::from_pairs::<&str>([]);
        let all = additions(
            &empty,
            sub,
            &f.runtime,
            &linkage(&["libsvml.so"]),
            &s,
            true,
            &vendors,
        );
        assert_eq!(
            names(&all),
            [
                "XPTI_TRACE_ENABLE",
                "XPTI_FRAMEWORK_DISPATCHER",
                "XPTI_SUBSCRIBERS",
                "INTEL_LIBITTNOTIFY64",
                "LD_LIBRARY_PATH",
                "OCL_ICD_FILENAMES"
            ]
        );
        assert_eq!(all[3].value, sub.as_os_str());
        assert_eq!(all[4].value, f.dir.join("lib").into_os_string());
        assert_eq!(
            all[5].value,
            f.dir.join("lib/libintelocl.so").into_os_string()
        );
        // Nothing missing, or missing but not the runtime's: no library path.
        let none = additions(
            &empty,
            sub,
            &f.runtime,
            &linkage(&["libother.so"]),
            &s,
            true,
            &vendors,
        );
        assert!(!names(&none).contains(&"LD_LIBRARY_PATH"));
        // The user's own settings are kept (another ITT collector too).
        let user = Env::from_pairs([
            ("LD_LIBRARY_PATH", "/mine"),
            ("OCL_ICD_VENDORS", "/v"),
            ("INTEL_LIBITTNOTIFY64", "/vtune/libittnotify_collector.so"),
        ]);
        let kept = additions(
            &user,
            sub,
            &f.runtime,
            &linkage(&["libsvml.so"]),
            &s,
            true,
            &vendors,
        );
        assert_eq!(names(&kept).len(), 3);
        // A system ICD that registers the CPU device already: not added.
        fs::write(vendors.join("intel.icd"), "/opt/intel/lib/libintelocl.so\n").unwrap();
        let registered = additions(&empty, sub, &f.runtime, &linkage(&[]), &s, true, &vendors);
        assert_eq!(names(&registered).len(), 4);
        // --no-runtime-env.
        let off = additions(
            &empty,
            sub,
            &f.runtime,
            &linkage(&["libsvml.so"]),
            &s,
            false,
            &vendors,
        );
        assert_eq!(names(&off).len(), 4);
        fs::remove_dir_all(&f.dir).unwrap();
    }

    #[test]
    fn options_become_syclgraph_variables() {
        let f = fixture("options");
        let s = Settings {
            output_dir: Some("/out".into()),
            no_device_timing: true,
            no_force_profiling: true,
            max_instances: Some(7),
            quiet: true,
            start_paused: true,
            delay: Some(1.5),
            duration: Some(2.0),
            region: Some("backward".into()),
            ranks: Some("0,2".into()),
            rank_summary: Some(("all", "--rank-summaries")),
        };
        let got = additions(
            &Env::default(),
            Path::new("/x/libsyclgraph.so"),
            &f.runtime,
            &linkage(&[]),
            &s,
            false,
            &f.dir,
        );
        let pairs: Vec<(&str, &OsStr)> =
            got.iter().map(|a| (a.name, a.value.as_os_str())).collect();
        assert_eq!(
            pairs[3],
            ("INTEL_LIBITTNOTIFY64", OsStr::new("/x/libsyclgraph.so"))
        );
        assert_eq!(
            pairs[4..],
            [
                ("SYCLGRAPH_OUTPUT_DIR", OsStr::new("/out")),
                ("SYCLGRAPH_DEVICE_TIMING", OsStr::new("0")),
                ("SYCLGRAPH_FORCE_PROFILING", OsStr::new("0")),
                ("SYCLGRAPH_MAX_INSTANCES", OsStr::new("7")),
                ("SYCLGRAPH_QUIET", OsStr::new("1")),
                ("SYCLGRAPH_START", OsStr::new("paused")),
                ("SYCLGRAPH_DELAY", OsStr::new("1.5")),
                ("SYCLGRAPH_DURATION", OsStr::new("2")),
                ("SYCLGRAPH_REGION", OsStr::new("backward")),
                ("SYCLGRAPH_RANKS", OsStr::new("0,2")),
                ("SYCLGRAPH_RANK_SUMMARY", OsStr::new("all")),
            ]
        );
        fs::remove_dir_all(&f.dir).unwrap();
    }

    #[test]
    fn other_subscribers_stay() {
        let ours = Path::new("/new/libsyclgraph.so");
        assert_eq!(subscribers(None, ours), "/new/libsyclgraph.so");
        let list = OsString::from("/a/libother.so,/old/libsyclgraph.so");
        assert_eq!(
            subscribers(Some(&list), ours),
            "/a/libother.so,/new/libsyclgraph.so"
        );
    }
}
