# Source this file (bash/zsh): `. scripts/env.sh`
# Points the shell at the project-local DPC++ runtime in <repo>/.venv
# (created by scripts/setup.sh). It does NOT enable tracing by itself:
#   syclgraph_xpti_env            -> prints the XPTI variables (for `env $(...)`)
#   syclgraph_trace <lib.so> cmd  -> runs cmd with XPTI on and <lib.so> subscribed
# XPTI_SUBSCRIBERS is never exported here.

if [ -n "${BASH_SOURCE:-}" ]; then
  _syclgraph_here="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
  _syclgraph_here="${(%):-%x}"
else
  _syclgraph_here="$0"
fi
SYCLGRAPH_ROOT="$(cd "$(dirname "$_syclgraph_here")/.." && pwd)"
unset _syclgraph_here

export SYCLGRAPH_ROOT
export SYCLGRAPH_VENV="${SYCLGRAPH_VENV:-$SYCLGRAPH_ROOT/.venv}"

case ":${LD_LIBRARY_PATH:-}:" in
  *":$SYCLGRAPH_VENV/lib:"*) ;;
  *) export LD_LIBRARY_PATH="$SYCLGRAPH_VENV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac

# The wheel's .icd files hold a placeholder path; name the CPU driver directly.
export OCL_ICD_FILENAMES="$SYCLGRAPH_VENV/lib/libintelocl.so"

# XPTI trio, minus the subscriber (callers choose it).
SYCLGRAPH_XPTI_TRACE_ENABLE=1
SYCLGRAPH_XPTI_FRAMEWORK_DISPATCHER="$SYCLGRAPH_VENV/lib/libxptifw.so"

syclgraph_xpti_env() {
  echo "XPTI_TRACE_ENABLE=$SYCLGRAPH_XPTI_TRACE_ENABLE XPTI_FRAMEWORK_DISPATCHER=$SYCLGRAPH_XPTI_FRAMEWORK_DISPATCHER"
}

syclgraph_trace() {
  if [ $# -lt 2 ]; then
    echo "usage: syclgraph_trace <subscriber.so> <command> [args...]" >&2
    return 2
  fi
  local _sg_sub="$1"; shift
  XPTI_TRACE_ENABLE="$SYCLGRAPH_XPTI_TRACE_ENABLE" \
  XPTI_FRAMEWORK_DISPATCHER="$SYCLGRAPH_XPTI_FRAMEWORK_DISPATCHER" \
  XPTI_SUBSCRIBERS="$_sg_sub" \
    "$@"
}
