# Shared by scripts/setup.sh and scripts/setup-runtime.sh (source it; it
# defines functions only). Each function takes the venv path first and logs
# through the caller's `log`.

# True when every NAME==VERSION requirement is installed at exactly VERSION.
venv_has_all() {
  local venv="$1"; shift
  "$venv/bin/python" - "$@" <<'PY'
import sys
from importlib import metadata
ok = True
for req in sys.argv[1:]:
    name, ver = req.split("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        have = None
    if have != ver:
        ok = False
sys.exit(0 if ok else 1)
PY
}

# Installs the pinned requirements unless the venv already holds them all
# (a stamp file inside the venv records the list last installed).
venv_install_pinned() {
  local venv="$1"; shift
  local stamp="$venv/.syclgraph-requirements" want
  want="$(printf '%s\n' "$@")"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && venv_has_all "$venv" "$@"; then
    log "venv up to date ($venv)"
  elif venv_has_all "$venv" "$@"; then
    log "venv already holds the pinned packages; writing stamp"
    printf '%s\n' "$want" >"$stamp"
  else
    log "pip install $*"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q "$@"
    venv_has_all "$venv" "$@"
    printf '%s\n' "$want" >"$stamp"
  fi
}

# Checks that each FILE (a path inside the venv) exists; when one is missing,
# reinstalls the pinned requirements once (with --force-reinstall) and checks
# again. An install cut short (a full disk, a killed pip) leaves metadata that
# says the packages are there without their libraries, which venv_has_all
# cannot see. Usage: venv_require_files VENV "FILE..." REQUIREMENT...
venv_require_files() {
  local venv="$1" files="$2" f missing=""; shift 2
  for f in $files; do
    [[ -e "$venv/$f" ]] || { missing="$f"; break; }
  done
  [[ -z "$missing" ]] && return 0
  log "missing $venv/$missing: the install looks cut short; reinstalling $*"
  "$venv/bin/python" -m pip install --disable-pip-version-check -q --force-reinstall "$@"
  for f in $files; do
    [[ -e "$venv/$f" ]] || { log "missing $venv/$f after reinstalling"; return 1; }
  done
}

# The intel-opencl-rt wheel ships .icd files holding a conda placeholder
# prefix: point them at the venv so OCL_ICD_VENDORS=<venv>/etc/OpenCL/vendors
# works too (OCL_ICD_FILENAMES, which env.sh sets, needs no .icd file).
venv_fix_icd() {
  local venv="$1" icd lib
  for icd in "$venv"/etc/OpenCL/vendors/*.icd; do
    [[ -f "$icd" ]] || continue
    lib="$(basename "$(head -n1 "$icd")")"
    if [[ -f "$venv/lib/$lib" && "$(head -n1 "$icd")" != "$venv/lib/$lib" ]]; then
      printf '%s\n' "$venv/lib/$lib" >"$icd"
      log "pointed $(basename "$icd") at $venv/lib/$lib"
    fi
  done
}

# Makes the byte-identical copies of a file in <venv>/lib hard links of one
# of them (the runtime wheels ship a library once under each of its names).
# Files already linked are left alone; only files of one size are compared.
venv_link_copies() {
  local venv="$1" saved
  saved="$("$venv/bin/python" - "$venv/lib" <<'PY'
import collections, filecmp, os, sys
lib = sys.argv[1]
by_size = collections.defaultdict(list)
for name in sorted(os.listdir(lib)):
    path = os.path.join(lib, name)
    if os.path.isfile(path) and not os.path.islink(path):
        st = os.stat(path)
        if st.st_size >= 1 << 16:
            by_size[st.st_size].append(path)
saved = 0
for size, paths in by_size.items():
    kept = []
    for path in paths:
        same = next((k for k in kept if os.path.samefile(k, path)
                     or filecmp.cmp(k, path, shallow=False)), None)
        if same is None:
            kept.append(path)
        elif not os.path.samefile(same, path):
            os.link(same, path + ".tmp")
            os.replace(path + ".tmp", path)
            saved += size
print(saved >> 20)
PY
)"
  ((saved == 0)) || log "linked identical copies in $venv/lib: $saved MiB saved"
}
