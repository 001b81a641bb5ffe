// interop_kernels N [noprof|self-timed]
//
// A kernel workload: N launches of a small real device kernel (OpenCL C
// compiled on the queue's native cl_context and wrapped with
// sycl::make_kernel<backend::opencl>, since there is no SYCL device compiler
// here) on an in-order queue created with enable_profiling. Each launch does
// a little arithmetic on 4096 floats, so per-launch device work is of the
// order of the launch cost itself. Timed: the submission loop plus the final
// wait (after a short untimed warm-up). `noprof`: the queue is made without
// enable_profiling. `self-timed`: the program times every launch itself
// (bench::SelfTimer, window 64; the reads are timed too).
#include <sycl/sycl.hpp>
#include <CL/cl.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "../../tests/programs/common.hpp"  // progs::build_cl_kernels

namespace {

constexpr size_t kItems = 4096;
constexpr int kWarmup = 16;

const char *kSource = R"CL(
__kernel void axpb(__global float *x, float a, float b) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < 8; ++k) v = v * a + b;
  x[i] = v;
}
)CL";

sycl::kernel build_kernel(const sycl::queue &q) {
  return progs::build_cl_kernels(q, kSource, {"axpb"}).at("axpb");
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc == 3 ? argv[2] : "";
  if (argc < 2 || argc > 3 || (argc == 3 && mode != "noprof" && mode != "self-timed")) {
    std::fprintf(stderr, "usage: %s N [noprof|self-timed]\n", argv[0]);
    return 2;
  }
  const bool profiling = mode != "noprof";
  const bool self_timed = mode == "self-timed";
  const long n = bench::parse_count(argv[1], "N");
  sycl::queue q = profiling
                      ? sycl::queue{sycl::property_list{sycl::property::queue::in_order(),
                                                        sycl::property::queue::enable_profiling()}}
                      : sycl::queue{sycl::property_list{sycl::property::queue::in_order()}};
  sycl::kernel kernel = build_kernel(q);
  float *x = sycl::malloc_device<float>(kItems, q);
  q.fill(x, 1.0f, kItems).wait();
  const float a = 0.5f, b = 0.5f;  // v -> v/2 + 1/2 keeps 1.0 fixed

  auto launch = [&] {
    return q.submit([&](sycl::handler &h) {
      h.set_args(x, a, b);
      h.parallel_for(sycl::range<1>{kItems}, kernel);
    });
  };
  for (int w = 0; w < kWarmup; ++w) launch();
  q.wait();
  bench::settle();

  std::vector<bench::SelfTimer> timers(1);
  const auto start = bench::clock::now();
  if (self_timed) {
    for (long i = 0; i < n; ++i) timers[0].add(launch());
    q.wait();
    timers[0].finish();
  } else {
    for (long i = 0; i < n; ++i) launch();
    q.wait();
  }
  const auto stop = bench::clock::now();
  if (self_timed) bench::report_self_timed(timers);
  bench::report(start, stop, n);

  std::vector<float> back(kItems);
  q.memcpy(back.data(), x, kItems * sizeof(float)).wait();
  sycl::free(x, q);
  for (float v : back) {
    if (v != 1.0f) {
      std::fprintf(stderr, "wrong result %f\n", v);
      return 1;
    }
  }
  return 0;
}
