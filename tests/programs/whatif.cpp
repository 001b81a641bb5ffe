// whatif: host loops whose bound is known by construction, for the
// known-answer tests of `syclgraph whatif` (tests/tests/what_if.rs) and
// `syclgraph diff` (tests/tests/run_diff.rs).
//
// Usage: whatif MODE ROUNDS [HOST_US] [ITERATIONS] [OTHER_ROUNDS]
//
// The device kernels are OpenCL C busy loops of one work item, ROUNDS
// rounds long: halve ROUNDS and the kernel takes about half the time. The
// host's own work in each iteration is a sleep of HOST_US microseconds
// (not a busy loop: it leaves the cores to the device, which on the OpenCL
// CPU device is the same processor); where the host does not wait, it
// sleeps until the next multiple of HOST_US since the loop began, so that
// a loaded machine's late wake-ups do not add up. A warm-up kernel of a
// fixed length runs and is waited for before the loop (its first launch
// pays for the kernel's first use), then ITERATIONS iterations:
//  host_bound    in-order queue: host work, then a kernel, not waited for.
//                With kernels shorter than the host work the host sets the
//                pace: a faster kernel saves only the last one's time.
//  device_bound  in-order queue: a kernel, q.wait(), host work. With host
//                work shorter than the kernel the span is mostly the
//                kernels': the host waits for each, and what comes after a
//                wait moves by what the kernel saved.
//  turns         in-order queue: host work, then a kernel, not waited for.
//                Kernels longer than the host work queue up behind each
//                other: device-bound until the kernel is shorter than the
//                host work, then host-bound.
//  pair          in-order queue: a kernel of ROUNDS (`changed`), a kernel of
//                OTHER_ROUNDS (`unchanged`), q.wait(), host work: for diff.
// Every command line carries an "@node <label>" tag.
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

// The warm-up kernel's length, the same whatever ROUNDS is.
constexpr int kWarmUpRounds = 200000;

static long arg(int argc, char **argv, int at, long fallback, const char *what) {
  if (argc <= at) return fallback;
  char *end = nullptr;
  long v = std::strtol(argv[at], &end, 10);
  if (!end || *end != '\0' || v < 0) {
    std::fprintf(stderr, "bad %s: %s\n", what, argv[at]);
    std::exit(2);
  }
  return v;
}

static void host_work(long us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

// Host work that ends on a grid: iteration i's ends HOST_US * (i + 1)
// after `t0`, however late the thread woke for the one before (a loaded
// machine's wake-up delays do not add up).
static void host_work_until(std::chrono::steady_clock::time_point t0, long i, long us) {
  std::this_thread::sleep_until(t0 + std::chrono::microseconds(us * (i + 1)));
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODE ROUNDS [HOST_US] [ITERATIONS] [OTHER_ROUNDS]\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  const int rounds = int(arg(argc, argv, 2, 0, "ROUNDS"));
  const long host_us = arg(argc, argv, 3, 2000, "HOST_US");
  const long iterations = arg(argc, argv, 4, 40, "ITERATIONS");
  const int other_rounds = int(arg(argc, argv, 5, rounds, "OTHER_ROUNDS"));
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  sycl::kernel k = progs::build_cl_kernels(q, progs::kSpinSource, {"spin"}).at("spin");
  float *x = sycl::malloc_device<float>(iterations + 2, q);
  q.fill(x, 1.0f, iterations + 2).wait();
  const sycl::range<1> one{1};

  q.submit([&](sycl::handler &h) {  // @node warm_up
     h.set_args(x + iterations + 1, kWarmUpRounds);
     h.parallel_for(one, k);
   }).wait();

  const auto t0 = std::chrono::steady_clock::now();
  if (std::strcmp(mode, "host_bound") == 0) {
    for (long i = 0; i < iterations; ++i) {
      host_work_until(t0, i, host_us);
      q.submit([&](sycl::handler &h) {  // @node host_bound_kernel
        h.set_args(x, rounds);
        h.parallel_for(one, k);
      });
    }
  } else if (std::strcmp(mode, "device_bound") == 0) {
    for (long i = 0; i < iterations; ++i) {
      q.submit([&](sycl::handler &h) {  // @node device_bound_kernel
        h.set_args(x, rounds);
        h.parallel_for(one, k);
      });
      q.wait();
      host_work(host_us);
    }
  } else if (std::strcmp(mode, "turns") == 0) {
    for (long i = 0; i < iterations; ++i) {
      host_work_until(t0, i, host_us);
      q.submit([&](sycl::handler &h) {  // @node turns_kernel
        h.set_args(x, rounds);
        h.parallel_for(one, k);
      });
    }
  } else if (std::strcmp(mode, "pair") == 0) {
    for (long i = 0; i < iterations; ++i) {
      q.submit([&](sycl::handler &h) {  // @node changed
        h.set_args(x, rounds);
        h.parallel_for(one, k);
      });
      q.submit([&](sycl::handler &h) {  // @node unchanged
        h.set_args(x + 1, other_rounds);
        h.parallel_for(one, k);
      });
      q.wait();
      host_work(host_us);
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  q.wait();
  float back = 0;
  q.memcpy(&back, x, sizeof(float)).wait();  // @node read_back
  sycl::free(x, q);
  std::printf("%s done %s\n", mode, back > 0 ? "ok" : "wrong");
  return 0;
}
