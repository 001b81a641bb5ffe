// native_commands: SYCL native commands on the CUDA backend, for
// syclgraph's checks of #42 items 1, 3 and 4 (tests/gpu/native_check.py runs and checks it).
// Build: nvcc -c tests/gpu/native_kernels.cu -o k.o; g++ -std=c++17
//   -DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING -I<venv>/include
//   tests/gpu/native_commands.cpp k.o -L<venv>/lib -lsycl -lcudart_static -lcuda
// Modes (argv[1]); each prints the program's own figures, one per line:
//   timed     --count N native commands on an in-order profiling queue:
//             `times native <i> <command_start> <command_end>` (SYCL event)
//             and `pair native <i> <ns>` (cudaEvent pair around the launch)
//   plain     the same on a queue made without enable_profiling: only the
//             `pair` lines (syclgraph turns profiling on by itself)
//   graph     a SYCL graph memcpy -> native -> memset recorded on an
//             in-order queue, finalised with enable_profiling (`graph`) or
//             plainly (`graph-plain`), replayed --replays N times:
//             `times replay <r> <start> <end>` (with enable_profiling)
//   violation a long native command on queue A, then on queue B a native
//             command and a memset that each depends_on it:
//             `times long|native_dep|memset_dep 0 <start> <end>`
//   host-task a host task taking an interop_handle that launches the
//             kernel: `host_task 0 <ns>` (cudaEvent pair)
#include <sycl/sycl.hpp>

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" int native_busy_launch(void *stream, float *x, int n, int rounds, void **pair);
extern "C" unsigned long long native_pair_ns(void **pair);

namespace exp_ext = sycl::ext::oneapi::experimental;

static void print_times(const char *label, int i, const sycl::event &e) {
  auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
  std::printf("times %s %d %llu %llu\n", label, i, (unsigned long long)start,
              (unsigned long long)end);
}

static void *stream_of(sycl::interop_handle &ih) {
  return reinterpret_cast<void *>(ih.get_native_queue<sycl::backend::ext_oneapi_cuda>());
}

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "timed";
  int count = 20, replays = 3, rounds = 20000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--count")) count = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--replays")) replays = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  const int n = 1 << 16;
  const sycl::property_list profiled{sycl::property::queue::enable_profiling(),
                                     sycl::property::queue::in_order()};
  const sycl::property_list plain{sycl::property::queue::in_order()};
  sycl::queue q{sycl::gpu_selector_v, mode == "plain" ? plain : profiled};
  std::printf("device %s\n", q.get_device().get_info<sycl::info::device::name>().c_str());
  float *x = sycl::malloc_device<float>(n, q);
  q.memset(x, 0, n * sizeof(float)).wait();

  if (mode == "timed" || mode == "plain") {
    std::vector<sycl::event> events;
    std::vector<std::vector<void *>> pairs(count, std::vector<void *>(2, nullptr));
    for (int i = 0; i < count; ++i) {
      void **pair = pairs[i].data();
      int r = rounds * (1 + i % 3);
      events.push_back(q.submit([&](sycl::handler &h) {  // @node native_timed
        h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
          native_busy_launch(stream_of(ih), x, n, r, pair);
        });
      }));
    }
    q.wait();
    for (int i = 0; i < count; ++i) {
      if (mode == "timed") print_times("native", i, events[i]);
      std::printf("pair native %d %llu\n", i, native_pair_ns(pairs[i].data()));
    }
  } else if (mode == "graph" || mode == "graph-plain") {
    float *y = sycl::malloc_device<float>(n, q);
    exp_ext::command_graph<exp_ext::graph_state::modifiable> g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(y, x, n * sizeof(float));  // @node graph_memcpy
    q.submit([&](sycl::handler &h) {  // @node graph_native
      h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
        native_busy_launch(stream_of(ih), y, n, rounds, nullptr);
      });
    });
    q.memset(x, 0, n * sizeof(float));  // @node graph_memset
    g.end_recording(q);
    auto exec = mode == "graph"
                    ? g.finalize(sycl::property_list{exp_ext::property::graph::enable_profiling{}})
                    : g.finalize();
    std::vector<sycl::event> runs;
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node graph_replay
    q.wait();
    if (mode == "graph")
      for (int r = 0; r < replays; ++r) print_times("replay", r, runs[r]);
    sycl::free(y, q);
  } else if (mode == "violation") {
    sycl::queue qa{q.get_context(), q.get_device(), profiled};
    sycl::queue qb{q.get_context(), q.get_device(), profiled};
    float *y = sycl::malloc_device<float>(n, q);
    auto long_one = qa.submit([&](sycl::handler &h) {  // @node long_native
      h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
        native_busy_launch(stream_of(ih), x, n, rounds * 10, nullptr);
      });
    });
    auto native_dep = qb.submit([&](sycl::handler &h) {  // @node native_dep
      h.depends_on(long_one);
      h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
        native_busy_launch(stream_of(ih), y, n, rounds / 10, nullptr);
      });
    });
    auto memset_dep = qb.memset(y, 0, n * sizeof(float), long_one);  // @node memset_dep
    qa.wait();
    qb.wait();
    print_times("long", 0, long_one);
    print_times("native_dep", 0, native_dep);
    print_times("memset_dep", 0, memset_dep);
    sycl::free(y, q);
  } else if (mode == "host-task") {
    std::vector<void *> pair(2, nullptr);
    void **p = pair.data();
    q.submit([&](sycl::handler &h) {  // @node interop_host_task
      h.host_task([=](sycl::interop_handle ih) {
        native_busy_launch(stream_of(ih), x, n, rounds, p);
      });
    }).wait();
    std::printf("host_task 0 %llu\n", native_pair_ns(p));
  } else {
    std::fprintf(stderr, "native_commands: unknown mode %s\n", mode.c_str());
    return 2;
  }
  sycl::free(x, q);
  std::printf("done\n");
  return 0;
}
