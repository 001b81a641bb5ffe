"""Runs a command and prints its peak resident set size (KiB) on stdout.

Usage: maxrss.py CMD [ARGS...]  ->  "maxrss_kib <n> exit <code>"
The command's own stdout and stderr are discarded; its exit code is reported.
"""
import resource
import subprocess
import sys

result = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"maxrss_kib {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} exit {result.returncode}")
