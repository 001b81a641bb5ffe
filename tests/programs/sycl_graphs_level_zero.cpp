// sycl_graphs_level_zero: a SYCL graph replayed on the Level Zero backend,
// for tests that run the runtime's Level Zero adapter over ze-test-driver
// (ONEAPI_DEVICE_SELECTOR=level_zero:gpu, ZE_ENABLE_ALT_DRIVERS). USM only,
// no kernels (the test driver runs copies and fills on the host).
//   record   (default) a memcpy then a memset of `--bytes N` (default 4096)
//            recorded on an in-order profiling queue, finalised with
//            enable_profiling, replayed `--replays N` (default 3) times,
//            between a memcpy before and a memcpy after
//   plain    the same, finalised with a plain finalize() (no
//            enable_profiling)
// Prints `times <label> <instance#> <command_start_ns> <command_end_ns>` for
// the memcpy before, every replay (`record` only) and the memcpy after
// (device times: the driver's script fixes them).
#include "common.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace exp_ext = sycl::ext::oneapi::experimental;

static void print_times(const char *label, int instance, const sycl::event &e) {
  auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
  std::printf("times %s %d %llu %llu\n", label, instance, (unsigned long long)start,
              (unsigned long long)end);
}

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "record";
  int replays = 3;
  size_t bytes = 4096;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--replays") == 0) replays = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--bytes") == 0) bytes = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const sycl::property_list profiled{exp_ext::property::graph::enable_profiling{}};
  sycl::queue q{sycl::gpu_selector_v, progs::profiling_in_order()};
  std::printf("device %s\n", q.get_device().get_info<sycl::info::device::name>().c_str());
  auto *a = sycl::malloc_device<unsigned char>(bytes, q);
  auto *b = sycl::malloc_device<unsigned char>(bytes, q);
  std::vector<unsigned char> host(bytes, 7);
  auto before = q.memcpy(b, host.data(), bytes);  // @node l0_before

  exp_ext::command_graph<exp_ext::graph_state::modifiable> g{q.get_context(), q.get_device()};
  g.begin_recording(q);
  q.memcpy(a, b, bytes);  // @node l0_graph_memcpy
  q.memset(b, 0, bytes);  // @node l0_graph_memset
  g.end_recording(q);

  std::vector<sycl::event> runs;
  if (mode == "record") {
    auto exec = g.finalize(profiled);  // @node l0_finalize
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node l0_replay
  } else if (mode == "plain") {
    auto exec = g.finalize();  // @node l0_finalize_plain
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node l0_replay_plain
  } else {
    std::fprintf(stderr, "sycl_graphs_level_zero: unknown mode %s\n", mode.c_str());
    return 2;
  }
  auto after = q.memcpy(host.data(), a, bytes);  // @node l0_after
  q.wait();
  std::printf("host[0] %d\n", int(host[0]));
  print_times("before", 0, before);
  // SYCL gives a replay's times only for a graph finalised with
  // enable_profiling.
  if (mode == "record")
    for (size_t r = 0; r < runs.size(); ++r) print_times("replay", int(r), runs[r]);
  print_times("after", 0, after);
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
