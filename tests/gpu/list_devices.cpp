// list_devices: one line per SYCL device the runtime gives,
//   device <gpu|cpu|accelerator|other> <backend> <name>
// scripts/gpu-check.sh runs the GPU checks only when a `device gpu` line
// is there.
#include <sycl/sycl.hpp>

#include <cstdio>

static const char *type_name(sycl::info::device_type t) {
  switch (t) {
    case sycl::info::device_type::gpu: return "gpu";
    case sycl::info::device_type::cpu: return "cpu";
    case sycl::info::device_type::accelerator: return "accelerator";
    default: return "other";
  }
}

static const char *backend_name(sycl::backend b) {
  switch (b) {
    case sycl::backend::opencl: return "opencl";
    case sycl::backend::ext_oneapi_level_zero: return "level_zero";
    case sycl::backend::ext_oneapi_cuda: return "cuda";
    case sycl::backend::ext_oneapi_hip: return "hip";
    default: return "other";
  }
}

int main() {
  try {
    for (const auto &p : sycl::platform::get_platforms()) {
      for (const auto &d : p.get_devices()) {
        std::printf("device %s %s %s\n",
                    type_name(d.get_info<sycl::info::device::device_type>()),
                    backend_name(p.get_backend()),
                    d.get_info<sycl::info::device::name>().c_str());
      }
    }
  } catch (const sycl::exception &e) {
    std::printf("error %s\n", e.what());
  }
  return 0;
}
