#!/usr/bin/env bash
# Everything CI checks: installs what is missing (scripts/setup.sh), then
# format, lints, builds the subscriber, the syclgraph command and the Level
# Zero test driver, the wheel and the release archive, and runs every test on
# the real DPC++ runtime.
# What needs no cargo (the older runtime's venv, the packaging tools and
# wheelhouse, the C++ test programs: pip, disk and g++) runs in the
# background while cargo builds; the packages and the tests start once all of
# it is done.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
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
{
  bash scripts/setup-runtime.sh 2025.0.0 >/dev/null
  bash scripts/setup-packaging.sh
} &
background+=("$!:setup-runtime.sh 2025.0.0 / setup-packaging.sh")
# The test programs (every test binary would build them first otherwise).
bash scripts/build-programs.sh &
background+=("$!:build-programs.sh")

cargo fmt --all -- --check
# No crate's modules import each other in a circle.
python3 scripts/check-layering.py
cargo clippy --workspace --all-targets -- -D warnings
cargo build --release -p syclgraph -p syclgraph-cli
# The second XPTI subscriber of tests/tests/config_matrix.rs.
cargo build --release -p empty-subscriber
cargo build -p ze-test-driver
wait_background
# The release packages, for tests/tests/install.rs: the wheel (maturin reuses
# target/release) and the archive.
bash scripts/build-wheel.sh >/dev/null
bash scripts/package.sh >/dev/null

SYCLGRAPH_REQUIRE_RUNTIME=1 cargo test --workspace -- --test-threads=2
