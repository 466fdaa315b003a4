#include "layers/prelu.h"

#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "layers/layer_utils.h"

namespace strata {

using namespace layer_utils;

PReLU::PReLU(const PReLUOptions& options) : Layer("p_re_lu", options.name_), options_(options) {
  if (!options_.alpha_initializer_) options_.alpha_initializer_ = initializers::zeros();
  for (int a : options_.shared_axes_) {
    if (a < 1) {
      throw ValueError("PReLU: shared_axes are 1-based axes after the batch axis, got " +
                       std::to_string(a));
    }
  }
}

void PReLU::build(const Shape& input_shape) {
  if (input_shape.rank() < 2) {
    throw ShapeError(describe(*this) + ": expected inputs with a batch axis and at least one "
                     "more, got " + input_shape.to_string());
  }
  std::vector<int64_t> dims(input_shape.dims().begin() + 1, input_shape.dims().end());
  for (int a : options_.shared_axes_) {
    if (a >= input_shape.rank()) {
      throw ValueError(describe(*this) + ": shared axis " + std::to_string(a) +
                       " does not exist in inputs of shape " + input_shape.to_string());
    }
    dims[size_t(a - 1)] = 1;
  }
  for (int64_t d : dims) {
    if (d < 0) {
      throw ShapeError(describe(*this) + ": every non-shared axis needs a known size to size "
                       "alpha, got " + input_shape.to_string() + "; share the unknown axes "
                       "(shared_axes) or give the input a full shape");
    }
  }
  alpha_ = add_weight("alpha", Shape(dims), {.initializer = options_.alpha_initializer_,
                                             .regularizer = options_.alpha_regularizer_});
}

Tensor PReLU::call(const Tensor& x, bool) {
  // relu(x) + alpha * min(x, 0), as Keras' relu(x) - alpha * relu(-x).
  const Tensor pos = relu(x);
  return add(pos, multiply(alpha_->value(), subtract(x, pos)));
}

Json PReLU::get_config() const {
  Json c = Layer::get_config();
  c.set("alpha_initializer", options_.alpha_initializer_.to_json());
  c.set("alpha_regularizer", to_json_or_null(options_.alpha_regularizer_));
  c.set("alpha_constraint", Json());
  c.set("shared_axes", options_.shared_axes_.empty()
                           ? Json()
                           : Json(std::vector<int64_t>(options_.shared_axes_.begin(),
                                                       options_.shared_axes_.end())));
  return c;
}

std::shared_ptr<Layer> PReLU::from_config(const Json& c) {
  PReLUOptions o;
  o.name(c.get("name", "").as_string())
      .alpha_initializer(initializer_from(c, "alpha_initializer", {}))
      .alpha_regularizer(regularizer_from(c, "alpha_regularizer"));
  const Json axes = c.get("shared_axes", Json());
  if (!axes.is_null()) {  // Keras accepts one axis or a list
    const std::vector<int64_t> a = axes.as_int_vector();
    o.shared_axes(std::vector<int>(a.begin(), a.end()));
  }
  return finish_from_config(std::make_shared<PReLU>(o), c);
}

}  // namespace strata
