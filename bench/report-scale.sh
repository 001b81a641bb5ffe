#!/usr/bin/env bash
# Times `syclgraph report` and `syclgraph export --parquet` on a job of N
# rank directories (default 10,000), made by copying the ranks of a real
# job directory (JOB, e.g. one the mpi_report test or an MPI run left)
# round-robin, with each copy's meta.json given its own rank.
# Usage: bench/report-scale.sh JOB [N] [SCRATCH]
# Prints wall time, CPU time and peak memory (GNU time) of each command.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOB="$1"
N="${2:-10000}"
SCRATCH="${3:-$(mktemp -d)}"
EXE="$ROOT/target/release/syclgraph"
mapfile -t SRC < <(find "$JOB" -maxdepth 1 -name 'rank-*' -type d | sort)
[[ ${#SRC[@]} -gt 0 ]] || { echo "report-scale: no rank-* directory in $JOB" >&2; exit 2; }
rm -rf "$SCRATCH/job"
mkdir -p "$SCRATCH/job"
for ((r = 0; r < N; r++)); do
  src="${SRC[$((r % ${#SRC[@]}))]}"
  dst="$SCRATCH/job/$(printf 'rank-%05d' "$r")"
  cp -r "$src" "$dst"
  rm -rf "$dst/report" "$dst/parquet"
  if [[ -f "$dst/meta.json" ]]; then
    sed -i -E "s/\"rank\": [0-9]+/\"rank\": $r/; s/\"size\": [0-9]+/\"size\": $N/" "$dst/meta.json"
  fi
done
echo "report-scale: $N ranks, $(du -sh "$SCRATCH/job" | cut -f1) of files"
/usr/bin/time -f 'report: wall %e s, user %U s, sys %S s, peak RSS %M KiB' "$EXE" report --top 3 "$SCRATCH/job" >/dev/null
/usr/bin/time -f 'export: wall %e s, user %U s, sys %S s, peak RSS %M KiB' "$EXE" export --parquet "$SCRATCH/job" >/dev/null
echo "report-scale: parquet $(du -sh "$SCRATCH/job/parquet" | cut -f1)"
rm -rf "$SCRATCH/job"
