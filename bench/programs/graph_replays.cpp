// graph_replays N
//
// What one replay of a SYCL graph costs a tracer: a graph of one 64-byte
// USM device-to-device memcpy, recorded on an in-order queue created with
// enable_profiling, finalised with graph profiling on, then replayed N
// times with queue::ext_oneapi_graph (each replay one
// urEnqueueCommandBufferExp and one timed event). The timed region is the
// replay loop and the final wait; a short warm-up (not timed) runs first.
#include <sycl/sycl.hpp>
#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <cstring>

#include "common.hpp"

namespace exp_ext = sycl::ext::oneapi::experimental;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s N\n", argv[0]);
    return 2;
  }
  const long n = bench::parse_count(argv[1], "N");
  constexpr size_t kBytes = 64;
  constexpr int kWarmup = 64;
  sycl::queue q{sycl::property_list{sycl::property::queue::in_order(),
                                    sycl::property::queue::enable_profiling()}};
  void *src = sycl::malloc_device(kBytes, q);
  void *dst = sycl::malloc_device(kBytes, q);
  unsigned char init[kBytes];
  std::memset(init, 7, kBytes);
  q.memcpy(src, init, kBytes).wait();

  exp_ext::command_graph g{q.get_context(), q.get_device()};
  g.begin_recording(q);
  q.memcpy(dst, src, kBytes);
  g.end_recording(q);
  auto exec = g.finalize(exp_ext::property::graph::enable_profiling{});
  for (int w = 0; w < kWarmup; ++w) q.ext_oneapi_graph(exec);
  q.wait();
  bench::settle();

  auto start = bench::clock::now();
  for (long i = 0; i < n; ++i) q.ext_oneapi_graph(exec);
  q.wait();
  auto stop = bench::clock::now();
  bench::report(start, stop, n);
  sycl::free(src, q);
  sycl::free(dst, q);
  return 0;
}
