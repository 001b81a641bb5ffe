// sycl_graphs: SYCL graphs (sycl_ext_oneapi_graph) recorded, finalised and
// replayed. One scenario per run, chosen by the first argument:
//   record   (default) a memcpy then a memset recorded on an in-order queue,
//            finalised, replayed 5 times (`--replays N` changes the count)
//   explicit the same two commands added with the explicit API and an edge
//   between  an ordinary kernel, the graph, an ordinary kernel (in order)
//   two      two graphs, each on its own in-order queue, replayed 3 times
//   twice    one graph finalised twice (two executable graphs), each
//            replayed (this device does not support `update`)
//   kernel   a memcpy, an OpenCL C kernel and a memset recorded on an
//            in-order queue, finalised, replayed 5 times
// `--settle-ms N` pauses after the first command (by default the graph is
// recorded and replayed at once, as early as a program can).
// Prints `profiling <label> <instance#> <duration_ns>` for every replay (the
// replay event's own times) and for the ordinary kernels.
#include "common.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace exp_ext = sycl::ext::oneapi::experimental;

static const char *kSource = R"CL(
__kernel void scale(__global float *x, float s) {
  size_t i = get_global_id(0);
  x[i] = x[i] * s;
}
)CL";

constexpr size_t N = 1 << 16;

// Replays are timed only when the executable graph is finalised with
// enable_profiling (the queue's own property is not enough).
static const sycl::property_list kProfiled{
    sycl::ext::oneapi::experimental::property::graph::enable_profiling{}};

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "record";
  int replays = 5, settle_ms = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--replays") == 0) replays = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--settle-ms") == 0) settle_ms = std::atoi(argv[i + 1]);
  }
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  const size_t bytes = N * sizeof(float);
  float *a = sycl::malloc_device<float>(N, q);
  float *b = sycl::malloc_device<float>(N, q);
  std::vector<float> host(N, 2.0f);
  q.memcpy(b, host.data(), bytes).wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));

  if (mode == "record" || mode == "between") {
    auto k = progs::build_cl_kernels(q, kSource, {"scale"});
    exp_ext::command_graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(a, b, bytes);  // @node graph_memcpy
    q.memset(b, 0, bytes);  // @node graph_memset
    g.end_recording(q);
    auto exec = g.finalize(kProfiled);  // @node finalize
    sycl::event before;
    if (mode == "between") {
      before = q.submit([&](sycl::handler &h) {  // @node kernel_before
        h.set_args(b, 3.0f);
        h.parallel_for(sycl::range<1>(N), k.at("scale"));
      });
    }
    std::vector<sycl::event> runs;
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node replay
    sycl::event after;
    if (mode == "between") {
      after = q.submit([&](sycl::handler &h) {  // @node kernel_after
        h.set_args(a, 0.5f);
        h.parallel_for(sycl::range<1>(N), k.at("scale"));
      });
    }
    q.wait();
    q.memcpy(host.data(), a, bytes).wait();
    std::printf("checksum %lld\n", progs::checksum(host.data(), N));
    for (int r = 0; r < replays; ++r) progs::print_profiling("replay", r, runs[r]);
    if (mode == "between") {
      progs::print_profiling("kernel_before", 0, before);
      progs::print_profiling("kernel_after", 0, after);
    }
  } else if (mode == "kernel") {
    auto k = progs::build_cl_kernels(q, kSource, {"scale"});
    exp_ext::command_graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(a, b, bytes);  // @node kernel_graph_memcpy
    q.submit([&](sycl::handler &h) {  // @node kernel_graph_kernel
      h.set_args(a, 3.0f);
      h.parallel_for(sycl::range<1>(N), k.at("scale"));
    });
    q.memset(b, 0, bytes);  // @node kernel_graph_memset
    g.end_recording(q);
    auto exec = g.finalize(kProfiled);  // @node finalize_kernel
    std::vector<sycl::event> runs;
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node replay_kernel
    q.wait();
    q.memcpy(host.data(), a, bytes).wait();
    // The first replay scales the 2.0s to 6.0, the others scale zeros.
    std::printf("checksum %lld\n", progs::checksum(host.data(), N));
    for (int r = 0; r < replays; ++r) progs::print_profiling("replay", r, runs[r]);
  } else if (mode == "explicit") {
    exp_ext::command_graph g{q.get_context(), q.get_device()};
    auto n1 = g.add([&](sycl::handler &h) { h.memcpy(a, b, bytes); });  // @node explicit_memcpy
    auto n2 = g.add([&](sycl::handler &h) { h.memset(b, 0, bytes); },  // @node explicit_memset
                    {exp_ext::property::node::depends_on(n1)});
    auto exec = g.finalize(kProfiled);  // @node finalize_explicit
    std::vector<sycl::event> runs;
    for (int r = 0; r < replays; ++r) runs.push_back(q.ext_oneapi_graph(exec));  // @node replay_explicit
    q.wait();
    for (int r = 0; r < replays; ++r) progs::print_profiling("replay", r, runs[r]);
  } else if (mode == "two") {
    sycl::queue q2{q.get_context(), q.get_device(), progs::profiling_in_order()};
    float *c = sycl::malloc_device<float>(N, q);
    exp_ext::command_graph g1{q.get_context(), q.get_device()};
    exp_ext::command_graph g2{q.get_context(), q.get_device()};
    g1.begin_recording(q);
    q.memcpy(a, b, bytes);  // @node g1_memcpy
    g1.end_recording(q);
    g2.begin_recording(q2);
    q2.memset(c, 0, bytes);  // @node g2_memset
    q2.memcpy(c, b, bytes);  // @node g2_memcpy
    g2.end_recording(q2);
    auto e1 = g1.finalize(kProfiled);  // @node finalize_g1
    auto e2 = g2.finalize(kProfiled);  // @node finalize_g2
    std::vector<sycl::event> r1, r2;
    for (int r = 0; r < replays; ++r) {
      r1.push_back(q.ext_oneapi_graph(e1));  // @node replay_g1
      r2.push_back(q2.ext_oneapi_graph(e2));  // @node replay_g2
    }
    q.wait();
    q2.wait();
    for (int r = 0; r < replays; ++r) progs::print_profiling("replay_g1", r, r1[r]);
    for (int r = 0; r < replays; ++r) progs::print_profiling("replay_g2", r, r2[r]);
    sycl::free(c, q);
  } else if (mode == "twice") {
    exp_ext::command_graph g{q.get_context(), q.get_device()};
    g.begin_recording(q);
    q.memcpy(a, b, bytes);  // @node twice_memcpy
    g.end_recording(q);
    auto e1 = g.finalize(kProfiled);  // @node finalize_first
    auto e2 = g.finalize(kProfiled);  // @node finalize_second
    std::vector<sycl::event> runs;
    for (int r = 0; r < replays; ++r) {
      runs.push_back(q.ext_oneapi_graph(e1));  // @node replay_first
      runs.push_back(q.ext_oneapi_graph(e2));  // @node replay_second
    }
    q.wait();
    for (size_t r = 0; r < runs.size(); ++r) progs::print_profiling("replay", int(r), runs[r]);
  } else {
    std::fprintf(stderr, "sycl_graphs: unknown mode %s\n", mode.c_str());
    return 2;
  }
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
