// Internal: the element-wise reductions Gloo's all-reduce calls back, one per dtype and op.
#pragma once

#include <cstddef>

#include "framework/backend/kernel_params.h"
#include "framework/core/dtype.h"

namespace strata::distribute {

struct ReduceKernel {
  size_t element_size = 0;
  // out[i] = a[i] op b[i] for n elements (Gloo's AllreduceOptions::Func; out may alias a or b).
  void (*reduce)(void* out, const void* a, const void* b, size_t n) = nullptr;
  // kMean: data[i] /= ranks, after the sum (null for the other ops).
  void (*divide)(void* data, size_t n, int ranks) = nullptr;
};

// float32, float64, float16, bfloat16, int32, int64 with kSum, kMean, kMax or kMin; ValueError
// naming `what` otherwise.
ReduceKernel reduce_kernel(DType dtype, ReduceOp op, const char* what);

}  // namespace strata::distribute
