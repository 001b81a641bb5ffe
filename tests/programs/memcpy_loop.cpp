// memcpy_loop [SECONDS]: 64-byte USM device-to-device memcpys on an
// in-order profiling queue, in a loop until it is killed: the worst case
// for a killed job's conversion (the most commands per second). It waits
// on the queue every 1024 memcpys, so that the runtime's memory stays
// bounded however long it runs. Prints "ready" after the first wait; no
// signal handlers. As a safety net it stops by itself after argv[1]
// seconds (default 600), printing "gave up" and exiting with 3.
// For scripts/killed-grace.sh (the grace period a killed job needs).
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  int limit_s = argc > 1 ? std::atoi(argv[1]) : 600;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  constexpr size_t kBytes = 64;
  void *src = sycl::malloc_device(kBytes, q);
  void *dst = sycl::malloc_device(kBytes, q);
  q.memset(src, 1, kBytes).wait();
  for (long batch = 0;; ++batch) {
    for (int i = 0; i < 1024; ++i) q.memcpy(dst, src, kBytes);
    q.wait();
    if (batch == 0) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::printf("gave up\n");
      return 3;
    }
  }
}
