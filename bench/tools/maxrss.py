"""Runs a command and prints its peak resident set size (KiB) on stdout, and
how long it ran after the last line it printed (its end of run: for the
bench programs, from the `us_per_task` line after their last command to
their exit, the runtime's teardown and a subscriber's work at exit).

Usage: maxrss.py [--stderr FILE] CMD [ARGS...]
  ->  "maxrss_kib <n> exit <code> after_last_line_s <seconds>"
The command's own stdout is read and discarded, its stderr too unless
--stderr names a file for it; its exit code is reported.
"""
import resource
import subprocess
import sys
import time

args = sys.argv[1:]
stderr_path = None
if len(args) >= 2 and args[0] == "--stderr":
    stderr_path, args = args[1], args[2:]
with open(stderr_path or "/dev/null", "wb") as err:
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err)
    last_line = time.monotonic()
    for _ in child.stdout:
        last_line = time.monotonic()
    code = child.wait()
    after = time.monotonic() - last_line
print(f"maxrss_kib {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} exit {code}"
      f" after_last_line_s {after:.3f}")
