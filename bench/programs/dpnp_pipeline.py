"""dpnp_pipeline [N]: an overhead benchmark workload from a real SYCL
application stack nobody here wrote (dpnp array operations are DPC++ kernels
launched by dpnp/dpctl, on the default SYCL device: the OpenCL CPU device here).

One iteration is a small elementwise/reduction pipeline on 4096 float32
values (multiply, add, compare, subtract, select, sum). With dpnp 0.20.0 /
dpctl 0.22.1 it submits 14 SYCL commands per iteration: 6 kernel launches
and 8 small USM memcpys (scalars and reduction temporaries), counted with
SYCL_UR_TRACE=2 (the `--->` lines of urEnqueueKernelLaunchWithArgsExp and
urEnqueueUSMMemcpy; each call also prints a `<---` line) on 10 and 20
iterations, and by syclgraph's kernels.csv (210 iterations: 1,262 kernels,
1,684 memcpys). A "task" is one such command, as in the C++ workloads.
N is the number of iterations (default 200). After an untimed warm-up (which
also compiles or loads every kernel), the loop plus a final queue wait is
timed, and one line is printed:

    us_per_task <microseconds>

Run: . scripts/env.sh && .venv/bin/python bench/programs/dpnp_pipeline.py 200
"""
import sys
import time

import dpnp

# SYCL commands submitted per iteration (see the docstring).
TASKS_PER_ITERATION = 14
SIZE = 4096


def iteration(a):
    b = a * 2 + 1  # elementwise: multiply, add
    c = dpnp.where(b > 7, b - 7, b)  # elementwise: compare, subtract, select
    s = dpnp.sum(c)  # reduction, result stays on the device
    return c, s


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if n <= 0:
        print("N must be positive", file=sys.stderr)
        return 2
    a = dpnp.arange(SIZE, dtype=dpnp.float32) % 7
    queue = a.sycl_queue
    for _ in range(10):
        _, s = iteration(a)
    queue.wait()
    expected = int(s)

    start = time.perf_counter()
    for _ in range(n):
        _, s = iteration(a)
    queue.wait()
    stop = time.perf_counter()

    if int(s) != expected:
        print(f"wrong result {int(s)} != {expected}", file=sys.stderr)
        return 1
    print(f"us_per_task {(stop - start) * 1e6 / (n * TASKS_PER_ITERATION):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
