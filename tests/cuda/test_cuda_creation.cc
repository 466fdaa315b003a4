// The CUDA creation kernels (fill, arange, random, dropout_mask) against the CPU: constants and
// ranges identical in every dtype; Philox random numbers identical for uniform and dropout (the
// same counters, the same bits), normal and truncated normal equal to float rounding (the GPU's
// double log/cos may differ from glibc's in the last bit).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cuda/gpu_compare.h"
#include "cuda/gpu_test_utils.h"
#include "framework/backend/backend.h"

namespace strata {
namespace {

using testing::expect_values;

const Device kGpu = Device::gpu(0);
const Device kCpu = Device::cpu();
const std::vector<DType> kFloatDTypes = {float32, float64, float16, bfloat16};

// Runs make(device) on the CPU and the GPU and compares the results.
void expect_same_on_both(const std::string& what, const std::function<Tensor(Device)>& make,
                         double rtol = 0.0, double atol = 0.0) {
  const Tensor expected = make(kCpu);
  const Tensor actual = make(kGpu);
  EXPECT_EQ(actual.device(), kGpu) << what;
  expect_values(actual, expected, rtol, atol, what);
}

TEST(CudaCreation, FillEveryDType) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : {float32, float64, float16, bfloat16, int32, int64, uint8, bool_}) {
    // 0 takes the memset path, -0.0 must keep its sign, the rest the kernel.
    for (double value : {0.0, -0.0, 1.0, -2.25, 100.5, 7.0}) {
      if (dtype == uint8 && value < 0) continue;  // not representable: the CPU's cast is undefined
      expect_same_on_both(std::string("fill ") + dtype_name(dtype) + " " + std::to_string(value),
                          [&](Device d) { return full({3, 37}, value, dtype, d); });
    }
  }
  for (DType dtype : kFloatDTypes) {
    expect_same_on_both("fill NaN", [&](Device d) { return full({5}, std::nan(""), dtype, d); });
    expect_same_on_both("fill inf", [&](Device d) {
      return full({5}, -std::numeric_limits<double>::infinity(), dtype, d);
    });
  }
  // -0.0 really is negative zero on the GPU (a memset would give +0.0).
  const std::vector<float> neg_zero = full({4}, -0.0, float32, kGpu).to_vector<float>();
  for (float v : neg_zero) EXPECT_TRUE(std::signbit(v));
}

TEST(CudaCreation, ArangeEveryDType) {
  STRATA_REQUIRE_GPU();
  expect_same_on_both("int64", [](Device d) { return arange(-5, 3000000, 3, int64, d); });
  expect_same_on_both("float32", [](Device d) { return arange(0.5, 1000.5, 0.7, float32, d); });
  expect_same_on_both("float64", [](Device d) { return arange(1e5, -1e5, -0.1, float64, d); });
  expect_same_on_both("empty", [](Device d) { return arange(3, 3, 1, float32, d); });
  // Other dtypes through the kernel directly (the front-end takes int64 and floats).
  for (DType dtype : {int32, float16, bfloat16, uint8}) {
    expect_same_on_both(std::string("arange ") + dtype_name(dtype), [&](Device d) {
      Tensor t = Tensor::empty({200}, dtype, d);
      backend_for(d).arange(t, 1.0, 1.25);
      return t;
    });
  }
}

TEST(CudaCreation, UniformIsBitIdenticalToTheCpu) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kFloatDTypes) {
    // > 2^20 elements: many blocks, each element its own Philox counter.
    expect_same_on_both(std::string("uniform ") + dtype_name(dtype), [&](Device d) {
      return random_uniform({1100, 1000}, -2.0, 3.0, dtype, 42, d);
    });
  }
  // A non-zero counter offset: the global generator's draws continue where they left off.
  const GeneratorState saved = get_generator_state();
  expect_same_on_both("global generator", [](Device d) {
    set_random_seed(7);
    random_uniform({1000}, 0, 1, float32, -1, d);  // advances the offset by 1000
    return random_uniform({5000}, 0, 1, float64, -1, d);
  });
  set_generator_state(saved);
}

TEST(CudaCreation, NormalMatchesTheCpuToRounding) {
  STRATA_REQUIRE_GPU();
  // Box-Muller in double on both sides; log/cos may differ in the last double bit, which float
  // rounding almost always hides.
  expect_same_on_both("normal float32",
                      [](Device d) { return random_normal({1100, 1000}, 1.0, 2.0, float32, 3, d); },
                      1e-6, 1e-6);
  expect_same_on_both("normal float64",
                      [](Device d) { return random_normal({4096}, -1.0, 0.5, float64, 4, d); },
                      1e-12, 1e-12);
  expect_same_on_both("normal float16",
                      [](Device d) { return random_normal({4096}, 0.0, 1.0, float16, 5, d); },
                      1e-3, 1e-3);
  for (DType dtype : {float32, float64}) {
    const Tensor cpu = truncated_normal({200000}, 0.5, 2.0, dtype, 6, kCpu);
    const Tensor gpu = truncated_normal({200000}, 0.5, 2.0, dtype, 6, kGpu);
    expect_values(gpu, cpu, 1e-6, 1e-6, "truncated normal");
    // Within two standard deviations of the mean.
    for (double v : gpu.to_vector<double>()) ASSERT_LE(std::fabs(v - 0.5), 4.0 + 1e-6);
  }
}

TEST(CudaCreation, DropoutMaskIsBitIdenticalToTheCpu) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : kFloatDTypes) {
    for (float rate : {0.1f, 0.5f, 0.9f}) {
      expect_same_on_both(std::string("mask ") + dtype_name(dtype) + " " + std::to_string(rate),
                          [&](Device d) {
                            Tensor mask = Tensor::empty({(1 << 20) + 17}, dtype, d);
                            backend_for(d).dropout_mask(mask, rate, 1234, 99);
                            return mask;
                          });
    }
  }
  // Through the op: the same seed drops the same elements on both devices.
  expect_same_on_both("dropout op", [](Device d) {
    const Tensor x = random_uniform({300, 70}, -1, 1, float32, 8, d);
    return dropout(x, 0.3f, 11);
  });
}

TEST(CudaCreation, EmptyTensors) {
  STRATA_REQUIRE_GPU();
  expect_same_on_both("fill", [](Device d) { return full({0, 4}, 3.0, float32, d); });
  expect_same_on_both("uniform", [](Device d) { return random_uniform({0}, 0, 1, float32, 1, d); });
  expect_same_on_both("normal", [](Device d) { return random_normal({4, 0}, 0, 1, float64, 1, d); });
  expect_same_on_both("mask", [](Device d) {
    Tensor mask = Tensor::empty({0}, float32, d);
    backend_for(d).dropout_mask(mask, 0.5f, 1, 0);
    return mask;
  });
}

}  // namespace
}  // namespace strata
