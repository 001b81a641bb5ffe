#!/usr/bin/env bash
# The main job on the bundled example: installs what is missing, builds
# libsyclgraph.so, the syclgraph command and examples/pipeline.cpp, and runs
# the example under `syclgraph run`, which finds the runtime and sets every
# variable itself; it prints where graph.dot (and graph.svg), instances.dot,
# kernels.csv and summary.csv are (and renders instances.svg too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh

cargo build --release -p syclgraph -p syclgraph-cli
bash scripts/build-programs.sh

OUT="${SYCLGRAPH_OUTPUT_DIR:-$ROOT/syclgraph-demo}"
rm -rf "$OUT"
target/release/syclgraph run -o "$OUT" -- build/programs/pipeline
if command -v dot >/dev/null; then
  dot -Tsvg "$OUT/instances.dot" -o "$OUT/instances.svg"
  echo "instances.svg: $OUT/instances.svg"
fi
