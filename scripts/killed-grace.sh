#!/usr/bin/env bash
# The grace period a killed job needs: `syclgraph run -o DIR --
# memcpy_loop` (tests/programs/memcpy_loop.cpp: tiny memcpys until killed)
# is signalled once its kernels.csv holds COMMANDS rows: SIGTERM to the
# launcher (forwarded to the program), or with --kill SIGKILL to the
# program alone. Prints the time from the signal to the launcher's exit,
# the launcher's own CPU time in that time (the conversion: its CPU time
# is what a quiet machine's wall time would be), and its line.
# Usage: scripts/killed-grace.sh [--kill] COMMANDS [SCRATCH]
# Needs target/release/syclgraph (cargo build --release -p syclgraph
# -p syclgraph-cli) and the test programs (scripts/build-programs.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
signal=TERM
if [[ ${1:-} == --kill ]]; then signal=KILL; shift; fi
n="${1:?usage: scripts/killed-grace.sh [--kill] COMMANDS [SCRATCH]}"
scratch="${2:-$(mktemp -d)}"
exe="$ROOT/target/release/syclgraph"
prog="${SYCLGRAPH_PROGRAMS_OUT:-$ROOT/build/programs}/memcpy_loop"
[[ -x $exe && -x $prog ]] || { echo "killed-grace: build $exe and $prog first" >&2; exit 2; }
cd "$scratch"
rm -rf out
"$exe" run -o out -- "$prog" 3600 >/dev/null 2>err.txt &
launcher=$!
started=$SECONDS
rows=0
while ((rows < n)); do
  sleep 0.5
  kill -0 "$launcher" 2>/dev/null || { echo "killed-grace: the run ended early" >&2; cat err.txt >&2; exit 1; }
  rows=$(($(wc -l <out/kernels.csv 2>/dev/null || echo 1) - 1))
done
ran=$((SECONDS - started))
t0=$(date +%s.%N)
if [[ $signal == KILL ]]; then
  kill -KILL "$(cat "/proc/$launcher/task/$launcher/children")"
else
  kill -TERM "$launcher"
fi
# The launcher's own user + system time (its child's is not in it), until
# it is a zombie.
ticks=0
while stat=$(cat "/proc/$launcher/stat" 2>/dev/null) && [[ $stat != *") Z "* ]]; do
  # After `pid (comm) `: state is field 1, utime 12, stime 13.
  ticks=$(awk '{print $12 + $13}' <<<"${stat##*) }")
  sleep 0.05
done
set +e
wait "$launcher"
code=$?
set -e
t1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
echo "killed-grace: SIG$signal after ${ran} s of run, $rows rows in kernels.csv; exit code $code"
echo "killed-grace: signal to exit $(echo "scale=2; ($t1 - $t0) / 1" | bc) s; the launcher's CPU $(echo "scale=2; $ticks / $hz" | bc) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "killed-grace: journal $(stat -c %s out/run.journal 2>/dev/null || echo '?') bytes, trace.pftrace $(stat -c %s out/trace.pftrace) bytes"
grep '^syclgraph: the program' err.txt
