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

namespace strata {
namespace {

using namespace ops_detail;

// Validates x [..., C] and per-channel parameters of shape [C].
void check_batch_norm_args(const char* op, const Tensor& x, float epsilon,
                           std::initializer_list<std::pair<const char*, const Tensor*>> params) {
  if (x.rank() < 1) {
    throw ShapeError(std::string(op) + ": expected x of rank >= 1 (channels last), got " +
                     x.shape().to_string());
  }
  require_float32(x, op);
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
    if (t->dtype() != x.dtype()) {
      throw DTypeError(std::string(op) + ": " + name + " must be " + dtype_name(x.dtype()) +
                       ", got " + dtype_name(t->dtype()));
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
  r.mean = Tensor::empty(Shape{c}, x.dtype(), x.device());
  r.variance = Tensor::empty(Shape{c}, x.dtype(), x.device());
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
  // dx = dy * gamma * inv, dgamma = sum(dy * (x - mean) * inv), dbeta = sum(dy).
  autograd::record(
      y, "batch_norm_inference", {x, gamma, beta},
      [x = x.alias(), gamma = gamma.alias(), mean = moving_mean.alias(),
       variance = moving_variance.alias(),
       epsilon](const Tensor& dy, const autograd::NeedsGrad& needs) -> std::vector<Tensor> {
        const Tensor inv = rsqrt(add(variance, double(epsilon)));
        Tensor dx, dgamma, dbeta;
        if (needs[0]) dx = dy * (gamma * inv);
        if (needs[1]) dgamma = sum_rows(dy * ((x - mean) * inv));
        if (needs[2]) dbeta = sum_rows(dy);
        return {dx, dgamma, dbeta};
      });
  return y;
}

}  // namespace strata
