// The global dtype policy (Keras' keras.mixed_precision.set_global_policy): every layer created
// afterwards takes it, unless given its own with Layer::set_dtype_policy().
//
//   mixed_precision::set_global_policy("mixed_float16");  // 16-bit compute, float32 variables
//   Sequential model({std::make_shared<Dense>(64, "relu"), std::make_shared<Dense>(10)});
//   model.compile("adam", "sparse_categorical_crossentropy");  // wraps Adam in a
//                                                              // LossScaleOptimizer
//   mixed_precision::set_global_policy("float32");        // back to the default
//
// The policy is process-wide (as Keras'); it is read when a layer is constructed, so changing it
// later leaves existing layers as they are.
#pragma once

#include "framework/mixed_precision/dtype_policy.h"

namespace strata::mixed_precision {

// ValueError for a policy whose compute dtype is not floating (int64, bool, ...): those are for
// individual non-floating layers, not for a whole model.
void set_global_policy(const DTypePolicy& policy);
// "float32" until set.
DTypePolicy global_policy();

// Sets the global policy for its lifetime and restores the previous one afterwards: a test or a
// block of model-building code that wants a policy without leaking it.
class PolicyScope {
 public:
  explicit PolicyScope(const DTypePolicy& policy);
  ~PolicyScope();
  PolicyScope(const PolicyScope&) = delete;
  PolicyScope& operator=(const PolicyScope&) = delete;

 private:
  DTypePolicy previous_;
};

}  // namespace strata::mixed_precision
