"""Runs a command and times the whole process: from its start to its exit
(every file a tracer writes at exit included), and its end of run, from the
last line it printed (for the bench programs, the `us_per_task` line after
their last command and final wait) to its exit.

Usage: whole.py CMD [ARGS...]
The command's stdout is passed through, then one line is added:
  whole_process_s <seconds> end_of_run_s <seconds> exit <code>
Its stderr is left alone; the exit code is the command's.
"""
import subprocess
import sys
import time

args = sys.argv[1:]
if not args:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
started = time.monotonic()
child = subprocess.Popen(args, stdout=subprocess.PIPE)
last_line = started
for line in child.stdout:
    last_line = time.monotonic()
    sys.stdout.buffer.write(line)
code = child.wait()
ended = time.monotonic()
print(f"whole_process_s {ended - started:.4f} end_of_run_s {ended - last_line:.4f} exit {code}",
      flush=True)
sys.exit(code)
