# The DPC++ runtime and the SYCL Python packages syclgraph is tested with
# (source it). scripts/setup.sh installs them into .venv; scripts/
# setup-packaging.sh downloads them for the fresh venv of
# tests/tests/install.rs, which reads the pins from this file.
RUNTIME_PINS=(
  intel-sycl-rt==2026.2.0
  intel-opencl-rt==2026.2.0
  dpctl==0.22.1
  dpnp==0.20.0
)
# What the demo needs of them (scripts/setup.sh --demo): the runtime and its
# OpenCL CPU device.
DEMO_PINS=("${RUNTIME_PINS[@]:0:2}")
