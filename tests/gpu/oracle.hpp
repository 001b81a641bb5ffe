// Shared helpers of syclgraph's GPU test programs (tests/gpu/): the host
// clock and the lines tests/gpu/check.py reads as oracles.
//
//   bounds <label> <i> <before_ns> <after_ns>
//       the program's own CLOCK_MONOTONIC just before it submitted and just
//       after it saw completion (its wait returned): every command
//       submitted in between ran in between.
//   profiling <label> <i> <duration_ns>
//       the command's own event profiling (command_end - command_start).
//   device_ns <label> <i> <command_start> <command_end>
//       the raw device times (on the device's clock), for studying it.
//   cuda_event <label> <i> <duration_ns> [<host_ns>]
//       a cudaEvent pair recorded on the queue's stream around the native
//       work (native commands only), and how long the host spent inside
//       the native command (the command's own event spans that time too).
//   expect <what>
//       an outcome the checker must find (see check.py).
//
// Do not submit commands from this header: XPTI records the submitting
// source line, and the checker joins rows to the program's own lines.
#pragma once

#include <sycl/sycl.hpp>

#include <time.h>

#include <cstdint>
#include <cstdio>

namespace oracle {

inline unsigned long long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

inline unsigned long long duration_ns(const sycl::event &e) {
  auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
  return end - start;
}

inline void bounds(const char *label, long i, unsigned long long before,
                   unsigned long long after) {
  std::printf("bounds %s %ld %llu %llu\n", label, i, before, after);
}

inline void profiling(const char *label, long i, const sycl::event &e) {
  std::printf("profiling %s %ld %llu\n", label, i, duration_ns(e));
}

inline void device_times(const char *label, long i, const sycl::event &e) {
  std::printf("device_ns %s %ld %llu %llu\n", label, i,
              (unsigned long long)e.get_profiling_info<sycl::info::event_profiling::command_start>(),
              (unsigned long long)e.get_profiling_info<sycl::info::event_profiling::command_end>());
}

// A profiling queue on the GPU when there is one, else the default device.
inline sycl::queue profiling_queue(bool in_order = true) {
  sycl::property_list in_order_props{sycl::property::queue::in_order(),
                                     sycl::property::queue::enable_profiling()};
  sycl::property_list props{sycl::property::queue::enable_profiling()};
  sycl::device dev;
  try {
    dev = sycl::device(sycl::gpu_selector_v);
  } catch (const sycl::exception &) {
    dev = sycl::device(sycl::default_selector_v);
  }
  return in_order ? sycl::queue(dev, in_order_props) : sycl::queue(dev, props);
}

}  // namespace oracle
