"""mpi_ranks: an mpi4py + dpnp job whose work grows with the rank.

Rank r takes a remainder (r+1) times (dpnp's `remainder` kernel, with a
scalar: `remainder_strided_kernel`) and sums once (a reduction kernel, the
same on every rank), then the ranks sum a checksum with MPI. Prints
"rank <r> of <n>: remainder <r+1>, checksum sum <s>".

(Contiguous `a * b` or `dpnp.sin(a)` would not do: dpnp runs them through
oneMKL's vector math, whose kernels syclgraph does not see on this runtime.)

Run: mpiexec -n 4 syclgraph run -o out -- python tests/programs/mpi_ranks.py
"""
import sys

import dpnp
from mpi4py import MPI


def main() -> int:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 1 << 18
    a = dpnp.arange(n, dtype=dpnp.float32)
    for _ in range(rank + 1):
        a = a % 5  # small integers: exact
    mine = int(dpnp.sum(a))
    total = comm.allreduce(mine, op=MPI.SUM)
    print(f"rank {rank} of {size}: remainder {rank + 1}, checksum sum {total}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
