// clock_bounds: device times against the program's own clock.
//   clock_bounds [waited N] [gap_us G] [burst M]
// 1. N times (default 2000): its clock, a 64-byte device-to-device memcpy
//    (or memset, or fill, in turn) on an in-order profiling queue, a wait,
//    its clock again: a `bounds` line and a `profiling` line per command,
//    then G microseconds of sleep (default 0; a gap spreads the commands
//    over time, so the host clock's refits are crossed), and a
//    `device_ns` line with its raw command_start and command_end.
// 2. M memcpys (default 2000) submitted back to back, one wait at the end:
//    a `profiling burst` line each and one `bounds burst 0` around them all
//    (the copy-time tail: what tracing changes in their durations).
// Runs on the GPU when there is one, else on the default device (the
// OpenCL CPU device of the CI machine).
#include "oracle.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  long waited = 2000, gap_us = 0, burst = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "waited") == 0) waited = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "gap_us") == 0) gap_us = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "burst") == 0) burst = std::atol(argv[i + 1]);
  }
  sycl::queue q = oracle::profiling_queue();
  std::printf("device %s\n", q.get_device().get_info<sycl::info::device::name>().c_str());
  auto *a = sycl::malloc_device<unsigned char>(64, q);
  auto *b = sycl::malloc_device<unsigned char>(64, q);
  q.memset(a, 1, 64).wait();

  for (long i = 0; i < waited; ++i) {
    sycl::event e;
    const char *label = "memcpy";
    unsigned long long before = oracle::now_ns();
    switch (i % 3) {
      case 0: e = q.memcpy(b, a, 64); break;  // @node waited_memcpy
      case 1: e = q.memset(b, 2, 64); label = "memset"; break;  // @node waited_memset
      default: e = q.fill(b, (unsigned char)3, 64); label = "fill"; break;  // @node waited_fill
    }
    e.wait();
    unsigned long long after = oracle::now_ns();
    oracle::bounds(label, i, before, after);
    oracle::profiling(label, i, e);
    oracle::device_times(label, i, e);
    if (gap_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(gap_us));
  }

  std::vector<sycl::event> events;
  events.reserve(burst);
  unsigned long long before = oracle::now_ns();
  for (long i = 0; i < burst; ++i) events.push_back(q.memcpy(b, a, 64));  // @node burst_memcpy
  q.wait();
  unsigned long long after = oracle::now_ns();
  if (burst > 0) oracle::bounds("burst", 0, before, after);
  for (long i = 0; i < burst; ++i) oracle::profiling("burst", i, events[i]);
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
