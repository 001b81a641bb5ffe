#!/usr/bin/env bash
# Writes the release archive target/package/syclgraph-<version>-x86_64-linux.tar.gz
# from the release build (cargo build --release, run here; an up-to-date
# target/release is reused). It unpacks to one folder, syclgraph-<version>-
# x86_64-linux/, to put under a prefix or a module:
#   bin/syclgraph  lib/libsyclgraph.so  include/syclgraph.h
#   README.md  LICENSE-MIT  LICENSE-APACHE
# `bin/syclgraph run` finds lib/libsyclgraph.so itself (../lib of the command).
# No DPC++ runtime inside: the traced program brings its own.
# Prints the archive's path on stdout.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/release.sh
. "$ROOT/scripts/lib/release.sh"
log() { echo "package: $*" >&2; }

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
version="$(release_version)"
[[ -n "$version" ]] || { log "no [workspace.package] version in Cargo.toml"; exit 1; }
cargo build --release -p syclgraph -p syclgraph-cli >&2

name="syclgraph-$version-x86_64-linux"
out="$TARGET_DIR/package"
stage="$out/$name"
rm -rf "$stage" "$out/$name.tar.gz"
install -Dm755 "$TARGET_DIR/release/syclgraph" "$stage/bin/syclgraph"
install -Dm755 "$TARGET_DIR/release/libsyclgraph.so" "$stage/lib/libsyclgraph.so"
install -Dm644 include/syclgraph.h "$stage/include/syclgraph.h"
install -m644 README.md LICENSE-MIT LICENSE-APACHE "$stage/"
# Reproducible: sorted names, one owner, the last commit's time.
mtime="$(git log -1 --format=%ct 2>/dev/null || date +%s)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
  -C "$out" -czf "$out/$name.tar.gz" "$name"
rm -rf "$stage"
log "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1))"
echo "$out/$name.tar.gz"
