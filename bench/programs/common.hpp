// Shared helpers of the syclgraph overhead benchmark programs (scripts/bench.sh).
// Each program times its submission loop plus the final wait with a steady
// clock, inside the process (start-up, device discovery and warm-up excluded),
// and prints one line the script parses:
//     us_per_task <microseconds of wall time per submitted task>
// In their `self-timed` mode they also time every command they submit
// themselves (SelfTimer below) and print, before that line,
//     self_timed commands <read> device_ns <sum of end - start>
#pragma once

#include <sycl/sycl.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

// The cheapest way the SYCL API lets a program time each of its own
// commands: keep the events of the last `window` commands and read
// command_start/command_end of each once, when it leaves the window (it is
// then long done: `window` commands were submitted after it on an in-order
// queue), and of the rest after the final wait (finish()). The durations are
// summed, so that the reads cannot be dropped as unused. One SelfTimer per
// submitting thread; the benchmark's `self-timed` configuration.
class SelfTimer {
 public:
  static constexpr size_t kDefaultWindow = 64;

  explicit SelfTimer(size_t window = kDefaultWindow) : events_(window) {}

  // Takes the event of the command just submitted.
  void add(sycl::event event) {
    sycl::event &slot = events_[added_ % events_.size()];
    if (added_ >= events_.size()) read(slot);
    slot = std::move(event);
    ++added_;
  }

  // Reads the events still in the window, oldest first (after the final wait).
  void finish() {
    const size_t window = events_.size();
    const size_t first = added_ > window ? added_ - window : 0;
    for (size_t k = first; k < added_; ++k) read(events_[k % window]);
    added_ = 0;
  }

  uint64_t device_ns() const { return device_ns_; }
  uint64_t commands_read() const { return read_; }

 private:
  void read(const sycl::event &event) {
    const uint64_t start = event.get_profiling_info<sycl::info::event_profiling::command_start>();
    const uint64_t end = event.get_profiling_info<sycl::info::event_profiling::command_end>();
    device_ns_ += end - start;
    ++read_;
  }

  std::vector<sycl::event> events_;
  size_t added_ = 0;
  uint64_t device_ns_ = 0;
  uint64_t read_ = 0;
};

// How a tracer times every command: a second thread takes the events the
// submitting thread hands it, every 0.5 ms, and reads each one in order
// once it completed (its status first, then its start and end), as
// syclgraph's collector does. The benchmark's `threadtimed`
// configuration: what reading events beside the submitting thread costs
// the program, whoever reads them (docs/performance.md, "On an NVIDIA
// H200").
class ThreadTimer {
 public:
  ThreadTimer() : reader_([this] { run(); }) {}
  ThreadTimer(const ThreadTimer &) = delete;
  ThreadTimer &operator=(const ThreadTimer &) = delete;

  // Takes the event of the command just submitted.
  void add(sycl::event event) {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(std::move(event));
  }

  // Reads what is left and stops the reader (after the final wait).
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    reader_.join();
  }

  uint64_t device_ns() const { return device_ns_; }
  uint64_t commands_read() const { return read_; }

 private:
  void run() {
    std::vector<sycl::event> batch, waiting;
    size_t next = 0;
    for (;;) {
      bool done;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done = done_;
        for (auto &e : incoming_) waiting.push_back(std::move(e));
        incoming_.clear();
      }
      while (next < waiting.size()) {
        const sycl::event &e = waiting[next];
        if (!done && e.get_info<sycl::info::event::command_execution_status>() !=
                         sycl::info::event_command_status::complete)
          break;
        const uint64_t start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
        const uint64_t end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
        device_ns_ += end - start;
        ++read_;
        ++next;
      }
      if (next == waiting.size()) {
        waiting.clear();
        next = 0;
        if (done) return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  std::mutex mutex_;
  std::vector<sycl::event> incoming_;
  bool done_ = false;
  uint64_t device_ns_ = 0;
  uint64_t read_ = 0;
  std::thread reader_;
};

// Prints what the self-timers of all threads read (before report()).
inline void report_self_timed(const std::vector<SelfTimer> &timers) {
  uint64_t read = 0, ns = 0;
  for (const SelfTimer &t : timers) {
    read += t.commands_read();
    ns += t.device_ns();
  }
  std::printf("self_timed commands %llu device_ns %llu\n", (unsigned long long)read,
              (unsigned long long)ns);
}

inline void report(clock::time_point start, clock::time_point stop, long tasks) {
  double us = std::chrono::duration<double, std::micro>(stop - start).count();
  std::printf("us_per_task %.4f\n", us / double(tasks));
  std::fflush(stdout);
}

}  // namespace bench
