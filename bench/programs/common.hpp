// Shared helpers of the syclgraph overhead benchmark programs (scripts/bench.sh).
// Each program times its submission loop plus the final wait with a steady
// clock, inside the process (start-up, device discovery and warm-up excluded),
// and prints one line the script parses:
//     us_per_task <microseconds of wall time per submitted task>
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace bench {

inline long parse_count(const char *arg, const char *what) {
  char *end = nullptr;
  long v = std::strtol(arg, &end, 10);
  if (!end || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "bad %s: %s\n", what, arg);
    std::exit(2);
  }
  return v;
}

using clock = std::chrono::steady_clock;

// After the warm-up, pause BENCH_SETTLE_MS milliseconds (unset or 0: no
// pause). scripts/bench.sh --callgrind sets it: under valgrind a tracer's own
// start-up (syclgraph loads its UR loader and moves from ur.call.debug to its
// hooks) takes seconds, and without the pause how much of it overlaps the
// counted loop would differ from run to run.
inline void settle() {
  const char *value = std::getenv("BENCH_SETTLE_MS");
  if (!value || !*value) return;
  long ms = std::strtol(value, nullptr, 10);
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

inline void report(clock::time_point start, clock::time_point stop, long tasks) {
  double us = std::chrono::duration<double, std::micro>(stop - start).count();
  std::printf("us_per_task %.4f\n", us / double(tasks));
  std::fflush(stdout);
}

}  // namespace bench
