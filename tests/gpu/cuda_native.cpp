// cuda_native: CUDA kernels (tests/gpu/spin.cu, built with nvcc) launched
// through SYCL native commands on the queue's CUstream.
//   cuda_native [count N] [rounds R]
// 0. Every cudaEvent pair is created, and the kernel run once, in an
//    untimed native command before the timed ones (gpu_spin_prepare).
// 1. N times (default 50): a native command running the spin kernel with a
//    cudaEvent pair around it, waited: `bounds`, `profiling` and
//    `cuda_event native <i>` lines.
// 2. Two queues and a host task: a native spin on queue 1, a host task on
//    queue 2 that depends on it, a memcpy on queue 2 after the host task,
//    waited: `bounds two_queues 0` around the three, `profiling
//    two_queues_memcpy 0`.
// Built without SYCLGRAPH_GPU_CUDA (no nvcc), or run without a CUDA
// device, it prints `skipped: ...` and does nothing else.
#include "oracle.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef SYCLGRAPH_GPU_CUDA
extern "C" int gpu_spin_prepare(void *stream, float *x, int n, void **pairs, long count);
extern "C" int gpu_spin_timed(void *stream, float *x, int n, int rounds, void **pair);
extern "C" unsigned long long gpu_pair_ns(void **pair);

// `host_ns`: how long the host spent inside the native command (its
// event spans that too: the device waits while the host launches).
static sycl::event native_spin(sycl::queue &q, float *x, int n, int rounds, void **pair,
                               unsigned long long *host_ns) {
  return q.submit([&](sycl::handler &h) {
    h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
      unsigned long long entered = oracle::now_ns();
      auto stream = ih.get_native_queue<sycl::backend::ext_oneapi_cuda>();
      if (gpu_spin_timed(stream, x, n, rounds, pair) != 0) std::abort();
      *host_ns = oracle::now_ns() - entered;
    });
  });
}

// Untimed: a native command that makes the pairs and warms the kernel up.
static void prepare(sycl::queue &q, float *x, int n, void **pairs, long count) {
  q.submit([&](sycl::handler &h) {
     h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle ih) {
       auto stream = ih.get_native_queue<sycl::backend::ext_oneapi_cuda>();
       if (gpu_spin_prepare(stream, x, n, pairs, count) != 0) std::abort();
     });
   }).wait();
}
#endif

int main(int argc, char **argv) {
#ifndef SYCLGRAPH_GPU_CUDA
  (void)argc;
  (void)argv;
  std::printf("skipped: built without nvcc (SYCLGRAPH_GPU_CUDA)\n");
  return 0;
#else
  long count = 50;
  int rounds = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "count") == 0) count = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  sycl::queue q = oracle::profiling_queue();
  if (q.get_backend() != sycl::backend::ext_oneapi_cuda) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  const int n = 1 << 16;
  float *x = sycl::malloc_device<float>(n, q);
  float *y = sycl::malloc_device<float>(n, q);
  q.memset(x, 0, n * sizeof(float)).wait();

  std::vector<void *> pairs(2 * count, nullptr);
  prepare(q, x, n, pairs.data(), count);
  for (long i = 0; i < count; ++i) {
    unsigned long long before = oracle::now_ns();
    unsigned long long host_ns = 0;
    sycl::event e = native_spin(q, x, n, rounds, &pairs[2 * i], &host_ns);  // @node native_spin
    e.wait();
    unsigned long long after = oracle::now_ns();
    oracle::bounds("native", i, before, after);
    oracle::profiling("native", i, e);
    std::printf("cuda_event native %ld %llu %llu\n", i, gpu_pair_ns(&pairs[2 * i]), host_ns);
  }

  sycl::queue q2(q.get_context(), q.get_device(),
                 {sycl::property::queue::in_order(), sycl::property::queue::enable_profiling()});
  std::atomic<int> ran{0};
  void *pair[2] = {nullptr, nullptr};
  prepare(q, x, n, pair, 1);
  unsigned long long before = oracle::now_ns();
  unsigned long long spin_host_ns = 0;
  sycl::event spin = native_spin(q, x, n, rounds, pair, &spin_host_ns);  // @node two_queues_spin
  sycl::event host = q2.submit([&](sycl::handler &h) {
    h.depends_on(spin);
    h.host_task([&] { ran.store(1); });  // @node two_queues_host_task
  });
  sycl::event copy = q2.memcpy(y, x, n * sizeof(float), host);  // @node two_queues_memcpy
  copy.wait();
  unsigned long long after = oracle::now_ns();
  oracle::bounds("two_queues", 0, before, after);
  oracle::profiling("two_queues_memcpy", 0, copy);
  std::printf("cuda_event two_queues_spin 0 %llu %llu\n", gpu_pair_ns(pair), spin_host_ns);
  std::printf("host_task ran %d\n", ran.load());
  sycl::free(x, q);
  sycl::free(y, q);
  std::printf("done\n");
  return 0;
#endif
}
