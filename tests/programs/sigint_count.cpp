// sigint_count: counts every SIGINT it receives, in the C handler itself (a
// Python handler would fold two quick ones into one call). Prints "ready"
// once the handler is in place, waits until 1 s after the first SIGINT (at
// most 30 s), prints "total <n>" and exits 0. It uses no SYCL (so libsycl is
// not among its needed libraries either). It checks that a Ctrl-C typed at a
// terminal reaches a program under `syclgraph run` once, not a second time
// through syclgraph.
#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <thread>

static volatile sig_atomic_t count = 0;

static void on_sigint(int) { count = count + 1; }

int main() {
  struct sigaction action = {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  std::printf("ready\n");
  std::fflush(stdout);
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::seconds(30);
  bool seen = false;
  while (clock::now() < deadline) {
    if (!seen && count > 0) {
      seen = true;
      deadline = clock::now() + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("total %d\n", static_cast<int>(count));
  return 0;
}
