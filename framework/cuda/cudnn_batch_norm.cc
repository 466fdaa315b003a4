// Batch normalisation over all axes but the last, on the GPU through cuDNN. x of any rank is
// channels-last data: [N, H, W, C] as it is, anything else as [rows, 1, 1, C] (the same bytes),
// both as CUDNN_TENSOR_NHWC, normalised per channel (CUDNN_BATCHNORM_SPATIAL_PERSISTENT, cuDNN's
// fast NHWC path; plain SPATIAL for float64, which the persistent kernels do not cover).
//
// The contract and cuDNN name the statistics differently, so small kernels translate
// (cuda_batch_norm_helpers.cu):
// - training returns the batch mean and the BIASED batch variance. cuDNN's running statistics
//   with exponentialAverageFactor = 1 are the batch mean and the UNBIASED variance (Bessel's
//   correction), so the variance is rescaled by (rows - 1) / rows.
// - backward receives mean and variance; cuDNN's backward takes the mean and the inverse
//   standard deviation 1 / sqrt(variance + epsilon), computed here.
// - cuDNN keeps the per-channel vectors in float32 (float64 for float64 data), also for 16-bit
//   x (mixed precision). Vectors of another dtype (e.g. float16 gamma for float16 x) are
//   converted into temporaries, and outputs converted back.
// - one value per channel (rows == 1) never reaches cuDNN, whose unbiased variance would divide
//   by zero: its results (mean = x, variance 0, y = beta, dx = 0, ...) are written directly.
//
// The fused ReLU (fuse_relu) is applied by our own kernel right after cuDNN's normalisation:
// it zeroes y where y <= 0 and records a bit mask, the returned workspace; the backward pass
// masks dy with it before cuDNN's backward. (cuDNN's own BN_ACTIVATION backward needs the
// forward's y and beta, which the backend contract does not pass to batch_norm_backward.)
#include <cudnn.h>

#include <climits>
#include <string>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/cuda_context.h"
#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/dnn_scaling.h"
#include "framework/cuda/library_handles.h"
#include "framework/cuda/plan_cache.h"

namespace strata {
namespace {

struct BatchNormKey {
  int64_t device, dtype, mode;
  int64_t n, h, w, c;
};

struct BatchNormPlan {
  cudnnTensorDescriptor_t x = nullptr;      // x, y, dy and dx
  cudnnTensorDescriptor_t params = nullptr;  // [1, C, 1, 1] per-channel vectors, cuDNN's dtype
  cudnnBatchNormMode_t mode = CUDNN_BATCHNORM_SPATIAL;

  BatchNormPlan() = default;
  BatchNormPlan(const BatchNormPlan&) = delete;
  BatchNormPlan& operator=(const BatchNormPlan&) = delete;
  ~BatchNormPlan() {
    if (params != nullptr) cudnnDestroyTensorDescriptor(params);
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
  }
};

cuda::PlanCache<BatchNormKey, BatchNormPlan>& plan_cache() {
  static auto* cache = new cuda::PlanCache<BatchNormKey, BatchNormPlan>;  // never destroyed
  return *cache;
}

// The dtype cuDNN keeps gamma, beta, mean and variance in for data of `dtype`.
DType param_dtype(DType dtype) { return dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

// x viewed as NHWC [n, h, w, c]; `rows` = n * h * w values per channel.
struct BatchNormShape {
  int64_t n, h, w, c, rows;
};

BatchNormShape view_of(const Tensor& x) {
  const int64_t c = x.dim(-1);
  const int64_t rows = c == 0 ? 0 : x.numel() / c;
  if (x.rank() == 4) return {x.dim(0), x.dim(1), x.dim(2), c, rows};
  return {rows, 1, 1, c, rows};
}

// Checks the dtypes of one call: x floating; each per-channel vector in x's dtype or in cuDNN's
// (mixed precision).
void check_dtypes(const char* op, const Tensor& x,
                  std::initializer_list<std::pair<const char*, const Tensor*>> vectors) {
  cuda::cudnn_data_type(x.dtype(), op);
  const DType cudnn_params = param_dtype(x.dtype());
  for (const auto& [name, t] : vectors) {
    if (t->dtype() != x.dtype() && t->dtype() != cudnn_params) {
      throw DTypeError(std::string(op) + ": " + name + " must be " + dtype_name(x.dtype()) +
                       " (x's dtype) or " + dtype_name(cudnn_params) + ", got " +
                       dtype_name(t->dtype()));
    }
  }
}

std::shared_ptr<const BatchNormPlan> get_plan(const Tensor& x, const BatchNormShape& s,
                                              cudnnBatchNormMode_t mode, const char* op) {
  const int dev = x.device().index;
  if (s.n > INT_MAX || s.h * s.w * s.c > INT_MAX) {
    throw DeviceError(std::string(op) + " on " + x.device().to_string() + ": x " +
                      x.shape().to_string() + " is too large for cuDNN (dimensions and "
                      "per-row sizes must stay below 2^31 elements); split the batch");
  }
  const BatchNormKey key{dev, int64_t(x.dtype()), int64_t(mode), s.n, s.h, s.w, s.c};
  return plan_cache().get(key, [&] {
    auto plan = std::make_shared<BatchNormPlan>();
    plan->mode = mode;
    STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->x), dev);
    STRATA_CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NHWC,
                                                  cuda::cudnn_data_type(x.dtype(), op), int(s.n), int(s.c),
                                                  int(s.h), int(s.w)),
                       dev);
    STRATA_CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->params), dev);
    // Sets [1, C, 1, 1] in the parameter dtype cuDNN wants for this x and mode.
    STRATA_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(plan->params, plan->x, mode), dev);
    return std::shared_ptr<const BatchNormPlan>(std::move(plan));
  });
}

