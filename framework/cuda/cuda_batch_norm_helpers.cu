// The small kernels around cuDNN's batch normalisation (cudnn_batch_norm.cc): dtype conversions
// of the per-channel vectors (cuDNN wants them float32, or float64 for float64 data), the
// inverse standard deviation cuDNN's backward pass takes in place of the variance, the rescaling
// of cuDNN's unbiased batch variance to the biased one, and the fused ReLU with its bit mask.
#include <string>

#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata::cuda {
namespace {

template <typename Fn>
void visit_floating(DType dtype, const char* what, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(__half{});
    case DType::kBFloat16: return fn(__nv_bfloat16{});
    default: break;
  }
  throw InternalError(std::string(what) + ": expected a floating dtype, got " + dtype_name(dtype));
}

template <typename From, typename To>
__global__ void convert_kernel(const From* __restrict__ in, To* __restrict__ out, int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) { out[i] = from_acc<To>(to_acc(in[i])); }
}

// P (float or double) is cuDNN's parameter type; V the variance's storage type.
template <typename V, typename P>
__global__ void inverse_std_kernel(const V* __restrict__ variance, P* __restrict__ inv, int64_t n,
                                   P epsilon) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    inv[i] = P(1) / sqrt(P(to_acc(variance[i])) + epsilon);
  }
}

template <typename T>
__global__ void scale_kernel(T* __restrict__ t, int64_t n, T factor) {
  STRATA_GRID_STRIDE_LOOP(i, n) { t[i] *= factor; }
}

// One warp handles 32 consecutive elements and writes their mask word. `padded` is n rounded up
// to a multiple of 32 and blockDim a multiple of 32, so every lane of a warp runs the loop the
// same number of times (the full-warp ballot requires it).
template <typename T>
__global__ void relu_mask_kernel(T* __restrict__ y, uint32_t* __restrict__ mask, int64_t n,
                                 int64_t padded) {
  using A = acc_t<T>;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < padded;
       i += int64_t(blockDim.x) * gridDim.x) {
    bool pass = false;
    if (i < n) {
      const A v = to_acc(y[i]);
      // oneDNN's fuse_norm_relu: "if (v <= 0) v = 0, mask 0; else mask 1", so NaN passes.
      pass = !(v <= A(0));
      if (!pass) y[i] = from_acc<T>(A(0));
    }
    const unsigned bits = __ballot_sync(0xffffffffu, pass);
    if ((threadIdx.x & 31u) == 0) mask[i / 32] = bits;
  }
}

template <typename T>
__global__ void apply_mask_kernel(const T* __restrict__ dy, const uint32_t* __restrict__ mask,
                                  T* __restrict__ out, int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    const bool pass = (mask[i / 32] >> (i % 32)) & 1u;
    out[i] = pass ? dy[i] : from_acc<T>(acc_t<T>(0));
  }
}

}  // namespace

void convert_floating(const Tensor& x, Tensor& out) {
  STRATA_CHECK(x.numel() == out.numel());
  const int64_t n = out.numel();
  if (n == 0) return;
  visit_floating(x.dtype(), "convert_floating", [&](auto from_tag) {
    using From = decltype(from_tag);
    visit_floating(out.dtype(), "convert_floating", [&](auto to_tag) {
      using To = decltype(to_tag);
      convert_kernel<From, To><<<blocks_for(n), kThreadsPerBlock, 0, stream(out.device())>>>(
          device_ptr<const From>(x), device_ptr<To>(out), n);
    });
  });
  check_launch("convert_kernel", out.device().index);
}

void inverse_std(const Tensor& variance, double epsilon, Tensor& inv_std) {
  STRATA_CHECK(variance.numel() == inv_std.numel());
  const int64_t n = inv_std.numel();
  if (n == 0) return;
  visit_floating(variance.dtype(), "inverse_std", [&](auto v_tag) {
    using V = decltype(v_tag);
    if (inv_std.dtype() == DType::kFloat64) {
      inverse_std_kernel<V, double><<<blocks_for(n), kThreadsPerBlock, 0,
                                      stream(inv_std.device())>>>(
          device_ptr<const V>(variance), device_ptr<double>(inv_std), n, epsilon);
    } else {
      STRATA_CHECK(inv_std.dtype() == DType::kFloat32);
      inverse_std_kernel<V, float><<<blocks_for(n), kThreadsPerBlock, 0,
                                     stream(inv_std.device())>>>(
          device_ptr<const V>(variance), device_ptr<float>(inv_std), n, float(epsilon));
    }
  });
  check_launch("inverse_std_kernel", inv_std.device().index);
}

void scale_in_place(Tensor& t, double factor) {
  const int64_t n = t.numel();
  if (n == 0) return;
  if (t.dtype() == DType::kFloat64) {
    scale_kernel<double><<<blocks_for(n), kThreadsPerBlock, 0, stream(t.device())>>>(
        device_ptr<double>(t), n, factor);
  } else {
    STRATA_CHECK(t.dtype() == DType::kFloat32);
    scale_kernel<float><<<blocks_for(n), kThreadsPerBlock, 0, stream(t.device())>>>(
        device_ptr<float>(t), n, float(factor));
  }
  check_launch("scale_kernel", t.device().index);
}

int64_t relu_mask_bytes(int64_t n) { return (n + 31) / 32 * int64_t(sizeof(uint32_t)); }

Tensor relu_in_place_with_mask(Tensor& y) {
  const int64_t n = y.numel();
  Tensor mask = Tensor::empty(Shape{relu_mask_bytes(n)}, DType::kUInt8, y.device());
  if (n == 0) return mask;
  const int64_t padded = (n + 31) / 32 * 32;
  visit_floating(y.dtype(), "relu_in_place_with_mask", [&](auto tag) {
    using T = decltype(tag);
    relu_mask_kernel<T><<<blocks_for(padded), kThreadsPerBlock, 0, stream(y.device())>>>(
        device_ptr<T>(y), device_ptr<uint32_t>(mask), n, padded);
  });
  check_launch("relu_mask_kernel", y.device().index);
  return mask;
}

void apply_relu_mask(const Tensor& dy, const Tensor& mask, Tensor& out) {
  const int64_t n = out.numel();
  STRATA_CHECK(dy.numel() == n && int64_t(mask.nbytes()) >= relu_mask_bytes(n));
  if (n == 0) return;
  visit_floating(out.dtype(), "apply_relu_mask", [&](auto tag) {
    using T = decltype(tag);
    apply_mask_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream(out.device())>>>(
        device_ptr<const T>(dy), device_ptr<const uint32_t>(mask), device_ptr<T>(out), n);
  });
  check_launch("apply_mask_kernel", out.device().index);
}

}  // namespace strata::cuda
