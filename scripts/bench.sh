#!/usr/bin/env bash
# syclgraph's overhead benchmark: ONE command (docs/performance.md).
#
#   scripts/bench.sh                 everything below, one part after the other
#                                    (~20 minutes on 2 cores; --quick: ~5):
#                                    the instruction table, the wall-clock table,
#                                    memory and trace size; exit 1 if any target
#                                    is missed
#   scripts/bench.sh --callgrind     instructions per task of tiny 64-byte
#                                    memcpys under valgrind --tool=callgrind,
#                                    OpenCL CPU runtime objects left out, per
#                                    thread; syclgraph - empty on the program's
#                                    threads (target +1,000) and on syclgraph's
#                                    (the collector, its end of run included,
#                                    per command: its work paced on the wall
#                                    clock, snapshots and clock calibrations,
#                                    printed apart; target +6,000)
#   scripts/bench.sh --wall          wall clock: each workload under {empty
#                                    subscriber, empty again (A/A), the program
#                                    timing its own commands under the empty
#                                    subscriber (self-timed), syclgraph,
#                                    syclgraph with SYCLGRAPH_DEVICE_TIMING=0},
#                                    interleaved, R rounds; medians, spread and
#                                    paired ratios against the 1.05 targets
#   scripts/bench.sh --itt           an ITT task begin/end pair on the calling
#                                    thread (issue 43): instructions per pair
#                                    under callgrind (the main thread, syclgraph
#                                    as the ITT collector against none) and wall
#                                    ns per pair in R interleaved rounds (target
#                                    <= 300 ns); also the pair that enters and
#                                    leaves the region SYCLGRAPH_REGION captures
#   scripts/bench.sh --memory        peak RSS of 1,000,000 tiny memcpys (or --memory-memcpys N) (and of
#                                    300,000 small kernels) under the empty
#                                    subscriber and syclgraph (target +64 MiB),
#                                    and, from the same syclgraph run, the bytes
#                                    of trace.pftrace per memcpy (target 150)
#
# Options:
#   -r, --rounds R          wall clock: rounds per configuration (default 21, or $BENCH_ROUNDS)
#   --seed S                wall clock: the seed of the configurations' order in each
#                           round (shuffled anew every round; default: a new seed, printed
#                           on the command line of the results, to run the same order again)
#   -w, --workloads LIST    wall clock: comma-separated subset of
#                           memcpy-1t,memcpy-200k,memcpy-1m,memcpy-2t,memcpy-2t-shared,kernels,dpnp
#                           (default memcpy-1t, the targets' case; memcpy-200k and memcpy-1m:
#                           tiny_memcpy 200000 1 and 1000000 1, issue 41's whole-process cases;
#                           dpnp has no self-timed form). Each run is timed twice: the
#                           program's loop (us_per_task) and the whole process, start to
#                           exit (bench/tools/whole.py), with its end of run (the last line
#                           to the exit)
#   -n, --tasks N           wall clock: each workload's N instead of its default
#                           (memcpys 50000, kernels 50000, dpnp iterations 800); on a
#                           loaded machine the untimed configurations' memcpys fall far
#                           behind the device from about 100000 (docs/performance.md)
#   --wall-configs LIST     wall clock: the configurations to run, a comma-separated
#                           subset of empty,aa,selftimed,syclgraph,notiming,threadtimed
#                           (threadtimed, the memcpy workloads only, never by default: the
#                           program's commands timed by a second thread of its own while
#                           it submits, as a collector does) (default all but threadtimed;
#                           e.g. selftimed,syclgraph for the whole-process target alone:
#                           on a loaded machine the untimed configurations' large runs
#                           fall behind the device and take minutes each)
#   --memory-memcpys N      memory: the tiny memcpys' N (default 1000000; issue 41's
#                           second case is 10000000: the peak must not grow with the run)
#   --quick                 every part small, to check the script: wall 5 rounds of a
#                           tenth of the tasks, callgrind one run each, memory a tenth
#   --no-xpti               wall clock and memory: add the program without XPTI
#                           (under load its tiny memcpys can run far slower than traced)
#   --n1 N, --n2 N          callgrind: the two memcpy counts (default 20000, 40000: past
#                           the kept-instance, critical-step and exit what-if limits)
#   --repeat K              callgrind: runs per configuration and N (default 3); medians
#   --cg-workload W         callgrind: memcpy (default: tiny_memcpy N 1), kernels, or
#                           kernels-noprof (a queue without enable_profiling: run it
#                           with and without SYCLGRAPH_FORCE_PROFILING=0 in the
#                           environment to see what forcing profiling costs)
#                           (interop_kernels N; default N 500 and 1000)
#                           or graphs (graph_replays N: one replay of a one-memcpy
#                           SYCL graph per task; default N 1000 and 2000)
#   --notiming              callgrind: add a configuration, syclgraph with
#                           SYCLGRAPH_DEVICE_TIMING=0 (target 3b's configuration; the
#                           wall clock always has it), with its own per-thread table
#   --stopped               callgrind and wall: add a configuration, syclgraph started
#                           paused (SYCLGRAPH_START=paused) and never started: the
#                           cost of a stopped tracer (docs/performance.md)
#   --syclgraph-lib PATH    measure PATH in the syclgraph slot (skips building syclgraph;
#                           e.g. the empty subscriber itself, to test the script)
#   --no-build              use the libraries and programs already built
#   --keep DIR              keep raw results (per-run values, callgrind files) in DIR
#   -h, --help              this text
#
# Builds what it needs: `cargo build --profile profiling -p syclgraph -p
# empty-subscriber` (the release build with debug info and symbols, which
# callgrind's report wants; into $CARGO_TARGET_DIR/profiling, default
# <repo>/target/profiling) and bench/programs/*.cpp into
# build/bench/. Sources scripts/env.sh (the runtime in .venv, see setup.sh).
# syclgraph runs with its defaults (every output on, device timing on),
# SYCLGRAPH_QUIET=1 and SYCLGRAPH_OUTPUT_DIR in a temporary folder. Exit
# status: 0 when every target is met, 1 when one is missed or a run failed,
# 2 on usage or build errors.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
. "$ROOT/scripts/env.sh"
VENV="$SYCLGRAPH_VENV"
PY="${PYTHON:-$VENV/bin/python}"
REPORT="$ROOT/bench/tools/report.py"
WHOLE="$ROOT/bench/tools/whole.py"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$ROOT/build/bench"
RUN_TIMEOUT="${BENCH_TIMEOUT:-600}"

