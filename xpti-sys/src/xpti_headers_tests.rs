//! Unit tests of the XPTI header search that `build.rs` runs
//! (`build/xpti_headers.rs`): the order of the places and the error.

#[path = "../build/xpti_headers.rs"]
mod xpti_headers;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use xpti_headers::{find, HEADER, VARIABLES};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xpti-headers-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Puts a header into `dir` and returns `dir`.
fn with_header(dir: PathBuf) -> PathBuf {
    fs::create_dir_all(dir.join("xpti")).unwrap();
    fs::write(dir.join(HEADER), "").unwrap();
    dir
}

fn env(pairs: &[(&str, &Path)]) -> impl Fn(&str) -> Option<OsString> {
    let map: HashMap<String, OsString> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

/// `/opt/intel/oneapi` when this machine has one: it comes before the
/// Python environments.
fn system_oneapi() -> Option<PathBuf> {
    [
        "/opt/intel/oneapi/compiler/latest/include",
        "/opt/intel/oneapi/compiler/latest/linux/include",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|d| d.join(HEADER).is_file())
}

#[test]
fn each_place_is_used_in_order() {
    let dir = scratch("order");
    let workspace = dir.join("ws");
    let project = with_header(workspace.join(".venv/include"));
    let conda = dir.join("conda");
    let venv = dir.join("venv");
    let oneapi = dir.join("oneapi");
    let cmplr = dir.join("cmplr");
    let explicit = with_header(dir.join("explicit"));
    let vars = [
        ("CONDA_PREFIX", conda.as_path()),
        ("VIRTUAL_ENV", venv.as_path()),
        ("ONEAPI_ROOT", oneapi.as_path()),
        ("CMPLR_ROOT", cmplr.as_path()),
        ("XPTI_INCLUDE_DIR", explicit.as_path()),
    ];
    let oneapi_default = system_oneapi();
    // Nothing in the variables' places yet: the project's venv.
    let got = find(&env(&vars[..4]), &workspace).unwrap();
    assert_eq!(got, oneapi_default.clone().unwrap_or(project.clone()));
    // Each place, once it holds headers, wins over every later one.
    let conda_inc = with_header(conda.join("include"));
    let venv_inc = with_header(venv.join("include"));
    if oneapi_default.is_none() {
        assert_eq!(find(&env(&vars[..1]), &workspace).unwrap(), conda_inc);
        assert_eq!(find(&env(&vars[..2]), &workspace).unwrap(), venv_inc);
    }
    // The oneAPI layouts: ONEAPI_ROOT's compiler/latest (the older linux/ one
    // here), then CMPLR_ROOT before it.
    let oneapi_inc = with_header(oneapi.join("compiler/latest/linux/include"));
    assert_eq!(find(&env(&vars[..3]), &workspace).unwrap(), oneapi_inc);
    let cmplr_inc = with_header(cmplr.join("include"));
    assert_eq!(find(&env(&vars[..4]), &workspace).unwrap(), cmplr_inc);
    assert_eq!(find(&env(&vars), &workspace).unwrap(), explicit);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_error_names_every_place_looked_at() {
    let dir = scratch("error");
    let workspace = dir.join("ws");
    let cmplr = dir.join("cmplr");
    let venv = dir.join("venv");
    let vars = [
        ("CMPLR_ROOT", cmplr.as_path()),
        ("VIRTUAL_ENV", venv.as_path()),
    ];
    if system_oneapi().is_some() {
        return; // this machine's oneAPI would be found
    }
    let err = find(&env(&vars), &workspace).unwrap_err();
    let d = dir.display();
    let expected = format!(
        "syclgraph: XPTI headers ({HEADER}) not found; looked at XPTI_INCLUDE_DIR (not set), \
         CMPLR_ROOT={d}/cmplr: {d}/cmplr/include, CMPLR_ROOT={d}/cmplr: {d}/cmplr/linux/include, \
         ONEAPI_ROOT (not set), /opt/intel/oneapi/compiler/latest/include, \
         /opt/intel/oneapi/compiler/latest/linux/include, VIRTUAL_ENV={d}/venv: {d}/venv/include, \
         CONDA_PREFIX (not set), the project's venv: {d}/ws/.venv/include. Set XPTI_INCLUDE_DIR \
         to the folder holding {HEADER}, load oneAPI (CMPLR_ROOT), activate a Python environment \
         with intel-sycl-rt, or run scripts/setup.sh"
    );
    assert_eq!(err, expected);
    assert!(!err.contains('\n'));
    // The build reruns when any variable the search reads changes.
    for var in VARIABLES {
        assert!(err.contains(var), "{var} is not looked at");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_set_xpti_include_dir_without_headers_is_an_error_not_skipped() {
    let dir = scratch("explicit");
    let workspace = dir.join("ws");
    with_header(workspace.join(".venv/include"));
    let wrong = dir.join("wrong");
    let err = find(&env(&[("XPTI_INCLUDE_DIR", wrong.as_path())]), &workspace).unwrap_err();
    assert_eq!(
        err,
        format!(
            "syclgraph: XPTI headers not found: XPTI_INCLUDE_DIR={} holds no {HEADER}",
            wrong.display()
        )
    );
    fs::remove_dir_all(&dir).unwrap();
}
