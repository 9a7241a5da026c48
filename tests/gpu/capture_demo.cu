// A small CUDA program for `sightline capture`: 3 kernels on stream A, 2 on stream B after an
// event wait on A, copies both ways, NVTX ranges. run_gpu_tests.sh checks the trace against it.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e = (call);                                                           \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));          \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__global__ void scale(float* x, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= k;
}

__global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

int main() {
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);
  float* dev = nullptr;
  cudaStream_t a, b;
  cudaEvent_t done_a;
  CHECK(cudaMalloc(&dev, n * sizeof(float)));
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&done_a, cudaEventDisableTiming));

  nvtxRangePushA("phase A");
  CHECK(cudaMemcpyAsync(dev, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, a));
  for (int i = 0; i < 3; ++i) scale<<<(n + 255) / 256, 256, 0, a>>>(dev, n, 2.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(done_a, a));
  nvtxRangePop();

  nvtxRangePushA("phase B");
  CHECK(cudaStreamWaitEvent(b, done_a, 0));
  for (int i = 0; i < 2; ++i) add_one<<<(n + 255) / 256, 256, 0, b>>>(dev, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(host.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost, b));
  CHECK(cudaStreamSynchronize(b));
  nvtxRangePop();

  std::printf("x[0] = %g (expected 10)\n", host[0]);
  CHECK(cudaFree(dev));
  return host[0] == 10.0f ? 0 : 1;
}
