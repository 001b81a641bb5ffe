// long_running: submits kernels in a loop until it is killed. Each
// iteration launches one OpenCL-interop kernel (tagged long_kernel) on an
// in-order profiling queue, copies one value back (tagged long_memcpy) and
// waits. After the first 3 iterations it prints "ready" (flushed), and then
// keeps going. It installs no signal handlers. As a safety net it stops by
// itself after argv[1] seconds (default 120), printing "gave up" and exiting
// with 3: a test that forgot to kill it does not leave it running.
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

static const char *kSource = R"CL(
__kernel void churn(__global float *x, int rounds) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.5f;
  x[i] = v;
}
)CL";

constexpr size_t N = 16384;
constexpr int kRounds = 500;

int main(int argc, char **argv) {
  int limit_s = argc > 1 ? std::atoi(argv[1]) : 120;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);

  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  auto k = progs::build_cl_kernels(q, kSource, {"churn"});
  sycl::kernel churn = k.at("churn");
  float *x = sycl::malloc_device<float>(N, q);
  q.memset(x, 0, N * sizeof(float)).wait();

  float v = 0;
  for (long i = 0;; ++i) {
    q.submit([&](sycl::handler &h) {  // @node long_kernel
      h.set_args(x, kRounds);
      h.parallel_for(sycl::range<1>(N), churn);
    });
    q.memcpy(&v, x, sizeof(float)).wait();  // @node long_memcpy
    if (i == 2) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::printf("gave up\n");
      return 3;
    }
  }
}
