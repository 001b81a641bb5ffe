// buffers: dependencies created by buffer accessors, one command per access
// mode -- write, read, read_write, discard_write (deprecated spelling) and
// write + no_init -- on OpenCL-interop kernels, plus the scheduler's own
// memory commands: handler::fill, handler::copy (accessor->accessor,
// host->accessor, accessor->host) and handler::update_host, then a
// host_accessor. Runs on an out-of-order profiling queue; every command line
// carries an "@node <label>" tag and gets a "profiling <label> 0 <ns>" line.
#include "common.hpp"

#include <cstdio>
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
__kernel void square_into(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = in[i] * in[i];
}
)CL";

constexpr size_t N = 512;

using DiscardWriteAcc =
    sycl::accessor<float, 1, sycl::access::mode::discard_write, sycl::access::target::device>;

int main() {
  sycl::queue q{sycl::cpu_selector_v, sycl::property::queue::enable_profiling()};
  auto k = progs::build_cl_kernels(q, kSource, {"iota", "axpy", "square_into"});

  std::vector<float> host_a(N, -1.0f), host_out(N, 0.0f), host_in(N);
  for (size_t i = 0; i < N; ++i) host_in[i] = float(i % 8);
  std::vector<std::pair<const char *, sycl::event>> events;

  {
    sycl::buffer<float, 1> a(host_a.data(), sycl::range<1>(N));  // written back at scope end
    sycl::buffer<float, 1> b{sycl::range<1>(N)};
    sycl::buffer<float, 1> c{sycl::range<1>(N)};
    sycl::buffer<float, 1> d{sycl::range<1>(N)};

    // write: a = i
    events.emplace_back("write_iota", q.submit([&](sycl::handler &h) {  // @node write_iota
      sycl::accessor acc{a, h, sycl::write_only};
      h.set_args(acc);
      h.parallel_for(sycl::range<1>(N), k.at("iota"));
    }));
    // fill: b = 1
    events.emplace_back("fill_b", q.submit([&](sycl::handler &h) {  // @node fill_b
      sycl::accessor acc{b, h, sycl::write_only};
      h.fill(acc, 1.0f);
    }));
    // read + read_write: b = 3a + b
    events.emplace_back("axpy_rw", q.submit([&](sycl::handler &h) {  // @node axpy_rw
      sycl::accessor x{a, h, sycl::read_only};
      sycl::accessor y{b, h, sycl::read_write};
      h.set_args(y, x, 3.0f);
      h.parallel_for(sycl::range<1>(N), k.at("axpy"));
    }));
    // discard_write: c = b^2
    events.emplace_back("square_discard", q.submit([&](sycl::handler &h) {  // @node square_discard
      sycl::accessor in{b, h, sycl::read_only};
      DiscardWriteAcc out = c.get_access<sycl::access::mode::discard_write>(h);
      h.set_args(out, in);
      h.parallel_for(sycl::range<1>(N), k.at("square_into"));
    }));
    // write + no_init: d = a^2
    events.emplace_back("square_no_init", q.submit([&](sycl::handler &h) {  // @node square_no_init
      sycl::accessor in{a, h, sycl::read_only};
      sycl::accessor out{d, h, sycl::write_only, sycl::no_init};
      h.set_args(out, in);
      h.parallel_for(sycl::range<1>(N), k.at("square_into"));
    }));
    // copy accessor -> accessor: a = c
    events.emplace_back("copy_c_to_a", q.submit([&](sycl::handler &h) {  // @node copy_c_to_a
      sycl::accessor src{c, h, sycl::read_only};
      sycl::accessor dst{a, h, sycl::write_only};
      h.copy(src, dst);
    }));
    // copy host -> accessor: b = host_in
    events.emplace_back("copy_host_to_b", q.submit([&](sycl::handler &h) {  // @node copy_host_to_b
      sycl::accessor dst{b, h, sycl::write_only};
      h.copy(host_in.data(), dst);
    }));
    // copy accessor -> host: host_out = d
    events.emplace_back("copy_d_to_host", q.submit([&](sycl::handler &h) {  // @node copy_d_to_host
      sycl::accessor src{d, h, sycl::read_only};
      h.copy(src, host_out.data());
    }));
    // update_host: refresh a's host copy (host_a) while the buffer lives
    events.emplace_back("update_host_a", q.submit([&](sycl::handler &h) {  // @node update_host_a
      sycl::accessor acc{a, h, sycl::read_only};
      h.update_host(acc);
    }));
    q.wait();  // @wait buffers

    sycl::host_accessor hb{b, sycl::read_only};  // @node host_accessor_b
    double sum_b = 0;
    for (size_t i = 0; i < N; ++i) sum_b += hb[i];
    std::printf("sum b %.1f\n", sum_b);
  }  // buffer destructors: a is written back to host_a

  std::printf("checksum a %lld\n", progs::checksum(host_a.data(), N));
  std::printf("checksum out %lld\n", progs::checksum(host_out.data(), N));
  for (auto &[label, e] : events) progs::print_profiling(label, 0, e);
  std::printf("done\n");
  return 0;
}
