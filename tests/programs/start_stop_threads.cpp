// start_stop_threads: tracing started and stopped many times a second, from
// several threads, while 8 threads submit.
//   start_stop_threads [k]
// 8 submitting threads, each with its own in-order profiling queue, make k
// one-memcpy submissions each (tag stress_memcpy) and nothing else. Two
// toggling threads call syclgraph_stop()/syclgraph_start() (include/syclgraph.h)
// in a loop, ~every 200 µs, and submitting threads 0 and 1 toggle too every
// 50 submissions. The togglers are never joined: they keep toggling while
// the program exits. Output: "submitted <8*k>", "toggles <n>" (at the join
// of the submitters, at least), "done".
#include "common.hpp"
#include "syclgraph.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

constexpr int kThreads = 8;

static std::atomic<long> g_toggles{0};
static std::atomic<int> g_ready{0};

static void toggler(int seed) {
  for (unsigned i = seed;; ++i) {
    if (i % 2) syclgraph_stop(); else syclgraph_start();
    g_toggles.fetch_add(1, std::memory_order_relaxed);
    std::this_thread::sleep_for(std::chrono::microseconds(150 + 50 * (i % 3)));
  }
}

static void worker(int t, sycl::context ctx, sycl::device dev, int k) {
  sycl::queue q{ctx, dev, progs::profiling_in_order()};
  int *x = sycl::malloc_device<int>(16, q);
  int host[16] = {0};
  g_ready.fetch_add(1);
  while (g_ready.load() < kThreads) std::this_thread::yield();
  for (int i = 0; i < k; ++i) {
    q.memcpy(x, host, sizeof(host));  // @node stress_memcpy
    if (t < 2 && i % 50 == 49) {
      if (syclgraph_is_active()) syclgraph_stop(); else syclgraph_start();
    }
    if (i % 64 == 63) q.wait();
  }
  q.wait();
  sycl::free(x, q);
}

int main(int argc, char **argv) {
  int k = argc > 1 ? std::atoi(argv[1]) : 500;
  sycl::queue base{sycl::cpu_selector_v, progs::profiling_in_order()};
  sycl::context ctx = base.get_context();
  sycl::device dev = base.get_device();
  std::thread(toggler, 0).detach();
  std::thread(toggler, 1).detach();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, ctx, dev, k);
  for (auto &t : threads) t.join();
  std::printf("submitted %d\n", kThreads * k);
  std::printf("toggles %s\n", g_toggles.load() > 0 ? "some" : "none");
  std::printf("done\n");
  return 0;
}
