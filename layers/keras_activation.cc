#include "layers/keras_activation.h"

#include <map>
#include <vector>

#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {

Json activation_config(const std::string& name, const Json& arguments) {
  return Json::object({{"class_name", name}, {"config", arguments}});
}

namespace layer_utils {
namespace {

// The identifier's name and arguments. Keras 3's serialised forms are accepted too:
// {"module": "keras.activations", "class_name": "function", "config": "relu", ...} for a
// function, and {"class_name": "relu", "config": {...}} with arguments.
struct Parsed {
  std::string name;
  Json arguments = Json::object();
};

Parsed parse(const Json& id) {
  if (id.is_null()) return {"linear"};
  if (id.is_string()) return {id.as_string()};
  if (id.is_object() && id.contains("class_name")) {
    const std::string cls = id.at("class_name").as_string();
    const Json config = id.get("config", Json::object());
    if (cls == "function" && config.is_string()) return {config.as_string()};
    if (!config.is_object()) {
      throw ValueError("activation " + id.dump() + ": \"config\" must be an object of arguments");
    }
    return {cls, config};
  }
  throw ValueError("activation " + id.dump() + ": expected a Keras activation name such as "
                   "\"relu\", or {\"class_name\": name, \"config\": {arguments}}");
}

// The arguments each activation takes (Keras 3's signatures); anything else is a ValueError.
const std::map<std::string, std::vector<std::string>>& known_arguments() {
  static const std::map<std::string, std::vector<std::string>> args = {
      {"relu", {"negative_slope", "max_value", "threshold"}},
      {"leaky_relu", {"negative_slope", "alpha"}},  // "alpha": Keras 2's name
      {"elu", {"alpha"}},
      {"gelu", {"approximate"}},
      {"softmax", {"axis"}},
      {"log_softmax", {"axis"}},
  };
  return args;
}

void check_arguments(const Parsed& p) {
  const std::vector<std::string> keys = p.arguments.keys();
  if (keys.empty()) return;
  auto it = known_arguments().find(p.name);
  const std::vector<std::string> allowed = it == known_arguments().end()
                                               ? std::vector<std::string>{}
                                               : it->second;
  for (const std::string& key : keys) {
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == key;
    if (ok) continue;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw ValueError("activation '" + p.name + "': unknown argument '" + key + "'; " +
                     (list.empty() ? "it takes none" : "it takes " + list));
  }
}

}  // namespace

Tensor keras_relu(const Tensor& x, double negative_slope, std::optional<double> max_value,
                  double threshold) {
  // Keras 3's ReLU.static_call step by step (fused kernels for the plain forms), so the edges
  // match too: x == threshold gives 0, as Keras' strict x > threshold does.
  if (negative_slope != 0 && !max_value && threshold == 0) {
    return leaky_relu(x, float(negative_slope));
  }
  bool clip_max = max_value.has_value();
  Tensor y;
  if (threshold != 0) {
    y = multiply(x, cast(greater(x, full_like(x, threshold)), x.dtype()));
  } else if (max_value && *max_value == 6.0) {
    y = relu6(x);
    clip_max = false;
  } else {
    y = relu(x);
  }
  if (clip_max) y = clip_by_value(y, 0.0, *max_value);
  if (negative_slope != 0) {
    // relu(threshold - x): the distance below the threshold.
    y = subtract(y, multiply(relu(add(negative(x), threshold)), negative_slope));
  }
  return y;
}

ActivationFn activation_fn(const Json& identifier) {
  const Parsed p = parse(identifier);
  check_arguments(p);
  const Json& a = p.arguments;
  if (p.name.empty() || p.name == "linear") return [](const Tensor& x) { return x; };
  if (p.name == "softmax" || p.name == "log_softmax") {
    const int axis = int(a.get("axis", -1).as_int());
    if (p.name == "softmax") return [axis](const Tensor& x) { return softmax(x, axis); };
    return [axis](const Tensor& x) { return log_softmax(x, axis); };
  }
  if (p.name == "relu" && !a.keys().empty()) {
    const double slope = a.get("negative_slope", 0.0).as_double();
    const double threshold = a.get("threshold", 0.0).as_double();
    const Json mv = a.get("max_value", Json());
    const std::optional<double> max_value =
        mv.is_null() ? std::nullopt : std::optional<double>(mv.as_double());
    return [=](const Tensor& x) { return keras_relu(x, slope, max_value, threshold); };
  }
  if (p.name == "gelu") {
    const bool approximate = a.get("approximate", false).as_bool();
    return [approximate](const Tensor& x) { return gelu(x, approximate); };
  }
  Activation act;
  try {
    act = activation_from_name(p.name);
  } catch (const ValueError&) {
    throw ValueError("unknown activation '" + p.name + "'; expected one of " +
                     activation_names() + ", softmax, log_softmax");
  }
  // Keras 3's default unless the identifier gives the argument.
  std::optional<float> alpha;
  if (p.name == "leaky_relu") {
    alpha = float(a.get("negative_slope", a.get("alpha", 0.2)).as_double());
  } else if (p.name == "elu") {
    alpha = float(a.get("alpha", 1.0).as_double());
  }
  return [act, alpha](const Tensor& x) { return activation(x, act, alpha); };
}

bool is_linear_activation(const Json& identifier) {
  const Parsed p = parse(identifier);
  return p.name.empty() || p.name == "linear";
}

bool is_plain_relu_activation(const Json& identifier) {
  if (!identifier.is_string() && !identifier.is_object()) return false;
  const Parsed p = parse(identifier);
  if (p.name != "relu") return false;
  const Json& a = p.arguments;
  return a.get("negative_slope", 0.0).as_double() == 0 && a.get("max_value", Json()).is_null() &&
         a.get("threshold", 0.0).as_double() == 0;
}

}  // namespace layer_utils
}  // namespace strata
