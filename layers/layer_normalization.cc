#include "layers/layer_normalization.h"

#include <algorithm>

#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "layers/layer_utils.h"

namespace strata {

using namespace layer_utils;

LayerNormalization::LayerNormalization(const LayerNormalizationOptions& options)
    : Layer("layer_normalization", options.name_), options_(options) {
  if (options_.axis_.empty()) throw ValueError("LayerNormalization: axis must not be empty");
  if (!(options_.epsilon_ > 0.0)) {
    throw ValueError("LayerNormalization: epsilon must be positive, got " +
                     std::to_string(options_.epsilon_));
  }
  if (!options_.beta_initializer_) options_.beta_initializer_ = initializers::zeros();
  if (!options_.gamma_initializer_) options_.gamma_initializer_ = initializers::ones();
}

void LayerNormalization::build(const Shape& s) {
  axes_.clear();
  for (int a : options_.axis_) {
    const int n = a < 0 ? a + s.rank() : a;
    if (n < 1 || n >= s.rank() || std::count(axes_.begin(), axes_.end(), n)) {
      throw ValueError(describe(*this) + ": invalid axis " + std::to_string(a) +
                       " for inputs of shape " + s.to_string() +
                       " (axes must be distinct and exclude the batch axis)");
    }
    axes_.push_back(n);
  }
  std::sort(axes_.begin(), axes_.end());
  built_shape_ = s;
  std::vector<int64_t> param, bcast(size_t(s.rank()), 1);
  for (int a : axes_) {
    param.push_back(s[a]);
    bcast[size_t(a)] = s[a];
  }
  broadcast_shape_ = Shape(bcast);
  const auto& o = options_;
  // autocast off: gamma and beta join the float32 normalisation of 16-bit inputs (Keras 3).
  if (o.scale_) {
    gamma_ = add_weight("gamma", Shape(param), {.initializer = o.gamma_initializer_,
                                                .regularizer = o.gamma_regularizer_,
                                                .autocast = false});
  }
  if (o.center_) {
    beta_ = add_weight("beta", Shape(param), {.initializer = o.beta_initializer_,
                                              .regularizer = o.beta_regularizer_,
                                              .autocast = false});
  }
}

Tensor LayerNormalization::call(const Tensor& x, bool) {
  bool ok = x.rank() == built_shape_.rank();
  for (int a : axes_) ok = ok && x.shape()[a] == built_shape_[a];
  if (!ok) {
    throw ShapeError(describe(*this) + ": built for inputs of shape " + built_shape_.to_string() +
                     " (normalised axes fixed), got " + x.shape().to_string());
  }
  // 16-bit inputs (mixed precision) are normalised in float32 and the result cast back, as
  // Keras 3 does: their squares overflow float16 and lose their digits in bfloat16.
  const bool narrow = x.dtype() == float16 || x.dtype() == bfloat16;
  const Tensor xc = narrow ? cast(x, float32) : x;
  // Biased variance, as Keras' moments().
  const Tensor mean = reduce_mean(xc, axes_, /*keepdims=*/true);
  const Tensor centered = xc - mean;
  const Tensor variance = reduce_mean(square(centered), axes_, /*keepdims=*/true);
  Tensor y = centered * rsqrt(add(variance, options_.epsilon_));
  if (gamma_) y = y * reshape(cast(gamma_->value(), xc.dtype()), broadcast_shape_);
  if (beta_) y = y + reshape(cast(beta_->value(), xc.dtype()), broadcast_shape_);
  return narrow ? cast(y, x.dtype()) : y;
}

Json LayerNormalization::get_config() const {
  const auto& o = options_;
  Json c = Layer::get_config();
  if (o.axis_is_list_) {
    c.set("axis", std::vector<int64_t>(o.axis_.begin(), o.axis_.end()));
  } else {
    c.set("axis", o.axis_[0]);
  }
  c.set("epsilon", o.epsilon_);
  c.set("center", o.center_);
  c.set("scale", o.scale_);
  c.set("rms_scaling", false);
  c.set("beta_initializer", o.beta_initializer_.to_json());
  c.set("gamma_initializer", o.gamma_initializer_.to_json());
  c.set("beta_regularizer", to_json_or_null(o.beta_regularizer_));
  c.set("gamma_regularizer", to_json_or_null(o.gamma_regularizer_));
  c.set("beta_constraint", Json());
  c.set("gamma_constraint", Json());
  return c;
}

std::shared_ptr<Layer> LayerNormalization::from_config(const Json& c) {
  LayerNormalizationOptions o;
  const Json axis = c.get("axis", -1);
  if (axis.is_array()) {
    const std::vector<int64_t> a = axis.as_int_vector();
    o.axis(std::vector<int>(a.begin(), a.end()));
  } else {
    o.axis(int(axis.as_int()));
  }
  if (c.get("rms_scaling", false).as_bool()) {
    throw ValueError("LayerNormalization: rms_scaling=true is not supported");
  }
  o.name(c.get("name", "").as_string())
      .epsilon(c.get("epsilon", 1e-3).as_double())
      .center(c.get("center", true).as_bool())
      .scale(c.get("scale", true).as_bool())
      .beta_initializer(initializer_from(c, "beta_initializer", {}))
      .gamma_initializer(initializer_from(c, "gamma_initializer", {}))
      .beta_regularizer(regularizer_from(c, "beta_regularizer"))
      .gamma_regularizer(regularizer_from(c, "gamma_regularizer"));
  return finish_from_config(std::make_shared<LayerNormalization>(o), c);
}

}  // namespace strata
