#!/usr/bin/env bash
# Compiles every examples/*.cpp and tests/programs/*.cpp into build/programs/<name>
# with g++ against the project venv's DPC++ runtime (host-only SYCL; device
# kernels come from OpenCL C through interop, hence -lOpenCL -lintlc).
# Incremental: a program is rebuilt only when its source, or a header next to
# it, is newer than the binary. Builds without -DNDEBUG on purpose: SYCL's
# code_location records file names only when NDEBUG is not defined.
# When more than one program is to be compiled, <sycl/sycl.hpp> is compiled
# once into a precompiled header (<out>/pch/sycl_pch.hpp.gch, ~200 MB,
# rebuilt when the runtime's headers change): a program then takes ~2 s of
# CPU instead of ~6 s. One program alone (the demo's) is compiled without
# it. Stale programs are compiled $(nproc) at a time.
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
stale_sources=()
skipped=0
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
  else
    stale_sources+=("$src")
  fi
done

# The precompiled header, with the programs' own flags (GCC uses a .gch only
# when they match; otherwise it silently reads the header).
PCH_DIR="$OUT/pch"
pch="$PCH_DIR/sycl_pch.hpp.gch"
pch_fresh=0
[[ -e "$pch" && ! "$VENV/include/sycl/sycl.hpp" -nt "$pch" && $force -eq 0 ]] && pch_fresh=1
use_pch=$pch_fresh
if ((${#stale_sources[@]} > 1 && pch_fresh == 0)); then
  mkdir -p "$PCH_DIR"
  echo '#include <sycl/sycl.hpp>' >"$PCH_DIR/sycl_pch.hpp"
  echo "build-programs: <sycl/sycl.hpp> -> $pch" >&2
  "$CXX" "${CXXFLAGS[@]}" "${INCLUDES[@]}" -x c++-header "$PCH_DIR/sycl_pch.hpp" -o "$pch.tmp"
  mv -f "$pch.tmp" "$pch"
  use_pch=1
fi

compile() {
  local src="$1" name dir bin
  name="$(basename "$src" .cpp)"
  dir="$(dirname "$src")"
  bin="$OUT/$name"
  echo "build-programs: $src -> $bin" >&2
  local pch_flags=()
  ((use_pch)) && pch_flags=(-I"$PCH_DIR" -include sycl_pch.hpp)
  "$CXX" "${CXXFLAGS[@]}" "${INCLUDES[@]}" "${pch_flags[@]}" -I"$dir" "$src" \
    -o "$bin.tmp" -L"$VENV/lib" -Wl,-rpath,"$VENV/lib" -lsycl -lOpenCL -lintlc
  mv -f "$bin.tmp" "$bin"
}

jobs="$(nproc)"
running=0 failed=0
for src in "${stale_sources[@]}"; do
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  compile "$src" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
if ((failed)); then
  echo "build-programs: a program failed to compile (above)" >&2
  exit 1
fi

# MPI + SYCL programs (tests/programs/mpi/*.cpp) need mpicxx: the one of the
# venv's `mpich` wheel (scripts/setup.sh), else one on PATH; without it they
# are skipped (the MPI tests then say what is missing).
MPICXX="${MPICXX:-}"
[[ -z "$MPICXX" && -x "$VENV/bin/mpicxx" ]] && MPICXX="$VENV/bin/mpicxx"
[[ -z "$MPICXX" ]] && MPICXX="$(command -v mpicxx || true)"
mpi_built=0
for src in tests/programs/mpi/*.cpp; do
  [[ -e "$src" ]] || continue
  name="$(basename "$src" .cpp)"
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then
    continue
  fi
  if [[ -z "$MPICXX" ]]; then
    echo "build-programs: no mpicxx (run scripts/setup.sh): $src skipped" >&2
    continue
  fi
  bin="$OUT/$name"
  if ((force == 0)) && [[ -e "$bin" && ! "$src" -nt "$bin" && ! tests/programs/common.hpp -nt "$bin" && ! tests/programs/itt.hpp -nt "$bin" ]]; then
    skipped=$((skipped + 1))
    continue
  fi
  echo "build-programs: $src -> $bin ($MPICXX)" >&2
  MPICH_CXX="$CXX" "$MPICXX" "${CXXFLAGS[@]}" "${INCLUDES[@]}" -Itests/programs "$src" -o "$bin.tmp" \
    -L"$VENV/lib" -Wl,-rpath,"$VENV/lib" -lsycl -lOpenCL -lintlc
  mv -f "$bin.tmp" "$bin"
  mpi_built=$((mpi_built + 1))
done
echo "build-programs: $((${#stale_sources[@]} + mpi_built)) built, $skipped up to date ($VENV)" >&2
