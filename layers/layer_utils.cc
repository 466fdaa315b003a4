#include "layers/layer_utils.h"

#include <algorithm>
#include <cctype>

#include "framework/ops/nn_ops.h"

namespace strata {

std::string IntPair::to_string() const {
  // Appended piecewise: g++ 12 warns falsely (-Wrestrict) on "(" + std::to_string(...).
  std::string s = "(";
  s += std::to_string(first);
  s += ", ";
  s += std::to_string(second);
  s += ")";
  return s;
}

Json IntPair::to_json() const { return Json(std::vector<int64_t>{first, second}); }

IntPair IntPair::from_json(const Json& j, const std::string& what) {
  if (j.is_number()) return IntPair(int(j.as_int()));
  const std::vector<int64_t> v = j.as_int_vector();
  if (v.size() != 2) {
    throw ValueError(what + ": expected an integer or a pair of integers, got " + j.dump());
  }
  return IntPair(int(v[0]), int(v[1]));
}

namespace layer_utils {

void check_positive(const IntPair& p, const std::string& what, const std::string& layer) {
  if (p.first < 1 || p.second < 1) {
    throw ValueError(layer + ": " + what + " must be positive integers, got " + p.to_string());
  }
}

std::string normalize_padding(const std::string& padding, const std::string& layer) {
  std::string p = padding;
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return std::tolower(c); });
  if (p != "valid" && p != "same") {
    throw ValueError(layer + ": padding must be \"valid\" or \"same\", got \"" + padding + "\"");
  }
  return p;
}

void check_data_format(const std::string& data_format, const std::string& layer) {
  if (data_format != "channels_last") {
    throw ValueError(layer + ": only data_format=\"channels_last\" (NHWC) is supported, got \"" +
                     data_format + "\"; transpose channels-first data to NHWC first");
  }
}

ActivationFn activation_fn(const std::string& name) {
  if (name.empty() || name == "linear") return [](const Tensor& x) { return x; };
  if (name == "softmax") return [](const Tensor& x) { return softmax(x, -1); };
  if (name == "log_softmax") return [](const Tensor& x) { return log_softmax(x, -1); };
  try {
    const Activation act = activation_from_name(name);
    return [act](const Tensor& x) { return activation(x, act); };
  } catch (const ValueError&) {
    throw ValueError("unknown activation '" + name +
                     "'; expected one of linear, softmax, log_softmax, relu, sigmoid, tanh, "
                     "gelu, elu, selu, swish, silu, softplus, leaky_relu, relu6, hard_sigmoid");
  }
}

Json to_json_or_null(const Initializer& i) { return i ? i.to_json() : Json(); }
Json to_json_or_null(const Regularizer& r) { return r ? r.to_json() : Json(); }

Initializer initializer_from(const Json& config, const std::string& key, Initializer fallback) {
  if (!config.contains(key) || config.at(key).is_null()) return fallback;
  return initializers::from_json(config.at(key));
}

Regularizer regularizer_from(const Json& config, const std::string& key) {
  return regularizers::from_json(config.get(key, Json()));
}

std::shared_ptr<Layer> finish_from_config(std::shared_ptr<Layer> layer, const Json& config) {
  if (!config.get("trainable", true).as_bool()) layer->set_trainable(false);
  return layer;
}

std::string describe(const Layer& layer) {
  return layer.class_name() + " '" + layer.name() + "'";
}

}  // namespace layer_utils
}  // namespace strata
