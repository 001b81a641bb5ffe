#!/usr/bin/env bash
# Compiles every examples/*.cpp and tests/programs/*.cpp into build/programs/<name>
# with g++ against the project venv's DPC++ runtime (host-only SYCL; device
# kernels come from OpenCL C through interop, hence -lOpenCL -lintlc).
# Incremental: a program is rebuilt only when its source, or a header next to
# it, is newer than the binary. Builds without -DNDEBUG on purpose: SYCL's
# code_location records file names only when NDEBUG is not defined.
# Usage: scripts/build-programs.sh [-f|--force] [name...]
# Environment: SYCLGRAPH_VENV (the runtime, default <repo>/.venv),
# SYCLGRAPH_PROGRAMS_OUT (default <repo>/build/programs), CXX.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SYCLGRAPH_VENV:-$ROOT/.venv}"
OUT="${SYCLGRAPH_PROGRAMS_OUT:-$ROOT/build/programs}"
CXX="${CXX:-g++}"
CXXFLAGS=(-std=c++17 -O1 -g -Wall -Wno-deprecated-declarations -Wno-comment -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING)
INCLUDES=(-I"$VENV/include" -I"$ROOT/include")
# Up to 2025.x the headers include <CL/__spirv/...>, which lives under
# include/sycl (the DPC++ driver adds that directory itself).
[[ -d "$VENV/include/sycl/CL" ]] && INCLUDES+=(-I"$VENV/include/sycl")

force=0
only=()
for arg in "$@"; do
  case "$arg" in
    -f|--force) force=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) only+=("$arg") ;;
  esac
done

if [[ ! -e "$VENV/lib/libsycl.so" || ! -d "$VENV/include/sycl" ]]; then
  echo "build-programs: no DPC++ runtime in $VENV (run scripts/setup.sh)" >&2
  exit 1
fi
mkdir -p "$OUT"

# Sources are given relative to ROOT so that the file name XPTI reports
# (payload source_file) is stable: examples/x.cpp, tests/programs/y.cpp.
cd "$ROOT"
built=0 skipped=0
for src in examples/*.cpp tests/programs/*.cpp; do
  [[ -e "$src" ]] || continue
  name="$(basename "$src" .cpp)"
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then
    continue
  fi
  bin="$OUT/$name"
  dir="$(dirname "$src")"
  stale=$force
  if [[ ! -e "$bin" || "$src" -nt "$bin" ]]; then
    stale=1
  else
    for hdr in "$dir"/*.hpp "$dir"/*.h; do
      [[ -e "$hdr" && "$hdr" -nt "$bin" ]] && stale=1
    done
  fi
  if ((stale == 0)); then
    skipped=$((skipped + 1))
    continue
  fi
  echo "build-programs: $src -> $bin" >&2
  "$CXX" "${CXXFLAGS[@]}" "${INCLUDES[@]}" -I"$dir" "$src" -o "$bin.tmp" \
    -L"$VENV/lib" -Wl,-rpath,"$VENV/lib" -lsycl -lOpenCL -lintlc
  mv -f "$bin.tmp" "$bin"
  built=$((built + 1))
done
echo "build-programs: $built built, $skipped up to date ($VENV)" >&2
