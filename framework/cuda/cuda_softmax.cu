// Softmax and log-softmax along any axis on the GPU, forward and backward.
//
// The tensor is viewed as [outer, n, inner] around the axis. The last axis (inner == 1) gets one
// warp per row for rows of up to kWarpRowLen, one block per row beyond; other axes get one thread
// per (outer, inner) position walking the axis, so that neighbouring threads read neighbouring
// memory. Each row is read three times (max, sum, write); the re-reads mostly hit the cache.
//
// Numerics follow cpu_reduce.cc: the max is subtracted before exponentiating (NaN propagates
// through it), 16-bit floats and float32 compute in float, float64 in double; softmax multiplies
// by 1/sum, log-softmax subtracts log(sum).
#include <limits>
#include <string>
#include <type_traits>

#include "framework/cuda/block_reduce.cuh"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata {
namespace {

using cuda::kWarpSize;

constexpr int64_t kWarpRowLen = 1024;  // rows up to this long: one warp each
constexpr int kRowBlock = 512;         // threads per block for longer rows
constexpr int kWarpsPerBlock = cuda::kThreadsPerBlock / kWarpSize;

template <typename T>
constexpr bool kIsFloating = std::is_floating_point_v<T> || std::is_same_v<T, __half> ||
                             std::is_same_v<T, __nv_bfloat16>;

__device__ __forceinline__ float dev_exp(float v) { return expf(v); }
__device__ __forceinline__ double dev_exp(double v) { return exp(v); }
__device__ __forceinline__ float dev_log(float v) { return logf(v); }
__device__ __forceinline__ double dev_log(double v) { return log(v); }

// max that lets NaN through, as the CPU's `v > mx || v != v`.
struct MaxNaN {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return (b > a || isnan(b)) ? b : a;
  }
};
struct Add {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
};

// The output element from x's shifted value s = x - max and the row's sum of exp(s).
template <typename A>
__device__ __forceinline__ A softmax_value(A s, A sum, bool log) {
  return log ? s - dev_log(sum) : dev_exp(s) * (A(1) / sum);
}

// dx from y, dy and the row's dot (sum(dy * y) for softmax, sum(dy) for log-softmax).
template <typename A>
__device__ __forceinline__ A softmax_grad(A y, A g, A dot, bool log) {
  return log ? g - dev_exp(y) * dot : y * (g - dot);
}

// ---- forward ----

template <typename T>
__global__ void softmax_rows_warp_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using A = cuda::acc_t<T>;
  const int lane = int(threadIdx.x) % kWarpSize;
  const int64_t first = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  // The row is the same for the whole warp, so every lane reaches the shuffles together.
  for (int64_t row = first; row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    const T* px = x + row * n;
    T* py = y + row * n;
    A mx = -std::numeric_limits<A>::infinity();
    for (int64_t i = lane; i < n; i += kWarpSize) mx = MaxNaN{}(mx, cuda::to_acc(px[i]));
    mx = cuda::warp_all_reduce(mx, MaxNaN{});
    A sum = 0;
    for (int64_t i = lane; i < n; i += kWarpSize) sum += dev_exp(cuda::to_acc(px[i]) - mx);
    sum = cuda::warp_all_reduce(sum, Add{});
    for (int64_t i = lane; i < n; i += kWarpSize) {
      py[i] = cuda::from_acc<T>(softmax_value(cuda::to_acc(px[i]) - mx, sum, log));
    }
  }
}

template <typename T>
__global__ void softmax_rows_block_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  using A = cuda::acc_t<T>;
  constexpr A kNegInf = -std::numeric_limits<A>::infinity();
  // The row is the same for the whole block, so every thread reaches the barriers.
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* px = x + row * n;
    T* py = y + row * n;
    A mx = kNegInf;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = MaxNaN{}(mx, cuda::to_acc(px[i]));
    mx = cuda::block_all_reduce(mx, kNegInf, MaxNaN{});
    A sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      sum += dev_exp(cuda::to_acc(px[i]) - mx);
    }
    sum = cuda::block_all_reduce(sum, A(0), Add{});
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      py[i] = cuda::from_acc<T>(softmax_value(cuda::to_acc(px[i]) - mx, sum, log));
    }
  }
}

// A middle axis: one thread per (outer, inner) position.
template <typename T>
__global__ void softmax_strided_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner,
                                       bool log) {
  using A = cuda::acc_t<T>;
  STRATA_GRID_STRIDE_LOOP(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const T* px = x + o * n * inner + j;
    T* py = y + o * n * inner + j;
    A mx = -std::numeric_limits<A>::infinity();
    for (int64_t k = 0; k < n; ++k) mx = MaxNaN{}(mx, cuda::to_acc(px[k * inner]));
    A sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += dev_exp(cuda::to_acc(px[k * inner]) - mx);
    for (int64_t k = 0; k < n; ++k) {
      py[k * inner] = cuda::from_acc<T>(softmax_value(cuda::to_acc(px[k * inner]) - mx, sum, log));
    }
  }
}

// ---- backward ----

