// gpu_mix: USM commands, two queues, a host task and a SYCL graph on the
// GPU (or the default device), each checked against the program's own
// clock and event profiling.
// 1. USM: memcpy, memset, fill on an in-order profiling queue, each
//    waited: `bounds`/`profiling` lines usm_memcpy/usm_memset/usm_fill.
// 2. Two queues: a memcpy on queue 2 that depends on a memset on queue 1,
//    then a host task on queue 1 after the memcpy: `bounds two_queues 0`,
//    `profiling two_queues_memset 0` and `two_queues_memcpy 0`.
// 3. A SYCL graph recorded on an in-order queue (memcpy then memset),
//    finalised with enable_profiling, replayed 5 times, each waited:
//    `bounds replay <k>` and `profiling replay <k>`.
#include "oracle.hpp"

#include <sycl/ext/oneapi/experimental/graph.hpp>

#include <atomic>

namespace exp_ext = sycl::ext::oneapi::experimental;

int main() {
  sycl::queue q = oracle::profiling_queue();
  std::printf("device %s\n", q.get_device().get_info<sycl::info::device::name>().c_str());
  const size_t bytes = 1 << 20;
  auto *a = sycl::malloc_device<unsigned char>(bytes, q);
  auto *b = sycl::malloc_device<unsigned char>(bytes, q);
  q.memset(a, 1, bytes).wait();

  for (int i = 0; i < 3; ++i) {
    unsigned long long before = oracle::now_ns();
    sycl::event e = q.memcpy(b, a, bytes);  // @node usm_memcpy
    e.wait();
    oracle::bounds("usm_memcpy", i, before, oracle::now_ns());
    oracle::profiling("usm_memcpy", i, e);
    before = oracle::now_ns();
    e = q.memset(b, 5, bytes);  // @node usm_memset
    e.wait();
    oracle::bounds("usm_memset", i, before, oracle::now_ns());
    oracle::profiling("usm_memset", i, e);
    before = oracle::now_ns();
    e = q.fill(b, (unsigned char)9, bytes);  // @node usm_fill
    e.wait();
    oracle::bounds("usm_fill", i, before, oracle::now_ns());
    oracle::profiling("usm_fill", i, e);
  }

  sycl::queue q2(q.get_context(), q.get_device(),
                 {sycl::property::queue::in_order(), sycl::property::queue::enable_profiling()});
  std::atomic<int> ran{0};
  unsigned long long before = oracle::now_ns();
  sycl::event set = q.memset(a, 3, bytes);  // @node two_queues_memset
  sycl::event copy = q2.memcpy(b, a, bytes, set);  // @node two_queues_memcpy
  sycl::event host = q.submit([&](sycl::handler &h) {
    h.depends_on(copy);
    h.host_task([&] { ran.store(1); });  // @node two_queues_host_task
  });
  host.wait();
  q2.wait();
  oracle::bounds("two_queues", 0, before, oracle::now_ns());
  oracle::profiling("two_queues_memset", 0, set);
  oracle::profiling("two_queues_memcpy", 0, copy);
  std::printf("host_task ran %d\n", ran.load());

  exp_ext::command_graph g{q.get_context(), q.get_device()};
  g.begin_recording(q);
  q.memcpy(b, a, bytes);  // @node graph_memcpy
  q.memset(a, 0, bytes);  // @node graph_memset
  g.end_recording(q);
  auto exec = g.finalize({exp_ext::property::graph::enable_profiling{}});
  for (int k = 0; k < 5; ++k) {
    before = oracle::now_ns();
    sycl::event e = q.ext_oneapi_graph(exec);  // @node graph_replay
    e.wait();
    oracle::bounds("replay", k, before, oracle::now_ns());
    oracle::profiling("replay", k, e);
  }
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