mode=all
rounds="${BENCH_ROUNDS:-21}"
seed=""
workloads="memcpy-1t"
wall_configs=""
quick=0
noxpti=0
tasks_n=""
n1=""
n2=""
cg_workload=memcpy
repeat=3
sg_lib=""
build=1
keep=""
stopped=0
notiming=0
memory_memcpys=1000000

# The comment block at the top of this file, without its "# ".
usage() { sed -n '2,/^[^#]/p' "$0" | sed -n 's/^# \{0,1\}//p'; }
die() { echo "bench: $*" >&2; exit 2; }
log() { echo "bench: $*" >&2; }

while (($#)); do
  case "$1" in
    --callgrind) mode=callgrind ;;
    --memory) mode=memory ;;
    --itt) mode=itt ;;
    --wall) mode=wall ;;
    --no-xpti) noxpti=1 ;;
    -r|--rounds) rounds="${2:?}"; shift ;;
    --seed) seed="${2:?}"; shift ;;
    -w|--workloads) workloads="${2:?}"; shift ;;
    --wall-configs) wall_configs="${2:?}"; shift ;;
    -n|--tasks) tasks_n="${2:?}"; shift ;;
    --quick) quick=1 ;;
    --memory-memcpys) memory_memcpys="${2:?}"; shift ;;
    --n1) n1="${2:?}"; shift ;;
    --n2) n2="${2:?}"; shift ;;
    --repeat) repeat="${2:?}"; shift ;;
    --cg-workload) cg_workload="${2:?}"; shift ;;
    --syclgraph-lib) sg_lib="$(realpath "${2:?}")"; shift ;;
    --no-build) build=0 ;;
    --stopped) stopped=1 ;;
    --notiming) notiming=1 ;;
    --keep) keep="${2:?}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a positive number"
[[ "$memory_memcpys" =~ ^[1-9][0-9]*$ ]] || die "--memory-memcpys wants a positive number"
[[ -z "$seed" || "$seed" =~ ^[0-9]+$ ]] || die "--seed wants a number"
seed="${seed:-$(( (RANDOM << 15) | RANDOM ))}"
[[ -z "$tasks_n" || "$tasks_n" =~ ^[1-9][0-9]*$ ]] || die "--tasks wants a positive number"
case "$cg_workload" in
  # 20,000 and 40,000: both past the exit's what-if limit (20,000
  # commands, the warm-up's included) and SYCLGRAPH_MAX_INSTANCES.
  memcpy) cg_cmd=(tiny_memcpy N 1); n1="${n1:-20000}"; n2="${n2:-40000}" ;;
  kernels) cg_cmd=(interop_kernels N); n1="${n1:-500}"; n2="${n2:-1000}" ;;
  # The same kernels on a queue made WITHOUT enable_profiling: syclgraph
  # forces profiling on it (compare with SYCLGRAPH_FORCE_PROFILING=0 set).
  kernels-noprof) cg_cmd=(interop_kernels N noprof); n1="${n1:-500}"; n2="${n2:-1000}" ;;
  # One replay of a one-memcpy SYCL graph per task (issue 27).
  graphs) cg_cmd=(graph_replays N); n1="${n1:-1000}"; n2="${n2:-2000}" ;;
  *) die "--cg-workload wants memcpy, kernels, kernels-noprof or graphs" ;;
