"""dpnp_workload: a small real SYCL application nobody here wrote.

dpnp array operations run as DPC++ kernels (dpnp.matmul goes through oneMKL)
on the default SYCL device (the OpenCL CPU device here). The pipeline:
elementwise ops -> a reduction -> a matmul -> another reduction. All values
are small integers held exactly in float32, so every printed number is
deterministic whatever the reduction order.

Run: LD_LIBRARY_PATH=.venv/lib OCL_ICD_FILENAMES=.venv/lib/libintelocl.so \
     .venv/bin/python tests/programs/dpnp_workload.py
"""
import sys

import dpnp


def main() -> int:
    n = 64
    a = dpnp.arange(n * n, dtype=dpnp.float32) % 7  # elementwise: remainder
    b = a * 2 + 1  # elementwise: multiply, add
    c = dpnp.where(b > 7, b - 7, b)  # elementwise: compare, select
    total = int(dpnp.sum(c))  # reduction
    m = dpnp.matmul(a.reshape(n, n), c.reshape(n, n))  # oneMKL gemm
    trace = int(dpnp.trace(m))
    msum = int(dpnp.sum(m))
    print(f"sum c {total}")
    print(f"trace m {trace}")
    print(f"sum m {msum}")
    print(f"checksum {(total * 31 + trace * 17 + msum) % 1000003}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
