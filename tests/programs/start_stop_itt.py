"""start_stop_itt: tracing resumed and paused from Python through the ITT API
(the `ittapi` package; syclgraph is its collector when INTEL_LIBITTNOTIFY64
names libsyclgraph.so). Run with SYCLGRAPH_START=paused.

  start_stop_itt.py [n]

n one-memcpy submissions (dpctl) before ittapi.resume(), n inside an ITT
task "py_window" while tracing is on, then ittapi.pause() and n more.
Prints "submitted <phase> <n>" per phase and "done".
"""
import sys

import dpctl
import dpctl.memory as dpmem
import ittapi

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
q = dpctl.SyclQueue()
src = dpmem.MemoryUSMDevice(64, queue=q)
dst = dpmem.MemoryUSMDevice(64, queue=q)

for _ in range(n):
    q.memcpy(dst, src, 64)
q.wait()
print("submitted before", n)

ittapi.resume()
with ittapi.task("py_window"):
    for _ in range(n):
        q.memcpy(dst, src, 64)
    q.wait()
ittapi.pause()
print("submitted window", n)

for _ in range(n):
    q.memcpy(dst, src, 64)
q.wait()
print("submitted after", n)
print("done")