esac
[[ "$n1" =~ ^[1-9][0-9]*$ && "$n2" =~ ^[1-9][0-9]*$ ]] && ((n2 > n1)) ||
  die "--n1/--n2 want positive numbers with n2 > n1"
if ((quick)); then
  rounds=5
  repeat=1
fi
if [[ -n "$keep" ]]; then
  mkdir -p "$keep"
  WORK="$(realpath "$keep")"
else
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/syclgraph-bench.XXXXXX")"
  trap 'rm -rf "$WORK"' EXIT
fi

# ---- build -------------------------------------------------------------------
EMPTY_LIB="$TARGET_DIR/profiling/libempty_subscriber.so"
SG_LIB="${sg_lib:-$TARGET_DIR/profiling/libsyclgraph.so}"
if ((build)); then
  cd "$ROOT"
  if [[ -n "$sg_lib" ]]; then
    cargo build --profile profiling -p empty-subscriber >&2 || die "cannot build empty-subscriber"
  else
    cargo build --profile profiling -p syclgraph -p empty-subscriber >&2 ||
      die "cannot build syclgraph (use --syclgraph-lib PATH to measure another library)"
  fi
  mkdir -p "$BIN"
  for src in "$ROOT"/bench/programs/*.cpp; do
    name="$(basename "$src" .cpp)"
    if [[ ! -x "$BIN/$name" || "$src" -nt "$BIN/$name" || "$ROOT/bench/programs/common.hpp" -nt "$BIN/$name" ||
      "$ROOT/tests/programs/common.hpp" -nt "$BIN/$name" || "$ROOT/tests/programs/itt.hpp" -nt "$BIN/$name" ]]; then
      log "g++ bench/programs/$name.cpp -> build/bench/$name"
      # Like scripts/build-programs.sh (host-only SYCL; OpenCL C kernels through
      # interop), but -O2 and C++20 (std::barrier). No -DNDEBUG: the runtime then
      # records source locations, as in a normal debug-less application build.
      g++ -std=c++20 -O2 -Wall -Wno-deprecated-declarations -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING \
        -I"$VENV/include" -I"$ROOT/bench/programs" "$src" -o "$BIN/$name.tmp" \
        -L"$VENV/lib" -Wl,-rpath,"$VENV/lib" -lsycl -lOpenCL -lintlc || die "cannot compile $src"
      mv -f "$BIN/$name.tmp" "$BIN/$name"
    fi
  done
fi
for f in "$EMPTY_LIB" "$SG_LIB" "$BIN/tiny_memcpy" "$BIN/interop_kernels"; do
  [[ -e "$f" ]] || die "missing $f (run without --no-build)"
done

# ---- configurations ----------------------------------------------------------
# run_config CONFIG CMD...: runs CMD under one configuration, stdout to stdout.
# selftimed is the empty subscriber; the caller adds the program's own
# `self-timed` argument. aa is the empty subscriber again (the A/A row).
# SG_OUT: when set, syclgraph writes there and the folder is kept (the
# caller reads and removes it); SG_QUIET=0: syclgraph prints its summary.
run_config() {
  local config="$1"; shift
  case "$config" in
    noxpti)
      env -u XPTI_TRACE_ENABLE -u XPTI_SUBSCRIBERS -u XPTI_FRAMEWORK_DISPATCHER \
        timeout "$RUN_TIMEOUT" "$@" ;;
    empty|aa|selftimed|threadtimed)
      env XPTI_TRACE_ENABLE=1 XPTI_FRAMEWORK_DISPATCHER="$VENV/lib/libxptifw.so" \
        XPTI_SUBSCRIBERS="$EMPTY_LIB" timeout "$RUN_TIMEOUT" "$@" ;;
    syclgraph|stopped|notiming)
      local out="${SG_OUT:-}" paused=on timing=1
      [[ "$config" == stopped ]] && paused=paused
      [[ "$config" == notiming ]] && timing=0
      [[ -n "$out" ]] || out="$(mktemp -d "$WORK/sg-out.XXXXXX")"
      local rc=0
      env XPTI_TRACE_ENABLE=1 XPTI_FRAMEWORK_DISPATCHER="$VENV/lib/libxptifw.so" \
        XPTI_SUBSCRIBERS="$SG_LIB" SYCLGRAPH_OUTPUT_DIR="$out" SYCLGRAPH_QUIET="${SG_QUIET:-1}" \
        SYCLGRAPH_START="$paused" SYCLGRAPH_DEVICE_TIMING="$timing" timeout "$RUN_TIMEOUT" "$@" || rc=$?
      [[ -n "${SG_OUT:-}" ]] || rm -rf "$out"
      return "$rc" ;;
  esac
}
# callgrind: the application alone, the empty subscriber, syclgraph.
CONFIGS=(noxpti empty syclgraph)
((notiming)) && CONFIGS+=(notiming)
((stopped)) && CONFIGS+=(stopped)
# Wall clock (issue 29 item 3): the empty subscriber twice (A/A: the noise
# floor), the program timing its own commands (the runtime's limit for
# timing every command), syclgraph with every output on, and syclgraph
# with SYCLGRAPH_DEVICE_TIMING=0.
WALL_CONFIGS=(empty aa selftimed syclgraph notiming)
# threadtimed (asked for by --wall-configs only): the program's commands
# timed by a second thread while it submits, as a collector does.
KNOWN_WALL_CONFIGS=(threadtimed)
((noxpti)) && WALL_CONFIGS=(noxpti "${WALL_CONFIGS[@]}")
((stopped)) && WALL_CONFIGS+=(stopped)
if [[ -n "$wall_configs" ]]; then
  for c in ${wall_configs//,/ }; do
    [[ " ${WALL_CONFIGS[*]} ${KNOWN_WALL_CONFIGS[*]} " == *" $c "* ]] || die "--wall-configs: unknown configuration $c"
  done
  read -r -a WALL_CONFIGS <<<"${wall_configs//,/ }"
fi
# Memory: the target is syclgraph - empty subscriber.
MEMORY_CONFIGS=(empty syclgraph)
((noxpti)) && MEMORY_CONFIGS=(noxpti "${MEMORY_CONFIGS[@]}")

machine_line() {
  local cpu
  cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
  echo "date $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores ($cpu); load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "tree at start: commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD -- subscriber 2>/dev/null || echo ' (subscriber/ modified)')"
  echo "empty:     $EMPTY_LIB"
  echo "syclgraph: $SG_LIB$([[ -n "$sg_lib" ]] && echo ' (given with --syclgraph-lib)')"
}

MACHINE="$(machine_line)"

# ---- wall clock ----------------------------------------------------------------
# self_timed_check: the self-timed program must time what syclgraph times.
# Traced by syclgraph, `tiny_memcpy 3000 1 self-timed` prints the sum of
# command_end - command_start it read itself; the duration_ns of the
# kernels.csv rows of its timed loop (the source line of `timer.add`) must
# sum to the same nanoseconds. Prints one line; returns 1 when they differ.
self_timed_check() {
  local out line_no program rows sum
  out="$WORK/self-timed-check"
  rm -rf "$out"
  line_no="$(grep -n 'timer.add(q.memcpy' "$ROOT/bench/programs/tiny_memcpy.cpp" | cut -d: -f1)"
  program="$(SG_OUT="$out" run_config syclgraph "$BIN/tiny_memcpy" 3000 1 self-timed 2>/dev/null |
    sed -n 's/^self_timed commands 3000 device_ns \([0-9]*\)$/\1/p')" || true
  read -r rows sum < <(awk -F, -v l="$line_no" 'NR > 1 && $18 == l && $13 == "ok" { n++; s += $12 }
    END { printf "%d %.0f\n", n, s }' "$out/kernels.csv" 2>/dev/null || echo "0 0")
  rm -rf "$out"
  if [[ -n "$program" && "$rows" == 3000 && "$sum" == "$program" ]]; then
    echo "self-timed check: the program read $program ns for its 3000 memcpys, syclgraph's kernels.csv the same"
  else
    echo "self-timed check FAILED: the program read '${program}' ns, syclgraph's kernels.csv $rows timed rows summing to $sum ns"
    return 1
  fi
}

# round_orders SEED ROUNDS K: ROUNDS lines, each a permutation of 0..K-1
# (the configurations' order in one round), the same for the same SEED.
round_orders() {
  "$PY" -c '
import random, sys
seed, rounds, k = map(int, sys.argv[1:])
rng = random.Random(seed)
for _ in range(rounds):
    order = list(range(k))
    rng.shuffle(order)
    print(" ".join(map(str, order)))
' "$@"
}

wall_mode() {
  local scale=1
  ((quick)) && scale=10
  # name | program argument N | tasks per unit of N | has a self-timed form | command
  # N: the memcpys' 50000 last 0.3-0.5 s on the idle machine and stay
  # clear of the runtime's cliff under load (docs/performance.md: with
  # 200000, the untimed configurations' submission runs so far ahead of a
  # starved device that a memcpy costs 700-1000 µs instead of 30). A program
  # with a self-timed form runs under the selftimed configuration with
  # `self-timed` added to its arguments.
  local -a table=(
    "memcpy-1t|50000|1|1|$BIN/tiny_memcpy N 1"
    "memcpy-200k|200000|1|1|$BIN/tiny_memcpy N 1"
    "memcpy-1m|1000000|1|1|$BIN/tiny_memcpy N 1"
    "memcpy-2t|50000|1|1|$BIN/tiny_memcpy N 2 own"
    "memcpy-2t-shared|50000|1|1|$BIN/tiny_memcpy N 2 shared"
    "kernels|50000|1|1|$BIN/interop_kernels N"
    "dpnp|800|14|0|$PY $ROOT/bench/programs/dpnp_pipeline.py N"
  )
  local results="$WORK/wall.tsv"
  : >"$results"
  local entry name n per self cmd tasks
  local -a selected=()
  for entry in "${table[@]}"; do
    name="${entry%%|*}"
    [[ ",$workloads," == *",$name,"* ]] && selected+=("$entry")
  done
  ((${#selected[@]})) || die "no known workload in --workloads $workloads"
  echo "$MACHINE" >&2
  local check status=0
  log "self-timed check: tiny_memcpy 3000 1 self-timed under syclgraph"
  check="$(self_timed_check)" || status=1
  for entry in "${selected[@]}"; do
    IFS='|' read -r name n per self cmd <<<"$entry"
    n=$((${tasks_n:-$n} / scale))
    ((n > 0)) || n=1
    tasks=$((n * per))
    local -a words configs=()
    read -r -a words <<<"${cmd/ N/ $n}"
    local c
    for c in "${WALL_CONFIGS[@]}"; do
      [[ ($c == selftimed || $c == threadtimed) && $self == 0 ]] || configs+=("$c")
    done
    log "$name: ${words[*]##*/} x ${#configs[@]} configurations x $rounds rounds"
    local r k config value out
    # Each round runs the configurations in an order of its own, shuffled
    # from --seed: no configuration always runs first or right after the
    # same other one. (A fixed rotation did that: the empty subscriber ran
    # after syclgraph's configurations, its A/A copy after the empty one,
    # and the A/A ratio sat below 1 in 8 of 10 series.)
    local -a orders order
    mapfile -t orders < <(round_orders "$seed" "$rounds" "${#configs[@]}")
    for ((r = 0; r < rounds; r++)); do
      read -r -a order <<<"${orders[r]}"
      for k in "${order[@]}"; do
        config="${configs[k]}"
        local -a argv=("${words[@]}")
        [[ $config == selftimed ]] && argv+=(self-timed)
        [[ $config == threadtimed ]] && argv+=(thread-timed)
        # whole.py times the whole process (start to exit, every file
        # written) and its end of run (the program's last line to its exit).
        out="$(run_config "$config" "$PY" "$WHOLE" "${argv[@]}" 2>"$WORK/stderr")" || true
        value="$(sed -n 's/^us_per_task //p' <<<"$out" | tail -n1)"
        local whole="" tail_s=""
        read -r whole tail_s < <(sed -n 's/^whole_process_s \([0-9.]*\) end_of_run_s \([0-9.]*\) exit 0$/\1 \2/p' <<<"$out" | tail -n1; echo) || true
        if [[ $config == selftimed || $config == threadtimed ]] && ! grep -q "^self_timed commands $tasks " <<<"$out"; then
          log "$name round $r: the self-timed program did not read all $tasks commands' times"
          value=""
        fi
        if [[ -z "$value" ]]; then
          log "$name round $r $config: no us_per_task (stderr below)"
          tail -n 5 "$WORK/stderr" >&2 || true
          value=nan
        fi
        [[ $value != nan && -n "$whole" ]] || { whole=nan; tail_s=nan; }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$tasks" "$r" "$config" "$value" "$whole" "$tail_s" >>"$results"
      done
    done
  done
  echo
  echo "$MACHINE"
  echo "command: scripts/bench.sh --wall$( ((stopped)) && echo ' --stopped')$( ((noxpti)) && echo ' --no-xpti')$([[ -n "$sg_lib" ]] && echo " --syclgraph-lib $sg_lib") --rounds $rounds --seed $seed --workloads $workloads$([[ -n "$wall_configs" ]] && echo " --wall-configs $wall_configs")$([[ -n "$tasks_n" ]] && echo " --tasks $tasks_n")$( ((quick)) && echo ' --quick')"
  echo
  echo "$check"
  echo
  "$PY" "$REPORT" wall "$results" || status=1
  return "$status"
}

