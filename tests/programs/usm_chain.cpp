// usm_chain: USM only (no buffers, no accessors). malloc_device / malloc_shared,
// memset / fill / memcpy, OpenCL-interop kernels whose only dependencies are
// depends_on(events), and a host_task with depends_on -- first on an
// out-of-order profiling queue, then on an in-order profiling queue, then a
// cross-queue dependency and an out-of-order barrier. Every command line
// carries an "@node <label>" tag.
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

static const char *kSource = R"CL(
__kernel void iota(__global float *a) {
  size_t i = get_global_id(0);
  a[i] = (float)i;
}
__kernel void axpy(__global float *y, __global const float *x, float alpha) {
  size_t i = get_global_id(0);
  y[i] = alpha * x[i] + y[i];
}
__kernel void scale(__global float *x, float s) {
  size_t i = get_global_id(0);
  x[i] = x[i] * s;
}
)CL";

constexpr size_t N = 1024;

int main(int argc, char **argv) {
  sycl::queue ooo{sycl::cpu_selector_v, sycl::property::queue::enable_profiling()};
  sycl::queue ino{ooo.get_context(), ooo.get_device(), progs::profiling_in_order()};
  auto k = progs::build_cl_kernels(ooo, kSource, {"iota", "axpy", "scale"});
  // `--settle-ms N`: pause before the work, as a longer start-up would
  // (lets a tracer finish setting itself up first).
  if (argc > 2 && std::string(argv[1]) == "--settle-ms")
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[2])));
  const size_t bytes = N * sizeof(float);

  float *a = sycl::malloc_device<float>(N, ooo);
  float *b = sycl::malloc_device<float>(N, ooo);
  float *s = sycl::malloc_shared<float>(N, ooo);
  std::vector<float> host(N, 0.0f);
  double host_sum = 0;

  // ---- out-of-order queue: every dependency is an explicit event ----------
  sycl::event e_memset = ooo.memset(a, 0, bytes);  // @node ooo_memset
  sycl::event e_fill = ooo.fill(b, 1.0f, N);  // @node ooo_fill
  sycl::event e_iota = ooo.submit([&](sycl::handler &h) {  // @node ooo_iota
    h.depends_on(e_memset);
    h.set_args(a);
    h.parallel_for(sycl::range<1>(N), k.at("iota"));
  });
  sycl::event e_axpy = ooo.submit([&](sycl::handler &h) {  // @node ooo_axpy
    h.depends_on({e_fill, e_iota});
    h.set_args(b, a, 2.0f);
    h.parallel_for(sycl::range<1>(N), k.at("axpy"));
  });
  sycl::event e_copy = ooo.memcpy(s, b, bytes, e_axpy);  // @node ooo_memcpy
  sycl::event e_host = ooo.submit([&](sycl::handler &h) {  // @node ooo_host_task
    h.depends_on(e_copy);
    h.host_task([=, &host_sum] {
      // Long enough that the memcpy below is submitted while this task is
      // pending, so the runtime always routes it through the scheduler.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (size_t i = 0; i < N; ++i) host_sum += s[i];
    });
  });
  sycl::event e_back = ooo.memcpy(host.data(), s, bytes, e_host);  // @node ooo_memcpy_back
  e_back.wait();

  std::printf("ooo host_task sum %.1f\n", host_sum);
  std::printf("ooo checksum %lld\n", progs::checksum(host.data(), N));
  progs::print_profiling("ooo_memset", 0, e_memset);
  progs::print_profiling("ooo_fill", 0, e_fill);
  progs::print_profiling("ooo_iota", 0, e_iota);
  progs::print_profiling("ooo_axpy", 0, e_axpy);
  progs::print_profiling("ooo_memcpy", 0, e_copy);
  progs::print_profiling("ooo_memcpy_back", 0, e_back);

  // ---- in-order queue: the queue orders everything; no depends_on ---------
  sycl::event i_memset = ino.memset(a, 0, bytes);  // @node ino_memset
  sycl::event i_iota = ino.submit([&](sycl::handler &h) {  // @node ino_iota
    h.set_args(a);
    h.parallel_for(sycl::range<1>(N), k.at("iota"));
  });
  sycl::event i_scale = ino.submit([&](sycl::handler &h) {  // @node ino_scale
    h.set_args(a, 0.5f);
    h.parallel_for(sycl::range<1>(N), k.at("scale"));
  });
  sycl::event i_copy = ino.memcpy(s, a, bytes);  // @node ino_memcpy
  double ino_sum = 0;
  sycl::event i_host = ino.submit([&](sycl::handler &h) {  // @node ino_host_task
    h.host_task([=, &ino_sum] {
      for (size_t i = 0; i < N; ++i) ino_sum += s[i];
    });
  });
  ino.wait();
  std::printf("ino host_task sum %.1f\n", ino_sum);
  progs::print_profiling("ino_memset", 0, i_memset);
  progs::print_profiling("ino_iota", 0, i_iota);
  progs::print_profiling("ino_scale", 0, i_scale);
  progs::print_profiling("ino_memcpy", 0, i_copy);

  // ---- cross-queue: in-order command waiting on an out-of-order event ------
  sycl::event x_fill = ooo.fill(b, 3.0f, N);  // @node x_fill_ooo
  sycl::event x_axpy = ino.submit([&](sycl::handler &h) {  // @node x_axpy_ino
    h.depends_on(x_fill);
    h.set_args(a, b, 1.0f);
    h.parallel_for(sycl::range<1>(N), k.at("axpy"));
  });
  sycl::event x_copy = ino.memcpy(host.data(), a, bytes);  // @node x_memcpy_ino
  x_copy.wait();
  sycl::event x_refill = ooo.fill(b, 4.0f, N);  // @node x_refill_ooo
  sycl::event x_barrier = ooo.ext_oneapi_submit_barrier();  // @node x_barrier_ooo
  sycl::event x_barrier_wl = ooo.ext_oneapi_submit_barrier({x_refill});  // @node x_barrier_waitlist_ooo
  x_barrier_wl.wait();
  x_barrier.wait();
  std::printf("cross checksum %lld\n", progs::checksum(host.data(), N));
  progs::print_profiling("x_fill_ooo", 0, x_fill);
  progs::print_profiling("x_axpy_ino", 0, x_axpy);
  progs::print_profiling("x_memcpy_ino", 0, x_copy);
  progs::print_profiling("x_refill_ooo", 0, x_refill);
  progs::print_profiling("x_barrier_ooo", 0, x_barrier);
  progs::print_profiling("x_barrier_waitlist_ooo", 0, x_barrier_wl);

  sycl::free(a, ooo);
  sycl::free(b, ooo);
  sycl::free(s, ooo);
  std::printf("done\n");
  return 0;
}
