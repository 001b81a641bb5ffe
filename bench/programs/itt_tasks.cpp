// itt_tasks N [named]
//
// The cost of an ITT task on the calling thread: N __itt_task_begin /
// __itt_task_end pairs on the main thread, through the ittnotify collector
// protocol (tests/programs/itt.hpp; the collector is the library that
// INTEL_LIBITTNOTIFY64 names, none when it is unset). No command is
// submitted inside the loop: one USM memcpy before it starts the runtime
// and the tracer. With `named`, the pair is a task of the name the tracer
// captures (run with SYCLGRAPH_REGION=pair: each pair enters and leaves the
// captured region, so tracing starts and stops each time).
//
// Prints "ns_per_pair <nanoseconds of wall time per pair>" and, for the
// benchmark's harness, "us_per_task <the same in microseconds>".
#include <sycl/sycl.hpp>

#include <cstring>
#include <string>

#include "../../tests/programs/itt.hpp"
#include "common.hpp"

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "named") != 0)) {
    std::fprintf(stderr, "usage: %s N [named]\n", argv[0]);
    return 2;
  }
  const long n = bench::parse_count(argv[1], "N");
  const bool named = argc == 3;
  itt_init();
  sycl::queue q{sycl::property::queue::in_order()};
  void *src = sycl::malloc_device(64, q), *dst = sycl::malloc_device(64, q);
  q.memcpy(dst, src, 64).wait();
  const itt_domain *domain = itt_domain_create ? itt_domain_create("itt_tasks") : nullptr;
  itt_string_handle *name =
      itt_string_handle_create ? itt_string_handle_create(named ? "pair" : "task") : nullptr;
  // Warm-up: the name's label is made once, on its first task.
  for (int i = 0; i < 64; ++i) {
    if (itt_task_begin) itt_task_begin(domain, itt_id{}, itt_id{}, name);
    if (itt_task_end) itt_task_end(domain);
  }
  bench::settle();
  const auto start = bench::clock::now();
  for (long i = 0; i < n; ++i) {
    if (itt_task_begin) itt_task_begin(domain, itt_id{}, itt_id{}, name);
    if (itt_task_end) itt_task_end(domain);
  }
  const auto end = bench::clock::now();
  const double ns = std::chrono::duration<double, std::nano>(end - start).count() / double(n);
  sycl::free(src, q);
  sycl::free(dst, q);
  std::printf("ns_per_pair %.1f\n", ns);
  std::printf("us_per_task %.4f\n", ns / 1000.0);
  return 0;
}
