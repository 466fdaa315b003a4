// 2-D max and average pooling on the GPU through cuDNN's pooling API, NHWC in and out.
//
// Semantics are the CPU's (oneDNN): max pooling ignores padding and NaNs (a NaN never wins a
// window), average pooling divides by the number of window elements inside x (TensorFlow's
// "same"). cuDNN's CUDNN_POOLING_MAX_DETERMINISTIC and CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
// are exactly these, but take one padding per axis for both sides, while "same" puts an odd
// padding element after. For max pooling the excess is padded explicitly with -inf (which never
// wins) and the gradient is cropped back; average pooling with asymmetric padding runs our own
// kernels (cuda_avg_pool.cu), since explicit padding would count in the divisor.
//
// cuDNN's backward pass recomputes which element won from x and y, so no workspace is returned.
#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <string>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_context.h"
#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/dnn_scaling.h"
#include "framework/cuda/library_handles.h"
#include "framework/cuda/plan_cache.h"

namespace strata {
namespace {

struct PoolKey {
  int64_t device, kind, dtype;
  int64_t n, h, w, c, oh, ow;  // input after explicit padding
  int64_t window_h, window_w, stride_h, stride_w, pad_h, pad_w;
};

struct PoolPlan {
  cudnnPoolingDescriptor_t pool = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;

  PoolPlan() = default;
  PoolPlan(const PoolPlan&) = delete;
  PoolPlan& operator=(const PoolPlan&) = delete;
  ~PoolPlan() {
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
    if (pool != nullptr) cudnnDestroyPoolingDescriptor(pool);
  }
};

cuda::PlanCache<PoolKey, PoolPlan>& plan_cache() {
  static auto* cache = new cuda::PlanCache<PoolKey, PoolPlan>;  // never destroyed
  return *cache;
}

// The padding cuDNN applies on both sides, and the explicit excess beyond it.
struct PoolPadding {
  int sym_h, sym_w, top, bottom, left, right;
  bool asymmetric() const { return top + bottom + left + right > 0; }
};

PoolPadding split_padding(const Pool2DParams& p) {
  PoolPadding pad{};
  pad.sym_h = std::min(p.pad_top, p.pad_bottom);
  pad.sym_w = std::min(p.pad_left, p.pad_right);
  pad.top = p.pad_top - pad.sym_h;
  pad.bottom = p.pad_bottom - pad.sym_h;
  pad.left = p.pad_left - pad.sym_w;
  pad.right = p.pad_right - pad.sym_w;
  return pad;
}

std::shared_ptr<const PoolPlan> make_plan(const PoolKey& k, const char* op) {
  const int dev = int(k.device);
  const cudnnDataType_t dt = cuda::cudnn_data_type(DType(k.dtype), op);
  auto plan = std::make_shared<PoolPlan>();
  STRATA_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&plan->pool), dev);
  const cudnnPoolingMode_t mode = PoolKind(k.kind) == PoolKind::kMax
                                      ? CUDNN_POOLING_MAX_DETERMINISTIC
                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  STRATA_CUDNN_CHECK(cudnnSetPooling2dDescriptor(plan->pool, mode, CUDNN_NOT_PROPAGATE_NAN,
                                                 int(k.window_h), int(k.window_w), int(k.pad_h),
                                                 int(k.pad_w), int(k.stride_h), int(k.stride_w)),
                     dev);
  STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x), dev);
  STRATA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NHWC, dt, int(k.n), int(k.c),
                                                int(k.h), int(k.w)),
                     dev);
  STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->y), dev);
  STRATA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NHWC, dt, int(k.n), int(k.c),
                                                int(k.oh), int(k.ow)),
                     dev);
  return plan;
}

// Shapes, padding and the plan key of one call; x_like is x or dx, y_like y or dy.
struct PoolSetup {
  PoolPadding pad;
  PoolKey key;
};