# ---- callgrind -------------------------------------------------------------------
# Pause after the warm-up under callgrind (ms of wall time; valgrind runs
# ~50x slower, so this is ~60 ms of native start-up).
CG_SETTLE_MS=3000

callgrind_mode() {
  command -v valgrind >/dev/null || die "valgrind not found (scripts/setup.sh installs it)"
  local runs="$WORK/callgrind-runs.tsv"
  : >"$runs"
  echo "$MACHINE" >&2
  local k config n out
  for ((k = 0; k < repeat; k++)); do
    for config in "${CONFIGS[@]}"; do
      for n in "$n1" "$n2"; do
        out="$WORK/callgrind.$config.$n.$k.out"
        local -a argv=("$BIN/${cg_cmd[0]}" "${cg_cmd[@]:1}")
        argv=("${argv[@]/#N/$n}")
        log "callgrind $config ${argv[*]##*/} (run $((k + 1))/$repeat)"
        # --fair-sched=yes: valgrind runs one thread at a time; handing the
        # lock round-robin makes the OpenCL worker threads' progress, and so
        # the heap's state, repeat from run to run (without it, libc's malloc
        # counts vary by ~1k instructions per task).
        # --separate-threads=yes: one file per thread (OUT-01, OUT-02, ...),
        # so that report.py tells the program's threads from syclgraph's
        # (by the function each thread started in) and measures syclgraph's
        # entry points on the program's threads.
        # BENCH_SETTLE_MS: the program pauses after its warm-up (see
        # bench/programs/common.hpp), so a tracer's start-up is over before
        # the counted loop in both runs of a pair, not over to a varying extent.
        if ! BENCH_SETTLE_MS="$CG_SETTLE_MS" run_config "$config" valgrind --tool=callgrind --fair-sched=yes --dump-instr=no \
          --separate-threads=yes --callgrind-out-file="$out" "${argv[@]}" \
          >"$WORK/stdout" 2>"$WORK/stderr" || ! grep -q '^us_per_task' "$WORK/stdout"; then
          log "callgrind $config N=$n failed (stderr below)"
          tail -n 8 "$WORK/stderr" >&2 || true
          if grep -q 'rustix::backend::.*vdso\|check_elf_base' "$WORK/stderr"; then
            log "the subscriber reads the clock through rustix's own vDSO parser, which"
            log "faults under valgrind (rustix issue 1559); rustix's use-libc feature avoids it"
          fi
          continue
        fi
        printf '%s\t%s\t%s\t%s\n' "$config" "$k" "$n" "$out" >>"$runs"
      done
    done
  done
  echo
  echo "$MACHINE"
  echo "command: scripts/bench.sh --callgrind$( ((notiming)) && echo ' --notiming')$( ((stopped)) && echo ' --stopped')$([[ -n "$sg_lib" ]] && echo " --syclgraph-lib $sg_lib") --cg-workload $cg_workload --n1 $n1 --n2 $n2 --repeat $repeat"
  echo
  "$PY" "$REPORT" callgrind "$runs" "$n1" "$n2" "${cg_cmd[*]}"
}

