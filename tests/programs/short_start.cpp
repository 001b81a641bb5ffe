// short_start: the shortest program that starts the runtime and submits device
// commands at once, as every rank of an MPI job does: a USM memcpy, a host task
// that depends on it (about 100 ms of host work), then a memcpy that depends on
// the host task, on a default queue (made without enable_profiling). About
// 150 ms in all. Prints "short_start ok" when the data came back right.
#include <sycl/sycl.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

int main() {
  constexpr size_t N = 1 << 16;
  sycl::queue q;
  std::vector<int> in(N), out(N, 0);
  for (size_t i = 0; i < N; ++i) in[i] = static_cast<int>(i % 1000);
  int *d = sycl::malloc_device<int>(N, q);
  sycl::event up = q.memcpy(d, in.data(), N * sizeof(int));  // @node up
  sycl::event work = q.submit([&](sycl::handler &h) {  // @node host_work
    h.depends_on(up);
    h.host_task([] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
  });
  q.memcpy(out.data(), d, N * sizeof(int), work).wait();  // @node down
  sycl::free(d, q);
  for (size_t i = 0; i < N; ++i) {
    if (out[i] != in[i]) {
      std::printf("short_start mismatch at %zu\n", i);
      return 1;
    }
  }
  std::printf("short_start ok\n");
  return 0;
}
