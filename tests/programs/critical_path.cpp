// critical_path: programs whose critical path is known by construction.
// Device kernels are busy loops from OpenCL C (rounds per item = length).
// argv[1] picks the scenario:
//  chains     out-of-order queue: a long chain (4 kernels of 16x the work)
//             on buffer a and a short chain (2 short kernels) on buffer b run
//             side by side; a host task reads both; a last kernel on b runs
//             after it. The path: the long chain, the host task, the last
//             kernel; no short-chain kernel.
//  host_sleep in-order queue: a kernel, 150 ms of host sleep, a kernel that
//             depends on the first through a buffer: a `host` gap before the
//             second of at least 150 ms less the first's submit-to-end time
//             (which reached 42 ms under load).
//  host_task  out-of-order queue: a kernel, a host task after it that sleeps
//             30 ms, a kernel after the host task: the device sits idle
//             >= 30 ms waiting on the host task.
//  contended  out-of-order queue on a device that runs one kernel at a time:
//             chain A (A1, then 150 ms of host sleep, A2, A3: kernels of 4x
//             the short work, a few ms each, far less than the sleep) on
//             buffer a, chain B (B1 -> B2, short) on buffer b, a host task
//             needing A3 and B2, a USM memcpy after it. B1 or A1 runs first;
//             whichever of A1/B2 waits for the device waits for the other.
//  two_queues two in-order queues of one device, three kernels each on
//             their own buffer, submitted alternately: each queue's next
//             kernel waits behind the other queue's.
//  host_loop  in-order queue: five rounds of a short kernel, q.wait() and
//             20 ms of host sleep: the path is host-bound, every gap `host`.
// Every command line carries an "@node <label>" tag.
#include "common.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

constexpr size_t N = 4096;
constexpr int kShort = 2000;
constexpr int kLong = 32000;
constexpr int kMedium = 8000;

static sycl::event spin(sycl::queue &q, sycl::kernel &k, sycl::buffer<float, 1> &b, int rounds,
                        int which) {
  // One source line per role, so each role is its own node.
  auto body = [&](sycl::handler &h) {
    sycl::accessor acc{b, h, sycl::read_write};
    h.set_args(acc, rounds);
    h.parallel_for(sycl::range<1>(N), k);
  };
  switch (which) {
    case 0: return q.submit(body);  // @node long_link
    case 1: return q.submit(body);  // @node short_link
    case 2: return q.submit(body);  // @node after_join
    case 3: return q.submit(body);  // @node first
    case 5: return q.submit(body);  // @node chain_a
    case 6: return q.submit(body);  // @node chain_b
    case 7: return q.submit(body);  // @node queue_one
    case 8: return q.submit(body);  // @node queue_two
    case 9: return q.submit(body);  // @node loop_kernel
    default: return q.submit(body);  // @node second
  }
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "chains";
  bool in_order = std::strcmp(mode, "host_sleep") == 0 || std::strcmp(mode, "host_loop") == 0;
  sycl::queue q = in_order ? sycl::queue{sycl::cpu_selector_v, progs::profiling_in_order()}
                           : sycl::queue{sycl::cpu_selector_v,
                                         sycl::property::queue::enable_profiling()};
  auto ks = progs::build_cl_kernels(q, progs::kSpinSource, {"spin"});
  sycl::kernel k = ks.at("spin");
  sycl::buffer<float, 1> a{sycl::range<1>(N)};
  sycl::buffer<float, 1> b{sycl::range<1>(N)};
  {
    sycl::host_accessor ha{a, sycl::write_only};
    sycl::host_accessor hb{b, sycl::write_only};
    for (size_t i = 0; i < N; ++i) ha[i] = hb[i] = 1.0f;
  }

  if (std::strcmp(mode, "chains") == 0) {
    for (int i = 0; i < 4; ++i) {
      spin(q, k, a, kLong, 0);
      if (i < 2) spin(q, k, b, kShort, 1);
    }
    q.submit([&](sycl::handler &h) {  // @node join
      sycl::accessor ra{a, h, sycl::read_only};
      sycl::accessor rb{b, h, sycl::read_write};
      h.host_task([=] { rb[0] = rb[0] + ra[0] * 0.0f; });
    });
    spin(q, k, b, kShort, 2);
  } else if (std::strcmp(mode, "host_sleep") == 0) {
    spin(q, k, a, kShort, 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    spin(q, k, a, kShort, 4);
  } else if (std::strcmp(mode, "host_task") == 0) {
    spin(q, k, a, kShort, 3);
    q.submit([&](sycl::handler &h) {  // @node slow_host_task
      sycl::accessor acc{a, h, sycl::read_write};
      h.host_task([=] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        acc[0] = acc[0] + 1.0f;
      });
    });
    spin(q, k, a, kShort, 4);
  } else if (std::strcmp(mode, "contended") == 0) {
    float *src = sycl::malloc_device<float>(N, q);
    float *dst = sycl::malloc_device<float>(N, q);
    spin(q, k, a, kMedium, 5);  // A1
    spin(q, k, b, kShort, 6);   // B1
    spin(q, k, b, kShort, 6);   // B2
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    spin(q, k, a, kMedium, 5);  // A2
    spin(q, k, a, kMedium, 5);  // A3
    sycl::event ht = q.submit([&](sycl::handler &h) {  // @node join_ab
      sycl::accessor ra{a, h, sycl::read_write};
      sycl::accessor rb{b, h, sycl::read_write};
      h.host_task([=] { rb[0] = rb[0] + ra[0] * 0.0f; });
    });
    q.submit([&](sycl::handler &h) {  // @node final_copy
      h.depends_on(ht);
      h.memcpy(dst, src, N * sizeof(float));
    });
    q.wait();
    sycl::free(src, q);
    sycl::free(dst, q);
  } else if (std::strcmp(mode, "two_queues") == 0) {
    sycl::queue q2{q.get_context(), q.get_device(), progs::profiling_in_order()};
    sycl::queue q1{q.get_context(), q.get_device(), progs::profiling_in_order()};
    for (int i = 0; i < 3; ++i) {
      spin(q1, k, a, kMedium, 7);
      spin(q2, k, b, kShort, 8);
    }
    q1.wait();
    q2.wait();
  } else if (std::strcmp(mode, "host_loop") == 0) {
    for (int i = 0; i < 5; ++i) {
      spin(q, k, a, kShort, 9);
      q.wait();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } else {
    std::fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  q.wait();
  sycl::host_accessor ra{a, sycl::read_only};
  sycl::host_accessor rb{b, sycl::read_only};
  std::printf("%s done %.1f %.1f\n", mode, ra[1], rb[1]);
  return 0;
}
