// Internal to the CUDA backend: the alpha and beta scaling factors the cuDNN calls of
// cudnn_conv.cc, cudnn_pool.cc and cudnn_batch_norm.cc pass (y = alpha * op(x) + beta * y).
// cuDNN reads them through a void pointer as double for float64 data and as float otherwise, so
// the values live here in both types; one definition for the three files. No CUDA headers.
#pragma once

#include "framework/core/dtype.h"

namespace strata::cuda {

// cuDNN's scaling factors one and zero: double for float64 data, float otherwise.
struct Scaling {
  double one_d = 1.0, zero_d = 0.0;
  float one_f = 1.0f, zero_f = 0.0f;
  bool is_double;
  explicit Scaling(DType dtype) : is_double(dtype == DType::kFloat64) {}
  const void* one() const { return is_double ? static_cast<const void*>(&one_d) : &one_f; }
  const void* zero() const { return is_double ? static_cast<const void*>(&zero_d) : &zero_f; }
};

}  // namespace strata::cuda
