//! Where the build looks for the XPTI headers (`xpti/xpti_data_types.h`),
//! first found wins:
//! 1. `XPTI_INCLUDE_DIR` (when set, the only place looked at: it was asked for);
//! 2. an installed oneAPI: `$CMPLR_ROOT`, `$ONEAPI_ROOT/compiler/latest`, then
//!    `/opt/intel/oneapi/compiler/latest`, each in its `include/` (or the
//!    older `linux/include/`);
//! 3. the active Python environment's DPC++ runtime package
//!    (`intel-sycl-rt` puts the headers in `<prefix>/include`): `$VIRTUAL_ENV`,
//!    then `$CONDA_PREFIX`;
//! 4. the project's own venv, `<workspace>/.venv/include` (`scripts/setup.sh`).
//!
//! Shared by `build.rs` and the crate's unit tests (no dependencies).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The header whose folder is the include directory.
pub const HEADER: &str = "xpti/xpti_data_types.h";

/// The environment variables the search reads (the build reruns when one changes).
pub const VARIABLES: [&str; 5] = [
    "XPTI_INCLUDE_DIR",
    "CMPLR_ROOT",
    "ONEAPI_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
];

/// One place looked at: what it is (for the error) and the folder, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// How the error names it (`CMPLR_ROOT=/opt/x: /opt/x/include`, `VIRTUAL_ENV (not set)`).
    pub name: String,
    /// The include folder to try; `None` when its variable is not set.
    pub dir: Option<PathBuf>,
}

/// The places, in order, for the environment `var` and the workspace root.
pub fn places(var: &dyn Fn(&str) -> Option<OsString>, workspace: &Path) -> Vec<Place> {
    let mut places = Vec::new();
    under_variable(
        &mut places,
        var,
        "CMPLR_ROOT",
        &["include", "linux/include"],
    );
    under_variable(
        &mut places,
        var,
        "ONEAPI_ROOT",
        &["compiler/latest/include", "compiler/latest/linux/include"],
    );
    for dir in [
        "/opt/intel/oneapi/compiler/latest/include",
        "/opt/intel/oneapi/compiler/latest/linux/include",
    ] {
        places.push(Place {
            name: dir.to_owned(),
            dir: Some(PathBuf::from(dir)),
        });
    }
    under_variable(&mut places, var, "VIRTUAL_ENV", &["include"]);
    under_variable(&mut places, var, "CONDA_PREFIX", &["include"]);
    let venv = workspace.join(".venv/include");
    places.push(Place {
        name: format!("the project's venv: {}", venv.display()),
        dir: Some(venv),
    });
    places
}

/// Adds `$name/<sub>` for each of `subdirs`, or one place saying `name` is not set.
fn under_variable(
    places: &mut Vec<Place>,
    var: &dyn Fn(&str) -> Option<OsString>,
    name: &str,
    subdirs: &[&str],
) {
    let Some(root) = var(name).filter(|v| !v.is_empty()) else {
        places.push(Place {
            name: format!("{name} (not set)"),
            dir: None,
        });
        return;
    };
    let root = Path::new(&root);
    for sub in subdirs {
        let dir = root.join(sub);
        places.push(Place {
            name: format!("{name}={}: {}", root.display(), dir.display()),
            dir: Some(dir),
        });
    }
}

/// The include folder holding [`HEADER`]; the error is one line naming every
/// place looked at.
pub fn find(var: &dyn Fn(&str) -> Option<OsString>, workspace: &Path) -> Result<PathBuf, String> {
    if let Some(dir) = var("XPTI_INCLUDE_DIR").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        return if dir.join(HEADER).is_file() {
            Ok(dir)
        } else {
            Err(format!(
                "syclgraph: XPTI headers not found: XPTI_INCLUDE_DIR={} holds no {HEADER}",
                dir.display()
            ))
        };
    }
    let places = places(var, workspace);
    if let Some(dir) = places
        .iter()
        .filter_map(|p| p.dir.as_ref())
        .find(|dir| dir.join(HEADER).is_file())
    {
        return Ok(dir.clone());
    }
    let looked: Vec<&str> = std::iter::once("XPTI_INCLUDE_DIR (not set)")
        .chain(places.iter().map(|p| p.name.as_str()))
        .collect();
    Err(format!(
        "syclgraph: XPTI headers ({HEADER}) not found; looked at {}. Set XPTI_INCLUDE_DIR to the \
         folder holding {HEADER}, load oneAPI (CMPLR_ROOT), activate a Python environment with \
         intel-sycl-rt, or run scripts/setup.sh",
        looked.join(", ")
    ))
}
