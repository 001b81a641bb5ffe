// regions: the program's own regions, ITT tasks through the ittnotify
// collector protocol (itt.hpp), around USM copies, kernels and a host task
// on the OpenCL CPU device, with the program's own count of what it
// submitted in each region.
//   regions [iterations]
// On an out-of-order queue without profiling (the default most programs use):
//   - main thread, `iterations` times "solve" (domain "app") holding
//     "assemble" (a kernel, 1 copy) and "iterate" (2 copies) holding
//     "norm" (1 copy);
//   - meanwhile two threads at once, each 3 times "worker" (1 copy)
//     holding "chunk" (2 copies);
//   - "io": a host task (30 ms) and a copy that depends_on it (so the
//     runtime enqueues it from its own thread, after the host task, while
//     this thread is in "after"); then "after" (1 copy);
//   - "shared" in domain "app" (1 copy), then "shared" in domain "lib" (1
//     copy: "lib:shared", the name being "app"'s first);
//   - an overlapped task "phase" holding a nested "inner"; "phase" ends
//     first; 1 copy (path phase/inner); "inner" ends;
//   - 1 copy outside any task; "tail" begun, 1 copy, never ended.
// Prints "commands <path> <n>" (device commands) and "host_tasks <path>
// <n>" for what it submitted with exactly that path open ("-": none),
// paths joined by "/", then "done".
#include "common.hpp"
#include "itt.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>

static const char *kSource = R"CL(
__kernel void scale(__global float *x, float s) {
  size_t i = get_global_id(0);
  x[i] = x[i] * s;
}
)CL";

static std::mutex counts_lock;
static std::map<std::string, int> commands, host_tasks;

static void count(std::map<std::string, int> &what, const std::string &path, int n) {
  std::lock_guard<std::mutex> g(counts_lock);
  what[path] += n;
}

static itt_domain *app, *lib;

static itt_string_handle *handle(const char *name) {
  return itt_string_handle_create ? itt_string_handle_create(name) : nullptr;
}

// A nested ITT task for the scope of the object.
struct Task {
  const itt_domain *domain;
  Task(const itt_domain *d, const char *name) : domain(d) {
    if (itt_task_begin) itt_task_begin(domain, itt_id{}, itt_id{}, handle(name));
  }
  ~Task() {
    if (itt_task_end) itt_task_end(domain);
  }
};

constexpr size_t N = 1024;

int main(int argc, char **argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 4;
  itt_init();
  app = itt_domain_create ? itt_domain_create("app") : nullptr;
  lib = itt_domain_create ? itt_domain_create("lib") : nullptr;

  sycl::queue q{sycl::cpu_selector_v};
  auto k = progs::build_cl_kernels(q, kSource, {"scale"});
  sycl::kernel scale = k.at("scale");
  float *a = sycl::malloc_device<float>(N, q);
  float *b = sycl::malloc_device<float>(N, q);
  q.fill(a, 1.0f, N).wait();  // @node fill_outside
  count(commands, "-", 1);

  auto copy = [&](const std::string &path, int n) {
    for (int i = 0; i < n; ++i) q.memcpy(b, a, N * sizeof(float));  // @node copy
    count(commands, path, n);
  };

  auto worker = [&]() {
    for (int i = 0; i < 3; ++i) {
      Task w(app, "worker");
      copy("worker", 1);
      Task c(app, "chunk");
      copy("worker/chunk", 2);
    }
  };
  std::thread t1(worker), t2(worker);
  for (int i = 0; i < iterations; ++i) {
    Task solve(app, "solve");
    {
      Task assemble(app, "assemble");
      q.submit([&](sycl::handler &h) {  // @node assemble_kernel
        h.set_args(a, 1.0f);
        h.parallel_for(sycl::range<1>(N), scale);
      });
      count(commands, "solve/assemble", 1);
      copy("solve/assemble", 1);
    }
    {
      Task iterate(app, "iterate");
      copy("solve/iterate", 2);
      Task norm(app, "norm");
      copy("solve/iterate/norm", 1);
    }
  }
  t1.join();
  t2.join();
  q.wait();

  {
    Task io(app, "io");
    sycl::event host = q.submit([&](sycl::handler &h) {  // @node io_host_task
      h.host_task([] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); });
    });
    count(host_tasks, "io", 1);
    q.submit([&](sycl::handler &h) {  // @node io_after_host
      h.depends_on(host);
      h.memcpy(b, a, N * sizeof(float));
    });
    count(commands, "io", 1);
  }
  {
    Task after(app, "after");
    copy("after", 1);
  }
  q.wait();
  {
    Task shared(app, "shared");
    copy("shared", 1);
  }
  {
    Task shared(lib, "shared");
    copy("lib:shared", 1);
  }
  {
    itt_id id{7, 0, 0};
    if (itt_task_begin_overlapped) itt_task_begin_overlapped(app, id, itt_id{}, handle("phase"));
    Task inner(app, "inner");
    if (itt_task_end_overlapped) itt_task_end_overlapped(app, id);
    copy("phase/inner", 1);
  }
  copy("-", 1);
  q.wait();
  if (itt_task_begin) itt_task_begin(app, itt_id{}, itt_id{}, handle("tail"));
  copy("tail", 1);
  q.wait();

  for (auto &[path, n] : commands) std::printf("commands %s %d\n", path.c_str(), n);
  for (auto &[path, n] : host_tasks) std::printf("host_tasks %s %d\n", path.c_str(), n);
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
