// spin.cu: a CUDA kernel whose length the caller chooses, launched on a
// stream SYCL's CUDA backend gives a native command, with a cudaEvent pair
// around it (the oracle for the native command's own event).
#include <cuda_runtime.h>

__global__ void spin_kernel(float *x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.999f + 1.0f;
  x[i] = v;
}

// Creates `count` pairs of events and runs the kernel once, on `stream`
// (called inside a native command: the queue's context), so that the timed
// launches carry neither the CUDA runtime's lazy start-up nor the module's
// lazy loading: a native command's own event spans what the host does
// inside it, and its pair only what the device does.
extern "C" int gpu_spin_prepare(void *stream, float *x, int n, void **pairs, long count) {
  for (long i = 0; i < 2 * count; ++i) {
    cudaEvent_t e;
    if (cudaEventCreate(&e) != cudaSuccess) return 1;
    pairs[i] = e;
  }
  spin_kernel<<<(n + 255) / 256, 256, 0, static_cast<cudaStream_t>(stream)>>>(x, n, 1);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

// Records pair[0], launches, records pair[1], all on `stream` (the pair
// made by gpu_spin_prepare).
extern "C" int gpu_spin_timed(void *stream, float *x, int n, int rounds, void **pair) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaEventRecord(static_cast<cudaEvent_t>(pair[0]), s);
  spin_kernel<<<(n + 255) / 256, 256, 0, s>>>(x, n, rounds);
  cudaEventRecord(static_cast<cudaEvent_t>(pair[1]), s);
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

// The pair's elapsed time in ns (waits for the second event), and frees it.
extern "C" unsigned long long gpu_pair_ns(void **pair) {
  cudaEvent_t a = static_cast<cudaEvent_t>(pair[0]);
  cudaEvent_t b = static_cast<cudaEvent_t>(pair[1]);
  float ms = 0.0f;
  cudaEventSynchronize(b);
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return (unsigned long long)(ms * 1.0e6);
}