# ---- ITT tasks ---------------------------------------------------------------------
# itt_tasks N under: no ITT collector (the empty subscriber, nothing for the
# program's ITT calls to reach), syclgraph as the collector
# (INTEL_LIBITTNOTIFY64), and syclgraph capturing the pair's own name
# (SYCLGRAPH_REGION=pair: each pair starts and stops tracing).
ITT_TARGET_NS=300
ITT_N1=20000
ITT_N2=40000
ITT_WALL_N=1000000

# run_itt CONFIG CMD...: CMD (an itt_tasks command) under one of none,
# syclgraph, capture.
run_itt() {
  local config="$1"; shift
  case "$config" in
    none) run_config empty "$@" ;;
    syclgraph) INTEL_LIBITTNOTIFY64="$SG_LIB" run_config syclgraph "$@" ;;
    capture) INTEL_LIBITTNOTIFY64="$SG_LIB" SYCLGRAPH_REGION=pair run_config syclgraph "$@" named ;;
  esac
}

# The instructions of the main thread's callgrind file (PATH-01).
main_thread_ir() {
  sed -n 's/^\(summary\|totals\): *\([0-9]*\).*$/\2/p' "$1-01" | head -n1
}

itt_mode() {
  command -v valgrind >/dev/null || die "valgrind not found (scripts/setup.sh installs it)"
  [[ -x "$BIN/itt_tasks" ]] || die "missing $BIN/itt_tasks (run without --no-build)"
  echo "$MACHINE" >&2
  local configs=(none syclgraph capture) config n out status=0
  local -A ir=()
  for config in "${configs[@]}"; do
    for n in "$ITT_N1" "$ITT_N2"; do
      out="$WORK/itt.$config.$n.out"
      log "callgrind itt_tasks $n under $config"
      BENCH_SETTLE_MS="$CG_SETTLE_MS" run_itt "$config" valgrind --tool=callgrind --fair-sched=yes \
        --dump-instr=no --separate-threads=yes --callgrind-out-file="$out" "$BIN/itt_tasks" "$n" \
        >"$WORK/stdout" 2>"$WORK/stderr" || { log "itt_tasks under $config failed"; tail -n 5 "$WORK/stderr" >&2; status=1; }
      ir["$config/$n"]="$(main_thread_ir "$out")"
    done
  done
  local results="$WORK/itt-wall.tsv" r k
  : >"$results"
  local -a orders order
  mapfile -t orders < <(round_orders "$seed" "$rounds" "${#configs[@]}")
  for ((r = 0; r < rounds; r++)); do
    read -r -a order <<<"${orders[r]}"
    for k in "${order[@]}"; do
      config="${configs[k]}"
      local value
      value="$(run_itt "$config" "$BIN/itt_tasks" "$ITT_WALL_N" 2>/dev/null | sed -n 's/^ns_per_pair //p')" || true
      printf '%s\t%s\n' "$config" "${value:-nan}" >>"$results"
    done
  done
  echo
  echo "$MACHINE"
  echo "command: scripts/bench.sh --itt --rounds $rounds --seed $seed$([[ -n "$sg_lib" ]] && echo " --syclgraph-lib $sg_lib")"
  echo
  echo "instructions per ITT task pair on the program's thread (callgrind, (Ir[$ITT_N2] - Ir[$ITT_N1]) / $((ITT_N2 - ITT_N1)), main thread):"
  for config in "${configs[@]}"; do
    awk -v c="$config" -v a="${ir[$config/$ITT_N1]:-0}" -v b="${ir[$config/$ITT_N2]:-0}" -v d=$((ITT_N2 - ITT_N1)) \
      'BEGIN { printf "  %-10s %8.1f\n", c, (b - a) / d }'
  done
  echo
  echo "wall ns per pair, itt_tasks $ITT_WALL_N, $rounds interleaved rounds (median, min, max):"
  "$PY" - "$results" "$ITT_TARGET_NS" <<'PYEOF' || status=1
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
target = float(sys.argv[2])
by = {}
for config, value in rows:
    if value != "nan":
        by.setdefault(config, []).append(float(value))
for config in ("none", "syclgraph", "capture"):
    v = by.get(config, [])
    if v:
        print(f"  {config:<10} {statistics.median(v):8.1f} {min(v):8.1f} {max(v):8.1f}")
if "syclgraph" not in by or "none" not in by:
    print("  FAIL: no figures")
    sys.exit(1)
extra = statistics.median(by["syclgraph"]) - statistics.median(by["none"])
verdict = "PASS" if extra <= target else "FAIL"
print(f"syclgraph - none: {extra:.1f} ns per pair (target <= {target:.0f} ns)  {verdict}")
sys.exit(0 if extra <= target else 1)
PYEOF
  return "$status"
}

