#!/usr/bin/env bash
# What the start-up wait (SYCLGRAPH_START_WAIT_MS) costs a process: runs
# tests/programs/short_start traced N times with the wait (default 5000 ms)
# and N times without it (0), interleaved, idle or with every core kept busy
# by busy-loop processes (--loaded). Prints per run the wall time, the wait
# the summary reports ("start-up: the first device command waited ...") and
# the memcpys' timing values, then medians.
# Usage: bench/tools/start_wait.sh [--loaded] [N]   (after scripts/build-programs.sh
# and cargo build --release -p syclgraph -p syclgraph-cli)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$ROOT/scripts/env.sh"
loaded=0
[[ "${1:-}" == --loaded ]] && { loaded=1; shift; }
N="${1:-10}"
OUT="$(mktemp -d)"
busy=()
cleanup() { for p in "${busy[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$OUT"; }
trap cleanup EXIT
if (( loaded )); then
  for _ in $(seq 1 "$(nproc)"); do ( while :; do :; done ) & busy+=($!); done
fi
for i in $(seq 1 "$N"); do
  for wait_ms in 5000 0; do
    dir="$OUT/$wait_ms-$i"
    s=$(date +%s%N)
    SYCLGRAPH_START_WAIT_MS=$wait_ms "$ROOT/target/release/syclgraph" run -o "$dir" -- \
      "$ROOT/build/programs/short_start" > /dev/null 2> "$dir.err"
    e=$(date +%s%N)
    waited=$(sed -n 's/^start-up: the first device command waited \(.*\) for the timestamp source$/\1/p' "$dir.err" | tr -d ' ')
    timing=$(awk -F, 'NR==1{for(c=1;c<=NF;c++) if($c=="timing") t=c; next} {print $t}' "$dir/kernels.csv" | sort | uniq -c | xargs)
    echo "wait_ms=$wait_ms run=$i wall_ms=$(( (e - s) / 1000000 )) waited=${waited:-0} timing=[$timing]"
  done
done | tee "$OUT/runs.txt"
python3 - "$OUT/runs.txt" <<'PY'
import re, statistics, sys
rows = [dict(kv.split("=", 1) for kv in re.findall(r"(\w+=\[[^\]]*\]|\S+=\S+)", l)) for l in open(sys.argv[1])]
for w in ("5000", "0"):
    sel = [r for r in rows if r["wait_ms"] == w]
    walls = [int(r["wall_ms"]) for r in sel]
    untimed = sum(1 for r in sel if "not_ready" in r["timing"] or "unavailable" in r["timing"])
    waits = [r["waited"] for r in sel if r["waited"] != "0"]
    print(f"SYCLGRAPH_START_WAIT_MS={w}: median wall {statistics.median(walls)} ms "
          f"(min {min(walls)}, max {max(walls)}), runs with an untimed memcpy {untimed}/{len(sel)}, "
          f"runs that waited {len(waits)}: {', '.join(waits) or '-'}")
PY
