// features: SYCL features that programs use and no other test program
// traces, each with an independent oracle printed by the program itself.
//  - eventless submission (sycl_ext_oneapi_enqueue_functions: submit, memcpy,
//    memset, fill, nd_launch free functions) on an in-order profiling queue,
//    bracketed by host clock reads, then ext_oneapi_get_last_event;
//  - a queue with ext_oneapi_discard_events;
//  - in-order barriers (ext_oneapi_submit_barrier with and without a wait
//    list) and a profiling tag (ext_oneapi_submit_profiling_tag);
//  - USM host allocations, prefetch and mem_advise on shared memory;
//  - two contexts on one device;
//  - a host_task with an interop_handle (OpenCL work enqueued natively);
//  - an asynchronous error from a host task, caught by wait_and_throw.
// Every command line carries an "@node <label>" tag; "profiling <label> 0 <ns>"
// lines carry the program's own device durations, and "profiling
// <label>_begin|_end 0 <ns>" host CLOCK_MONOTONIC readings (steady_clock).
#include "common.hpp"

#include <sycl/ext/oneapi/experimental/enqueue_functions.hpp>
#include <sycl/ext/oneapi/experimental/profiling_tag.hpp>

#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <vector>

namespace syclex = sycl::ext::oneapi::experimental;


constexpr size_t N = 4096;

