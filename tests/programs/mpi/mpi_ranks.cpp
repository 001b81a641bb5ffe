// mpi_ranks: an MPI + SYCL program whose work grows with the rank, built
// with mpicxx (scripts/build-programs.sh). Rank r submits r+1 instances of
// the kernel of `rank_work` (a busy loop of the same length each) and one
// of `shared_step` (the same on every rank), then the ranks sum a checksum
// with MPI_Allreduce. The ranks run their rank_work kernels one rank after
// the other (MPI_Barrier). Prints "rank <r> of <n>: rank_work <count>" and the
// application's own device time of every rank_work instance:
//   profiling rank_work <rank> <instance#> <duration_ns>
// The work is in ITT regions (itt.hpp, when INTEL_LIBITTNOTIFY64 names a
// collector, as `syclgraph run` sets it): "step" holding "forward" (the
// shared_step kernel) and "backward" (the rank's own rank_work kernels):
// rank r's backward takes r+1 kernels.
// Options: --rounds N (busy-loop length, default 20000);
//          --hold-rank K (rank K, after its work and MPI_Finalize, prints
//          "holding" and sleeps up to 60 s: a rank to kill while the
//          others end).
#include <mpi.h>

#include "common.hpp"
#include "itt.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

constexpr size_t N = 4096;

// The kernels are named after the function that submits them.
static sycl::event rank_work(sycl::queue &q, sycl::kernel &k, float *x, int rounds) {
  return q.submit([&](sycl::handler &h) {
    h.set_args(x, rounds);
    h.parallel_for(sycl::range<1>(N), k);
  });
}

static sycl::event shared_step(sycl::queue &q, sycl::kernel &k, float *x, int rounds) {
  return q.submit([&](sycl::handler &h) {
    h.set_args(x, rounds);
    h.parallel_for(sycl::range<1>(N), k);
  });
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = 20000;
  int hold = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--hold-rank") == 0) hold = std::atoi(argv[i + 1]);
  }

  itt_init();
  itt_domain *domain = itt_domain_create ? itt_domain_create("mpi_ranks") : nullptr;
  auto begin = [&](const char *name) {
    if (itt_task_begin) itt_task_begin(domain, itt_id{}, itt_id{}, itt_string_handle_create(name));
  };
  auto end = [&] {
    if (itt_task_end) itt_task_end(domain);
  };
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  auto ks = progs::build_cl_kernels(q, progs::kSpinSource, {"spin"});
  sycl::kernel k = ks.at("spin");
  float *x = sycl::malloc_device<float>(N, q);
  q.memset(x, 0, N * sizeof(float)).wait();

  begin("step");
  begin("forward");
  shared_step(q, k, x, rounds).wait();
  end();
  // The ranks take turns for their rank_work kernels. Here every rank shares
  // one CPU device, whose kernels fill every core: run at once, they would
  // slow each other down by how many ranks happen to overlap. Taking turns,
  // a rank's device time grows with its work, as on a machine with a GPU
  // per rank.
  for (int turn = 0; turn < size; ++turn) {
    if (turn == rank) {
      begin("backward");
      for (int i = 0; i <= rank; ++i) {
        sycl::event e = rank_work(q, k, x, rounds);
        e.wait();
        std::printf("profiling rank_work %d %d %llu\n", rank, i,
                    (unsigned long long)progs::duration_ns(e));
      }
      end();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  end();
  float host[N];
  q.memcpy(host, x, sizeof(host)).wait();
  long long mine = progs::checksum(host, N), total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  std::printf("rank %d of %d: rank_work %d, checksum sum %lld\n", rank, size, rank + 1, total);
  std::fflush(stdout);
  sycl::free(x, q);
  MPI_Finalize();
  // After MPI_Finalize, which waits for every rank: the others end while
  // this one is still alive.
  if (rank == hold) {
    std::printf("holding\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  return 0;
}
