"""The build backend of the `syclgraph` wheel (PEP 517): `pip install .`,
`pip wheel .` and `python -m build` from a clone, and `pip install` of the
sdist, each in one step with nothing run before.

A wheel holds the `syclgraph` command (in its scripts: `<prefix>/bin`) and,
as its data, `libsyclgraph.so` (`<prefix>/lib`, where `syclgraph run` looks)
and `syclgraph.h` (`<prefix>/include`). maturin builds and packages the
command; before it runs, this backend builds the subscriber in the same
`cargo build --release` and copies it, fresh, into the data folder maturin
packages (`target/wheel-data/`, emptied first: nothing an earlier build left
there is shipped). The wheel gets the manylinux tag of the glibc it needs,
the tag `maturin build` gives it (maturin's PEP 517 default is the plain
`linux` tag).

The sdist is every file of the source tree that git tracks (every file but
the build outputs when there is no git, as in an unpacked sdist), with the
metadata maturin writes for the wheel as its PKG-INFO: the whole Cargo
workspace, so that the subscriber builds from it too.

`CARGO_TARGET_DIR` is honoured, as cargo honours it: builds from several
clones can share the compiled dependencies.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile

import maturin

# maturin's hooks run the `maturin` command: the one installed beside this
# Python's maturin module (pip's isolated build environment puts its scripts
# on PATH; a build without isolation, from a venv not activated, may not).
os.environ["PATH"] = os.pathsep.join(
    [sysconfig.get_path("scripts"), os.environ.get("PATH", "")]
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# maturin's `data` folder (pyproject.toml's [tool.maturin]).
WHEEL_DATA = os.path.join(ROOT, "target", "wheel-data")
# The cargo packages the wheel ships: the subscriber and the command.
PACKAGES = ["syclgraph", "syclgraph-cli"]
# What is never part of an sdist made without git.
NOT_SOURCES = {".git", "target", "build", ".wheelhouse", "__pycache__"}

get_requires_for_build_wheel = maturin.get_requires_for_build_wheel
get_requires_for_build_sdist = maturin.get_requires_for_build_sdist


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """PEP 517: the wheel's metadata, as maturin writes it (it wants its data
    folder to exist; `build_wheel` fills it)."""
    os.chdir(ROOT)
    os.makedirs(WHEEL_DATA, exist_ok=True)
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def _log(message):
    print(f"syclgraph_build: {message}", file=sys.stderr, flush=True)


def _cargo_target_dir():
    """The target directory cargo uses here (CARGO_TARGET_DIR included)."""
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps"],
        cwd=ROOT,
        check=True,
        stdout=subprocess.PIPE,
    ).stdout
    return json.loads(out)["target_directory"]


def _build_subscriber():
    """`cargo build --release` of the command and the subscriber, then
    `target/wheel-data/` made again from that build."""
    command = ["cargo", "build", "--release", "--locked"]
    for package in PACKAGES:
        command += ["-p", package]
    _log(" ".join(command))
    subprocess.run(command, cwd=ROOT, check=True)
    library = os.path.join(_cargo_target_dir(), "release", "libsyclgraph.so")
    shutil.rmtree(WHEEL_DATA, ignore_errors=True)
    os.makedirs(os.path.join(WHEEL_DATA, "data", "lib"))
    os.makedirs(os.path.join(WHEEL_DATA, "data", "include"))
    shutil.copy2(library, os.path.join(WHEEL_DATA, "data", "lib"))
    shutil.copy2(
        os.path.join(ROOT, "include", "syclgraph.h"),
        os.path.join(WHEEL_DATA, "data", "include"),
    )


def _maturin_settings(config_settings, out):
    """maturin's build arguments: the locked dependencies, its output folder
    `out`, any the caller gave (`--config-settings maturin.build-args=...`),
    then the manylinux tag maturin would choose itself (an empty
    `--compatibility`, which keeps its PEP 517 default, `off`, away)."""
    given = dict(config_settings or {})
    extra = given.pop("maturin.build-args", given.pop("build-args", ""))
    if isinstance(extra, list):
        extra = " ".join(extra)
    args = ["--locked", "--out", out, extra]
    if "--compatibility" not in extra and "--manylinux" not in extra:
        args.append("--compatibility")
    given["maturin.build-args"] = " ".join(a for a in args if a)
    return given


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: the wheel, built from source (see the module's doc)."""
    os.chdir(ROOT)
    _build_subscriber()
    # maturin writes the wheel into its own folder, then copies it into
    # `wheel_directory`: a scratch one, not `target/wheels/`, where it would
    # be left beside the one asked for.
    with tempfile.TemporaryDirectory() as scratch:
        settings = _maturin_settings(config_settings, scratch)
        return maturin.build_wheel(wheel_directory, settings, metadata_directory)


def _version():
    """`[workspace.package] version` of Cargo.toml, the one version number."""
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("[workspace.package]") :]
    return re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)


def _source_files():
    """The files of the sdist, relative to the root: those git tracks in a
    clone, else all but the build outputs and virtual environments."""
    if os.path.exists(os.path.join(ROOT, ".git")):
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, check=True, stdout=subprocess.PIPE
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
        return sorted(n for n in names if os.path.isfile(os.path.join(ROOT, n)))
    found = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in NOT_SOURCES
            and not d.startswith(".venv")
            and not d.startswith("syclgraph-")
        )
        rel = os.path.relpath(top, ROOT)
        for name in files:
            if rel == "." and name == "PKG-INFO":
                continue
            found.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(found)


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: `syclgraph-<version>.tar.gz`, the source tree and PKG-INFO."""
    os.chdir(ROOT)
    base = f"syclgraph-{_version()}"
    with tempfile.TemporaryDirectory() as scratch:
        dist_info = prepare_metadata_for_build_wheel(scratch)
        pkg_info = os.path.join(scratch, dist_info, "METADATA")
        path = os.path.join(sdist_directory, base + ".tar.gz")
        with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name in _source_files():
                tar.add(os.path.join(ROOT, name), f"{base}/{name}", recursive=False)
            tar.add(pkg_info, f"{base}/PKG-INFO")
    _log(f"wrote {path}")
    return base + ".tar.gz"
