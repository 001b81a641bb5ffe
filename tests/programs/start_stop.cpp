// start_stop: tracing started and stopped while the program runs.
//   start_stop <how> [n]
// <how> says who starts and stops tracing (run it with SYCLGRAPH_START=paused):
//   api   : syclgraph_start()/syclgraph_stop() through include/syclgraph.h
//   itt   : __itt_resume()/__itt_pause() through the ittnotify convention,
//           done by hand here (no ittnotify library is packaged for C++ on
//           this machine): dlopen(INTEL_LIBITTNOTIFY64), call its
//           __itt_api_init with a global listing the ITT functions, as the
//           ittnotify static part does; phase B runs in an ITT task
//           "phase_b" of domain "start_stop"
//   wait  : someone outside (signal, control file) does it: the program
//           prints "waiting for start"/"waiting for stop" and polls
//           syclgraph_is_active() (at most 20 s)
//   none  : nobody (the program must run the same without syclgraph)
//   loop  : no phases: one-memcpy submissions (tag loop_memcpy) for n ms,
//           for SYCLGRAPH_DELAY / SYCLGRAPH_DURATION; prints "done" only
//           (and "loop submissions <count>" on stderr)
// Phases, n USM memcpys each on an in-order profiling queue:
//   A stopped (tag a_memcpy), B on (tag b_memcpy, plus b_host: a host task
//   writing a buffer that runs 300 ms, so it ends after the stop, and
//   b_late_memcpy queued behind it, so it runs after the stop), C stopped
//   (tag c_memcpy), D on (tag d_host: a host task reading that buffer: the
//   B -> D edge spans two windows; tag d_memcpy).
// Output: "submitted <phase> <count>" per phase, "sum <value>", "done".
#include "common.hpp"
#include "itt.hpp"
#include "syclgraph.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

// ---- the ittnotify convention, by hand: itt.hpp ----------------------------

// ---- who starts and stops ----------------------------------------------------
static std::string how;

static void wait_active(bool want) {
  std::printf("waiting for %s\n", want ? "start" : "stop");
  std::fflush(stdout);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((syclgraph_is_active() != 0) != want && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

static void start() {
  if (how == "api") syclgraph_start();
  if (how == "itt" && itt_resume) itt_resume();
  if (how == "wait") wait_active(true);
}

static void stop() {
  if (how == "api") syclgraph_stop();
  if (how == "itt" && itt_pause) itt_pause();
  if (how == "wait") wait_active(false);
}

int main(int argc, char **argv) {
  how = argc > 1 ? argv[1] : "api";
  int n = argc > 2 ? std::atoi(argv[2]) : 20;
  if (how == "itt") itt_init();

  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  int *dev = sycl::malloc_device<int>(64, q);
  int host[64] = {0};
  if (how == "loop") {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(n);
    int i = 0;
    while (std::chrono::steady_clock::now() < until) {
      q.memcpy(dev, host, sizeof(host));  // @node loop_memcpy
      if (++i % 64 == 0) q.wait();
    }
    std::fprintf(stderr, "loop submissions %d\n", i);
    q.wait();
    sycl::free(dev, q);
    std::printf("done\n");
    return 0;
  }
  sycl::buffer<int, 1> shared{sycl::range<1>(4)};

  for (int i = 0; i < n; ++i) q.memcpy(dev, host, sizeof(host));  // @node a_memcpy
  q.wait();
  std::printf("submitted a %d\n", n);

  start();
  itt_domain *domain = itt_domain_create ? itt_domain_create("start_stop") : nullptr;
  itt_string_handle *name = itt_string_handle_create ? itt_string_handle_create("phase_b") : nullptr;
  if (domain && itt_task_begin) itt_task_begin(domain, itt_id{}, itt_id{}, name);
  for (int i = 0; i < n; ++i) q.memcpy(dev, host, sizeof(host));  // @node b_memcpy
  q.submit([&](sycl::handler &h) {  // @node b_host
    sycl::accessor out{shared, h, sycl::write_only, sycl::no_init};
    h.host_task([=] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      for (int i = 0; i < 4; ++i) out[i] = i + 1;
    });
  });
  // Queued behind the host task: it runs, and is timed, after the stop.
  q.memcpy(dev, host, sizeof(host));  // @node b_late_memcpy
  if (domain && itt_task_end) itt_task_end(domain);
  std::printf("submitted b %d\n", n + 2);
  stop();

  for (int i = 0; i < n; ++i) q.memcpy(dev, host, sizeof(host));  // @node c_memcpy
  q.wait();
  std::printf("submitted c %d\n", n);

  start();
  int sum = 0;
  {
    sycl::buffer<int, 1> result{&sum, sycl::range<1>(1)};
    q.submit([&](sycl::handler &h) {  // @node d_host
      sycl::accessor in{shared, h, sycl::read_only};
      sycl::accessor out{result, h, sycl::write_only};
      h.host_task([=] { out[0] = in[0] + in[1] + in[2] + in[3]; });
    });
  }
  for (int i = 0; i < n; ++i) q.memcpy(dev, host, sizeof(host));  // @node d_memcpy
  q.wait();
  std::printf("submitted d %d\n", n + 1);
  stop();

  sycl::free(dev, q);
  std::printf("sum %d\ndone\n", sum);
  return 0;
}
