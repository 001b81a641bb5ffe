// fork_exec: a SYCL program that forks.
//   fork_exec                 runs one kernel (fork_parent_before), forks; the
//                             child execs this program with "child"; the parent
//                             waits for it, then runs one more kernel
//                             (fork_parent_after).
//   fork_exec child           runs a different small kernel (fork_child_kernel)
//                             and exits.
//   fork_exec fork-exit FILE  runs one kernel (fork_parent_before), forks; the
//                             child points its stderr at FILE, touches no SYCL
//                             and calls exit(0) (atexit handlers and static
//                             destructors run); the parent waits for it at most
//                             20 s (then kills it and says "child hung"), then
//                             runs one more kernel (fork_parent_after).
// stdout (deterministic):
//   parent kernel <value>
//   child kernel <value>            (exec mode: printed by the exec'd child)
//   child exited <code>  | child killed by signal <n> | child hung
//   parent kernel after <value>
//   done
// The child's pid goes to stderr: "fork_exec: child pid <pid>".
#include "common.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

static const char *kSource = R"CL(
__kernel void add_one(__global float *x) {
  size_t i = get_global_id(0);
  x[i] = x[i] + 1.0f;
}
__kernel void times_ten(__global float *x) {
  size_t i = get_global_id(0);
  x[i] = x[i] * 10.0f + 3.0f;
}
)CL";

constexpr size_t N = 256;

static int run_child() {
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  auto k = progs::build_cl_kernels(q, kSource, {"times_ten"});
  float *x = sycl::malloc_device<float>(N, q);
  q.memset(x, 0, N * sizeof(float));
  q.submit([&](sycl::handler &h) {  // @node fork_child_kernel
    h.set_args(x);
    h.parallel_for(sycl::range<1>(N), k.at("times_ten"));
  });
  float v = 0;
  q.memcpy(&v, x, sizeof(float)).wait();
  std::printf("child kernel %.0f\n", v);
  sycl::free(x, q);
  return 0;
}

// Waits for `pid` at most `seconds`; kills it when it takes longer.
static void wait_child(pid_t pid, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      std::printf("waitpid failed\n");
      return;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::printf("child hung\n");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (WIFEXITED(status)) {
    std::printf("child exited %d\n", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    std::printf("child killed by signal %d\n", WTERMSIG(status));
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "exec";
  if (std::strcmp(mode, "child") == 0) return run_child();
  bool fork_exit = std::strcmp(mode, "fork-exit") == 0;
  if (fork_exit && argc < 3) {
    std::fprintf(stderr, "usage: fork_exec fork-exit FILE\n");
    return 2;
  }

  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  auto k = progs::build_cl_kernels(q, kSource, {"add_one"});
  sycl::kernel add_one = k.at("add_one");
  float *x = sycl::malloc_device<float>(N, q);
  q.memset(x, 0, N * sizeof(float));
  q.submit([&](sycl::handler &h) {  // @node fork_parent_before
    h.set_args(x);
    h.parallel_for(sycl::range<1>(N), add_one);
  });
  float v = 0;
  q.memcpy(&v, x, sizeof(float)).wait();
  std::printf("parent kernel %.0f\n", v);
  std::fflush(stdout);
  std::fflush(stderr);

  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }
  if (pid == 0) {
    if (fork_exit) {
      int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
      }
      std::exit(0);
    }
    char self[] = "/proc/self/exe";
    char child[] = "child";
    char *args[] = {argv[0], child, nullptr};
    execv(self, args);
    _exit(127);
  }
  std::fprintf(stderr, "fork_exec: child pid %d\n", (int)pid);
  std::fflush(stderr);
  wait_child(pid, 20);
  std::fflush(stdout);

  q.submit([&](sycl::handler &h) {  // @node fork_parent_after
    h.set_args(x);
    h.parallel_for(sycl::range<1>(N), add_one);
  });
  q.memcpy(&v, x, sizeof(float)).wait();
  std::printf("parent kernel after %.0f\n", v);
  sycl::free(x, q);
  std::printf("done\n");
  return 0;
}
