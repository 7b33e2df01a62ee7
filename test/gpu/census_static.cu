// census_static: a CUDA program linked with the static cudart (nvcc -O2 -cudart static), the route
// where the runtime finds the driver by one dlsym("cuGetProcAddress_v2") and takes every other
// entry point from cuGetProcAddress. It makes each kind of submission at least once, with known
// counts, and checks the results so a broken route shows as a wrong answer, not only a count:
//   kernels (<<<>>>), cudaMemcpy H2D/D2H/D2D, cudaMemset, cudaMemsetAsync, cudaMemcpyAsync on a
//   stream, cudaMemcpy2D, cudaLaunchHostFunc, a small CUDA graph captured from a stream and
//   launched several times, and a managed-memory prefetch (1 MiB only: never oversubscribe UM).
// Build twice by census.sh: as is, and with --default-stream per-thread (the _ptsz/_ptds entry
// points). Exit 0 and "census_static ok ..." on success, 1 with a message on any failure.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "census_static: %s failed at line %d: %s\n", #call, __LINE__,     \
                   cudaGetErrorString(err_));                                                  \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

__global__ void AddOne(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void Scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

static void CUDART_CB HostTick(void* arg) { ++*static_cast<int*>(arg); }

int main(int argc, char** argv) {
  const int n = 1 << 20;
  const int kernels = argc > 1 ? std::atoi(argv[1]) : 100;   // plain kernel launches
  const int graph_launches = 10;
  const size_t bytes = n * sizeof(float);
  const int threads = 256, blocks = (n + threads - 1) / threads;

  std::vector<float> host(n, 1.0f);
  float *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Synchronous copies and memset on the default stream.
  CHECK(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(b, 0, bytes));
  for (int i = 0; i < kernels; ++i) AddOne<<<blocks, threads>>>(a, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaDeviceSynchronize());

  // Async work on a stream: memset, copy, a host function.
  int ticks = 0;
  CHECK(cudaMemsetAsync(a, 0, bytes, stream));
  CHECK(cudaMemcpyAsync(a, b, bytes, cudaMemcpyDeviceToDevice, stream));
  CHECK(cudaLaunchHostFunc(stream, HostTick, &ticks));
  CHECK(cudaStreamSynchronize(stream));

  // A 2D copy (pitched) of the first 16 rows of 1024 floats.
  CHECK(cudaMemcpy2D(b, 1024 * sizeof(float), a, 1024 * sizeof(float), 1024 * sizeof(float), 16,
                     cudaMemcpyDeviceToDevice));

  // A graph captured from the stream: two kernels and a host function, launched several times.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  AddOne<<<blocks, threads, 0, stream>>>(a, n);
  Scale<<<blocks, threads, 0, stream>>>(a, 0.5f, n);
  CHECK(cudaLaunchHostFunc(stream, HostTick, &ticks));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphUpload(exec, stream));
  for (int i = 0; i < graph_launches; ++i) CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));

  // Managed memory, prefetched to the GPU and back (1 MiB).
  float* m = nullptr;
  CHECK(cudaMallocManaged(&m, bytes / 4));
  for (int i = 0; i < n / 4; ++i) m[i] = 2.0f;
  int dev = 0;
  CHECK(cudaGetDevice(&dev));
  cudaMemLocation to_gpu{};
  to_gpu.type = cudaMemLocationTypeDevice;
  to_gpu.id = dev;
  CHECK(cudaMemPrefetchAsync(m, bytes / 4, to_gpu, 0, stream));
  AddOne<<<(n / 4 + threads - 1) / threads, threads, 0, stream>>>(m, n / 4);
  cudaMemLocation to_host{};
  to_host.type = cudaMemLocationTypeHost;
  CHECK(cudaMemPrefetchAsync(m, bytes / 4, to_host, 0, stream));
  CHECK(cudaStreamSynchronize(stream));

  CHECK(cudaMemcpy(host.data(), a, bytes, cudaMemcpyDeviceToHost));

  // a: 1 + kernels, then each graph launch maps v -> (v + 1) / 2.
  double expect = 1.0 + kernels;
  for (int i = 0; i < graph_launches; ++i) expect = (expect + 1.0) * 0.5;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    if (std::abs(host[i] - static_cast<float>(expect)) > 1e-4f * static_cast<float>(expect)) ++bad;
  }
  int bad_managed = 0;
  for (int i = 0; i < n / 4; ++i) bad_managed += m[i] != 3.0f;
  const int want_ticks = 1 + graph_launches;

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(m));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaStreamDestroy(stream));

  if (bad != 0 || bad_managed != 0 || ticks != want_ticks) {
    std::fprintf(stderr, "census_static: wrong results: %d bad, %d bad managed, %d/%d host ticks\n", bad,
                 bad_managed, ticks, want_ticks);
    return 1;
  }
  std::printf("census_static ok kernels=%d graph_launches=%d value=%.6f ticks=%d\n", kernels,
              graph_launches, expect, ticks);
  return 0;
}