# ---- memory and trace size ----------------------------------------------------
# Peak RSS of 1,000,000 tiny memcpys (--memory-memcpys N) under each configuration; the target is
# syclgraph <= empty subscriber + 64 MiB. The syclgraph run of the memcpys
# also gives the trace size: bytes of trace.pftrace per memcpy, target 150.
MEMORY_TARGET_MIB=64
TRACE_TARGET_BYTES=150

memory_mode() {
  local scale=1
  ((quick)) && scale=10
  local memcpys=$((memory_memcpys / scale))
  # Two workloads: the tiny memcpys (the target's case), and small kernels
  # through the scheduler, whose submissions all get new unique_ids (what
  # grows without bound shows there).
  local -a workloads=("tiny_memcpy $memcpys 1" "interop_kernels $((300000 / scale))")
  local workload config line kib verdict=PASS
  local -A peak=() tail_s=()
  local sg_out="$WORK/memory-sg-out"
  echo "$MACHINE" >&2
  for workload in "${workloads[@]}"; do
    for config in "${MEMORY_CONFIGS[@]}"; do
      log "memory $config: $workload"
      rm -rf "$sg_out"
      # syclgraph writes the memcpys' outputs where they are kept for the
      # size figure, with its summary (for lost or dropped records) on
      # stderr; maxrss.py counts the peak of the program alone.
      # shellcheck disable=SC2086 # the workload is a command line
      line="$(SG_OUT="$sg_out" SG_QUIET=0 run_config "$config" "$PY" "$ROOT/bench/tools/maxrss.py" \
        --stderr "$WORK/memory-stderr" $BIN/$workload)"
      kib="$(sed -n 's/^maxrss_kib \([0-9]*\) exit 0 .*$/\1/p' <<<"$line")"
      [[ -n "$kib" ]] || die "memory $config failed ($workload): $line"
      peak["$workload/$config"]=$kib
      tail_s["$workload/$config"]="$(sed -n 's/^.* after_last_line_s \([0-9.]*\)$/\1/p' <<<"$line")"
      if [[ $config == syclgraph && $workload == tiny_memcpy* ]]; then
        trace_size "$memcpys" "$sg_out" "$WORK/memory-stderr" >"$WORK/size.txt" || verdict=FAIL
      fi
      rm -rf "$sg_out"
    done
  done
  echo
  echo "$MACHINE"
  echo "command: scripts/bench.sh --memory$( ((memory_memcpys != 1000000)) && echo " --memory-memcpys $memory_memcpys")$( ((noxpti)) && echo ' --no-xpti')$( ((quick)) && echo ' --quick') (peak RSS)"
  for workload in "${workloads[@]}"; do
    echo
    echo "$workload"
    printf '%-12s %12s\n' configuration "peak RSS MiB"
    for config in "${MEMORY_CONFIGS[@]}"; do
      awk -v c="$config" -v k="${peak[$workload/$config]}" 'BEGIN { printf "%-12s %12.1f\n", c, k / 1024 }'
    done
    local with="${peak[$workload/syclgraph]}" without="${peak[$workload/empty]}"
    local extra=$(((with - without) / 1024))
    local result=PASS
    ((extra <= MEMORY_TARGET_MIB)) || { result=FAIL; verdict=FAIL; }
    echo "syclgraph - empty subscriber: +${extra} MiB (target <= +${MEMORY_TARGET_MIB} MiB)  $result"
    # The end of the run: from the program's last line (after its last
    # command) to its exit; syclgraph's replay of its journal is there.
    local count
    read -r _ count _ <<<"$workload"
    awk -v e="${tail_s[$workload/empty]}" -v s="${tail_s[$workload/syclgraph]}" -v n="$count" 'BEGIN {
      printf "end of run (last line to exit): empty %.2f s, syclgraph %.2f s: +%.2f s per 1,000,000 commands\n", e, s, (s - e) * 1e6 / n }'
  done
  echo
  cat "$WORK/size.txt"
  [[ $verdict == PASS ]]
}