template <typename T>
__global__ void softmax_backward_rows_warp_kernel(const T* y, const T* dy, T* dx, int64_t rows,
                                                  int64_t n, bool log) {
  using A = cuda::acc_t<T>;
  const int lane = int(threadIdx.x) % kWarpSize;
  const int64_t first = int64_t(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  for (int64_t row = first; row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    const int64_t base = row * n;
    A dot = 0;
    for (int64_t i = lane; i < n; i += kWarpSize) {
      const A g = cuda::to_acc(dy[base + i]);
      dot += log ? g : g * cuda::to_acc(y[base + i]);
    }
    dot = cuda::warp_all_reduce(dot, Add{});
    for (int64_t i = lane; i < n; i += kWarpSize) {
      dx[base + i] = cuda::from_acc<T>(
          softmax_grad(cuda::to_acc(y[base + i]), cuda::to_acc(dy[base + i]), dot, log));
    }
  }
}

template <typename T>
__global__ void softmax_backward_rows_block_kernel(const T* y, const T* dy, T* dx, int64_t rows,
                                                   int64_t n, bool log) {
  using A = cuda::acc_t<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t base = row * n;
    A dot = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A g = cuda::to_acc(dy[base + i]);
      dot += log ? g : g * cuda::to_acc(y[base + i]);
    }
    dot = cuda::block_all_reduce(dot, A(0), Add{});
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      dx[base + i] = cuda::from_acc<T>(
          softmax_grad(cuda::to_acc(y[base + i]), cuda::to_acc(dy[base + i]), dot, log));
    }
  }
}

template <typename T>
__global__ void softmax_backward_strided_kernel(const T* y, const T* dy, T* dx, int64_t outer,
                                                int64_t n, int64_t inner, bool log) {
  using A = cuda::acc_t<T>;
  STRATA_GRID_STRIDE_LOOP(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const int64_t base = o * n * inner + j;
    A dot = 0;
    for (int64_t k = 0; k < n; ++k) {
      const A g = cuda::to_acc(dy[base + k * inner]);
      dot += log ? g : g * cuda::to_acc(y[base + k * inner]);
    }
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = base + k * inner;
      dx[i] = cuda::from_acc<T>(softmax_grad(cuda::to_acc(y[i]), cuda::to_acc(dy[i]), dot, log));
    }
  }
}

// ---- dispatch ----

void split_axis(const Shape& s, int axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.rank(); ++i) inner *= s[i];
  n = s.rank() == 0 ? 1 : s[axis];
}

// Calls fn(T{}) for a floating dtype's device type; DTypeError otherwise (as the CPU).
template <typename Fn>
void visit_floating(DType dtype, const char* op, Fn&& fn) {
  cuda::visit_cuda_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloating<T>) {
      fn(T{});
    } else {
      throw DTypeError(std::string(op) + ": expected a floating dtype, got " + dtype_name(dtype));
    }
  });
}

}  // namespace

void CudaBackend::softmax(const Tensor& x, int axis, bool log, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  int64_t outer, n, inner;
  split_axis(x.shape(), axis, outer, n, inner);
  if (x.numel() == 0) return;
  visit_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = decltype(tag);
    const Device device = out.device();
    cudaStream_t stream = cuda::stream(device);
    const T* px = cuda::device_ptr<const T>(x);
    T* py = cuda::device_ptr<T>(out);
    if (inner > 1) {
      softmax_strided_kernel<<<cuda::blocks_for(outer * inner), cuda::kThreadsPerBlock, 0,
                               stream>>>(px, py, outer, n, inner, log);
      cuda::check_launch("softmax_strided_kernel", device.index);
    } else if (n <= kWarpRowLen) {
      softmax_rows_warp_kernel<<<cuda::blocks_for(outer, kWarpsPerBlock), cuda::kThreadsPerBlock,
                                 0, stream>>>(px, py, outer, n, log);
      cuda::check_launch("softmax_rows_warp_kernel", device.index);
    } else {
      softmax_rows_block_kernel<<<cuda::blocks_for(outer, 1), kRowBlock, 0, stream>>>(
          px, py, outer, n, log);
      cuda::check_launch("softmax_rows_block_kernel", device.index);
    }
  });
}

void CudaBackend::softmax_backward(const Tensor& y, const Tensor& dy, int axis, bool log,
                                   Tensor& dx) {
  cuda::DeviceGuard guard(dx.device());
  int64_t outer, n, inner;
  split_axis(y.shape(), axis, outer, n, inner);
  if (y.numel() == 0) return;
  visit_floating(y.dtype(), "softmax_backward", [&](auto tag) {
    using T = decltype(tag);
    const Device device = dx.device();
    cudaStream_t stream = cuda::stream(device);
    const T* py = cuda::device_ptr<const T>(y);
    const T* pg = cuda::device_ptr<const T>(dy);
    T* pd = cuda::device_ptr<T>(dx);
    if (inner > 1) {
      softmax_backward_strided_kernel<<<cuda::blocks_for(outer * inner), cuda::kThreadsPerBlock,
                                        0, stream>>>(py, pg, pd, outer, n, inner, log);
      cuda::check_launch("softmax_backward_strided_kernel", device.index);
    } else if (n <= kWarpRowLen) {
      softmax_backward_rows_warp_kernel<<<cuda::blocks_for(outer, kWarpsPerBlock),
                                          cuda::kThreadsPerBlock, 0, stream>>>(py, pg, pd, outer,
                                                                               n, log);
      cuda::check_launch("softmax_backward_rows_warp_kernel", device.index);
    } else {
      softmax_backward_rows_block_kernel<<<cuda::blocks_for(outer, 1), kRowBlock, 0, stream>>>(
          py, pg, pd, outer, n, log);
      cuda::check_launch("softmax_backward_rows_block_kernel", device.index);
    }
  });
}

}  // namespace strata
