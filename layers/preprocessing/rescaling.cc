#include "layers/preprocessing/rescaling.h"

#include <cmath>

#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

Rescaling::Rescaling(double scale, double offset, const std::string& name)
    : Layer("rescaling", name), scale_(scale), offset_(offset) {
  if (!std::isfinite(scale) || !std::isfinite(offset)) {
    throw ValueError("Rescaling: scale and offset must be finite, got scale=" +
                     std::to_string(scale) + " offset=" + std::to_string(offset));
  }
}

Tensor Rescaling::call(const Tensor& x, bool) {
  Tensor xf = x.dtype() == float32 ? x : cast(x, float32);
  Tensor y = multiply(xf, scale_);
  if (offset_ != 0.0) y = add(y, offset_);
  // Computed in float32 (raw pixel values lose nothing), returned in the compute dtype as Keras.
  const DType out = is_floating(compute_dtype()) ? compute_dtype() : float32;
  return y.dtype() == out ? y : cast(y, out);
}

Json Rescaling::get_config() const {
  Json c = Layer::get_config();
  c.set("scale", scale_);
  c.set("offset", offset_);
  return c;
}

std::shared_ptr<Layer> Rescaling::from_config(const Json& c) {
  auto layer = std::make_shared<Rescaling>(c.at("scale").as_double(),
                                           c.get("offset", 0.0).as_double(),
                                           c.get("name", "").as_string());
  if (!c.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

}  // namespace strata
