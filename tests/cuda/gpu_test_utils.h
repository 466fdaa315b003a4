// Shared by the GPU tests (tests/cuda/): the skip when no GPU is present, and the GPU-vs-CPU
// comparison every CUDA kernel is tested with. These tests are ordinary ctest tests: on a
// machine without a GPU (or a build without CUDA) each one skips with a one-line reason.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "framework/backend/gpu_runtime.h"
#include "support/gradient_check.h"

namespace strata::testing {

// Empty when a GPU is usable, else why not.
inline std::string gpu_unavailable_reason() {
  if (!gpu::built_with_cuda()) return "built without CUDA (STRATA_WITH_CUDA off)";
  if (gpu::device_count() == 0) return "no GPU visible to this process";
  return "";
}

// Skips the current test, with the reason, unless /gpu:0 exists.
#define STRATA_REQUIRE_GPU()                                                    \
  do {                                                                          \
    const std::string strata_gpu_reason_ = ::strata::testing::gpu_unavailable_reason(); \
    if (!strata_gpu_reason_.empty()) GTEST_SKIP() << "GPU test: " << strata_gpu_reason_; \
  } while (0)

// Skips unless at least n GPUs exist.
#define STRATA_REQUIRE_GPUS(n)                                                              \
  do {                                                                                      \
    STRATA_REQUIRE_GPU();                                                                   \
    if (::strata::gpu::device_count() < (n))                                                \
      GTEST_SKIP() << "GPU test: needs " << (n) << " GPUs, found " << ::strata::gpu::device_count(); \
  } while (0)

// Tolerances for comparing a GPU result with the CPU's in a dtype: reductions and GEMMs sum in a
// different order, TF32/16-bit tensor cores round differently.
struct Tolerance {
  double rtol, atol;
};
inline Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return {1e-10, 1e-12};
    case DType::kFloat16: return {1e-2, 1e-2};
    case DType::kBFloat16: return {3e-2, 3e-2};
    default: return {1e-4, 1e-5};
  }
}

// Runs `f` on `inputs` (CPU tensors) on the CPU and on copies on /gpu:0, and checks every output
// of the GPU run against the CPU run within `tol` (the GPU result must live on the GPU).
inline void expect_gpu_matches_cpu(
    const char* name, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& f,
    const std::vector<Tensor>& inputs, Tolerance tol) {
  std::vector<Tensor> gpu_inputs;
  for (const Tensor& x : inputs) gpu_inputs.push_back(x.to(Device::gpu(0)));
  const std::vector<Tensor> expected = f(inputs);
  std::vector<Tensor> actual;
  {
    DeviceScope scope(Device::gpu(0));  // tensors the op creates itself go to the GPU too
    actual = f(gpu_inputs);
  }
  ASSERT_EQ(actual.size(), expected.size()) << name;
  for (size_t i = 0; i < actual.size(); ++i) {
    SCOPED_TRACE(std::string(name) + ", output " + std::to_string(i));
    EXPECT_EQ(actual[i].device(), Device::gpu(0));
    EXPECT_EQ(actual[i].dtype(), expected[i].dtype());
    expect_all_close(actual[i], expected[i], tol.rtol, tol.atol);
  }
}

// The one-output form.
inline void expect_gpu_matches_cpu(const char* name,
                                   const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                   const std::vector<Tensor>& inputs, Tolerance tol) {
  expect_gpu_matches_cpu(
      name, [&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{f(xs)}; }, inputs,
      tol);
}

}  // namespace strata::testing
