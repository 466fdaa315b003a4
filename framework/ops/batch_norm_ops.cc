// Batch normalisation over all axes but the last (channels-last). The training form uses the
// batch statistics and differentiates through them with the backend's fused backward kernel;
// the inference form uses fixed statistics, so its gradient is a closed form built from ops.
#include <numeric>
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"
#include "framework/ops/shape_ops.h"

namespace strata {
namespace {

using namespace ops_detail;

bool is_16bit(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

// The dtype of the per-channel parameters and statistics for x: float32 for float32 x, and also
// for float16 / bfloat16 x (mixed precision: cuDNN and oneDNN keep 16-bit data's scale, shift,
// mean and variance in float32, and so does Keras).
DType param_dtype(const Tensor& x) { return is_16bit(x.dtype()) ? DType::kFloat32 : x.dtype(); }

// Validates x [..., C] and per-channel parameters of shape [C].
void check_batch_norm_args(const char* op, const Tensor& x, float epsilon,
                           std::initializer_list<std::pair<const char*, const Tensor*>> params) {
  if (x.rank() < 1) {
    throw ShapeError(std::string(op) + ": expected x of rank >= 1 (channels last), got " +
                     x.shape().to_string());
  }
  if (x.dtype() != DType::kFloat32 && !is_16bit(x.dtype())) {
    throw DTypeError(std::string(op) + ": expected x of dtype float32, float16 or bfloat16, got " +
                     dtype_name(x.dtype()));
  }
  if (!(epsilon >= 0.0f)) {
    throw ValueError(std::string(op) + ": epsilon must be >= 0, got " + std::to_string(epsilon));
  }
  const int64_t c = x.dim(-1);
  for (const auto& [name, t] : params) {
    if (t->rank() != 1 || t->dim(0) != c) {
      throw ShapeError(std::string(op) + ": " + name + " must have shape [" + std::to_string(c) +
                       "] (x's channels), got " + t->shape().to_string() + " for x " +
                       x.shape().to_string());
    }
    if (t->dtype() != param_dtype(x)) {
      throw DTypeError(std::string(op) + ": " + name + " must be " +
                       dtype_name(param_dtype(x)) + " for x of dtype " + dtype_name(x.dtype()) +
                       ", got " + dtype_name(t->dtype()) +
                       (is_16bit(x.dtype()) ? " (16-bit x takes float32 parameters and statistics)"
                                            : ""));
    }
    check_same_device(*t, x, op, std::string(name) + " and x");
  }
}

// Sums t over all axes but the last (reduce_sum with no axes would sum everything).
Tensor sum_rows(const Tensor& t) {
  if (t.rank() == 1) return t;
  std::vector<int> axes(size_t(t.rank() - 1));
  std::iota(axes.begin(), axes.end(), 0);
  return reduce_sum(t, axes);
}

}  // namespace

BatchNormResult batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                    float epsilon, bool fuse_relu) {
  check_batch_norm_args("batch_norm_training", x, epsilon, {{"gamma", &gamma}, {"beta", &beta}});
  const int64_t c = x.dim(-1);
  BatchNormResult r;
  r.y = Tensor::empty(x.shape(), x.dtype(), x.device());
  r.mean = Tensor::empty(Shape{c}, gamma.dtype(), x.device());
  r.variance = Tensor::empty(Shape{c}, gamma.dtype(), x.device());
  const Tensor relu_workspace = backend_for(x).batch_norm_training(
      x, gamma, beta, epsilon, fuse_relu, r.y, r.mean, r.variance);
  autograd::record(
      r.y, fuse_relu ? "batch_norm_relu_training" : "batch_norm_training", {x, gamma, beta},
      [x = x.alias(), gamma = gamma.alias(), mean = r.mean.alias(),
       variance = r.variance.alias(), relu_workspace,
       epsilon](const Tensor& dy, const autograd::NeedsGrad&)
          -> std::vector<Tensor> {
        // One fused kernel gives all three; cheaper than skipping the unneeded ones.
        Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
        Tensor dgamma = Tensor::empty(gamma.shape(), gamma.dtype(), gamma.device());
        Tensor dbeta = Tensor::empty(gamma.shape(), gamma.dtype(), gamma.device());
        backend_for(x).batch_norm_backward(x, dy, gamma, mean, variance, epsilon,
                                           relu_workspace, dx, dgamma, dbeta);
        return {dx, dgamma, dbeta};
      });
  return r;
}

Tensor batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                            const Tensor& moving_mean, const Tensor& moving_variance,
                            float epsilon) {
  check_batch_norm_args("batch_norm_inference", x, epsilon,
                        {{"gamma", &gamma},
                         {"beta", &beta},
                         {"moving_mean", &moving_mean},
                         {"moving_variance", &moving_variance}});
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).batch_norm_inference(x, gamma, beta, moving_mean, moving_variance, epsilon, y);
  // y = gamma * (x - mean) * rsqrt(var + eps) + beta with constant statistics:
  // dx = dy * gamma * inv, dgamma = sum(dy * (x - mean) * inv), dbeta = sum(dy). Computed in the
  // parameters' dtype (float32 for 16-bit x); dx goes back to x's.
  autograd::record(
      y, "batch_norm_inference", {x, gamma, beta},
      [x = x.alias(), gamma = gamma.alias(), mean = moving_mean.alias(),
       variance = moving_variance.alias(),
       epsilon](const Tensor& dy_in, const autograd::NeedsGrad& needs) -> std::vector<Tensor> {
        const Tensor dy = cast(dy_in, gamma.dtype());
        const Tensor inv = rsqrt(add(variance, double(epsilon)));
        Tensor dx, dgamma, dbeta;
        if (needs[0]) dx = cast(dy * (gamma * inv), x.dtype());
        if (needs[1]) dgamma = sum_rows(dy * ((cast(x, gamma.dtype()) - mean) * inv));
        if (needs[2]) dbeta = sum_rows(dy);
        return {dx, dgamma, dbeta};
      });
  return y;
}

}  // namespace strata
