// Mixed precision on the CPU. The oneDNN kernels (matmul, convolution, pooling, batch norm,
// activations) are built for float32; float16 and bfloat16 tensors reach them through these
// helpers instead: each 16-bit operand is widened into a float32 copy, the float32 kernel runs,
// and each output is rounded back to 16 bits (round to nearest even). That is what Keras does on
// a CPU (XLA and TensorFlow upcast 16-bit math there), and it makes a mixed-precision model run
// on any machine. The float32 path never comes here, so it stays as fast as it was.
#pragma once

#include <functional>
#include <initializer_list>

#include "framework/core/tensor.h"

namespace strata::cpu {

// float16 or bfloat16.
bool is_16bit_float(DType dtype);
// True when any of `tensors` (undefined ones skipped) is float16 or bfloat16.
bool any_16bit_float(std::initializer_list<std::reference_wrapper<const Tensor>> tensors);

// `t` as float32: a float32 copy of a 16-bit tensor; any other tensor (float32, undefined, or a
// dtype the float32 kernel will reject with its own error) is returned as it is.
Tensor widened(const Tensor& t);
// Uninitialised float32 memory shaped like `out`, for a kernel's result before narrow_into; the
// tensor itself when it is float32 already (the kernel then writes it directly).
Tensor float32_like(const Tensor& out);
// Copies float32 `value` into `out` with out's dtype (rounding to 16 bits); nothing when they are
// the same tensor.
void narrow_into(const Tensor& value, Tensor& out);

}  // namespace strata::cpu
