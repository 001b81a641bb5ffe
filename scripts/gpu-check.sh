#!/usr/bin/env bash
# Runs syclgraph's GPU test programs (tests/gpu/) under syclgraph on the SYCL
# GPU device of whatever runtime the environment gives, and checks every run
# against the programs' own oracles (tests/gpu/check.py: their clock bounds,
# their event profiling, cudaEvent pairs, expected summary lines).
# Without a SYCL GPU device it prints `skipped: no SYCL GPU device` and
# exits 0 (CI has none).
#   scripts/gpu-check.sh
# Environment:
#   SYCLGRAPH_VENV       the DPC++ runtime (lib/, include/; default <repo>/.venv)
#   SYCLGRAPH_EXE        syclgraph (default <repo>/target/release/syclgraph)
#   SYCLGRAPH_GPU_CHECK_OUT  where programs and runs go (default <repo>/build/gpu-check)
#   SYCLGRAPH_GPU_CHECK_ANY_DEVICE=1  without a GPU, run clock_bounds and
#                        gpu_mix on the default device (the CPU-side test does)
#   CXX (default g++), NVCC (default nvcc): CUDA programs are built only
#   when nvcc is found and a CUDA device is listed.
# Exit: 0 all checks passed (or skipped), 1 a check failed, 2 a build failed.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SYCLGRAPH_VENV="${SYCLGRAPH_VENV:-$ROOT/.venv}"
VENV="$SYCLGRAPH_VENV"
EXE="${SYCLGRAPH_EXE:-$ROOT/target/release/syclgraph}"
OUT="${SYCLGRAPH_GPU_CHECK_OUT:-$ROOT/build/gpu-check}"
CXX="${CXX:-g++}"
NVCC="${NVCC:-nvcc}"
ANY="${SYCLGRAPH_GPU_CHECK_ANY_DEVICE:-0}"
SRC="$ROOT/tests/gpu"

if [[ ! -e "$VENV/lib/libsycl.so" || ! -d "$VENV/include/sycl" ]]; then
  echo "skipped: no SYCL GPU device (no DPC++ runtime in $VENV)"
  exit 0
fi
# shellcheck source=env.sh
. "$ROOT/scripts/env.sh"
mkdir -p "$OUT/bin"

CXXFLAGS=(-std=c++17 -O1 -g -Wall -Wno-deprecated-declarations -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING
  -I"$VENV/include")
LDFLAGS=(-L"$VENV/lib" -lsycl -Wl,-rpath,"$VENV/lib")

# Source paths relative to the root: the rows' source_file.
cd "$ROOT" || exit 2
build() {  # build NAME [extra flags...]: tests/gpu/NAME.cpp -> $OUT/bin/NAME
  local name="$1"
  shift
  if ! "$CXX" "${CXXFLAGS[@]}" "tests/gpu/$name.cpp" -o "$OUT/bin/$name" "$@" "${LDFLAGS[@]}" \
    >"$OUT/bin/$name.build.log" 2>&1; then
    echo "FAIL build $name (see $OUT/bin/$name.build.log)"
    tail -20 "$OUT/bin/$name.build.log"
    return 1
  fi
}

build list_devices || exit 2
devices="$("$OUT/bin/list_devices" 2>&1)"
if ! grep -q '^device gpu ' <<<"$devices"; then
  if [[ "$ANY" != 1 ]]; then
    echo "skipped: no SYCL GPU device"
    exit 0
  fi
  echo "no SYCL GPU device: checking on the default device (SYCLGRAPH_GPU_CHECK_ANY_DEVICE=1)"
fi
echo "$devices"
if [[ ! -x "$EXE" ]]; then
  echo "FAIL no syclgraph at $EXE (cargo build --release -p syclgraph -p syclgraph-cli)"
  exit 2
fi
echo "syclgraph: $("$EXE" --version 2>&1 | head -1), $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null)"

# CUDA programs: with nvcc and a CUDA device.
cuda_flags=()
if grep -q '^device gpu cuda ' <<<"$devices" && command -v "$NVCC" >/dev/null 2>&1; then
  cuda_flags=(-DSYCLGRAPH_GPU_CUDA)
  cuda_lib="$(dirname "$(command -v "$NVCC")")/../lib64"
  echo "nvcc: $("$NVCC" --version | tail -1)"
