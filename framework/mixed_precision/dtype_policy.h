// DTypePolicy: the dtypes a layer computes in and keeps its variables in (Keras 3's
// keras.DTypePolicy, also keras.mixed_precision.Policy).
//
//   mixed_precision::DTypePolicy p("mixed_float16");
//   p.compute_dtype();   // float16: inputs are cast to it, variables are read in it
//   p.variable_dtype();  // float32: what add_weight creates, what the optimizer updates
//
// "float32", "float64", "float16", "bfloat16" use that dtype for both; "mixed_float16" and
// "mixed_bfloat16" compute in 16 bits and keep float32 variables. Layers whose outputs are not
// floating (Hashing) use an integer or bool policy ("int64", ...): nothing is cast for them.
#pragma once

#include <string>

#include "framework/config/json.h"
#include "framework/core/dtype.h"

namespace strata::mixed_precision {

class DTypePolicy {
 public:
  // "float32" unless given; ValueError listing the valid names for any other string.
  DTypePolicy() : DTypePolicy("float32") {}
  DTypePolicy(const std::string& name);  // NOLINT: a name stands for its policy, as in Keras
  DTypePolicy(const char* name) : DTypePolicy(std::string(name)) {}  // NOLINT

  const std::string& name() const { return name_; }
  DType compute_dtype() const { return compute_; }
  DType variable_dtype() const { return variable_; }
  // Compute and variable dtypes differ ("mixed_float16", "mixed_bfloat16").
  bool is_mixed() const { return compute_ != variable_; }

  // The "dtype" entry of a layer config. Keras 3 serialises a policy as
  // {"module": "keras", "class_name": "DTypePolicy", "config": {"name": ...},
  //  "registered_name": null}; the default "float32" stays the plain string every Keras version
  // reads (Strata writes Keras 2.15 model files, whose layers say "dtype": "float32").
  Json to_config() const;
  // Reads a plain name, Keras 3's object, or Keras 2's {"class_name": "Policy", "config": {...}}.
  // ValueError naming what was found otherwise.
  static DTypePolicy from_config(const Json& config);

  bool operator==(const DTypePolicy& other) const { return name_ == other.name_; }
  bool operator!=(const DTypePolicy& other) const { return !(*this == other); }

 private:
  std::string name_;
  DType compute_ = DType::kFloat32;
  DType variable_ = DType::kFloat32;
};

// The names DTypePolicy accepts, comma-separated (for error messages).
std::string valid_policy_names();

}  // namespace strata::mixed_precision
