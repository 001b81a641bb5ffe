#!/usr/bin/env bash
# Installs what syclgraph needs on a fresh Debian machine (run as root).
# Usage: scripts/setup.sh [--demo]
#   --demo: only what scripts/demo.sh needs: the Debian packages g++ (the
#     example), graphviz (graph.svg) and libze1 (the Level Zero loader, the
#     runtime's second adapter), and the project-local Python venv
#     <repo>/.venv with the pinned DPC++ runtime (intel-sycl-rt,
#     intel-opencl-rt: scripts/lib/runtime-pins.sh).
#   without it, also what scripts/test.sh needs: the Debian packages
#     libze-dev and valgrind; in .venv, dpctl, dpnp, pydot, networkx, pytest,
#     the Perfetto protos, ittapi, and MPI: the `mpich` wheel (mpiexec,
#     mpicxx, libmpi.so.12) and mpi4py, which loads that libmpi.so.12
#     (Debian's mpich names it libmpich.so.12); duckdb and polars (the tests
#     query the Parquet export with them).
# Idempotent: apt runs only for missing packages, pip only when the venv does
# not already hold every pinned requirement at its pinned version.
# The runtime wheels hold each library two or three times, once under each
# of its names (libsycl.so, .so.9, .so.9.0.0: a wheel has no symbolic
# links); the copies are made hard links of one file, which halves the
# runtime's disk space (1.5 GB to about 0.85 GB).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SYCLGRAPH_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
demo=0
case "${1:-}" in
  --demo) demo=1 ;;
  "") ;;
  *) sed -n '2,22p' "$0" >&2; exit 2 ;;
esac

# shellcheck source=lib/runtime-pins.sh
. "$ROOT/scripts/lib/runtime-pins.sh"
APT_PACKAGES=(g++ graphviz libze1)
PIP_REQUIREMENTS=("${DEMO_PINS[@]}")
VENV_FILES="lib/libsycl.so.9 lib/libxptifw.so lib/libintelocl.so lib/libOpenCL.so.1"
if ((demo == 0)); then
  APT_PACKAGES+=(libze-dev valgrind)
  PIP_REQUIREMENTS=(
    "${RUNTIME_PINS[@]}"
    pydot==4.0.1
    networkx==3.6.1
    pytest==9.2.0
    pytest-timeout==2.4.0
    duckdb==2.0.1
    polars==2.1.0
    perfetto==0.59.1
    protobuf==7.36.2
    ittapi==1.2.2
    mpich==5.0.2
    mpi4py==4.1.2
  )
  VENV_FILES+=" lib/libmpi.so.12 bin/mpiexec bin/mpicxx"
fi

log() { echo "setup: $*" >&2; }
# shellcheck source=lib/venv.sh
. "$ROOT/scripts/lib/venv.sh"

# ---- Debian packages -------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "missing Debian packages (${missing[*]}) and not root: install them by hand"
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
else
  log "Debian packages present"
fi

# ---- Python venv -------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating venv $VENV"
  if ! "$PYTHON" -m venv "$VENV"; then
    # Debian splits ensurepip into python3-venv.
    if [[ $(id -u) -eq 0 ]]; then
      pyver="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update
      apt-get install -y --no-install-recommends "python${pyver}-venv" || \
        apt-get install -y --no-install-recommends python3-venv
      rm -rf "$VENV"
      "$PYTHON" -m venv "$VENV"
    else
      exit 1
    fi
  fi
fi

venv_install_pinned "$VENV" "${PIP_REQUIREMENTS[@]}"

venv_require_files "$VENV" "$VENV_FILES" "${PIP_REQUIREMENTS[@]}" || exit 1
venv_link_copies "$VENV"

# ---- OpenCL CPU device -------------------------------------------------------
venv_fix_icd "$VENV"
log "done; source scripts/env.sh to use the runtime"
