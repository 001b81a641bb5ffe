// native_kernels.cu: the CUDA side of native_commands.cpp (built with nvcc,
// linked with -lcudart_static -lcuda). A busy kernel whose length the
// caller picks, launched on the CUstream a SYCL native command hands over.
#include <cuda_runtime.h>

__global__ void native_busy(float *x, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int r = 0; r < rounds; ++r) v = v * 0.9999f + 0.5f;
  x[i] = v;
}

// Launches the busy kernel on `stream`; with `pair` (two slots) it also
// records a cudaEvent before and after it, for the caller's own timing.
extern "C" int native_busy_launch(void *stream, float *x, int n, int rounds, void **pair) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  cudaEvent_t before = nullptr, after = nullptr;
  if (pair) {
    if (cudaEventCreate(&before) != cudaSuccess || cudaEventCreate(&after) != cudaSuccess) return 1;
    cudaEventRecord(before, s);
  }
  native_busy<<<(n + 255) / 256, 256, 0, s>>>(x, n, rounds);
  if (pair) {
    cudaEventRecord(after, s);
    pair[0] = before;
    pair[1] = after;
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

// The ns between a pair's two events (waits for the second), then frees them.
extern "C" unsigned long long native_pair_ns(void **pair) {
  float ms = 0.0f;
  cudaEventSynchronize(static_cast<cudaEvent_t>(pair[1]));
  cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(pair[0]), static_cast<cudaEvent_t>(pair[1]));
  cudaEventDestroy(static_cast<cudaEvent_t>(pair[0]));
  cudaEventDestroy(static_cast<cudaEvent_t>(pair[1]));
  return (unsigned long long)(ms * 1.0e6);
}
