#include "layers/pooling.h"

#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"

namespace strata {

using namespace layer_utils;

// ---- MaxPooling2D / AveragePooling2D ----

Pooling2D::Pooling2D(const std::string& base_name, const char* cls, IntPair pool_size,
                     std::optional<IntPair> strides, const std::string& padding,
                     const std::string& name)
    : Layer(base_name, name),
      pool_size_(pool_size),
      strides_(strides.value_or(pool_size)),
      padding_(normalize_padding(padding, cls)) {
  check_positive(pool_size_, "pool_size", cls);
  check_positive(strides_, "strides", cls);
}

Tensor Pooling2D::call(const Tensor& x, bool) {
  if (x.rank() != 4) {
    throw ShapeError(describe(*this) + ": expected inputs of rank 4 (batch, height, width, "
                     "channels), got shape " + x.shape().to_string());
  }
  try {
    return pool(x);
  } catch (const ShapeError& e) {  // e.g. a "valid" window larger than the input
    throw ShapeError(describe(*this) + ": " + e.what());
  }
}

Json Pooling2D::get_config() const {
  Json c = Layer::get_config();
  c.set("pool_size", pool_size_.to_json());
  c.set("padding", padding_);
  c.set("strides", strides_.to_json());
  c.set("data_format", "channels_last");
  return c;
}

Pooling2D::Args Pooling2D::args_from_config(const Json& c, const char* cls) {
  check_data_format(c.get("data_format", "channels_last").as_string(), cls);
  Args a;
  a.pool_size = IntPair::from_json(c.get("pool_size", 2), std::string(cls) + " pool_size");
  const Json s = c.get("strides", Json());
  if (!s.is_null()) a.strides = IntPair::from_json(s, std::string(cls) + " strides");
  a.padding = c.get("padding", "valid").as_string();
  a.name = c.get("name", "").as_string();
  return a;
}

MaxPooling2D::MaxPooling2D(IntPair pool_size, std::optional<IntPair> strides,
                           const std::string& padding, const std::string& name)
    : Pooling2D("max_pooling2d", "MaxPooling2D", pool_size, strides, padding, name) {}

Tensor MaxPooling2D::pool(const Tensor& x) const {
  return max_pool2d(x, pool_size_.pair(), strides_.pair(), padding_);
}

std::shared_ptr<Layer> MaxPooling2D::from_config(const Json& c) {
  const Args a = args_from_config(c, "MaxPooling2D");
  return finish_from_config(std::make_shared<MaxPooling2D>(a.pool_size, a.strides, a.padding, a.name), c);
}

AveragePooling2D::AveragePooling2D(IntPair pool_size, std::optional<IntPair> strides,
                                   const std::string& padding, const std::string& name)
    : Pooling2D("average_pooling2d", "AveragePooling2D", pool_size, strides, padding, name) {}

Tensor AveragePooling2D::pool(const Tensor& x) const {
  return avg_pool2d(x, pool_size_.pair(), strides_.pair(), padding_);
}

std::shared_ptr<Layer> AveragePooling2D::from_config(const Json& c) {
  const Args a = args_from_config(c, "AveragePooling2D");
  return finish_from_config(std::make_shared<AveragePooling2D>(a.pool_size, a.strides, a.padding, a.name), c);
}

// ---- Global pooling ----

Tensor GlobalPooling2D::call(const Tensor& x, bool) {
  if (x.rank() != 4) {
    throw ShapeError(describe(*this) + ": expected inputs of rank 4 (batch, height, width, "
                     "channels), got shape " + x.shape().to_string());
  }
  return reduce(x);
}

Json GlobalPooling2D::get_config() const {
  Json c = Layer::get_config();
  c.set("data_format", "channels_last");
  c.set("keepdims", keepdims_);
  return c;
}

GlobalAveragePooling2D::GlobalAveragePooling2D(bool keepdims, const std::string& name)
    : GlobalPooling2D("global_average_pooling2d", keepdims, name) {}

Tensor GlobalAveragePooling2D::reduce(const Tensor& x) const {
  return reduce_mean(x, {1, 2}, keepdims_);
}

std::shared_ptr<Layer> GlobalAveragePooling2D::from_config(const Json& c) {
  check_data_format(c.get("data_format", "channels_last").as_string(), "GlobalAveragePooling2D");
  return finish_from_config(std::make_shared<GlobalAveragePooling2D>(
                                c.get("keepdims", false).as_bool(), c.get("name", "").as_string()),
                            c);
}

GlobalMaxPooling2D::GlobalMaxPooling2D(bool keepdims, const std::string& name)
    : GlobalPooling2D("global_max_pooling2d", keepdims, name) {}

Tensor GlobalMaxPooling2D::reduce(const Tensor& x) const { return reduce_max(x, {1, 2}, keepdims_); }

std::shared_ptr<Layer> GlobalMaxPooling2D::from_config(const Json& c) {
  check_data_format(c.get("data_format", "channels_last").as_string(), "GlobalMaxPooling2D");
  return finish_from_config(std::make_shared<GlobalMaxPooling2D>(
                                c.get("keepdims", false).as_bool(), c.get("name", "").as_string()),
                            c);
}

}  // namespace strata
