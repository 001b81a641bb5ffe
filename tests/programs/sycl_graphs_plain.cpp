// sycl_graphs_plain: the program of issue #40, as a new user writes it. An
// in-order queue without profiling, `q.memcpy(y, x)` then `q.memset(x, 0)`
// recorded with begin_recording/end_recording, a plain `g.finalize()`, 5
// replays. `--profiling` finalises with property::graph::enable_profiling
// instead; `--bytes N` changes the size (default 4096).
// After each replay the program waits for it and prints its own clock
// around the submission and the wait (CLOCK_MONOTONIC, the clock syclgraph
// writes every time on):
//   clock host_replay <k> <before_submit_ns> <after_wait_ns>
// (it reads no event times: its queue has no profiling, and the runtime
// then refuses them even for a graph finalised with enable_profiling).
#include "common.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace exp_ext = sycl::ext::oneapi::experimental;

static unsigned long long monotonic_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv) {
  bool profiling = false;
  size_t bytes = 4096;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--profiling") == 0) profiling = true;
    if (std::strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
      bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  sycl::queue q{sycl::property::queue::in_order()};
  auto *x = sycl::malloc_device<unsigned char>(bytes, q);
  auto *y = sycl::malloc_device<unsigned char>(bytes, q);
  q.memset(x, 7, bytes).wait();

  exp_ext::command_graph g{q.get_context(), q.get_device()};
  g.begin_recording(q);
  q.memcpy(y, x, bytes);  // @node plain_memcpy
  q.memset(x, 0, bytes);  // @node plain_memset
  g.end_recording(q);
  auto exec = profiling ? g.finalize({exp_ext::property::graph::enable_profiling{}})
                        : g.finalize();  // @node plain_finalize

  for (int r = 0; r < 5; ++r) {
    unsigned long long before = monotonic_ns();
    sycl::event e = q.ext_oneapi_graph(exec);  // @node plain_replay
    e.wait();
    unsigned long long after = monotonic_ns();
    std::printf("clock host_replay %d %llu %llu\n", r, before, after);
  }
  unsigned char first = 1;
  q.memcpy(&first, y, 1).wait();
  std::printf("y[0] %d\n", int(first));
  sycl::free(x, q);
  sycl::free(y, q);
  std::printf("done\n");
  return 0;
}
