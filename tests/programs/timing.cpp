// timing: device times. Two OpenCL-interop kernels with different work sizes
// (small: 4096 items, large: 131072 items, same per-item loop) are launched N
// times each (argv[1], default 5) on an in-order queue WITH enable_profiling,
// printing the application's own durations
//   profiling <small|large> <i> <duration_ns>
// and then N times each on an in-order queue WITHOUT enable_profiling,
// printing only the launch counts
//   noprofiling <small|large> <N>
// Each launch line carries an "@node <label>" tag.
#include "common.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

static const char *kSource = R"CL(
__kernel void busy(__global float *x, int rounds) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.5f + 1.0f;
  x[i] = v;
}
__kernel void busy_wide(__global float *x, int rounds) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.5f + 2.0f;
  x[i] = v;
}
)CL";

constexpr size_t kSmall = 4096;
constexpr size_t kLarge = 131072;
constexpr int kRounds = 256;

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 5;
  if (n < 1) n = 1;

  sycl::queue prof{sycl::cpu_selector_v, progs::profiling_in_order()};
  sycl::queue plain{prof.get_context(), prof.get_device(), sycl::property::queue::in_order()};
  auto k = progs::build_cl_kernels(prof, kSource, {"busy", "busy_wide"});
  sycl::kernel small = k.at("busy"), large = k.at("busy_wide");

  float *xs = sycl::malloc_device<float>(kSmall, prof);
  float *xl = sycl::malloc_device<float>(kLarge, prof);
  prof.fill(xs, 0.0f, kSmall);
  prof.fill(xl, 0.0f, kLarge);
  prof.wait();

  std::vector<sycl::event> small_ev, large_ev;
  for (int i = 0; i < n; ++i) {
    small_ev.push_back(prof.submit([&](sycl::handler &h) {  // @node small_profiled
      h.set_args(xs, kRounds);
      h.parallel_for(sycl::range<1>(kSmall), small);
    }));
    large_ev.push_back(prof.submit([&](sycl::handler &h) {  // @node large_profiled
      h.set_args(xl, kRounds);
      h.parallel_for(sycl::range<1>(kLarge), large);
    }));
  }
  prof.wait();
  for (int i = 0; i < n; ++i) progs::print_profiling("small", i, small_ev[i]);
  for (int i = 0; i < n; ++i) progs::print_profiling("large", i, large_ev[i]);

  int small_count = 0, large_count = 0;
  for (int i = 0; i < n; ++i) {
    plain.submit([&](sycl::handler &h) {  // @node small_plain
      h.set_args(xs, kRounds);
      h.parallel_for(sycl::range<1>(kSmall), small);
    });
    ++small_count;
    plain.submit([&](sycl::handler &h) {  // @node large_plain
      h.set_args(xl, kRounds);
      h.parallel_for(sycl::range<1>(kLarge), large);
    });
    ++large_count;
  }
  // The application's own view of a queue made without enable_profiling
  // must stay what SYCL specifies (an exception), even when a tool turned
  // device profiling on underneath.
  sycl::event plain_ev = plain.submit([&](sycl::handler &h) {  // @node probe_plain
    h.set_args(xs, kRounds);
    h.parallel_for(sycl::range<1>(kSmall), small);
  });
  plain.wait();
  bool threw = false;
  try {
    (void)plain_ev.get_profiling_info<sycl::info::event_profiling::command_start>();
  } catch (const sycl::exception &) {
    threw = true;
  }
  std::printf("plain queue profiling info throws %d\n", threw ? 1 : 0);
  std::printf("noprofiling small %d\n", small_count);
  std::printf("noprofiling large %d\n", large_count);

  // v converges to 2 (small) / 4 (large) after 256 rounds of v*0.5+c.
  float s0 = 0, l0 = 0;
  plain.memcpy(&s0, xs, sizeof(float));
  plain.memcpy(&l0, xl, sizeof(float));
  plain.wait();
  std::printf("values %.1f %.1f\n", s0, l0);
  sycl::free(xs, prof);
  sycl::free(xl, prof);
  std::printf("done\n");
  return 0;
}
