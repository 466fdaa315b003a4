// TensorFloat-32 (TF32) execution, as TensorFlow's tf.config.experimental:
//
//   config::enable_tensor_float_32_execution(false);   // exact float32 GEMMs and convolutions
//
// TF32 tensor cores (NVIDIA Ampere and newer) multiply float32 operands rounded to a 10-bit
// mantissa and accumulate in float32: several times faster, with about 1e-3 relative error per
// product. Like TensorFlow on Ampere+, it is enabled by default; disable it for numerically
// sensitive work. Only float32 matmuls and convolutions on the GPU are affected: the CPU, the other
// dtypes and every other op compute as before. The setting is process-wide and read at each call,
// so it may be changed between steps.
#pragma once

namespace strata::config {

void enable_tensor_float_32_execution(bool enabled);
bool tensor_float_32_execution_enabled();

}  // namespace strata::config
