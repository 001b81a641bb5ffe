// faults: a SYCL program that ends abnormally, for tests/tests/faults.rs.
// Every mode first runs `rounds` iterations (argv[2], default 20) of one
// kernel (fault_kernel) and one memcpy back (fault_memcpy) on an in-order
// profiling queue, prints "worked <value>", then:
//   faults exit-host-task [rounds]  a host task (fault_host_task) calls
//                                   std::exit(7) while main sleeps (the
//                                   runtime's shutdown then waits for that
//                                   host task: it hangs, untraced too)
//   faults exit-thread [rounds]     another std::thread submits one kernel
//                                   (fault_thread_kernel) on its own queue,
//                                   waits for it and calls std::exit(5) while
//                                   main sleeps
//   faults abort [rounds]           sleeps 1.5 s (syclgraph's snapshots are
//                                   about a second apart), then abort()
//   faults execve [rounds]          sleeps 1.5 s, then execv()s this program
//                                   as "faults after-exec" (no exit, no
//                                   atexit handlers, no static destructors)
//   faults after-exec               one kernel (fault_after_exec), prints
//                                   "after exec <value>", exits 0
//   faults abort-at-exit [rounds]   returns from main; an exit handler
//                                   registered before the runtime's start
//                                   (so it runs after the runtime's own
//                                   shutdown handler) calls abort()
// stdout is deterministic and flushed before each fault.
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>

static const char *kSource = R"CL(
__kernel void add_one(__global float *x) {
  size_t i = get_global_id(0);
  x[i] = x[i] + 1.0f;
}
)CL";

constexpr size_t N = 1024;

struct Work {
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  sycl::kernel add_one = progs::build_cl_kernels(q, kSource, {"add_one"}).at("add_one");
  float *x = sycl::malloc_device<float>(N, q);
  float v = 0;
};

static float run_rounds(Work &w, int rounds) {
  w.q.memset(w.x, 0, N * sizeof(float)).wait();
  for (int i = 0; i < rounds; ++i) {
    w.q.submit([&](sycl::handler &h) {  // @node fault_kernel
      h.set_args(w.x);
      h.parallel_for(sycl::range<1>(N), w.add_one);
    });
    w.q.memcpy(&w.v, w.x, sizeof(float)).wait();  // @node fault_memcpy
  }
  return w.v;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: faults MODE [rounds]\n");
    return 2;
  }
  const char *mode = argv[1];
  int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const bool abort_at_exit = std::strcmp(mode, "abort-at-exit") == 0;
  if (abort_at_exit) {
    std::atexit([] { std::abort(); });
  }
  Work w;

  if (std::strcmp(mode, "after-exec") == 0) {
    w.q.memset(w.x, 0, N * sizeof(float)).wait();
    w.q.submit([&](sycl::handler &h) {  // @node fault_after_exec
      h.set_args(w.x);
      h.parallel_for(sycl::range<1>(N), w.add_one);
    });
    w.q.memcpy(&w.v, w.x, sizeof(float)).wait();
    std::printf("after exec %.1f\n", w.v);
    return 0;
  }

  std::printf("worked %.1f\n", run_rounds(w, rounds));
  std::fflush(stdout);

  if (std::strcmp(mode, "exit-host-task") == 0) {
    w.q.submit([&](sycl::handler &h) {  // @node fault_host_task
      h.host_task([] {
        std::printf("exit from a host task\n");
        std::fflush(stdout);
        std::exit(7);
      });
    });
    // Not past this when the host task's exit ends the process first.
    std::this_thread::sleep_for(std::chrono::seconds(30));
    std::printf("host task did not exit\n");
    return 0;
  }
  if (std::strcmp(mode, "exit-thread") == 0) {
    std::thread t([&w] {
      sycl::queue q{w.q.get_context(), w.q.get_device(), progs::profiling_in_order()};
      q.submit([&](sycl::handler &h) {  // @node fault_thread_kernel
        h.set_args(w.x);
        h.parallel_for(sycl::range<1>(N), w.add_one);
      });
      q.wait();
      std::printf("exit from another thread\n");
      std::fflush(stdout);
      std::exit(5);
    });
    t.detach();
    std::this_thread::sleep_for(std::chrono::seconds(30));
    std::printf("the other thread did not exit\n");
    return 0;
  }
  if (abort_at_exit) {
    return 0;
  }
  if (std::strcmp(mode, "abort") == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::abort();
  }
  if (std::strcmp(mode, "execve") == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    char after[] = "after-exec";
    char *args[] = {argv[0], after, nullptr};
    execv("/proc/self/exe", args);
    std::perror("execv");
    return 9;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
