#include "layers/layer_utils.h"

#include <algorithm>
#include <cctype>

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

Json to_json_or_null(const Initializer& i) { return i ? i.to_json() : Json(); }
Json to_json_or_null(const Regularizer& r) { return r ? r.to_json() : Json(); }

Initializer initializer_from(const Json& config, const std::string& key, Initializer fallback) {
  const Json value = config.get(key, Json());  // missing or null: the layer's default
  return value.is_null() ? fallback : initializers::from_json(value);
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
