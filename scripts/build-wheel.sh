#!/usr/bin/env bash
# Builds the syclgraph wheel, target/wheels/syclgraph-<version>-py3-none-
# manylinux_<glibc>_x86_64.whl: the `syclgraph` command (in the wheel's
# scripts) and libsyclgraph.so and syclgraph.h (its data: <prefix>/lib and
# <prefix>/include once installed), from the release build of the workspace
# (the same target/release that `cargo build --release` fills, so an
# up-to-date build is reused). Then checks the wheel with `auditwheel show`:
# its manylinux tag must be one auditwheel gives it, and it must hold nothing
# else (no DPC++ runtime). Prints the wheel's path on stdout.
# Needs scripts/setup-packaging.sh --tools-only (run here when missing).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/release.sh
. "$ROOT/scripts/lib/release.sh"
log() { echo "build-wheel: $*" >&2; }
die() { log "$*"; exit 1; }

bash scripts/setup-packaging.sh --tools-only
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
version="$(release_version)"
[[ -n "$version" ]] || die "no [workspace.package] version in Cargo.toml"

out="$TARGET_DIR/wheels"
rm -f "$out"/syclgraph-*.whl
# What `pip wheel .` does, with the pinned maturin of the packaging venv
# instead of one downloaded into an isolated build environment: the backend
# (packaging/syclgraph_build.py) runs `cargo build --release` of the command
# and the subscriber into the same target directory (an up-to-date build is
# reused) and maturin packages them.
"$PACKAGING_VENV/bin/python" -m pip wheel --disable-pip-version-check -q \
  --no-build-isolation --no-deps --wheel-dir "$out" "$ROOT" >&2
shopt -s nullglob
wheels=("$out"/syclgraph-"$version"-py3-none-*.whl)
((${#wheels[@]} == 1)) || die "expected one syclgraph-$version wheel in $out, found: ${wheels[*]:-none}"
wheel="${wheels[0]}"

# auditwheel must find the wheel consistent with the tag in its name.
show="$("$PACKAGING_VENV/bin/auditwheel" show "$wheel" 2>&1)" || die "auditwheel show failed: $show"
tag="${wheel##*-py3-none-}"
tag="${tag%.whl}"
show="$(tr -s ' \n' ' ' <<<"$show")"
grep -q "consistent with the following platform tag: \"$tag\"" <<<"$show" ||
  die "auditwheel does not give $tag to $(basename "$wheel"): $show"
log "$(basename "$wheel"): auditwheel: consistent with $tag"
echo "$wheel"
