// CUB (the vendor library) on the same work as cubeprim, timed with CUDA events.
// Build and run on the card (benches/run_gpu.sh does): nvcc -O3 -std=c++17 -arch=sm_90 -o cub_peers cub_peers.cu && ./cub_peers
#include <cub/cub.cuh>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

template <class F> float bench(F f, int reps = 20) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < reps; i++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms); }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
__global__ void fill_f(float* p, size_t n, unsigned s) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) { unsigned x = (unsigned)i * 2654435761u ^ s; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15; p[i] = (x & 0xffffff) / 16777216.0f; } }
__global__ void fill_u(unsigned* p, size_t n, unsigned s) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) { unsigned x = (unsigned)i * 2654435761u ^ s; x ^= x >> 13; x *= 0x5bd1e995; x ^= x >> 15; p[i] = x; } }
__global__ void flags_k(const float* p, char* f, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) f[i] = p[i] > 0.5f; }
__global__ void runs_k(int* p, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = (int)(i / 16); }
__global__ void iota_k(unsigned* p, size_t n) { size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; if (i < n) p[i] = (unsigned)i; }
void row(const char* name, size_t n, float ms, double bytes) { printf("%-40s %12zu %9.4f ms %8.1f GB/s %8.2f Gelem/s\n", name, n, ms, bytes / (ms * 1e-3) / 1e9, n / (ms * 1e-3) / 1e9); }

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s, CUB %d.%d.%d\n", p.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
  const size_t N = 1u << 28; const int T = 256; unsigned G = (unsigned)((N + T - 1) / T);
  float *x, *y; unsigned *k, *k2, *v, *v2; char* fl; int *ri, *ro, *cnt, *nout; void* tmp = nullptr; size_t tb = 0, need = 0;
  CK(cudaMalloc(&x, N * 4)); CK(cudaMalloc(&y, N * 4)); CK(cudaMalloc(&k, N * 4)); CK(cudaMalloc(&k2, N * 4)); CK(cudaMalloc(&v, N * 4)); CK(cudaMalloc(&v2, N * 4));
  CK(cudaMalloc(&fl, N)); CK(cudaMalloc(&ri, N * 4)); CK(cudaMalloc(&ro, N * 4)); CK(cudaMalloc(&cnt, N * 4)); CK(cudaMalloc(&nout, 8));
  fill_f<<<G, T>>>(x, N, 1); fill_u<<<G, T>>>(k, N, 7); flags_k<<<G, T>>>(x, fl, N); runs_k<<<G, T>>>(ri, N); iota_k<<<G, T>>>(v, N);
  CK(cudaDeviceSynchronize());
  auto ensure = [&](size_t b) { if (b > tb) { if (tmp) cudaFree(tmp); CK(cudaMalloc(&tmp, b)); tb = b; } };
  row("memcpy d2d f32 (r+w)", N, bench([&] { cudaMemcpyAsync(y, x, N * 4, cudaMemcpyDeviceToDevice); }), 8.0 * N);
  for (size_t n : {size_t(1) << 20, size_t(1) << 24, N}) {
    cub::DeviceScan::InclusiveSum(nullptr, need, x, y, (int)n); ensure(need);
    row("cub InclusiveSum f32", n, bench([&] { cub::DeviceScan::InclusiveSum(tmp, need, x, y, (int)n); }), 8.0 * n);
  }
  cub::DeviceScan::ExclusiveSum(nullptr, need, x, y, (int)N); ensure(need);
  row("cub ExclusiveSum f32", N, bench([&] { cub::DeviceScan::ExclusiveSum(tmp, need, x, y, (int)N); }), 8.0 * N);
  cub::DeviceScan::InclusiveScan(nullptr, need, x, y, cuda::maximum<>{}, (int)N); ensure(need);
  row("cub InclusiveScan max f32", N, bench([&] { cub::DeviceScan::InclusiveScan(tmp, need, x, y, cuda::maximum<>{}, (int)N); }), 8.0 * N);
  cub::DeviceReduce::Sum(nullptr, need, x, y, (int)N); ensure(need);
  row("cub Reduce Sum f32", N, bench([&] { cub::DeviceReduce::Sum(tmp, need, x, y, (int)N); }), 4.0 * N);
  for (size_t n : {size_t(1) << 20, size_t(1) << 24, N}) {
    cub::DeviceRadixSort::SortKeys(nullptr, need, k, k2, (int)n); ensure(need);
    row("cub RadixSort SortKeys u32", n, bench([&] { cub::DeviceRadixSort::SortKeys(tmp, need, k, k2, (int)n); }, 10), 8.0 * n);
  }
  cub::DeviceRadixSort::SortPairs(nullptr, need, k, k2, v, v2, (int)N); ensure(need);
  row("cub RadixSort SortPairs u32/u32", N, bench([&] { cub::DeviceRadixSort::SortPairs(tmp, need, k, k2, v, v2, (int)N); }, 10), 16.0 * N);
  cub::DeviceRadixSort::SortPairs(nullptr, need, x, y, v, v2, (int)N); ensure(need);
  row("cub RadixSort SortPairs f32/u32", N, bench([&] { cub::DeviceRadixSort::SortPairs(tmp, need, x, y, v, v2, (int)N); }, 10), 16.0 * N);
  cub::DeviceSelect::Flagged(nullptr, need, x, fl, y, nout, (int)N); ensure(need);
  row("cub Select Flagged f32 50%", N, bench([&] { cub::DeviceSelect::Flagged(tmp, need, x, fl, y, nout, (int)N); }, 10), 5.0 * N + 2.0 * N);
  cub::DeviceRunLengthEncode::Encode(nullptr, need, ri, ro, cnt, nout, (int)N); ensure(need);
  row("cub RunLengthEncode i32 (runs of 16)", N, bench([&] { cub::DeviceRunLengthEncode::Encode(tmp, need, ri, ro, cnt, nout, (int)N); }, 10), 4.0 * N + 0.5 * N);
  // segmented sort: 16384 rows of 4096 f32 with u32 values
  const int R = 16384, C = 4096; std::vector<int> off(R + 1); for (int i = 0; i <= R; i++) off[i] = i * C; int* doff; CK(cudaMalloc(&doff, (R + 1) * 4)); CK(cudaMemcpy(doff, off.data(), (R + 1) * 4, cudaMemcpyHostToDevice));
  cub::DeviceSegmentedSort::SortPairs(nullptr, need, x, y, v, v2, R * C, R, doff, doff + 1); ensure(need);
  row("cub SegmentedSort SortPairs [16384,4096]", (size_t)R * C, bench([&] { cub::DeviceSegmentedSort::SortPairs(tmp, need, x, y, v, v2, R * C, R, doff, doff + 1); }, 10), 16.0 * R * C);
  cub::DeviceSegmentedRadixSort::SortPairs(nullptr, need, x, y, v, v2, R * C, R, doff, doff + 1); ensure(need);
  row("cub SegmentedRadixSort Pairs [16384,4096]", (size_t)R * C, bench([&] { cub::DeviceSegmentedRadixSort::SortPairs(tmp, need, x, y, v, v2, R * C, R, doff, doff + 1); }, 10), 16.0 * R * C);
  CK(cudaDeviceSynchronize());
  return 0;
}
