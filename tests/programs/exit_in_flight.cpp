// exit_in_flight: main returns while the device is still busy.
//  - `g_queue`, a namespace-scope in-order profiling queue (destroyed during
//    static destruction), gets a batch of N long-ish kernels (argv[1],
//    default 6; each one loops argv[2] rounds per item, default 20000) that
//    nobody waits for; tagged exit_batch.
//  - `last_words()`, a function-local static holding its own queue, submits
//    one more kernel from its destructor, i.e. during static destruction,
//    after main returned, again without waiting; tagged exit_dtor.
// Output: "submitted <N>" then "main returns"; the exit code is 0.
#include "common.hpp"

#include <cstdio>
#include <cstdlib>

static const char *kSource = R"CL(
__kernel void spin(__global float *x, int rounds) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 0.5f;
  x[i] = v;
}
)CL";

constexpr size_t kItems = 65536;

sycl::queue g_queue{sycl::cpu_selector_v, progs::profiling_in_order()};

struct LastWords {
  sycl::queue q{g_queue.get_context(), g_queue.get_device(), progs::profiling_in_order()};
  sycl::kernel spin = progs::build_cl_kernels(q, kSource, {"spin"}).at("spin");
  float *x = sycl::malloc_device<float>(kItems, q);
  int rounds = 0;

  ~LastWords() {
    // Runs after main returned; the memory is never freed (the kernel may
    // still be running when the process ends).
    q.submit([&](sycl::handler &h) {  // @node exit_dtor
      h.set_args(x, rounds);
      h.parallel_for(sycl::range<1>(kItems), spin);
    });
  }
};

static LastWords &last_words() {
  static LastWords words;
  return words;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 6;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 20000;
  if (n < 1) n = 1;

  auto kernels = progs::build_cl_kernels(g_queue, kSource, {"spin"});
  sycl::kernel spin = kernels.at("spin");
  float *x = sycl::malloc_device<float>(kItems, g_queue);
  g_queue.memset(x, 0, kItems * sizeof(float)).wait();

  LastWords &words = last_words();
  words.rounds = rounds;
  g_queue.memset(words.x, 0, kItems * sizeof(float)).wait();

  for (int i = 0; i < n; ++i) {
    g_queue.submit([&](sycl::handler &h) {  // @node exit_batch
      h.set_args(x, rounds);
      h.parallel_for(sycl::range<1>(kItems), spin);
    });
  }
  std::printf("submitted %d\n", n);
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}
