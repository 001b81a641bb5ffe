#!/usr/bin/env bash
# Times `syclgraph whatif` and `syclgraph diff` on runs of N commands
# (default 1,000,000): two traced runs of `whatif turns 100 0 N`
# (tests/programs/whatif.cpp: N short kernels on an in-order queue, the host
# never waiting), then, with GNU time (wall, CPU, peak memory):
#   whatif DIR --speedup LOC=2   one scenario (target: <= 5 s at 1M)
#   whatif DIR                   the five "what would pay" scenarios
#   report DIR                   the summary, its block computed from run.journal
#   diff A B                     two runs of N commands (target: <= 10 s, <= 500 MB)
# Usage: bench/whatif-scale.sh [N] [SCRATCH]   (SCRATCH: default a new temp dir;
# the runs are kept there, and reused when they hold N commands already)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${1:-1000000}"
SCRATCH="${2:-$(mktemp -d)}"
EXE="$ROOT/target/release/syclgraph"
PROGRAM="$ROOT/build/programs/whatif"
[[ -x "$EXE" && -x "$PROGRAM" ]] || {
  echo "whatif-scale: build first: cargo build --release; bash scripts/build-programs.sh whatif" >&2
  exit 2
}
# shellcheck source=/dev/null
. "$ROOT/scripts/env.sh" >/dev/null
LINE="$(grep -n '@node turns_kernel$' "$ROOT/tests/programs/whatif.cpp" | cut -d: -f1)"
for run in a b; do
  dir="$SCRATCH/run-$run"
  if [[ -f "$dir/run.journal" && "$(cat "$dir/.n" 2>/dev/null)" == "$N" ]]; then
    continue
  fi
  rm -rf "$dir"
  /usr/bin/time -f "traced run $run ($N commands): wall %e s, peak RSS %M KiB" \
    env XPTI_TRACE_ENABLE=1 XPTI_FRAMEWORK_DISPATCHER="$SYCLGRAPH_VENV/lib/libxptifw.so" \
    XPTI_SUBSCRIBERS="$ROOT/target/release/libsyclgraph.so" SYCLGRAPH_OUTPUT_DIR="$dir" \
    SYCLGRAPH_QUIET=1 "$PROGRAM" turns 100 0 "$N" >/dev/null
  echo "$N" >"$dir/.n"
done
echo "whatif-scale: $N commands: run.journal $(du -h "$SCRATCH/run-a/run.journal" | cut -f1), kernels.csv $(du -h "$SCRATCH/run-a/kernels.csv" | cut -f1)"
timed() { /usr/bin/time -f "$1: wall %e s, user %U s, sys %S s, peak RSS %M KiB" "${@:2}" >/dev/null; }
timed "whatif, one scenario" "$EXE" whatif "$SCRATCH/run-a" --speedup "whatif.cpp:$LINE=2"
timed "whatif, five scenarios" "$EXE" whatif "$SCRATCH/run-a"
timed "report (block from run.journal)" "$EXE" report "$SCRATCH/run-a"
timed "diff" "$EXE" diff "$SCRATCH/run-a" "$SCRATCH/run-b"
"$EXE" whatif "$SCRATCH/run-a" --speedup "whatif.cpp:$LINE=2"
