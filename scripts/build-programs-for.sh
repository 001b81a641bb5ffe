#!/usr/bin/env bash
# Compiles the SYCL example and test programs against one extra DPC++ runtime
# (the venv made by scripts/setup-runtime.sh VERSION) into
# build/programs-VERSION/<name>, the same way scripts/build-programs.sh does
# for the project venv: g++, host-only SYCL, OpenCL C kernels through interop,
# no -DNDEBUG (so code_location keeps file names), sources given relative to
# the repository root (so XPTI reports examples/x.cpp, tests/programs/y.cpp).
# Also -I<venv>/include/sycl, as the DPC++ driver does: up to 2025.x the
# headers include <CL/__spirv/...>, which lives under include/sycl.
# Incremental: a program is rebuilt only when its source, or a header next to
# it, is newer than the binary.
# Usage: scripts/build-programs-for.sh VERSION [-f|--force] [name...]
# Environment: SYCLGRAPH_RUNTIME_VENV (default <repo>/.venv-VERSION), CXX.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || "$1" == -* ]]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
VERSION="$1"
shift
VENV="${SYCLGRAPH_RUNTIME_VENV:-$ROOT/.venv-$VERSION}"
OUT="$ROOT/build/programs-$VERSION"
CXX="${CXX:-g++}"
CXXFLAGS=(-std=c++17 -O1 -g -Wall -Wno-deprecated-declarations -Wno-comment -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING)

force=0
only=()
for arg in "$@"; do
  case "$arg" in
    -f|--force) force=1 ;;
    *) only+=("$arg") ;;
  esac
done

if [[ ! -e "$VENV/lib/libsycl.so" || ! -d "$VENV/include/sycl" ]]; then
  echo "build-programs-for: no DPC++ runtime in $VENV (run scripts/setup-runtime.sh $VERSION)" >&2
  exit 1
fi
mkdir -p "$OUT"

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
  echo "build-programs-for: $src -> build/programs-$VERSION/$name" >&2
  "$CXX" "${CXXFLAGS[@]}" -I"$VENV/include" -I"$VENV/include/sycl" -I"$dir" "$src" -o "$bin.tmp" \
    -L"$VENV/lib" -Wl,-rpath,"$VENV/lib" -lsycl -lOpenCL -lintlc
  mv -f "$bin.tmp" "$bin"
  built=$((built + 1))
done
echo "build-programs-for: $built built, $skipped up to date ($VENV)" >&2
