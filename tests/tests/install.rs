//! syclgraph as users install it: in a fresh venv beside the pinned dpnp,
//! the wheel, `pip install .` from a fresh clone (the committed files: `git
//! clone` of this repository) and the wheel pip builds from that clone's
//! sdist; the release archive unpacked under a prefix; and a build from
//! source. Each traced run uses the installed command only (a clean
//! environment: no repository path, no variable set by hand). The commands
//! are the README's "Install" section, run as written. Also the XPTI header
//! search of `xpti-sys/build.rs` in a real build, through an imitation
//! oneAPI (`CMPLR_ROOT`), an active Python environment and
//! `XPTI_INCLUDE_DIR`.
//!
//! `scripts/test.sh` builds the wheel (`scripts/build-wheel.sh`) and the
//! archive (`scripts/package.sh`) and downloads the pinned wheels
//! (`scripts/setup-packaging.sh`) before `cargo test`. The clone's and the
//! sdist's builds reuse the dependencies of `target/release` (a copy of
//! it, `target/install-builds`): only the workspace's crates are compiled.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use syclgraph_tests::{
    check_outputs, profiling_lines, read_csv, repo_root, rows_at, strip_profiling, tag_line,
    try_output_within,
};

/// The example every C++ trace here runs.
const PIPELINE: &str = "examples/pipeline.cpp";

/// `[workspace.package] version` of Cargo.toml: the one version number.
fn workspace_version() -> String {
    let text = fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let section = &text[text.find("[workspace.package]").expect("workspace package")..];
    let line = section
        .lines()
        .find(|l| l.starts_with("version"))
        .expect("a workspace version");
    line.split('"').nth(1).expect("a quoted version").to_owned()
}

/// The fenced `sh` block under `### heading` of the README's Install section.
fn readme_block(heading: &str) -> String {
    let text = fs::read_to_string(repo_root().join("README.md")).unwrap();
    let install = &text[text.find("\n## Install\n").expect("an Install section")..];
    let install = &install[..install[1..].find("\n## ").map_or(install.len(), |i| i + 1)];
    let at = install
        .find(&format!("\n### {heading}\n"))
        .unwrap_or_else(|| panic!("no '### {heading}' in the README's Install section"));
    let rest = &install[at..];
    let start = rest.find("```sh\n").expect("an sh block") + "```sh\n".len();
    let len = rest[start..].find("```").expect("the block's end");
    rest[start..start + len].to_owned()
}

/// A scratch folder for one test, emptied first.
fn scratch(test: &str) -> PathBuf {
    let dir = repo_root()
        .join("target/test-output")
        .join(format!("install-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// `bash -c script` in `cwd` with a clean environment: `HOME` is `home`,
/// `PATH` the system's with `path_first` in front; only the toolchain's
/// variables (for `cargo`) and `TMPDIR` are kept.
fn clean_shell(script: &str, cwd: &Path, home: &Path, path_first: &[PathBuf]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).current_dir(cwd).env_clear();
    let real_home = std::env::var_os("HOME").map(PathBuf::from);
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| real_home.as_ref().map(|h| h.join(".cargo")));
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| real_home.as_ref().map(|h| h.join(".rustup")));
    let mut path: Vec<PathBuf> = path_first.to_vec();
    if let Some(cargo_home) = &cargo_home {
        cmd.env("CARGO_HOME", cargo_home);
        path.push(cargo_home.join("bin"));
    }
    if let Some(rustup_home) = rustup_home {
        cmd.env("RUSTUP_HOME", rustup_home);
    }
    for keep in ["RUSTUP_TOOLCHAIN", "TMPDIR"] {
        if let Some(v) = std::env::var_os(keep) {
            cmd.env(keep, v);
        }
    }
    path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    cmd.env("PATH", std::env::join_paths(path).unwrap())
        .env("HOME", home);
    cmd
}

