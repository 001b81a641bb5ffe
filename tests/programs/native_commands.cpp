// native_commands: SYCL native commands
// (`handler::ext_codeplay_enqueue_native_command`) and a host task taking an
// `interop_handle`, on the default device (the OpenCL CPU device, or Level
// Zero over ze-test-driver with ONEAPI_DEVICE_SELECTOR=level_zero:gpu).
// Neither adapter of the 2026.2 runtime runs native commands: the enqueue
// fails and the runtime throws, which the program catches and says.
//   native     (default) a memcpy, a native command (its lambda would call
//              nothing: it is never run here), a memcpy after it
//   host-task  a host task taking an interop_handle, between two memcpys
// Prints `native <ran|refused>` or `host_task ran`, then `done`.
#include "common.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "native";
  sycl::queue q{progs::profiling_in_order()};
  const size_t bytes = 4096;
  auto *a = sycl::malloc_device<unsigned char>(bytes, q);
  std::vector<unsigned char> host(bytes, 3);
  q.memcpy(a, host.data(), bytes).wait();  // @node before
  if (mode == "native") {
    try {
      q.submit([&](sycl::handler &h) {  // @node native
        h.ext_codeplay_enqueue_native_command([=](sycl::interop_handle) {});
      }).wait();
      std::printf("native ran\n");
    } catch (const sycl::exception &e) {
      std::printf("native refused\n");
    }
  } else if (mode == "host-task") {
    q.submit([&](sycl::handler &h) {  // @node interop_host_task
      h.host_task([=](sycl::interop_handle ih) { (void)ih.get_backend(); });
    }).wait();
    std::printf("host_task ran\n");
  } else {
    std::fprintf(stderr, "native_commands: unknown mode %s\n", mode.c_str());
    return 2;
  }
  q.memcpy(host.data(), a, bytes).wait();  // @node after
  sycl::free(a, q);
  std::printf("done\n");
  return 0;
}