fi
gpu=0
grep -q '^device gpu ' <<<"$devices" && gpu=1
built=()
for src in tests/gpu/*.cpp; do
  name="$(basename "$src" .cpp)"
  # native_commands has its own kernels and checker (below).
  [[ "$name" == list_devices || "$name" == native_commands ]] && continue
  # Without a GPU only the two programs that run there are built.
  ((gpu)) || [[ "$name" == clock_bounds || "$name" == gpu_mix ]] || continue
  extra=()
  if ((${#cuda_flags[@]})) && grep -q SYCLGRAPH_GPU_CUDA "$src"; then
    # spin.cu for every CUDA program, NAME.cu for its own kernels.
    for cu in tests/gpu/spin.cu "tests/gpu/$name.cu"; do
      [[ -e "$cu" ]] || continue
      obj="$OUT/bin/$(basename "$cu" .cu).o"
      if ! "$NVCC" -O2 -c "$cu" -o "$obj" >"$obj.log" 2>&1; then
        echo "FAIL nvcc $cu"
        tail -20 "$obj.log"
        exit 2
      fi
      extra+=("$obj")
    done
    extra+=("${cuda_flags[@]}" -L"$cuda_lib" -lcudart_static -lcuda -ldl -lrt -lpthread)
  fi
  build "$name" "${extra[@]}" || exit 2
  built+=("$name")
done

failed=0
cases=0
# run_case CASE PROGRAM ARGS...: the program under syclgraph, then check.py.
run_case() {
  local case="$1" prog="$2"
  shift 2
  local dir="$OUT/runs/$case"
  rm -rf "$dir"
  mkdir -p "$OUT/runs"
  cases=$((cases + 1))
  echo "== $case: $prog $*"
  local t0 t1
  t0=$(date +%s%N)
  "$EXE" run -o "$dir" -- "$OUT/bin/$prog" "$@" >"$OUT/runs/$case.stdout" 2>"$OUT/runs/$case.stderr"
  local rc=$?
  t1=$(date +%s%N)
  if grep -q '^skipped:' "$OUT/runs/$case.stdout"; then
    echo "   $(grep '^skipped:' "$OUT/runs/$case.stdout")"
    return
  fi
  if ((rc != 0)); then
    echo "FAIL $case: exit status $rc"
    tail -5 "$OUT/runs/$case.stderr"
    failed=$((failed + 1))
    return
  fi
  echo "   traced run: $(((t1 - t0) / 1000000)) ms"
  if ! python3 "$SRC/check.py" "$OUT/runs/$case.stdout" "$dir" | sed 's/^/   /'; then
    failed=$((failed + 1))
  fi
  grep -E '^(lost|violations|untimed|host clock):' "$dir/summary.txt" 2>/dev/null | sed 's/^/   summary: /'
}

# The programs' own figures, untraced (the copy-time tail's reference).
untraced() {
  local case="$1" prog="$2"
  shift 2
  echo "== $case (untraced): $prog $*"
  "$OUT/bin/$prog" "$@" >"$OUT/runs/$case.stdout" 2>"$OUT/runs/$case.stderr" || {
    echo "FAIL $case (untraced): exit status $?"
    failed=$((failed + 1))
    return
  }
  python3 "$SRC/check.py" "$OUT/runs/$case.stdout" - | sed 's/^/   /'
}

mkdir -p "$OUT/runs"
if ((!gpu)); then
  # The CPU device: short (the CI machine has 2 cores).
  run_case clock_bounds clock_bounds waited 600 gap_us 100 burst 1000
  run_case gpu_mix gpu_mix
else
  untraced burst_alone clock_bounds waited 0 burst 20000
  run_case clock_bounds clock_bounds waited 3000 gap_us 0 burst 20000
  run_case clock_spread clock_bounds waited 2500 gap_us 1000 burst 0
  run_case gpu_mix gpu_mix
  run_case cuda_native cuda_native
  # The other programs (tests/gpu/native_*.cpp and the like), on the GPU
  # only: each states its own expectations (`expect ...` lines).
  for name in "${built[@]}"; do
    case "$name" in
      clock_bounds | gpu_mix | cuda_native) ;;
      *) run_case "$name" "$name" ;;
    esac
  done
fi

# Native commands (#42 items 1, 3, 4): tests/gpu/native_commands with its
# own kernels (native_kernels.cu), run in each of its modes and checked by
# native_check.py, through the UR hooks and on ur.call.debug.
if ((${#cuda_flags[@]})); then
  obj="$OUT/bin/native_kernels.o"
  if ! "$NVCC" -O2 -c tests/gpu/native_kernels.cu -o "$obj" >"$obj.log" 2>&1; then
    echo "FAIL nvcc tests/gpu/native_kernels.cu"
    tail -20 "$obj.log"
    exit 2
  fi
  build native_commands "$obj" -L"$cuda_lib" -lcudart_static -lcuda -ldl -lrt -lpthread || exit 2
  for hooks in 1 0; do
    cases=$((cases + 1))
    echo "== native_commands (SYCLGRAPH_UR_HOOKS=$hooks)"
    if ! SYCLGRAPH_UR_HOOKS=$hooks python3 "$SRC/native_check.py" "$OUT/bin/native_commands" "$EXE" \
      "$OUT/runs/native-hooks$hooks" | sed 's/^/   /'; then
      failed=$((failed + 1))
    fi
  done
fi

echo "gpu-check: $cases case(s), $failed failed"
((failed == 0)) || exit 1
exit 0