# trace_size MEMCPYS OUTPUT_DIR STDERR: prints the size of trace.pftrace per
# memcpy against its target, and what shows that nothing was lost: the
# kernels.csv rows (every memcpy a timed row) and the summary's lost or
# dropped lines (the instance bound's "dropped: N instances not kept in
# memory" is expected: instances.dot is cut, the other outputs are complete).
# Returns 1 when the target is missed or something was lost.
trace_size() {
  local memcpys="$1" dir="$2" stderr="$3" status=0
  local bytes rows timed
  [[ -f "$dir/trace.pftrace" && -f "$dir/kernels.csv" ]] || { echo "trace size: no trace.pftrace or kernels.csv in the syclgraph run"; return 1; }
  bytes="$(stat -c %s "$dir/trace.pftrace")"
  read -r rows timed < <(awk -F, 'NR > 1 { rows++; if ($2 == "memcpy" && $13 == "ok") timed++ } END { print rows + 0, timed + 0 }' "$dir/kernels.csv")
  echo "trace size (the syclgraph run of tiny_memcpy $memcpys 1, every output on)"
  awk -v b="$bytes" -v n="$memcpys" -v t="$TRACE_TARGET_BYTES" 'BEGIN {
    per = b / n
    printf "trace.pftrace: %d bytes, %.1f bytes per memcpy (target <= %d)  %s\n", b, per, t, per <= t ? "PASS" : "FAIL"
    exit per <= t ? 0 : 1 }' || status=1
  echo "kernels.csv: $rows rows, $timed timed memcpys (the $memcpys timed ones, the warm-up and the program's own copies)"
  ((timed >= memcpys)) || { echo "  FAIL: fewer timed memcpy rows than memcpys"; status=1; }
  local lost
  lost="$(grep -E '^ *(lost|dropped):' "$stderr" | grep -v 'instances not kept in memory' || true)"
  if [[ -n "$lost" ]]; then
    echo "  FAIL: syclgraph's summary reports losses:"
    sed 's/^/    /' <<<"$lost"
    status=1
  else
    echo "syclgraph's summary: nothing lost or dropped (but instances past SYCLGRAPH_MAX_INSTANCES)"
  fi
  return "$status"
}