cudnnBatchNormMode_t training_mode(DType dtype) {
  return dtype == DType::kFloat64 ? CUDNN_BATCHNORM_SPATIAL : CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
}

// t itself when it already is in cuDNN's parameter dtype, else a converted copy.
Tensor as_param(const Tensor& t, DType pdt) {
  if (t.dtype() == pdt) return t;
  Tensor out = Tensor::empty(t.shape(), pdt, t.device());
  cuda::convert_floating(t, out);
  return out;
}

// Where cuDNN should write an output vector: t itself, or a temporary in cuDNN's dtype that
// finish_param copies back.
Tensor param_output(const Tensor& t, DType pdt) {
  return t.dtype() == pdt ? t : Tensor::empty(t.shape(), pdt, t.device());
}
void finish_param(const Tensor& written, Tensor& t) {
  if (written.raw_data() != t.raw_data()) cuda::convert_floating(written, t);
}

void zero_fill(Tensor& t) {
  if (t.numel() == 0) return;
  STRATA_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, t.nbytes(), cuda::stream(t.device())),
                    t.device().index);
}

// One value per channel (rows == 1), computed without cuDNN, whose running variance would divide
// by rows - 1 = 0: the mean is x, the biased variance 0, x - mean = 0 so y = beta; backward
// gives dx = 0, dgamma = 0 and dbeta = dy (all exactly what the CPU computes).
Tensor single_row_training(const Tensor& x, const Tensor& beta, bool fuse_relu, Tensor& y,
                           Tensor& mean, Tensor& variance) {
  cuda::convert_floating(beta, y);  // [C] and [1, ..., 1, C] hold the same elements
  cuda::convert_floating(x, mean);
  zero_fill(variance);
  if (fuse_relu) return cuda::relu_in_place_with_mask(y);
  return Tensor();
}

void single_row_backward(const Tensor& dy, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  zero_fill(dx);
  zero_fill(dgamma);
  cuda::convert_floating(dy, dbeta);
}

}  // namespace

Tensor CudaBackend::batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                        float epsilon, bool fuse_relu, Tensor& y, Tensor& mean,
                                        Tensor& variance) {
  const char* op = "batch_norm_training";
  cuda::DeviceGuard guard(y.device());
  check_dtypes(op, x, {{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean},
                       {"variance", &variance}});
  const BatchNormShape s = view_of(x);
  if (s.c == 0) return Tensor();
  if (s.rows == 0) {  // statistics of nothing, as the CPU
    zero_fill(mean);
    zero_fill(variance);
    return Tensor();
  }
  if (s.rows == 1) return single_row_training(x, beta, fuse_relu, y, mean, variance);
  const DType pdt = param_dtype(x.dtype());
  const auto plan = get_plan(x, s, training_mode(x.dtype()), op);
  const Tensor g = as_param(gamma, pdt), b = as_param(beta, pdt);
  Tensor running_mean = param_output(mean, pdt), running_var = param_output(variance, pdt);
  // cuDNN updates running = factor * batch + (1 - factor) * running: with factor 1 the old value
  // is still multiplied by 0, and uninitialised memory may hold NaN.
  zero_fill(running_mean);
  zero_fill(running_var);
  Tensor saved_mean = Tensor::empty(Shape{s.c}, pdt, x.device());
  Tensor saved_inv_std = Tensor::empty(Shape{s.c}, pdt, x.device());
  const cuda::Scaling scale(x.dtype());
  STRATA_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
                         cuda::cudnn_handle(x.device()), plan->mode, scale.one(), scale.zero(),
                         plan->x, x.raw_data(), plan->x, y.raw_data(), plan->params, g.raw_data(),
                         b.raw_data(), /*exponentialAverageFactor=*/1.0, running_mean.raw_data(),
                         running_var.raw_data(), double(epsilon), saved_mean.raw_data(),
                         saved_inv_std.raw_data()),
                     x.device().index);
  cuda::scale_in_place(running_var, double(s.rows - 1) / double(s.rows));  // rows >= 2 here
  finish_param(running_mean, mean);
  finish_param(running_var, variance);
  if (fuse_relu) return cuda::relu_in_place_with_mask(y);
  return Tensor();
}

