// Autocasting of variable reads (Keras 3's AutocastScope). While a layer with a mixed policy
// runs its call(), this thread's autocast dtype is the layer's compute dtype, and reading a
// floating variable (Variable::value()) gives it in that dtype through a differentiable cast: a
// float32 kernel is used as float16 by the float16 matmul, and its gradient flows back to the
// float32 variable as float32. Variables made with autocast off (BatchNormalization's statistics
// and scale) are always read as they are stored.
//
// Layer::operator() opens the scopes; user code rarely needs to.
#pragma once

#include <optional>

#include "framework/core/dtype.h"

namespace strata::mixed_precision {

// This thread's autocast dtype; empty when variables are read as stored.
std::optional<DType> autocast_dtype();

// Sets this thread's autocast dtype (empty: no casting) for its lifetime; scopes nest.
class AutocastScope {
 public:
  explicit AutocastScope(std::optional<DType> dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  std::optional<DType> previous_;
};

}  // namespace strata::mixed_precision