/// [`clean_shell`] in the activated `venv` (its `bin` first on `PATH`,
/// `VIRTUAL_ENV` set), as a user who installed the wheel there runs things.
fn in_venv(script: &str, cwd: &Path, home: &Path, venv: &Path) -> Command {
    let mut cmd = clean_shell(script, cwd, home, &[venv.join("bin")]);
    cmd.env("VIRTUAL_ENV", venv);
    cmd
}

/// Runs `cmd` (at most `minutes`); returns its output.
fn run(cmd: Command, minutes: u64) -> Output {
    try_output_within(cmd, Duration::from_secs(60 * minutes)).unwrap_or_else(|e| panic!("{e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts `out` exited with `code`, showing both streams when not.
fn assert_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}\nstdout:\n{}\nstderr:\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                todo.push(path.clone());
            }
            found.insert(path.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    found
}

/// An ELF file without debug information or a symbol table (stripped).
fn assert_stripped(path: &Path) {
    use object::{Object, ObjectSection};
    let data = fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let debug: Vec<_> = file
        .sections()
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .filter(|n| n.starts_with(".debug") || n == ".symtab")
        .collect();
    assert!(debug.is_empty(), "{} keeps {debug:?}", path.display());
}

/// The pinned packages of `scripts/lib/runtime-pins.sh` (setup.sh's pins).
fn runtime_pins() -> Vec<String> {
    let text = fs::read_to_string(repo_root().join("scripts/lib/runtime-pins.sh")).unwrap();
    let pins: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && l.contains("=="))
        .map(str::to_owned)
        .collect();
    assert_eq!(pins.len(), 4, "{pins:?}");
    pins
}

/// The one file in `dir` whose name starts with `prefix` and ends with `suffix`.
fn built(dir: &str, prefix: &str, suffix: &str, how: &str) -> PathBuf {
    let dir = repo_root().join(dir);
    let found: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}; run {how} first", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} in {}: {found:?}; run {how}",
        dir.display()
    );
    found.into_iter().next().unwrap()
}

/// A dpnp script with known work: 7 additions of a scalar to a 1000-element
/// array (dpnp's `add_strided_kernel`; array + array of two contiguous arrays
/// takes another path, whose kernels syclgraph does not see today), then a
/// sum; exits with 3 to show the exit code passes through.
const DPNP_SCRIPT: &str = "\
import sys
import dpnp
a = dpnp.ones(1000, dtype=dpnp.float32)
for _ in range(7):
    a = a + 1.0
print('total', float(dpnp.sum(a)))
sys.exit(3)
";

/// Checks a traced run of `examples/pipeline.cpp` against the program's own
/// measurements: every saxpy and scale instance is a kernels.csv row whose
/// duration is the one the program read from its events.
fn check_pipeline_run(stdout: &str, out: &Path) {
    check_outputs(out);
    let measured = profiling_lines(stdout);
    let rows = read_csv(&out.join("kernels.csv"));
    for label in ["saxpy", "scale"] {
        let found = rows_at(&rows, PIPELINE, tag_line(PIPELINE, label));
        let want: Vec<u64> = (0..)
            .map_while(|i| measured.get(&(label.to_owned(), i)).copied())
            .collect();
        assert!(!want.is_empty(), "the program printed no {label} times");
        let got: Vec<u64> = found
            .iter()
            .map(|r| r["duration_ns"].parse().unwrap())
            .collect();
        assert_eq!(got, want, "{label}: kernels.csv against the program's own");
    }
}

/// The pip commands of the tests: the wheels (the pinned runtime's, and
/// the build requirements for pip's build isolation) come from the
/// wheelhouse of scripts/setup-packaging.sh, not the network.
fn offline_pip(cmd: &mut Command) {
    cmd.env("PIP_NO_INDEX", "1")
        .env("PIP_FIND_LINKS", repo_root().join(".wheelhouse"))
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
}