PoolSetup setup(PoolKind kind, const Tensor& x_like, const Tensor& y_like, const Pool2DParams& p,
                const char* op) {
  cuda::cudnn_data_type(x_like.dtype(), op);  // DTypeError for other dtypes
  PoolSetup s;
  s.pad = split_padding(p);
  const int64_t hp = x_like.dim(1) + s.pad.top + s.pad.bottom;
  const int64_t wp = x_like.dim(2) + s.pad.left + s.pad.right;
  const int64_t c = x_like.dim(3);
  if (x_like.dim(0) > INT_MAX || hp * wp * c > INT_MAX) {
    throw DeviceError(std::string(op) + " on " + x_like.device().to_string() + ": input " +
                      x_like.shape().to_string() + " is too large for cuDNN (dimensions and "
                      "per-image sizes must stay below 2^31 elements); split the batch");
  }
  s.key = PoolKey{x_like.device().index, int64_t(kind), int64_t(x_like.dtype()), x_like.dim(0),
                  hp, wp, c, y_like.dim(1), y_like.dim(2), p.window_h, p.window_w, p.stride_h,
                  p.stride_w, s.pad.sym_h, s.pad.sym_w};
  return s;
}

// x with the asymmetric excess padded by -inf (max pooling only), or x itself.
Tensor padded_for_max(const Tensor& x, const PoolSetup& s) {
  if (!s.pad.asymmetric()) return x;
  Tensor out = Tensor::empty(Shape{s.key.n, s.key.h, s.key.w, s.key.c}, x.dtype(), x.device());
  cuda::pad_spatial(x, s.pad.top, s.pad.left, -std::numeric_limits<double>::infinity(), out);
  return out;
}

}  // namespace

Tensor CudaBackend::pool2d_forward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                                   Tensor& y) {
  cuda::DeviceGuard guard(y.device());
  const PoolSetup s = setup(kind, x, y, p, "pool2d");
  if (y.numel() == 0) return Tensor();
  if (kind == PoolKind::kAverage && s.pad.asymmetric()) {
    cuda::avg_pool2d_forward(x, p, y);
    return Tensor();
  }
  const Tensor xin = kind == PoolKind::kMax ? padded_for_max(x, s) : x;
  const auto plan = plan_cache().get(s.key, [&] { return make_plan(s.key, "pool2d"); });
  const cuda::Scaling scale(x.dtype());
  STRATA_CUDNN_CHECK(cudnnPoolingForward(cuda::cudnn_handle(y.device()), plan->pool, scale.one(),
                                         plan->x, xin.raw_data(), scale.zero(), plan->y,
                                         y.raw_data()),
                     y.device().index);
  return Tensor();
}

void CudaBackend::pool2d_backward(PoolKind kind, const Tensor& x, const Tensor& y,
                                  const Tensor& dy, const Tensor& workspace,
                                  const Pool2DParams& p, Tensor& dx) {
  cuda::DeviceGuard guard(dx.device());
  const PoolSetup s = setup(kind, dx, dy, p, "pool2d_backward");
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) {  // no window: no gradient
    STRATA_CUDA_CHECK(cudaMemsetAsync(dx.raw_data(), 0, dx.nbytes(), cuda::stream(dx.device())),
                      dx.device().index);
    return;
  }
  if (kind == PoolKind::kAverage && s.pad.asymmetric()) {
    cuda::avg_pool2d_backward(dy, p, dx);
    return;
  }
  // Max pooling's backward pass needs x as the forward pass saw it: padded again here (cheaper
  // than keeping the padded copy alive between the passes).
  const Tensor xin = kind == PoolKind::kMax ? padded_for_max(x, s) : x;
  Tensor dx_padded = s.pad.asymmetric()
                         ? Tensor::empty(Shape{s.key.n, s.key.h, s.key.w, s.key.c}, dx.dtype(),
                                         dx.device())
                         : dx;
  const auto plan = plan_cache().get(s.key, [&] { return make_plan(s.key, "pool2d_backward"); });
  const cuda::Scaling scale(dx.dtype());
  STRATA_CUDNN_CHECK(cudnnPoolingBackward(cuda::cudnn_handle(dx.device()), plan->pool, scale.one(),
                                          plan->y, y.raw_data(), plan->y, dy.raw_data(), plan->x,
                                          xin.raw_data(), scale.zero(), plan->x,
                                          dx_padded.raw_data()),
                     dx.device().index);
  if (s.pad.asymmetric()) cuda::crop_spatial(dx_padded, s.pad.top, s.pad.left, dx);
}

}  // namespace strata