# run_part MODE: one part in a subshell, so that a part's `die` ends only
# that part; sets part_status: 0 met, 1 missed or failed, 2 usage or build
# error. (Not callable as `run_part || ...`: bash would then ignore set -e
# inside the part.)
run_part() {
  set +e
  (
    set -e
    case "$1" in
      callgrind) callgrind_mode ;;
      memory) memory_mode ;;
      wall) wall_mode ;;
    esac
  )
  part_status=$?
  set -e
}

case "$mode" in
  callgrind) callgrind_mode ;;
  itt) itt_mode ;;
  memory) memory_mode ;;
  wall) wall_mode ;;
  *)
    # Everything: each part prints its table as it ends, then one line each.
    status=0
    declare -A part_rc=()
    declare -A part_s=()
    for part in callgrind wall memory; do
      log "---- $part ----"
      echo "==== $part ===="
      MACHINE="$(machine_line)"
      started=$SECONDS
      run_part "$part"
      part_rc[$part]=$part_status
      part_s[$part]=$((SECONDS - started))
      ((part_status > status)) && status=$part_status
      echo
    done
    echo "==== result ===="
    for part in callgrind wall memory; do
      case "${part_rc[$part]}" in
        0) echo -n "$part: every target met" ;;
        1) echo -n "$part: a target missed or a run failed" ;;
        *) echo -n "$part: could not run (exit ${part_rc[$part]})" ;;
      esac
      echo " (${part_s[$part]} s)"
    done
    exit "$status" ;;
esac
