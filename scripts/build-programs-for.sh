#!/usr/bin/env bash
# Compiles the SYCL example and test programs against one extra DPC++ runtime
# (the venv made by scripts/setup-runtime.sh VERSION) into
# build/programs-VERSION/<name>, exactly as scripts/build-programs.sh does for
# the project venv.
# Usage: scripts/build-programs-for.sh VERSION [-f|--force] [name...]
# Environment: SYCLGRAPH_RUNTIME_VENV (default <repo>/.venv-VERSION), CXX.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 1 || "$1" == -* ]]; then
  sed -n '2,7p' "$0" >&2
  exit 2
fi
VERSION="$1"
shift
SYCLGRAPH_VENV="${SYCLGRAPH_RUNTIME_VENV:-$ROOT/.venv-$VERSION}" \
SYCLGRAPH_PROGRAMS_OUT="$ROOT/build/programs-$VERSION" \
  exec bash "$ROOT/scripts/build-programs.sh" "$@"