/// The files a wheel holds, by name (Python's zipfile reads it).
fn wheel_members(wheel: &Path) -> BTreeSet<String> {
    let mut list = Command::new("python3");
    list.args([
        "-c",
        "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))",
    ])
    .arg(wheel);
    let out = run(list, 1);
    assert_exit(&out, 0, "listing a wheel");
    let names: BTreeSet<String> = text(&out.stdout).lines().map(String::from).collect();
    assert!(!names.is_empty(), "{} holds no file", wheel.display());
    names
}

/// A target directory for the builds of the fresh clone and of its sdist,
/// made once per test process from the release build of `target/release`:
/// their dependencies are compiled already (the workspace's own crates,
/// from another folder, are compiled again). A copy, not `target/` itself:
/// those builds would replace the `target/release/libsyclgraph.so` that
/// every other test runs.
fn seeded_target_dir() -> PathBuf {
    static SEEDED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SEEDED
        .get_or_init(|| {
            let target = repo_root().join("target/install-builds");
            let _ = fs::remove_dir_all(&target);
            fs::create_dir_all(target.join("release")).unwrap();
            let mut copy = Command::new("cp");
            copy.arg("-a");
            for part in ["deps", "build", ".fingerprint"] {
                copy.arg(repo_root().join("target/release").join(part));
            }
            copy.arg(target.join("release"));
            assert_exit(&run(copy, 5), 0, "seeding the clone's target directory");
            target
        })
        .clone()
}

/// Installed into `venv` since `before` (outside site-packages): the
/// command, the subscriber and the header, stripped, and only them; in
/// site-packages only the dist-info; `syclgraph --version` is the
/// workspace's.
fn check_installed(venv: &Path, before: &BTreeSet<PathBuf>, work: &Path, home: &Path) {
    let version = workspace_version();
    let ours: BTreeSet<PathBuf> = files_under(venv)
        .difference(before)
        .filter(|p| venv.join(p).is_file() && !p.to_string_lossy().contains("site-packages/"))
        .cloned()
        .collect();
    let expected: BTreeSet<PathBuf> = [
        "bin/syclgraph",
        "lib/libsyclgraph.so",
        "include/syclgraph.h",
    ]
    .map(PathBuf::from)
    .into_iter()
    .collect();
    assert_eq!(ours, expected, "the files installed outside site-packages");
    let dist_info = format!("syclgraph-{version}.dist-info");
    let in_site: Vec<PathBuf> = files_under(venv)
        .difference(before)
        .filter(|p| p.to_string_lossy().contains("site-packages/"))
        .filter(|p| !p.iter().any(|c| c.to_string_lossy() == dist_info))
        .cloned()
        .collect();
    assert!(
        in_site.is_empty(),
        "site-packages got more than {dist_info}: {in_site:?}"
    );
    assert_stripped(&venv.join("bin/syclgraph"));
    assert_stripped(&venv.join("lib/libsyclgraph.so"));
    let v = run(in_venv("syclgraph --version", work, home, venv), 1);
    assert_exit(&v, 0, "syclgraph --version");
    assert_eq!(text(&v.stdout), format!("syclgraph {version}\n"));
}

/// The dpnp script's run in `out_dir`: the 7 additions were traced, each a
/// kernel with a device time.
fn check_dpnp_run(out_dir: &Path) {
    check_outputs(out_dir);
    let summary = read_csv(&out_dir.join("summary.csv"));
    let adds: Vec<_> = summary
        .iter()
        .filter(|r| r["name"].starts_with("dpnp::tensor::kernels::add::"))
        .collect();
    assert_eq!(adds.len(), 1, "one add node: {summary:?}");
    assert_eq!(adds[0]["count"], "7", "{:?}", adds[0]);
    let kernels = read_csv(&out_dir.join("kernels.csv"));
    let timed_adds = kernels
        .iter()
        .filter(|r| r["name"].starts_with("dpnp::tensor::kernels::add::") && r["timing"] == "ok")
        .count();
    assert_eq!(timed_adds, 7, "every add has its device time");
}

