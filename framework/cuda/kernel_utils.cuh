// Internal to the CUDA backend's .cu files: launch shapes, dtype dispatch to device types,
// float accumulation for 16-bit types, and the strided indexer that broadcasting kernels use.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "framework/core/dtype.h"
#include "framework/core/tensor.h"
#include "framework/cuda/cuda_context.h"

namespace strata::cuda {

constexpr int kThreadsPerBlock = 256;
constexpr int kMaxDims = 8;  // kernels that index by strides support up to 8 dims

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, never more than needed.
inline unsigned blocks_for(int64_t n, int threads = kThreadsPerBlock) {
  const int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : (b > 65535LL * 8 ? 65535LL * 8 : b));
}

#define STRATA_GRID_STRIDE_LOOP(i, n)                                                  \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);            \
       i += int64_t(blockDim.x) * gridDim.x)

// The device type that stores each dtype.
template <typename T> struct DeviceTypeOf { using type = T; };
template <> struct DeviceTypeOf<Half> { using type = __half; };
template <> struct DeviceTypeOf<BFloat16> { using type = __nv_bfloat16; };

// Calls fn(T{}) with the device storage type of `dtype` (__half, __nv_bfloat16, float, double,
// int32_t, int64_t, uint8_t, bool).
template <typename Fn>
decltype(auto) visit_cuda_dtype(DType dtype, Fn&& fn) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename DeviceTypeOf<decltype(tag)>::type;
    return fn(T{});
  });
}

// The type arithmetic on T happens in: float for the 16-bit types, T otherwise.
template <typename T> struct AccOf { using type = T; };
template <> struct AccOf<__half> { using type = float; };
template <> struct AccOf<__nv_bfloat16> { using type = float; };
template <typename T> using acc_t = typename AccOf<T>::type;

template <typename T>
__device__ __forceinline__ acc_t<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}

template <typename T, typename A>
__host__ __device__ __forceinline__ T from_acc(A v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
  else if constexpr (std::is_same_v<T, bool>) return v != A(0);
  else return static_cast<T>(v);
}

// Maps a row-major linear index of an output shape to the element offset of an input whose
// strides are 0 along broadcast dimensions (NumPy broadcasting, aligned from the right).
struct StridedIndexer {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};    // output sizes
  int64_t strides[kMaxDims] = {};  // input strides in elements, 0 where broadcast

  __device__ __forceinline__ int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t idx = linear % sizes[d];
      linear /= sizes[d];
      off += idx * strides[d];
    }
    return off;
  }
};

// The indexer reading `in` (broadcastable to `out_shape`) at each output position. Throws
// DeviceError beyond kMaxDims dimensions.
StridedIndexer broadcast_indexer(const Shape& in, const Shape& out_shape);

// T* of a tensor's device memory, as its device storage type.
template <typename T>
T* device_ptr(const Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

}  // namespace strata::cuda
