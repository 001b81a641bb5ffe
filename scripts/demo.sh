#!/usr/bin/env bash
# The main job on the bundled example: installs what is missing, builds
# libsyclgraph.so and examples/pipeline.cpp, runs the example with only the
# three XPTI variables set, and prints where graph.dot, instances.dot,
# kernels.csv and summary.csv are (and renders both graphs to SVG).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh
# shellcheck source=env.sh
. scripts/env.sh

cargo build --release -p syclgraph
bash scripts/build-programs.sh

OUT="${SYCLGRAPH_OUTPUT_DIR:-$ROOT/syclgraph-demo}"
rm -rf "$OUT"
XPTI_TRACE_ENABLE=1 \
XPTI_FRAMEWORK_DISPATCHER="$SYCLGRAPH_VENV/lib/libxptifw.so" \
XPTI_SUBSCRIBERS="$ROOT/target/release/libsyclgraph.so" \
SYCLGRAPH_OUTPUT_DIR="$OUT" \
  build/programs/pipeline

echo
echo "graph.dot:     $OUT/graph.dot"
echo "instances.dot: $OUT/instances.dot"
echo "kernels.csv:   $OUT/kernels.csv"
echo "summary.csv:   $OUT/summary.csv"
if command -v dot >/dev/null; then
  dot -Tsvg "$OUT/graph.dot" -o "$OUT/graph.svg"
  dot -Tsvg "$OUT/instances.dot" -o "$OUT/instances.svg"
  echo "graph.svg:     $OUT/graph.svg"
  echo "instances.svg: $OUT/instances.svg"
fi