/// Runs the README block `block` in the activated `venv` from `cwd`, where
/// `my_script.py` is the dpnp script; checks its exit code (the script's
/// own) and the run it traced into `cwd/out`.
fn run_pip_block(block: &str, cwd: &Path, home: &Path, venv: &Path, target: Option<&Path>) {
    fs::write(cwd.join("my_script.py"), DPNP_SCRIPT).unwrap();
    let mut cmd = in_venv(block, cwd, home, venv);
    offline_pip(&mut cmd);
    if let Some(target) = target {
        cmd.env("CARGO_TARGET_DIR", target);
    }
    let out = run(cmd, 20);
    assert_exit(&out, 3, "the README's block: the script's own exit code");
    assert!(
        text(&out.stdout).contains("total 8000.0\n"),
        "{}",
        text(&out.stdout)
    );
    check_dpnp_run(&cwd.join("out"));
}

/// `pip uninstall syclgraph` leaves `venv` as it was `before`.
fn check_uninstall(venv: &Path, before: &BTreeSet<PathBuf>, work: &Path, home: &Path) {
    let uninstall = in_venv("pip uninstall -y syclgraph", work, home, venv);
    assert_exit(&run(uninstall, 2), 0, "pip uninstall");
    let after = files_under(venv);
    let left: Vec<_> = after.difference(before).collect();
    let lost: Vec<_> = before.difference(&after).collect();
    assert!(
        left.is_empty() && lost.is_empty(),
        "left {left:?}, removed {lost:?}"
    );
}

/// The one wheel in `dir`; it has `want`'s name and files.
fn check_same_wheel(dir: &Path, want: &Path, what: &str) -> PathBuf {
    let found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(found.len(), 1, "{what}: one wheel, not {found:?}");
    assert_eq!(
        found[0].file_name(),
        want.file_name(),
        "{what}: the wheel scripts/build-wheel.sh makes"
    );
    assert_eq!(
        wheel_members(&found[0]),
        wheel_members(want),
        "{what}: its files"
    );
    found[0].clone()
}