void CudaBackend::batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       const Tensor& mean, const Tensor& variance, float epsilon,
                                       Tensor& y) {
  const char* op = "batch_norm_inference";
  cuda::DeviceGuard guard(y.device());
  check_dtypes(op, x, {{"gamma", &gamma}, {"beta", &beta}, {"mean", &mean},
                       {"variance", &variance}});
  const BatchNormShape s = view_of(x);
  if (x.numel() == 0) return;
  const DType pdt = param_dtype(x.dtype());
  const auto plan = get_plan(x, s, CUDNN_BATCHNORM_SPATIAL, op);
  const Tensor g = as_param(gamma, pdt), b = as_param(beta, pdt);
  const Tensor m = as_param(mean, pdt), v = as_param(variance, pdt);
  const cuda::Scaling scale(x.dtype());
  STRATA_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
                         cuda::cudnn_handle(x.device()), plan->mode, scale.one(), scale.zero(),
                         plan->x, x.raw_data(), plan->x, y.raw_data(), plan->params, g.raw_data(),
                         b.raw_data(), m.raw_data(), v.raw_data(), double(epsilon)),
                     x.device().index);
}

void CudaBackend::batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                      const Tensor& mean, const Tensor& variance, float epsilon,
                                      const Tensor& relu_workspace, Tensor& dx, Tensor& dgamma,
                                      Tensor& dbeta) {
  const char* op = "batch_norm_backward";
  cuda::DeviceGuard guard(dx.device());
  check_dtypes(op, x, {{"gamma", &gamma}, {"mean", &mean}, {"variance", &variance},
                       {"dgamma", &dgamma}, {"dbeta", &dbeta}});
  const BatchNormShape s = view_of(x);
  if (s.c == 0) return;
  if (s.rows == 0) {
    zero_fill(dgamma);
    zero_fill(dbeta);
    return;
  }
  Tensor dy_masked = dy;
  if (relu_workspace.defined()) {
    if (relu_workspace.device() != x.device() ||
        int64_t(relu_workspace.nbytes()) < cuda::relu_mask_bytes(x.numel())) {
      throw ValueError("batch_norm_backward: the fused ReLU needs the workspace its forward pass "
                       "returned (" + std::to_string(cuda::relu_mask_bytes(x.numel())) +
                       " bytes on " + x.device().to_string() + "), got " +
                       std::to_string(relu_workspace.nbytes()) + " bytes on " +
                       relu_workspace.device().to_string());
    }
    dy_masked = Tensor::empty(dy.shape(), dy.dtype(), dy.device());
    cuda::apply_relu_mask(dy, relu_workspace, dy_masked);
  }
  if (s.rows == 1) return single_row_backward(dy_masked, dx, dgamma, dbeta);
  const DType pdt = param_dtype(x.dtype());
  const auto plan = get_plan(x, s, training_mode(x.dtype()), op);
  const Tensor g = as_param(gamma, pdt), m = as_param(mean, pdt);
  Tensor inv_std = Tensor::empty(Shape{s.c}, pdt, x.device());
  cuda::inverse_std(variance, double(epsilon), inv_std);
  Tensor dg = param_output(dgamma, pdt), db = param_output(dbeta, pdt);
  const cuda::Scaling scale(x.dtype());
  STRATA_CUDNN_CHECK(cudnnBatchNormalizationBackward(
                         cuda::cudnn_handle(x.device()), plan->mode, scale.one(), scale.zero(),
                         scale.one(), scale.zero(), plan->x, x.raw_data(), plan->x,
                         dy_masked.raw_data(), plan->x, dx.raw_data(), plan->params, g.raw_data(),
                         dg.raw_data(), db.raw_data(), double(epsilon), m.raw_data(),
                         inv_std.raw_data()),
                     x.device().index);
  finish_param(dg, dgamma);
  finish_param(db, dbeta);
}

}  // namespace strata
