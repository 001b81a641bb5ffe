"""Runs a command and prints its peak resident set size (KiB) on stdout.

Usage: maxrss.py [--stderr FILE] CMD [ARGS...]  ->  "maxrss_kib <n> exit <code>"
The command's own stdout is discarded, and its stderr too unless --stderr
names a file for it; its exit code is reported.
"""
import resource
import subprocess
import sys

args = sys.argv[1:]
stderr_path = None
if len(args) >= 2 and args[0] == "--stderr":
    stderr_path, args = args[1], args[2:]
with open(stderr_path or "/dev/null", "wb") as err:
    result = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=err)
print(f"maxrss_kib {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} exit {result.returncode}")
