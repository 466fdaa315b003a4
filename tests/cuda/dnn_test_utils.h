// Shared by the GPU tests of the cuDNN / cuBLASLt kernels (matmul, conv2d, pooling, batch norm,
// activations): a scope that sets TF32 execution, and the comparison of a GPU run in any
// floating dtype with the CPU backend, which computes these ops in float32 only.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "cuda/gpu_test_utils.h"
#include "support/test_helpers.h"   // Tf32Scope

namespace strata::testing {

using MultiOp = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Rounds the (CPU) inputs to `dtype`, runs `f` on /gpu:0 in that dtype and on the CPU in float32
// on the same rounded values, and compares every GPU output (as float32) with the CPU's within
// `tol`. This checks the float16 / bfloat16 / float64 kernels against the float32 CPU reference.
inline void expect_gpu_in_dtype_matches_cpu(const std::string& name, const MultiOp& f,
                                            const std::vector<Tensor>& inputs, DType dtype,
                                            Tolerance tol) {
  SCOPED_TRACE(name + " in " + dtype_name(dtype));
  std::vector<Tensor> cpu_inputs, gpu_inputs;
  for (const Tensor& x : inputs) {
    const Tensor rounded = x.cast(dtype);
    cpu_inputs.push_back(rounded.cast(float32));
    gpu_inputs.push_back(rounded.to(Device::gpu(0)));
  }
  const std::vector<Tensor> expected = f(cpu_inputs);
  std::vector<Tensor> actual;
  {
    DeviceScope scope(Device::gpu(0));
    actual = f(gpu_inputs);
  }
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_EQ(actual[i].device(), Device::gpu(0));
    EXPECT_EQ(actual[i].dtype(), dtype);
    expect_all_close(actual[i].to(Device::cpu()).cast(float32), expected[i], tol.rtol, tol.atol);
  }
}

inline void expect_gpu_in_dtype_matches_cpu(const std::string& name,
                                            const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                            const std::vector<Tensor>& inputs, DType dtype,
                                            Tolerance tol) {
  expect_gpu_in_dtype_matches_cpu(
      name, [&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{f(xs)}; }, inputs,
      dtype, tol);
}

// Tolerances against the float32 CPU reference for a GPU computing in `dtype`: the output's
// rounding for 16-bit types, float32's own for float32 and float64.
inline Tolerance tolerance_against_float32(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return {1e-2, 1e-2};
    case DType::kBFloat16: return {3e-2, 3e-2};
    default: return {1e-4, 1e-5};
  }
}

// The float dtypes the cuDNN / cuBLASLt kernels are checked in.
inline std::vector<DType> dnn_dtypes() { return {float32, float16, bfloat16, float64}; }

}  // namespace strata::testing
