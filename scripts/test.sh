#!/usr/bin/env bash
# Everything CI checks: installs what is missing (scripts/setup.sh), then
# format, lints (clippy, within the test build), builds the subscriber, the
# syclgraph command and the Level Zero test driver, the wheel and the release
# archive, and runs every test on the real DPC++ runtime.
# What needs no cargo (the older runtime's venv, the packaging tools and
# wheelhouse, the C++ test programs: pip, disk and g++) runs in the
# background while cargo builds; the packages and the tests start once all of
# it is done.
# The tests run in two lanes at once: the packaging, peer-suite, GPU-check and
# older-runtime tests (pip, venvs, pytest, g++: long and mostly one process at
# a time) and the configuration matrix (a minute of its own: it balances the
# lanes, 479 s against 361 s at 07cd64c) beside every other test binary.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Runs one step: on failure says which step failed and stops the run; on
# success says how long it took (the figures of docs/architecture.md's
# breakdown).
step() {
  local name="$1" start=$SECONDS
  shift
  if ! "$@"; then
    echo "test.sh: $name failed (above)" >&2
    exit 1
  fi
  echo "test.sh: $name took $((SECONDS - start)) s" >&2
}

step setup.sh bash scripts/setup.sh
# shellcheck source=env.sh
. scripts/env.sh

background=()
# A failed step leaves no background step running.
trap 'for pid_name in "${background[@]}"; do kill "${pid_name%%:*}" 2>/dev/null || true; done' EXIT
# Waits for every background step; fails naming the first that failed.
wait_background() {
  local pid_name pid name
  for pid_name in "${background[@]}"; do
    pid="${pid_name%%:*}" name="${pid_name#*:}"
    if ! wait "$pid"; then
      echo "test.sh: $name failed (above)" >&2
      exit 1
    fi
  done
  background=()
}
# The oldest supported runtime (tests/tests/runtime_versions.rs), then the
# pinned packaging tools and the runtime wheels (tests/tests/install.rs).
step "setup-runtime.sh 2025.0.0 / setup-packaging.sh" bash -c '
  bash scripts/setup-runtime.sh 2025.0.0 >/dev/null
  bash scripts/setup-packaging.sh
' &
background+=("$!:setup-runtime.sh 2025.0.0 / setup-packaging.sh")
# The test programs (every test binary would build them first otherwise).
step build-programs.sh bash scripts/build-programs.sh &
background+=("$!:build-programs.sh")

step "cargo fmt --check" cargo fmt --all -- --check
# No crate's modules import each other in a circle.
step check-layering.py python3 scripts/check-layering.py
# The release build (what the tests run, the wheel and the archive ship) and
# the empty subscriber, the second XPTI subscriber of
# tests/tests/config_matrix.rs, beside the test build: the two profiles have
# their own folders and locks, and each build's one-core stretches (the
# bundled SQLite's C, the last links) leave the other core to the other.
step "the release build" bash -c 'set -e
  cargo build --release -p syclgraph -p syclgraph-cli
  cargo build --release -p empty-subscriber
' &
background+=("$!:the release build")
# The dev profile's cargo commands (the test build, the tests): the
# workspace's crates are compiled by clippy-driver denying warnings
# (scripts/lib/clippy-rustc.sh), so the test build is also clippy's check of
# every target, and the dependencies are compiled once for both. Every dev
# cargo command below has the same wrapper, or cargo would compile the
# workspace's crates again.
DEV=(env "RUSTC_WORKSPACE_WRAPPER=$ROOT/scripts/lib/clippy-rustc.sh")
step "the Level Zero test driver's build" "${DEV[@]}" cargo build -p ze-test-driver
# Every test binary, built once before the two lanes start.
step "the test build with clippy's lints" "${DEV[@]}" cargo test --workspace --no-run
wait_background
# The release packages, for tests/tests/install.rs: the wheel (maturin reuses
# target/release) and the archive.
step build-wheel.sh bash -c 'bash scripts/build-wheel.sh >/dev/null'
step package.sh bash -c 'bash scripts/package.sh >/dev/null'

# The second lane: these modules of tests/tests/ (one test binary,
# `runtime_tests`, a module per file), run from the binary directly as cargo
# would (from the package's folder): `cargo test` holds target/debug's lock
# while its tests run, so a second one would wait for the first. The first
# lane runs the workspace's other tests and every other module of
# tests/tests/ (the same binary, these modules skipped).
SECOND_LANE=(install peer_suites runtime_versions gpu_check config_matrix)
second_lane_filters=() first_lane_skips=()
for name in "${SECOND_LANE[@]}"; do
  if [[ ! -f "tests/tests/$name.rs" ]]; then
    echo "test.sh: the second lane's tests/tests/$name.rs is gone" >&2
    exit 1
  fi
  second_lane_filters+=("$name::")
  first_lane_skips+=(--skip "$name::")
done
mapfile -t second_lane < <(
  "${DEV[@]}" cargo test --workspace --no-run --message-format=json |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and m.get("executable")
            and m["target"]["kind"] == ["test"] and m["target"]["name"] == "runtime_tests"
            and m["manifest_path"].endswith("/tests/Cargo.toml")):
        print(m["executable"])
'
)
if ((${#second_lane[@]} != 1)); then
  echo "test.sh: found ${#second_lane[@]} runtime_tests binaries, not 1" >&2
  exit 1
fi
export SYCLGRAPH_REQUIRE_RUNTIME=1
(
  cd tests
  status=0 start=$SECONDS
  exe="${second_lane[0]}"
  echo "     Running ${exe#"$ROOT"/} ${second_lane_filters[*]} (the second lane)"
  "$exe" "${second_lane_filters[@]}" --test-threads=2 || status=1
  echo "test.sh: the second lane of tests took $((SECONDS - start)) s" >&2
  exit "$status"
) &
background+=("$!:the second lane of tests (${SECOND_LANE[*]})")
# --no-fail-fast: a failing test binary does not hide the results of the
# binaries after it.
status=0 start=$SECONDS
"${DEV[@]}" cargo test --workspace --no-fail-fast --exclude syclgraph-tests -- --test-threads=2 || status=1
# --workspace with the test binary named (not -p syclgraph-tests: the
# dependencies' features would differ and cargo would build them again); the
# package's library holds no tests.
"${DEV[@]}" cargo test --workspace --no-fail-fast --test runtime_tests -- "${first_lane_skips[@]}" --test-threads=2 || status=1
if ((status != 0)); then
  echo "test.sh: the first lane of tests failed (above)" >&2
else
  echo "test.sh: the first lane of tests took $((SECONDS - start)) s" >&2
fi
wait_background
exit "$status"
