#!/usr/bin/env bash
# Everything CI checks, in the order CI checks it: installs what is missing
# (scripts/setup.sh), then format, lints, builds the subscriber, the
# syclgraph command and the Level Zero test driver, the wheel and the release
# archive, and runs every test on the real DPC++ runtime.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
# The oldest supported runtime, for tests/tests/runtime_versions.rs.
bash scripts/setup-runtime.sh 2025.0.0 >/dev/null
# shellcheck source=env.sh
. scripts/env.sh

cargo fmt --all -- --check
# No crate's modules import each other in a circle.
python3 scripts/check-layering.py
cargo clippy --workspace --all-targets -- -D warnings
cargo build --release -p syclgraph -p syclgraph-cli
# The second XPTI subscriber of tests/tests/config_matrix.rs.
cargo build --release -p empty-subscriber
cargo build -p ze-test-driver
# The release packages, for tests/tests/install.rs: the pinned packaging
# tools and runtime wheels, the wheel (maturin reuses target/release) and the
# archive.
bash scripts/setup-packaging.sh
bash scripts/build-wheel.sh >/dev/null
bash scripts/package.sh >/dev/null
SYCLGRAPH_REQUIRE_RUNTIME=1 cargo test --workspace -- --test-threads=2