#[test]
fn the_wheel_a_fresh_clone_and_its_sdist_install_beside_dpnp_trace_and_uninstall_cleanly() {
    let version = workspace_version();
    let wheel = built(
        "target/wheels",
        &format!("syclgraph-{version}-py3-none-manylinux_"),
        "_x86_64.whl",
        "scripts/build-wheel.sh",
    );
    let wheel_name = wheel.file_name().unwrap().to_str().unwrap().to_owned();
    // The wheel holds the command, the subscriber and the header, and only
    // them (with its metadata).
    let members = wheel_members(&wheel);
    let data = format!("syclgraph-{version}.data/");
    let shipped: BTreeSet<&str> = members
        .iter()
        .filter_map(|m| m.strip_prefix(&data))
        .collect();
    assert_eq!(
        shipped,
        BTreeSet::from([
            "scripts/syclgraph",
            "data/lib/libsyclgraph.so",
            "data/include/syclgraph.h"
        ]),
        "{members:?}"
    );
    let wheel_block = readme_block("From a wheel");
    assert!(
        wheel_block.contains(&format!("pip install {wheel_name}\n")),
        "the README installs another wheel than {wheel_name}:\n{wheel_block}"
    );
    let dir = scratch("wheel");
    let home = dir.join("home");
    let venv = dir.join("venv");
    fs::create_dir_all(&home).unwrap();

    // A fresh venv with the pinned runtime, dpctl and dpnp, from the
    // wheelhouse of scripts/setup-packaging.sh (no network).
    let wheelhouse = repo_root().join(".wheelhouse");
    let mut make = clean_shell(
        "python3 -m venv \"$VENV\" && \"$VENV/bin/pip\" install -q --no-index \
         --find-links \"$WHEELHOUSE\" \"$@\"",
        &dir,
        &home,
        &[],
    );
    make.arg("make-venv")
        .args(runtime_pins())
        .env("VENV", &venv)
        .env("WHEELHOUSE", &wheelhouse);
    assert_exit(
        &run(make, 15),
        0,
        "making the fresh venv (scripts/setup-packaging.sh downloads the wheels)",
    );
    let before = files_under(&venv);

    // 1. The wheel: the README's commands, as written, in the activated
    // environment.
    let work = dir.join("work");
    fs::create_dir_all(&work).unwrap();
    fs::copy(&wheel, work.join(&wheel_name)).unwrap();
    run_pip_block(&wheel_block, &work, &home, &venv, None);
    check_installed(&venv, &before, &work, &home);

    // A C++ program built against the fresh venv's runtime, traced by the
    // installed command (nothing else on the command line or in the
    // environment); it behaves as it does untraced.
    let programs = dir.join("programs");
    let mut build = Command::new("bash");
    build
        .arg(repo_root().join("scripts/build-programs.sh"))
        .arg("pipeline")
        .env("SYCLGRAPH_VENV", &venv)
        .env("SYCLGRAPH_PROGRAMS_OUT", &programs);
    assert_exit(
        &run(build, 10),
        0,
        "building the example against the fresh venv",
    );
    let app = programs.join("pipeline");
    let mut untraced = clean_shell("\"$APP\"", &work, &home, &[]);
    // Untraced, the PyPI runtime needs its library path and CPU device named
    // (what `syclgraph run` adds by itself).
    untraced
        .env("APP", &app)
        .env("LD_LIBRARY_PATH", venv.join("lib"))
        .env("OCL_ICD_FILENAMES", venv.join("lib/libintelocl.so"));
    let untraced = run(untraced, 5);
    assert_exit(&untraced, 0, "the example untraced");
    let mut traced = in_venv("syclgraph run -o out-cpp -- \"$APP\"", &work, &home, &venv);
    traced.env("APP", &app);
    let traced = run(traced, 5);
    assert_exit(&traced, 0, "the example traced by the installed syclgraph");
    assert_eq!(
        strip_profiling(&text(&traced.stdout)),
        strip_profiling(&text(&untraced.stdout))
    );
    check_pipeline_run(&text(&traced.stdout), &work.join("out-cpp"));
    check_uninstall(&venv, &before, &work, &home);

    // 2. A fresh clone (its committed files only; nothing built in it):
    // the README's `pip install .`, with pip's build isolation, builds the
    // command and the subscriber from source and installs the same files.
    let clone = dir.join("clone");
    let mut git = Command::new("git");
    git.args(["clone", "-q"]).arg(repo_root()).arg(&clone);
    assert_exit(&run(git, 2), 0, "git clone");
    let target = seeded_target_dir();
    run_pip_block(
        &readme_block("With pip"),
        &clone,
        &home,
        &venv,
        Some(&target),
    );
    check_installed(&venv, &before, &work, &home);
    check_uninstall(&venv, &before, &work, &home);

    // `pip wheel .` there: the wheel scripts/build-wheel.sh makes, alone
    // (no other wheel beside it, none left in the clone).
    let wheels = dir.join("clone-wheels");
    let mut pip_wheel = in_venv("pip wheel -q -w \"$OUT\" .", &clone, &home, &venv);
    pip_wheel
        .env("OUT", &wheels)
        .env("CARGO_TARGET_DIR", &target);
    offline_pip(&mut pip_wheel);
    assert_exit(&run(pip_wheel, 10), 0, "pip wheel . in the clone");
    check_same_wheel(&wheels, &wheel, "pip wheel . in the clone");
    assert!(
        !target.join("wheels").exists() && !clone.join("target/wheels").exists(),
        "a wheel was left in a target directory"
    );

    // 3. The clone's sdist (python -m build, the frontend, with the
    // packaging venv's pinned backend requirements): `pip wheel` of it
    // builds the same wheel from its files alone, which then installs and
    // runs.
    let sdists = dir.join("sdist");
    let mut sdist = clean_shell(
        "\"$PACKAGING\"/bin/python -m build -q --sdist --no-isolation --outdir \"$OUT\" .",
        &clone,
        &home,
        &[],
    );
    sdist
        .env("PACKAGING", repo_root().join(".venv-packaging"))
        .env("OUT", &sdists);
    assert_exit(&run(sdist, 5), 0, "python -m build --sdist in the clone");
    let sdist = sdists.join(format!("syclgraph-{version}.tar.gz"));
    assert!(
        sdist.is_file(),
        "{:?}",
        fs::read_dir(&sdists).unwrap().collect::<Vec<_>>()
    );
    let wheels = dir.join("sdist-wheels");
    let mut from_sdist = in_venv("pip wheel -q -w \"$OUT\" \"$SDIST\"", &work, &home, &venv);
    from_sdist
        .env("OUT", &wheels)
        .env("SDIST", &sdist)
        .env("CARGO_TARGET_DIR", &target);
    offline_pip(&mut from_sdist);
    assert_exit(&run(from_sdist, 15), 0, "pip wheel of the sdist");
    let from_sdist = check_same_wheel(&wheels, &wheel, "pip wheel of the sdist");
    let mut install = in_venv("pip install -q \"$WHEEL\"", &work, &home, &venv);
    install.env("WHEEL", &from_sdist);
    offline_pip(&mut install);
    assert_exit(&run(install, 2), 0, "pip install of the sdist's wheel");
    check_installed(&venv, &before, &work, &home);
    check_uninstall(&venv, &before, &work, &home);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_archive_unpacked_under_a_prefix_traces() {
    let version = workspace_version();
    let name = format!("syclgraph-{version}-x86_64-linux");
    let archive = built("target/package", &name, ".tar.gz", "scripts/package.sh");
    let block = readme_block("From the release archive");
    assert!(
        block.contains(&format!("{name}.tar.gz"))
            && block.contains(&format!("{name}/bin/syclgraph")),
        "the README unpacks another archive than {name}:\n{block}"
    );
    let dir = scratch("archive");
    let home = dir.join("home");
    let work = dir.join("work");
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&work).unwrap();
    fs::copy(&archive, work.join(archive.file_name().unwrap())).unwrap();
    // The program brings its own runtime (the project venv's, by rpath).
    fs::copy(
        syclgraph_tests::program("pipeline"),
        work.join("my_sycl_app"),
    )
    .unwrap();

    let out = run(clean_shell(&block, &work, &home, &[]), 5);
    assert_exit(&out, 0, "the README's archive block");
    let prefix = home.join("opt").join(&name);
    let files: BTreeSet<PathBuf> = files_under(&prefix);
    let expected: BTreeSet<PathBuf> = [
        "bin",
        "bin/syclgraph",
        "lib",
        "lib/libsyclgraph.so",
        "include",
        "include/syclgraph.h",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
    ]
    .map(PathBuf::from)
    .into_iter()
    .collect();
    assert_eq!(files, expected);
    assert_stripped(&prefix.join("bin/syclgraph"));
    assert_stripped(&prefix.join("lib/libsyclgraph.so"));
    // Only the prefix's lib/ had a libsyclgraph.so for it to find.
    check_pipeline_run(&text(&out.stdout), &work.join("out"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_build_from_source_installs_under_home_and_traces() {
    let block = readme_block("From source");
    let dir = scratch("source");
    let home = dir.join("home");
    fs::create_dir_all(&home).unwrap();
    syclgraph_tests::program("pipeline");
    // As written, from the repository root; `out` goes to a scratch folder.
    let script = block.replace("-o out", "-o \"$OUT\"");
    let mut cmd = clean_shell(&script, &repo_root(), &home, &[]);
    cmd.env("OUT", dir.join("out"));
    // The variables the build scripts watch, as the build of target/release
    // saw them (scripts/test.sh's): with them, `cargo build --release` finds
    // that build up to date instead of building it again under the tests.
    for var in BUILD_VARIABLES {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    let out = run(cmd, 20);
    assert_exit(&out, 0, "the README's from-source block");
    assert!(home.join(".local/bin/syclgraph").is_file());
    assert!(home.join(".local/lib/libsyclgraph.so").is_file());
    check_pipeline_run(&text(&out.stdout), &dir.join("out"));
    fs::remove_dir_all(&dir).unwrap();
}

/// Variables that make `xpti-sys`'s or `cc`'s build scripts run again.
const BUILD_VARIABLES: [&str; 9] = [
    "XPTI_INCLUDE_DIR",
    "CMPLR_ROOT",
    "ONEAPI_ROOT",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
];

/// The build script's record of the header it compiled the shim against.
fn header_used(target: &Path) -> String {
    let build = target.join("debug/build");
    let mut outputs: Vec<PathBuf> = fs::read_dir(&build)
        .unwrap()
        .map(|e| e.unwrap().path().join("output"))
        .filter(|p| {
            p.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("xpti-sys-")
                && p.is_file()
        })
        .collect();
    outputs.sort_by_key(|p| fs::metadata(p).unwrap().modified().unwrap());
    let text =
        fs::read_to_string(outputs.last().expect("an xpti-sys build script output")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .find(|l| l.ends_with("xpti/xpti_data_types.h"))
        .expect("the header in the build script's output")
        .to_owned()
}

#[test]
fn xpti_sys_builds_against_oneapi_an_active_venv_and_xpti_include_dir() {
    // The venv's headers copied into the places users have them.
    let headers = repo_root().join(".venv/include/xpti");
    assert!(
        headers.is_dir(),
        "no {}: run scripts/setup.sh",
        headers.display()
    );
    let dir = scratch("xpti-sys");
    let copy_to = |include: &Path| {
        fs::create_dir_all(include.join("xpti")).unwrap();
        for entry in fs::read_dir(&headers).unwrap() {
            let path = entry.unwrap().path();
            fs::copy(&path, include.join("xpti").join(path.file_name().unwrap())).unwrap();
        }
    };
    let oneapi = dir.join("oneapi/compiler/2026.2");
    copy_to(&oneapi.join("include"));
    let active = dir.join("active-venv");
    copy_to(&active.join("include"));
    let explicit = dir.join("xpti-include");
    copy_to(&explicit);

    // Its own target folder (the build of the tests holds target/'s lock);
    // kept between runs so that only the shim is compiled again.
    let target = repo_root().join("target/xpti-sys-headers");
    let build = |vars: &[(&str, &Path)]| {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args(["build", "--offline", "-p", "xpti-sys"])
            .current_dir(repo_root())
            .env("CARGO_TARGET_DIR", &target);
        // Only the given variables point at headers.
        for var in &BUILD_VARIABLES[..5] {
            cmd.env_remove(var);
        }
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = run(cmd, 10);
        assert_exit(&out, 0, &format!("cargo build -p xpti-sys with {vars:?}"));
        header_used(&target)
    };
    let header = |include: &Path| include.join("xpti/xpti_data_types.h").display().to_string();
    assert_eq!(
        build(&[("CMPLR_ROOT", &oneapi)]),
        header(&oneapi.join("include"))
    );
    assert_eq!(
        build(&[("VIRTUAL_ENV", &active)]),
        header(&active.join("include"))
    );
    assert_eq!(
        build(&[("XPTI_INCLUDE_DIR", &explicit), ("CMPLR_ROOT", &oneapi)]),
        header(&explicit)
    );
    fs::remove_dir_all(&dir).unwrap();
}
