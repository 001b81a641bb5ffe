// tiny_memcpy N THREADS [own|shared] [self-timed|thread-timed]
//
// The worst case for a tracer: N 64-byte USM device-to-device memcpys on
// in-order queues created with enable_profiling, i.e. almost no device work per
// task, so per-task runtime and tracing costs dominate. N is the total number
// of memcpys, split evenly over THREADS submitting threads. With `own` (the
// default) each thread has its own queue; with `shared` all threads submit to
// one queue. Each thread submits its share and then waits on its queue; the
// timed region runs from the moment all threads are released to the end of the
// last wait. A short warm-up (not timed) runs first on every queue.
// With `self-timed` each thread also times every memcpy it submits, as a
// program measuring itself would (bench::SelfTimer: the last 64 events kept,
// each read once it leaves the window, the rest after the wait; timed too).
// With `thread-timed` a second thread per submitting thread reads them
// while it submits, as a tracer's collector does (bench::ThreadTimer).
#include <sycl/sycl.hpp>

#include <barrier>
#include <memory>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"

namespace {

constexpr size_t kBytes = 64;
constexpr int kWarmup = 64;

sycl::queue make_queue() {
  return sycl::queue{sycl::property_list{sycl::property::queue::in_order(),
                                         sycl::property::queue::enable_profiling()}};
}

}  // namespace

int main(int argc, char **argv) {
  bool shared = false, self_timed = false, thread_timed = false, bad = argc < 3;
  for (int a = 3; a < argc; ++a) {
    const std::string arg = argv[a];
    if (a == 3 && (arg == "own" || arg == "shared")) shared = arg == "shared";
    else if (a == argc - 1 && arg == "self-timed") self_timed = true;
    else if (a == argc - 1 && arg == "thread-timed") thread_timed = true;
    else bad = true;
  }
  if (bad) {
    std::fprintf(stderr, "usage: %s N THREADS [own|shared] [self-timed|thread-timed]\n", argv[0]);
    return 2;
  }
  const long n = bench::parse_count(argv[1], "N");
  const long threads = bench::parse_count(argv[2], "THREADS");

  const long queues_needed = shared ? 1 : threads;
  std::vector<sycl::queue> queues;
  std::vector<void *> src, dst;
  for (long i = 0; i < queues_needed; ++i) queues.push_back(make_queue());
  for (long t = 0; t < threads; ++t) {
    sycl::queue &q = queues[shared ? 0 : t];
    src.push_back(sycl::malloc_device(kBytes, q));
    dst.push_back(sycl::malloc_device(kBytes, q));
    unsigned char init[kBytes];
    std::memset(init, int(t + 1), kBytes);
    q.memcpy(src[t], init, kBytes).wait();
    for (int w = 0; w < kWarmup; ++w) q.memcpy(dst[t], src[t], kBytes);
    q.wait();
  }
  bench::settle();

  std::vector<bench::SelfTimer> timers(threads);
  std::vector<std::unique_ptr<bench::ThreadTimer>> readers;
  for (long t = 0; thread_timed && t < threads; ++t)
    readers.push_back(std::make_unique<bench::ThreadTimer>());
  std::barrier sync(threads + 1);
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) {
    const long share = n / threads + (t < n % threads ? 1 : 0);
    workers.emplace_back([&, t, share] {
      sycl::queue &q = queues[shared ? 0 : t];
      sync.arrive_and_wait();
      if (self_timed) {
        bench::SelfTimer &timer = timers[t];
        for (long i = 0; i < share; ++i) timer.add(q.memcpy(dst[t], src[t], kBytes));
        q.wait();
        timer.finish();
      } else if (thread_timed) {
        bench::ThreadTimer &reader = *readers[t];
        for (long i = 0; i < share; ++i) reader.add(q.memcpy(dst[t], src[t], kBytes));
        q.wait();
        reader.finish();
      } else {
        for (long i = 0; i < share; ++i) q.memcpy(dst[t], src[t], kBytes);
        q.wait();
      }
      sync.arrive_and_wait();
    });
  }
  sync.arrive_and_wait();
  const auto start = bench::clock::now();
  sync.arrive_and_wait();
  const auto stop = bench::clock::now();
  for (auto &w : workers) w.join();
  if (self_timed) bench::report_self_timed(timers);
  if (thread_timed) {
    unsigned long long read = 0, ns = 0;
    for (auto &r : readers) {
      read += r->commands_read();
      ns += r->device_ns();
    }
    std::printf("self_timed commands %llu device_ns %llu\n", read, ns);
  }
  bench::report(start, stop, n);

  for (long t = 0; t < threads; ++t) {
    sycl::queue &q = queues[shared ? 0 : t];
    unsigned char back[kBytes];
    q.memcpy(back, dst[t], kBytes).wait();
    if (back[0] != (unsigned char)(t + 1)) {
      std::fprintf(stderr, "wrong data on thread %ld\n", t);
      return 1;
    }
    sycl::free(src[t], q);
    sycl::free(dst[t], q);
  }
  return 0;
}
