#!/usr/bin/env bash
# The main job on the bundled example: installs only what the demo needs
# (scripts/setup.sh --demo: g++, Graphviz, the Level Zero loader and the
# pinned DPC++ runtime in .venv; scripts/test.sh installs the rest), builds
# libsyclgraph.so and the syclgraph command (target/release/) and
# examples/pipeline.cpp (build/programs/pipeline) alone, and runs the example
# under `syclgraph run`, which finds the runtime and sets every variable
# itself. syclgraph's closing block says where graph.dot (and graph.svg),
# trace.pftrace and the CSV files are, and how to print the summary again;
# the demo renders instances.svg too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh --demo

cargo build --release -p syclgraph -p syclgraph-cli
bash scripts/build-programs.sh pipeline

OUT="${SYCLGRAPH_OUTPUT_DIR:-$ROOT/syclgraph-demo}"
rm -rf "$OUT"
# By its full path: the commands the closing block prints name it so, and
# run as printed from any directory.
"$ROOT/target/release/syclgraph" run -o "$OUT" -- build/programs/pipeline
if command -v dot >/dev/null; then
  dot -Tsvg "$OUT/instances.dot" -o "$OUT/instances.svg"
  echo "instances.svg: $OUT/instances.svg"
fi
echo "The syclgraph command is $ROOT/target/release/syclgraph (README, \"Install\", puts it on PATH)."
