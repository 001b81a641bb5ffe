// threads: 8 application threads submit at the same time. Threads 0..3 each
// use their own private queue; threads 4..7 share one queue. Every queue is
// an in-order profiling queue on one context. Each thread builds its own
// OpenCL-interop kernel (a cl_kernel's arguments are not thread-safe to set
// concurrently), allocates its own USM device array, and then K times
// (argv[1], default 200):
//   launches `bump` (x[i] += 1)                 (tagged thread_kernel)
//   copies x[0] back to the host (USM memcpy)   (tagged thread_memcpy)
// waiting on the copy every 16 iterations and at the end. All threads start
// together (a spin barrier) and are joined at the end.
// Output (deterministic, in thread order after the join):
//   thread <t> <private|shared> last <x[0] after the last copy> count <K>
//   done
#include "common.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static const char *kSource = R"CL(
__kernel void bump(__global float *x) {
  size_t i = get_global_id(0);
  x[i] = x[i] + 1.0f;
}
)CL";

constexpr int kThreads = 8;
constexpr size_t N = 1024;

struct Result {
  bool shared = false;
  float last = -1.0f;
  int count = 0;
};

static std::atomic<int> g_ready{0};

static void worker(int t, sycl::queue q, int k, Result *out) {
  auto kernels = progs::build_cl_kernels(q, kSource, {"bump"});
  sycl::kernel bump = kernels.at("bump");
  float *x = sycl::malloc_device<float>(N, q);
  q.memset(x, 0, N * sizeof(float)).wait();
  float host = -1.0f;

  // Start together, so that submissions really overlap.
  g_ready.fetch_add(1);
  while (g_ready.load() < kThreads) std::this_thread::yield();

  sycl::event last;
  for (int i = 0; i < k; ++i) {
    q.submit([&](sycl::handler &h) {  // @node thread_kernel
      h.set_args(x);
      h.parallel_for(sycl::range<1>(N), bump);
    });
    last = q.memcpy(&host, x, sizeof(float));  // @node thread_memcpy
    if (i % 16 == 15) last.wait();
    ++out->count;
  }
  last.wait();
  out->last = host;
  sycl::free(x, q);
}

int main(int argc, char **argv) {
  int k = argc > 1 ? std::atoi(argv[1]) : 200;
  if (k < 1) k = 1;

  sycl::queue base{sycl::cpu_selector_v, progs::profiling_in_order()};
  sycl::context ctx = base.get_context();
  sycl::device dev = base.get_device();
  sycl::queue shared{ctx, dev, progs::profiling_in_order()};

  std::vector<Result> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    bool is_shared = t >= kThreads / 2;
    results[t].shared = is_shared;
    sycl::queue q = is_shared ? shared : sycl::queue{ctx, dev, progs::profiling_in_order()};
    threads.emplace_back(worker, t, q, k, &results[t]);
  }
  for (auto &th : threads) th.join();

  for (int t = 0; t < kThreads; ++t) {
    std::printf("thread %d %s last %.0f count %d\n", t,
                results[t].shared ? "shared" : "private", results[t].last,
                results[t].count);
  }
  std::printf("done\n");
  return 0;
}
