// Helpers shared by the built-in layers: Keras' int-or-pair arguments (kernel_size, strides,
// pool_size...), padding / data_format validation, activations by Keras name (softmax included,
// which is not an eltwise kernel), and the small pieces of get_config/from_config they repeat.
#pragma once

#include <string>
#include <utility>

#include "framework/config/json.h"
#include "framework/core/tensor.h"
#include "framework/model/layer.h"
#include "framework/variables/initializers.h"
#include "framework/variables/regularizers.h"
#include "layers/keras_activation.h"

namespace strata {

// Keras accepts `3` or `(3, 3)` for kernel_size/strides/pool_size/dilation_rate: IntPair converts
// from an int, two ints ({3, 3}) or a std::pair.
struct IntPair {
  int first = 1, second = 1;
  IntPair(int v) : first(v), second(v) {}                          // NOLINT: Keras' int form
  IntPair(int a, int b) : first(a), second(b) {}
  IntPair(std::pair<int, int> p) : first(p.first), second(p.second) {}  // NOLINT
  std::pair<int, int> pair() const { return {first, second}; }
  bool operator==(const IntPair& o) const { return first == o.first && second == o.second; }
  std::string to_string() const;  // "(3, 3)"
  Json to_json() const;           // [3, 3], as Keras serialises tuples
  // A number or a two-element array; ValueError naming `what` otherwise.
  static IntPair from_json(const Json& j, const std::string& what);
};

namespace layer_utils {

// Both numbers >= 1, else ValueError "<layer>: <what> must be positive integers, got (0, 1)".
void check_positive(const IntPair& p, const std::string& what, const std::string& layer);
// Lower-cases and checks "valid"/"same" (Keras normalises case the same way).
std::string normalize_padding(const std::string& padding, const std::string& layer);
// Only channels-last data is supported (NHWC): anything else is a ValueError saying so.
void check_data_format(const std::string& data_format, const std::string& layer);

// Optional objects as Keras writes them: null when absent.
Json to_json_or_null(const Initializer& i);
Json to_json_or_null(const Regularizer& r);
// The initializer under `key` when present, else `fallback`.
Initializer initializer_from(const Json& config, const std::string& key, Initializer fallback);
Regularizer regularizer_from(const Json& config, const std::string& key);
// Applies the config's "trainable" flag (frozen layers stay frozen after a round trip).
std::shared_ptr<Layer> finish_from_config(std::shared_ptr<Layer> layer, const Json& config);
// "'name' (ClassName)" for error messages.
std::string describe(const Layer& layer);

}  // namespace layer_utils
}  // namespace strata
