#!/usr/bin/env bash
# The compiler of the workspace's own crates in scripts/test.sh's test build
# (RUSTC_WORKSPACE_WRAPPER): clippy-driver, which is rustc with clippy's
# lints, denying every warning. So one build both lints (what `cargo clippy
# --workspace --all-targets -- -D warnings` checks: the libraries, binaries,
# examples and tests) and makes the test binaries, and the dependencies,
# compiled by rustc as usual, are compiled once for both instead of once more
# for clippy's check. Cargo calls it as `clippy-rustc.sh RUSTC ARGS...`.
exec "${CLIPPY_DRIVER:-clippy-driver}" "$@" -D warnings
