#!/usr/bin/env bash
# Installs one extra DPC++ runtime from PyPI into its own project-local venv,
# <repo>/.venv-VERSION, for testing syclgraph against older runtimes:
#   intel-sycl-rt==VERSION and intel-opencl-rt==VERSION (the OpenCL CPU device
#   of the same release), nothing else (no dpctl/dpnp).
# Usage: scripts/setup-runtime.sh VERSION        e.g. 2025.0.0
# Idempotent like setup.sh: pip runs only when the venv does not already hold
# both pinned packages at VERSION. Prints the venv path on stdout.
# Environment: PYTHON (default python3), SYCLGRAPH_RUNTIME_VENV (override the
# venv path).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"

if [[ $# -ne 1 || -z "$1" || "$1" == -* ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
VERSION="$1"
if [[ ! "$VERSION" =~ ^[0-9]{4}\.[0-9]+\.[0-9]+$ ]]; then
  echo "setup-runtime: VERSION must look like 2025.0.0, not '$VERSION'" >&2
  exit 2
fi
VENV="${SYCLGRAPH_RUNTIME_VENV:-$ROOT/.venv-$VERSION}"
PIP_REQUIREMENTS=(
  "intel-sycl-rt==$VERSION"
  "intel-opencl-rt==$VERSION"
)

log() { echo "setup-runtime: $*" >&2; }
# shellcheck source=lib/venv.sh
. "$ROOT/scripts/lib/venv.sh"

if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating venv $VENV"
  if ! "$PYTHON" -m venv "$VENV"; then
    log "python -m venv failed (on Debian run scripts/setup.sh first: it installs python3-venv)"
    rm -rf "$VENV"
    exit 1
  fi
fi

venv_install_pinned "$VENV" "${PIP_REQUIREMENTS[@]}"

# The libsycl soname differs between releases (libsycl.so.8 up to 2025.x,
# libsycl.so.9 from 2026.0): check the unversioned link and the rest.
venv_require_files "$VENV" \
  "lib/libsycl.so lib/libxptifw.so lib/libintelocl.so lib/libOpenCL.so.1 include/xpti/xpti_data_types.h" \
  "${PIP_REQUIREMENTS[@]}" || exit 1

# ---- OpenCL CPU device -------------------------------------------------------
venv_fix_icd "$VENV"
soname="$(cd "$VENV/lib" && ls libsycl.so.* 2>/dev/null | grep -E '^libsycl\.so\.[0-9]+$' | head -n1 || true)"
log "done: DPC++ $VERSION (${soname:-libsycl.so}) in $VENV"
echo "$VENV"