static unsigned long long now_ns() {
  return (unsigned long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

static void print_clock(const char *label) {
  std::printf("profiling %s 0 %llu\n", label, now_ns());
}

int main() {
  sycl::queue q{sycl::cpu_selector_v, progs::profiling_in_order()};
  auto k = progs::build_cl_kernels(q, progs::kSpinSource, {"spin"});
  const size_t bytes = N * sizeof(float);
  float *a = sycl::malloc_device<float>(N, q);
  float *b = sycl::malloc_device<float>(N, q);
  std::vector<float> host(N, 0.0f);

  // ---- eventless submission (enqueue functions) ----------------------------
  print_clock("eventless_begin");
  syclex::memset(q, a, 0, bytes);  // @node free_memset
  syclex::submit(q, [&](sycl::handler &h) {  // @node free_submit_iota
    h.set_args(a, 10);
    h.parallel_for(sycl::range<1>(N), k.at("spin"));
  });
  syclex::nd_launch(q, sycl::nd_range<1>(N, 64), k.at("spin"), a, 30);  // @node free_nd_launch_scale
  syclex::fill(q, b, 1.0f, N);  // @node free_fill
  syclex::memcpy(q, b, a, bytes);  // @node free_memcpy
  syclex::copy(q, b, host.data(), N);  // @node free_copy
  std::optional<sycl::event> last = q.ext_oneapi_get_last_event();
  q.wait();
  print_clock("eventless_end");
  std::printf("eventless checksum %lld\n", progs::checksum(host.data(), N));
  // On an in-order queue whose last command gave no event, the runtime
  // enqueues a marker (urEnqueueEventsWait) to make one: not a command of
  // the program's, and no node.
  std::printf("eventless last event %s\n", last ? "yes" : "no");

  // ---- a queue that discards its events ------------------------------------
  sycl::queue dq{q.get_context(), q.get_device(),
                 {sycl::property::queue::enable_profiling(), sycl::property::queue::in_order(),
                  sycl::ext::oneapi::property::queue::discard_events()}};
  print_clock("discard_begin");
  dq.memset(a, 0, bytes);  // @node discard_memset
  dq.submit([&](sycl::handler &h) {  // @node discard_iota
    h.set_args(a, 10);
    h.parallel_for(sycl::range<1>(N), k.at("spin"));
  });
  dq.memcpy(host.data(), a, bytes);  // @node discard_memcpy
  dq.wait();
  print_clock("discard_end");
  std::printf("discard checksum %lld\n", progs::checksum(host.data(), N));

  // ---- in-order barriers and a profiling tag -------------------------------
  sycl::event i_iota = q.submit([&](sycl::handler &h) {  // @node barrier_iota
    h.set_args(a, 10);
    h.parallel_for(sycl::range<1>(N), k.at("spin"));
  });
  sycl::event i_barrier = q.ext_oneapi_submit_barrier();  // @node ino_barrier
  sycl::event i_scale = q.submit([&](sycl::handler &h) {  // @node barrier_scale
    h.set_args(a, 20);
    h.parallel_for(sycl::range<1>(N), k.at("spin"));
  });
  sycl::event i_barrier_wl = q.ext_oneapi_submit_barrier({i_scale});  // @node ino_barrier_waitlist
  sycl::event tag = syclex::submit_profiling_tag(q);  // @node profiling_tag
  tag.wait();
  std::printf("tag native %s\n",
              q.get_device().has(sycl::aspect::ext_oneapi_queue_profiling_tag) ? "yes" : "no");
  progs::print_profiling("barrier_iota", 0, i_iota);
  progs::print_profiling("barrier_scale", 0, i_scale);
  std::printf("profiling tag_end 0 %llu\n",
              (unsigned long long)
                  tag.get_profiling_info<sycl::info::event_profiling::command_end>());
  (void)i_barrier;
  (void)i_barrier_wl;

  // ---- USM host memory, prefetch, mem_advise -------------------------------
  float *h = sycl::malloc_host<float>(N, q);
  float *s = sycl::malloc_shared<float>(N, q);
  for (size_t i = 0; i < N; ++i) h[i] = float(i % 13);
  sycl::event u_to_dev = q.memcpy(a, h, bytes);  // @node host_to_device
  sycl::event u_prefetch = q.prefetch(s, bytes);  // @node prefetch_shared
  sycl::event u_advise = q.mem_advise(s, bytes, 0);  // @node advise_shared
  sycl::event u_to_shared = q.memcpy(s, a, bytes);  // @node device_to_shared
  q.wait();
  std::printf("usm host checksum %lld\n", progs::checksum(s, N));
  progs::print_profiling("host_to_device", 0, u_to_dev);
  progs::print_profiling("device_to_shared", 0, u_to_shared);
  (void)u_prefetch;
  (void)u_advise;

  // ---- a second context on the same device ---------------------------------
  sycl::context ctx2{q.get_device()};
  sycl::queue q2{ctx2, q.get_device(), progs::profiling_in_order()};
  float *c2 = sycl::malloc_device<float>(N, q2);
  sycl::event c_fill = q2.fill(c2, 7.0f, N);  // @node ctx2_fill
  sycl::event c_back = q2.memcpy(host.data(), c2, bytes);  // @node ctx2_memcpy
  c_back.wait();
  std::printf("ctx2 checksum %lld\n", progs::checksum(host.data(), N));
  progs::print_profiling("ctx2_fill", 0, c_fill);
  progs::print_profiling("ctx2_memcpy", 0, c_back);
  sycl::free(c2, q2);

  // ---- host_task with an interop_handle ------------------------------------
  int native_ok = 0;
  sycl::event interop = q.submit([&](sycl::handler &cgh) {  // @node interop_host_task
    cgh.host_task([=, &native_ok](sycl::interop_handle ih) {
      cl_command_queue cq = ih.get_native_queue<sycl::backend::opencl>();
      float pattern = 3.0f;
      cl_int err = clEnqueueSVMMemFill(cq, a, &pattern, sizeof(float), bytes, 0, nullptr, nullptr);
      if (err == CL_SUCCESS) err = clFinish(cq);
      native_ok = err == CL_SUCCESS ? 1 : 2;
    });
  });
  interop.wait();
  q.memcpy(host.data(), a, bytes).wait();  // @node interop_check
  std::printf("interop host task %d checksum %lld\n", native_ok,
              progs::checksum(host.data(), N));

  // ---- an asynchronous error, delivered by wait_and_throw ------------------
  int async_errors = 0;
  sycl::queue eq{q.get_context(), q.get_device(),
                 [&](sycl::exception_list list) {
                   for (auto &e : list) {
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception &) {
                       ++async_errors;
                     }
                   }
                 },
                 progs::profiling_in_order()};
  eq.submit([&](sycl::handler &cgh) {  // @node throwing_host_task
    cgh.host_task([] { throw std::runtime_error("host task failed on purpose"); });
  });
  eq.memset(b, 0, bytes);  // @node after_throw_memset
  eq.wait_and_throw();  // @wait after_throw
  std::printf("async errors %d\n", async_errors);

  sycl::free(h, q);
  sycl::free(s, q);
  sycl::free(a, q);
  sycl::free(b, q);
  std::printf("done\n");
  return 0;
}
