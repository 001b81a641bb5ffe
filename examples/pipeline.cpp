// pipeline: the bundled syclgraph demo.
// A profiling out-of-order queue runs, three times in a loop, the chain
//   saxpy    OpenCL kernel; x: read, y: read_write
//   scale    OpenCL kernel; y: read, z: write
//   consume  host_task; z: read; fills a USM host staging array
//   upload   USM memcpy staging -> device array, depends_on(consume's event)
// then queue.wait(). Dependencies between the kernels and the host task come
// from buffer accessors; the memcpy's from depends_on. Each command is
// submitted from a function of the same name (its source line is tagged
// "@node <name>"), so interop kernels report kernel_name "saxpy" / "scale".
// Output (deterministic except the durations):
//   iteration <i> host_sum <value>
//   profiling <saxpy|scale|upload> <iteration> <duration_ns>
//   checksum <value>
// Build: scripts/build-programs.sh   Run: build/programs/pipeline
#include <sycl/sycl.hpp>
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static const char *kKernels = R"CL(
__kernel void saxpy(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
__kernel void scale(__global float *z, __global const float *y, float s) {
  size_t i = get_global_id(0);
  z[i] = y[i] * s;
}
)CL";

constexpr size_t N = 4096;
constexpr int kIterations = 3;

static void check(cl_int err, const char *what) {
  if (err != CL_SUCCESS) {
    std::fprintf(stderr, "OpenCL error %d in %s\n", err, what);
    std::exit(2);
  }
}

// There is no SYCL device compiler here: build the kernels with the OpenCL
// runtime on the queue's own context and hand them to SYCL through interop.
static sycl::kernel make_cl_kernel(const sycl::queue &q, const char *name) {
  sycl::context ctx = q.get_context();
  cl_context cl_ctx = sycl::get_native<sycl::backend::opencl>(ctx);
  cl_device_id cl_dev = sycl::get_native<sycl::backend::opencl>(q.get_device());
  cl_int err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithSource(cl_ctx, 1, &kKernels, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(prog, 1, &cl_dev, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel k = clCreateKernel(prog, name, &err);
  check(err, "clCreateKernel");
  sycl::kernel kernel = sycl::make_kernel<sycl::backend::opencl>(k, ctx);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseContext(cl_ctx);
  return kernel;
}

static unsigned long long duration_ns(const sycl::event &e) {
  return e.get_profiling_info<sycl::info::event_profiling::command_end>() -
         e.get_profiling_info<sycl::info::event_profiling::command_start>();
}

// Each command is submitted from its own function: for interop kernels the
// runtime reports the submitting function's name as kernel_name ("saxpy",
// "scale"), and the source line of the submit call identifies the node.
static sycl::event saxpy(sycl::queue &q, sycl::kernel &k, sycl::buffer<float, 1> &bx,
                         sycl::buffer<float, 1> &by, float a) {
  return q.submit([&](sycl::handler &h) {  // @node saxpy
    sycl::accessor x{bx, h, sycl::read_only};
    sycl::accessor y{by, h, sycl::read_write};
    h.set_args(y, x, a);
    h.parallel_for(sycl::range<1>(N), k);
  });
}

static sycl::event scale(sycl::queue &q, sycl::kernel &k, sycl::buffer<float, 1> &by,
                         sycl::buffer<float, 1> &bz, float s) {
  return q.submit([&](sycl::handler &h) {  // @node scale
    sycl::accessor y{by, h, sycl::read_only};
    sycl::accessor z{bz, h, sycl::write_only};
    h.set_args(z, y, s);
    h.parallel_for(sycl::range<1>(N), k);
  });
}

// Host task: copies z into the USM host staging array and sums it.
static sycl::event consume(sycl::queue &q, sycl::buffer<float, 1> &bz, float *staging,
                           double *sum) {
  return q.submit([&](sycl::handler &h) {  // @node consume
    sycl::accessor z{bz, h, sycl::read_only};
    h.host_task([=] {
      for (size_t i = 0; i < N; ++i) {
        staging[i] = z[i];
        *sum += z[i];
      }
    });
  });
}

static sycl::event upload(sycl::queue &q, float *dst, const float *src, sycl::event after) {
  return q.memcpy(dst, src, N * sizeof(float), after);  // @node upload
}

int main() {
  sycl::queue q{sycl::cpu_selector_v, sycl::property::queue::enable_profiling()};
  sycl::kernel saxpy_kernel = make_cl_kernel(q, "saxpy");
  sycl::kernel scale_kernel = make_cl_kernel(q, "scale");

  std::vector<float> hx(N), hy(N);
  for (size_t i = 0; i < N; ++i) {
    hx[i] = float(i % 16);
    hy[i] = 1.0f;
  }
  float *staging = sycl::malloc_host<float>(N, q);
  float *device_copy = sycl::malloc_device<float>(N, q);
  std::vector<float> result(N);
  double host_sums[kIterations] = {};

  {
    sycl::buffer<float, 1> bx(hx.data(), sycl::range<1>(N));
    sycl::buffer<float, 1> by(hy.data(), sycl::range<1>(N));
    sycl::buffer<float, 1> bz{sycl::range<1>(N)};
    std::vector<sycl::event> saxpy_ev, scale_ev, copy_ev;

    for (int it = 0; it < kIterations; ++it) {
      sycl::event e_saxpy = saxpy(q, saxpy_kernel, bx, by, 2.0f);
      sycl::event e_scale = scale(q, scale_kernel, by, bz, 0.5f);
      sycl::event e_host = consume(q, bz, staging, &host_sums[it]);
      sycl::event e_copy = upload(q, device_copy, staging, e_host);
      saxpy_ev.push_back(e_saxpy);
      scale_ev.push_back(e_scale);
      copy_ev.push_back(e_copy);
      q.wait();  // @wait iteration
    }

    for (int it = 0; it < kIterations; ++it) {
      std::printf("iteration %d host_sum %.1f\n", it, host_sums[it]);
      std::printf("profiling saxpy %d %llu\n", it, duration_ns(saxpy_ev[it]));
      std::printf("profiling scale %d %llu\n", it, duration_ns(scale_ev[it]));
      std::printf("profiling upload %d %llu\n", it, duration_ns(copy_ev[it]));
    }
  }  // buffers write back to hy here

  q.memcpy(result.data(), device_copy, N * sizeof(float)).wait();  // @node download
  double checksum = 0;
  for (size_t i = 0; i < N; ++i) checksum += result[i] * double(i % 5 + 1) + hy[i];
  std::printf("checksum %.1f\n", checksum);

  sycl::free(staging, q);
  sycl::free(device_copy, q);
  return 0;
}
