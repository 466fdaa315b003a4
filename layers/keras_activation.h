// Activations as Keras names them in layer arguments and configs (`Dense(64, "relu")`,
// `"activation": "elu"`), computed with Keras 3's defaults: elu alpha 1.0, leaky_relu negative
// slope 0.2, gelu exact (approximate=false), softmax over the last axis.
//
// An identifier is a Keras name, or, for an activation with arguments, Keras' object form
// {"class_name": "gelu", "config": {"approximate": true}}. Keras 3 writes built-in activations as
// plain names; the object form is what Strata writes when an argument differs from its default.
//
//   auto d = Dense(64, activation_config("leaky_relu", Json::object({{"negative_slope", 0.1}})));
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "framework/config/json.h"
#include "framework/core/tensor.h"

namespace strata {

// {"class_name": name, "config": arguments}: an activation with arguments, e.g.
// activation_config("gelu", Json::object({{"approximate", true}})). Arguments by activation:
// relu: negative_slope, max_value, threshold; leaky_relu: negative_slope; elu: alpha;
// gelu: approximate; softmax, log_softmax: axis. Checked when a layer uses it.
Json activation_config(const std::string& name, const Json& arguments);

namespace layer_utils {

using ActivationFn = std::function<Tensor(const Tensor&)>;

// The function an identifier names; ValueError naming the identifier and the known names (or the
// argument and the ones that activation takes) otherwise. null, "" and "linear" are the identity.
ActivationFn activation_fn(const Json& identifier);
// True for the identity (null, "" or "linear"), which layers skip entirely.
bool is_linear_activation(const Json& identifier);
// True when the identifier is exactly max(x, 0) ("relu" without arguments).
bool is_plain_relu_activation(const Json& identifier);

// keras.activations.relu with its arguments, computed as Keras 3 does: x where
// threshold < x < max_value, max_value above it, negative_slope * (x - threshold) at or below the
// threshold.
Tensor keras_relu(const Tensor& x, double negative_slope, std::optional<double> max_value,
                  double threshold);

}  // namespace layer_utils
}  // namespace strata
