// Fill, arange and counter-based random numbers on the GPU. Each random element is made by the
// CPU's own rule (framework/kernels_math/random_draws.h, one copy for both backends): uniform
// numbers and dropout masks are bit-identical to the CPU's; normal numbers agree to the last bit
// or two of double math (the GPU's log/cos round differently from glibc's), hence to float
// rounding.
//
// arange's double arithmetic uses __dmul_rn / __dadd_rn: nvcc would otherwise contract
// a + b * c into one fused multiply-add, which rounds once instead of twice and so differs from
// the x86-64 CPU build, which has no FMA.
#include <cmath>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"
#include "framework/kernels_math/random_draws.h"

namespace strata {
namespace {

using cuda::from_acc;

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, double value) {
  const T v = from_acc<T>(value);
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = v;
}

template <typename T>
__global__ void arange_kernel(T* out, int64_t n, double start, double step) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = from_acc<T>(__dadd_rn(start, __dmul_rn(double(i), step)));
}

template <typename T>
__global__ void random_kernel(T* out, int64_t n, RandomDistribution dist, uint64_t seed,
                              uint64_t offset, double a, double b) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    out[i] = from_acc<T>(kernels_math::random_value(dist, offset + uint64_t(i), seed, a, b));
  }
}

template <typename T>
__global__ void dropout_mask_kernel(T* mask, int64_t n, float rate, uint64_t seed,
                                    uint64_t offset, double scale) {
  const T keep = from_acc<T>(scale), drop = from_acc<T>(0.0);
  STRATA_GRID_STRIDE_LOOP(i, n) {
    mask[i] = kernels_math::dropout_keeps(offset + uint64_t(i), seed, rate) ? keep : drop;
  }
}

// Whether every byte of `value` stored as `dtype` is zero (then a memset fills it): zero, but
// not -0.0, whose sign bit is set.
bool is_all_zero_bytes(double value) { return value == 0.0 && !std::signbit(value); }

}  // namespace

void CudaBackend::fill(Tensor& out, double value) {
  const int64_t n = out.numel();
  if (n == 0) return;
  cuda::DeviceGuard guard(out.device());
  cudaStream_t stream = cuda::stream(out.device());
  if (is_all_zero_bytes(value)) {
    STRATA_CUDA_CHECK(cudaMemsetAsync(out.raw_data(), 0, out.nbytes(), stream),
                      out.device().index);
    return;
  }
  cuda::visit_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    fill_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        cuda::device_ptr<T>(out), n, value);
  });
  cuda::check_launch("fill", out.device().index);
}

void CudaBackend::arange(Tensor& out, double start, double step) {
  const int64_t n = out.numel();
  if (n == 0) return;
  cuda::DeviceGuard guard(out.device());
  cudaStream_t stream = cuda::stream(out.device());
  cuda::visit_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    arange_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        cuda::device_ptr<T>(out), n, start, step);
  });
  cuda::check_launch("arange", out.device().index);
}

void CudaBackend::random(Tensor& out, RandomDistribution dist, uint64_t seed, uint64_t offset,
                         double a, double b) {
  const int64_t n = out.numel();
  if (n == 0) return;
  cuda::DeviceGuard guard(out.device());
  cudaStream_t stream = cuda::stream(out.device());
  cuda::visit_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    random_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        cuda::device_ptr<T>(out), n, dist, seed, offset, a, b);
  });
  cuda::check_launch("random", out.device().index);
}

void CudaBackend::dropout_mask(Tensor& mask, float rate, uint64_t seed, uint64_t offset) {
  const int64_t n = mask.numel();
  if (n == 0) return;
  // The keep value in double, as the CPU computes it, rounded to the mask's dtype on the device.
  const double scale = rate < 1.0f ? 1.0 / (1.0 - double(rate)) : 0.0;
  cuda::DeviceGuard guard(mask.device());
  cudaStream_t stream = cuda::stream(mask.device());
  cuda::visit_cuda_dtype(mask.dtype(), [&](auto tag) {
    using T = decltype(tag);
    dropout_mask_kernel<T><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0, stream>>>(
        cuda::device_ptr<T>(mask), n, rate, seed, offset, scale);
  });
  cuda::check_launch("dropout_mask", mask.device().index);
}

}  // namespace strata
