"""regions: the program's own regions, ITT tasks through the `ittapi`
package, around dpctl copies (one `q.memcpy` is one command) and a few
dpnp operations, with the program's own count of what it submitted in
each region.

  regions.py [steps] [resume_at] [--no-dpnp]

- 1 copy outside any task, then `steps` times: "step" (1 copy) holding
  "forward" (2 copies) and "backward" (3 copies) holding "grad" (1 copy);
- meanwhile a second thread: 2 times "worker" (2 copies each);
- "dpnp_ops" around a few dpnp operations (not counted: the library
  decides how many kernels they take; left out with --no-dpnp);
- an overlapped task "overlap" holding a nested "inner", "overlap" ending
  first; 1 copy after that end (still in "inner", whose path is
  overlap/inner), then "inner" ends;
- 1 copy outside any task; last "tail" is begun and never ended (1 copy).

With `resume_at` given, `ittapi.resume()` is called at the start of step
number `resume_at` (from 0): run it with SYCLGRAPH_START=paused.

Prints "copies <path> <n>" for the copies submitted with exactly that
path open ("-" for none), paths joined by "/", then "done".
"""
import sys
import threading

import dpctl
import dpctl.memory as dpmem
import ittapi

args = [a for a in sys.argv[1:] if not a.startswith("--")]
steps = int(args[0]) if args else 3
resume_at = int(args[1]) if len(args) > 1 else None
with_dpnp = "--no-dpnp" not in sys.argv

q = dpctl.SyclQueue()
src = dpmem.MemoryUSMDevice(64, queue=q)
dst = dpmem.MemoryUSMDevice(64, queue=q)
counts = {}
lock = threading.Lock()


def copy(n, path):
    for _ in range(n):
        q.memcpy(dst, src, 64)
    with lock:
        counts[path] = counts.get(path, 0) + n


def worker():
    for _ in range(2):
        with ittapi.task("worker"):
            copy(2, "worker")


copy(1, "-")
thread = threading.Thread(target=worker)
thread.start()
for s in range(steps):
    if s == resume_at:
        ittapi.resume()
    with ittapi.task("step"):
        copy(1, "step")
        with ittapi.task("forward"):
            copy(2, "step/forward")
        with ittapi.task("backward"):
            copy(3, "step/backward")
            with ittapi.task("grad"):
                copy(1, "step/backward/grad")
thread.join()
q.wait()

total = 16777216.0
if with_dpnp:
    import dpnp

    with ittapi.task("dpnp_ops"):
        x = dpnp.arange(4096, dtype=dpnp.float32)
        total = float((x * 2.0 + 1.0).sum())

overlap = ittapi.task("overlap", overlapped=True)
overlap.begin()
inner = ittapi.task("inner")
inner.begin()
overlap.end()
copy(1, "overlap/inner")
inner.end()

copy(1, "-")
q.wait()
tail = ittapi.task("tail")
tail.begin()
copy(1, "tail")
q.wait()

for path in sorted(counts):
    print("copies", path, counts[path])
print("sum", total)
print("done")
