// Shared helpers for the syclgraph test programs (host-only SYCL built with g++):
//  - build real device kernels from OpenCL C source on the queue's native
//    cl_context and wrap them as sycl::kernel (there is no SYCL device compiler),
//  - print the application's own profiling durations in the format the tests parse:
//      profiling <label> <instance#> <duration_ns>
// Do not submit commands from this header: XPTI records the submitting source
// line, and tests expect every node to point into the program's own .cpp file.
#pragma once

#include <sycl/sycl.hpp>
#include <CL/cl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace progs {

// A busy loop per work item, `rounds` long: a kernel whose length the
// program chooses (kernel `spin(float *x, int rounds)`).
inline const char *kSpinSource = R"CL(
__kernel void spin(__global float *x, int rounds) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 1.0f;
  x[i] = v;
}
)CL";

inline void cl_check(cl_int err, const char *what) {
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "OpenCL error %d in %s\n", err, what);
    std::exit(2);
  }
}

// Compiles `source` for the queue's device and returns the named kernels.
inline std::map<std::string, sycl::kernel>
build_cl_kernels(const sycl::queue &q, const char *source,
                 const std::vector<std::string> &names) {
  if (q.get_backend() != sycl::backend::opencl) {
    std::fprintf(stderr, "queue is not on the OpenCL backend\n");
    std::exit(2);
  }
  sycl::context ctx = q.get_context();
  cl_context cl_ctx = sycl::get_native<sycl::backend::opencl>(ctx);
  cl_device_id cl_dev = sycl::get_native<sycl::backend::opencl>(q.get_device());
  cl_int err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource(cl_ctx, 1, &source, nullptr, &err);
  cl_check(err, "clCreateProgramWithSource");
  err = clBuildProgram(prog, 1, &cl_dev, "", nullptr, nullptr);
  if (err != CL_SUCCESS) {
    char log[8192] = {0};
    clGetProgramBuildInfo(prog, cl_dev, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, nullptr);
    std::fprintf(stderr, "build log:\n%s\n", log);
    cl_check(err, "clBuildProgram");
  }
  std::map<std::string, sycl::kernel> out;
  for (const auto &name : names) {
    cl_kernel k = clCreateKernel(prog, name.c_str(), &err);
    cl_check(err, "clCreateKernel");
    out.emplace(name, sycl::make_kernel<sycl::backend::opencl>(k, ctx));
    clReleaseKernel(k);  // make_kernel retained its own reference
  }
  clReleaseProgram(prog);
  clReleaseDevice(cl_dev);
  clReleaseContext(cl_ctx);  // get_native returned a retained handle
  return out;
}

// The application's own view of a command's device time.
inline uint64_t duration_ns(const sycl::event &e) {
  auto start = e.get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = e.get_profiling_info<sycl::info::event_profiling::command_end>();
  return end - start;
}

inline void print_profiling(const char *label, int instance, const sycl::event &e) {
  std::printf("profiling %s %d %llu\n", label, instance,
              (unsigned long long)duration_ns(e));
}

// Order-independent integer checksum of a float array (values are exact small
// integers or dyadic fractions in these programs, so this is deterministic).
inline long long checksum(const float *p, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i] * double((i % 7) + 1);
  return (long long)s;
}

inline sycl::property_list profiling_in_order() {
  return {sycl::property::queue::enable_profiling(), sycl::property::queue::in_order()};
}

}  // namespace progs
