// sub_devices: the CPU device split into its sub-devices (partition_equally),
// the way a program sees the tiles of a GPU. Both sub-devices share the root
// device's name. One in-order profiling queue per sub-device, in one context
// over both; three busy-loop kernels (OpenCL C built for both device ids) on
// each, submitted from one source line, so one graph node has instances on
// two devices. Sub-device 0 gets long kernels, sub-device 1 short ones with a
// 20 ms host sleep between them (gaps of its own).
// argv[1]:
//  subs  the two sub-device queues only.
//  root  also an in-order profiling queue on the root device (its own
//        context), with two kernels.
// Prints, per kernel, the application's own command_start, command_end
// (device clock) and duration, as `profiling <queue>_start <instance> <ns>`,
// `profiling <queue>_end <instance> <ns>` and `profiling <queue> <instance>
// <ns>` (queue: sub0, sub1 or root).
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

constexpr size_t N = 1024;

// Builds `spin` for every device of `ctx` (all of them in one clBuildProgram).
static sycl::kernel build_spin(const sycl::context &ctx, const std::vector<sycl::device> &devs) {
  cl_context cl_ctx = sycl::get_native<sycl::backend::opencl>(ctx);
  std::vector<cl_device_id> ids;
  for (const auto &d : devs) ids.push_back(sycl::get_native<sycl::backend::opencl>(d));
  cl_int err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource(cl_ctx, 1, &progs::kSpinSource, nullptr, &err);
  progs::cl_check(err, "clCreateProgramWithSource");
  err = clBuildProgram(prog, (cl_uint)ids.size(), ids.data(), "", nullptr, nullptr);
  progs::cl_check(err, "clBuildProgram");
  cl_kernel k = clCreateKernel(prog, "spin", &err);
  progs::cl_check(err, "clCreateKernel");
  sycl::kernel out = sycl::make_kernel<sycl::backend::opencl>(k, ctx);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  for (auto id : ids) clReleaseDevice(id);
  clReleaseContext(cl_ctx);
  return out;
}

static void report(const char *queue, int instance, const sycl::event &e) {
  auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
  std::printf("profiling %s_start %d %llu\n", queue, instance, (unsigned long long)start);
  std::printf("profiling %s_end %d %llu\n", queue, instance, (unsigned long long)end);
  progs::print_profiling(queue, instance, e);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "subs";
  bool with_root = std::strcmp(mode, "root") == 0;
  sycl::device root{sycl::cpu_selector_v};
  std::vector<sycl::device> subs =
      root.create_sub_devices<sycl::info::partition_property::partition_equally>(1);
  if (subs.size() < 2) {
    std::fprintf(stderr, "sub_devices: %zu sub-devices\n", subs.size());
    return 2;
  }
  subs.resize(2);
  sycl::context ctx{subs};
  std::vector<sycl::queue> queues;
  for (auto &d : subs) queues.emplace_back(ctx, d, progs::profiling_in_order());
  sycl::kernel k = build_spin(ctx, subs);

  std::vector<float *> data;
  for (auto &q : queues) {
    float *p = sycl::malloc_device<float>(N, q);
    q.memset(p, 0, N * sizeof(float)).wait();  // @node memset
    data.push_back(p);
  }
  const char *names[2] = {"sub0", "sub1"};
  const int rounds[2] = {40000, 4000};
  std::vector<sycl::event> events[2];
  for (int i = 0; i < 3; ++i) {
    for (int d = 0; d < 2; ++d) {
      float *p = data[d];
      int r = rounds[d];
      events[d].push_back(queues[d].submit([&](sycl::handler &h) {  // @node spin
        h.set_args(p, r);
        h.parallel_for(sycl::range<1>(N), k);
      }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  std::vector<sycl::event> root_events;
  if (with_root) {
    sycl::queue rq{root, progs::profiling_in_order()};
    auto rk = progs::build_cl_kernels(rq, progs::kSpinSource, {"spin"}).at("spin");
    float *p = sycl::malloc_device<float>(N, rq);
    rq.memset(p, 0, N * sizeof(float)).wait();  // @node root_memset
    for (int i = 0; i < 2; ++i) {
      int r = 4000;
      root_events.push_back(rq.submit([&](sycl::handler &h) {  // @node root_spin
        h.set_args(p, r);
        h.parallel_for(sycl::range<1>(N), rk);
      }));
    }
    rq.wait();
    for (size_t i = 0; i < root_events.size(); ++i) report("root", (int)i + 1, root_events[i]);
    sycl::free(p, rq);
  }

  for (int d = 0; d < 2; ++d) {
    queues[d].wait();
    for (size_t i = 0; i < events[d].size(); ++i) report(names[d], (int)i + 1, events[d][i]);
    sycl::free(data[d], queues[d]);
  }
  std::printf("sub_devices done\n");
  return 0;
}
