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

// Records pair[0], launches, records pair[1], all on `stream`.
extern "C" int gpu_spin_timed(void *stream, float *x, int n, int rounds, void **pair) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaEvent_t a, b;
  if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return 1;
  cudaEventRecord(a, s);
  spin_kernel<<<(n + 255) / 256, 256, 0, s>>>(x, n, rounds);
  cudaEventRecord(b, s);
  pair[0] = a;
  pair[1] = b;
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
