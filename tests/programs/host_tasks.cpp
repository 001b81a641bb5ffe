// host_tasks: host tasks that take buffer accessors (read, write, read_write)
// and depend on kernels and on each other through those buffers or through
// depends_on, and every flavour of wait: event.wait(), event.wait_and_throw(),
// sycl::event::wait(list), queue.wait() and queue.wait_and_throw(). Uses an
// out-of-order profiling queue; kernels get "profiling <label> 0 <ns>" lines
// (host tasks are not device commands and get none). Every command line carries
// an "@node <label>" tag, every wait an "@wait <label>" tag.
#include "common.hpp"

#include <cstdio>
#include <vector>

static const char *kSource = R"CL(
__kernel void iota(__global float *a) {
  size_t i = get_global_id(0);
  a[i] = (float)i;
}
__kernel void scale(__global float *x, float s) {
  size_t i = get_global_id(0);
  x[i] = x[i] * s;
}
)CL";

constexpr size_t N = 256;

int main() {
  sycl::queue q{sycl::cpu_selector_v, sycl::property::queue::enable_profiling()};
  auto k = progs::build_cl_kernels(q, kSource, {"iota", "scale"});

  sycl::buffer<float, 1> data{sycl::range<1>(N)};
  sycl::buffer<double, 1> result{sycl::range<1>(4)};

  sycl::event e_iota = q.submit([&](sycl::handler &h) {  // @node ht_iota
    sycl::accessor acc{data, h, sycl::write_only, sycl::no_init};
    h.set_args(acc);
    h.parallel_for(sycl::range<1>(N), k.at("iota"));
  });

  // host task reading the kernel's output, writing another buffer
  sycl::event e_sum = q.submit([&](sycl::handler &h) {  // @node ht_sum
    sycl::accessor in{data, h, sycl::read_only};
    sycl::accessor out{result, h, sycl::write_only, sycl::no_init};
    h.host_task([=] {
      double s = 0;
      for (size_t i = 0; i < N; ++i) s += in[i];
      out[0] = s;
      out[1] = out[2] = out[3] = 0;
    });
  });
  e_sum.wait();  // @wait ht_event_wait

  // host task modifying the data in place (read_write), then a kernel after it
  sycl::event e_negate = q.submit([&](sycl::handler &h) {  // @node ht_negate
    sycl::accessor acc{data, h, sycl::read_write};
    h.host_task([=] {
      for (size_t i = 0; i < N; ++i) acc[i] = -acc[i];
    });
  });
  sycl::event e_scale = q.submit([&](sycl::handler &h) {  // @node ht_scale
    sycl::accessor acc{data, h, sycl::read_write};
    h.set_args(acc, 2.0f);
    h.parallel_for(sycl::range<1>(N), k.at("scale"));
  });
  e_scale.wait_and_throw();  // @wait ht_event_wait_and_throw

  // two host tasks chained only by depends_on (no shared buffer)
  int stage = 0;
  sycl::event e_first = q.submit([&](sycl::handler &h) {  // @node ht_first
    h.host_task([&stage] { stage = stage * 10 + 1; });
  });
  sycl::event e_second = q.submit([&](sycl::handler &h) {  // @node ht_second
    h.depends_on(e_first);
    h.host_task([&stage] { stage = stage * 10 + 2; });
  });
  sycl::event::wait({e_first, e_second});  // @wait ht_event_list_wait

  // host task reading the scaled data, accumulating into result[1]
  q.submit([&](sycl::handler &h) {  // @node ht_sum_scaled
    sycl::accessor in{data, h, sycl::read_only};
    sycl::accessor out{result, h, sycl::read_write};
    h.host_task([=] {
      double s = 0;
      for (size_t i = 0; i < N; ++i) s += in[i];
      out[1] = s;
    });
  });
  q.wait();  // @wait ht_queue_wait

  // a host task that depends on a kernel event and a host-task event at once
  sycl::event e_late = q.submit([&](sycl::handler &h) {  // @node ht_join
    h.depends_on({e_scale, e_second});
    sycl::accessor out{result, h, sycl::read_write};
    h.host_task([=, &stage] { out[2] = stage; });
  });
  (void)e_late;
  q.wait_and_throw();  // @wait ht_queue_wait_and_throw

  sycl::host_accessor r{result, sycl::read_only};  // @node ht_host_accessor
  std::printf("sum %.1f\n", r[0]);
  std::printf("sum scaled %.1f\n", r[1]);
  std::printf("stage %.0f\n", r[2]);
  progs::print_profiling("ht_iota", 0, e_iota);
  progs::print_profiling("ht_scale", 0, e_scale);
  std::printf("done\n");
  return 0;
}
