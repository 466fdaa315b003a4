// CUDA reductions and arg-reductions against the CPU: every axis subset of a rank-4 tensor in
// every dtype, shapes that take each kernel path (warp / block / split rows, simple / tiled /
// split columns, interleaved axes), empty reductions, NaN, ties, run-to-run determinism, and
// finite-difference gradients on /gpu:0. Skipped without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/gpu_test_utils.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gpu_matches_cpu;
using testing::expect_gradients_match;
using testing::random_input;
using testing::tolerance_for;
using testing::values;

using ReduceFn = Tensor (*)(const Tensor&, std::vector<int>, bool);
struct NamedReduce {
  const char* name;
  ReduceFn fn;
};
// Indices must agree exactly.
constexpr testing::Tolerance kExact{0.0, 0.0};

const std::vector<NamedReduce> kNumericReductions = {{"reduce_sum", reduce_sum},
                                                     {"reduce_mean", reduce_mean},
                                                     {"reduce_max", reduce_max},
                                                     {"reduce_min", reduce_min},
                                                     {"reduce_prod", reduce_prod}};

// The axes whose bits are set in `mask` (the empty mask means every axis, as reduce_* does).
std::vector<int> axes_of(int mask, int rank) {
  std::vector<int> axes;
  for (int a = 0; a < rank; ++a) {
    if (mask & (1 << a)) axes.push_back(a);
  }
  return axes;
}

std::string label(const char* op, DType dtype, int mask) {
  return std::string(op) + " " + dtype_name(dtype) + " axes mask " + std::to_string(mask);
}

void expect_reduction_matches(const NamedReduce& r, const Tensor& x, const std::vector<int>& axes,
                              bool keepdims, const std::string& what) {
  expect_gpu_matches_cpu(
      what.c_str(), [&](const std::vector<Tensor>& in) { return r.fn(in[0], axes, keepdims); },
      {x}, tolerance_for(x.dtype()));
}

TEST(CudaReduce, EveryAxisSubsetOfARank4TensorInEveryNumericDtype) {
  STRATA_REQUIRE_GPU();
  const Shape shape{3, 4, 5, 6};
  const std::vector<DType> dtypes = {float32, float64, float16, bfloat16, int32, int64, uint8};
  for (DType dtype : dtypes) {
    const bool is_uint8 = dtype == uint8;
    const Tensor x = random_input(shape, dtype, 11, is_uint8 ? 0.0 : -20.0, 20.0);
    // Products of 360 factors stay in range near 1 (integers wrap, identically on both sides).
    const Tensor factors = is_floating(dtype) ? random_input(shape, dtype, 12, 0.8, 1.25)
                                              : random_input(shape, dtype, 12, is_uint8 ? 0 : -3, 4);
    for (int mask = 0; mask < 16; ++mask) {
      const std::vector<int> axes = axes_of(mask, 4);
      for (const NamedReduce& r : kNumericReductions) {
        const Tensor& in = r.fn == reduce_prod ? factors : x;
        expect_reduction_matches(r, in, axes, /*keepdims=*/mask % 2 == 1,
                                 label(r.name, dtype, mask));
      }
    }
  }
}

TEST(CudaReduce, AnyAllAndBoolMaxMinOverEveryAxisSubset) {
  STRATA_REQUIRE_GPU();
  const Tensor b = random_input({3, 4, 5, 6}, bool_, 21);
  // Mostly-true input, so that `all` is not simply false everywhere.
  const Tensor mostly = random_input({3, 4, 5, 6}, bool_, 22, -2.0, 30.0);
  const std::vector<NamedReduce> reductions = {{"reduce_any", reduce_any},
                                               {"reduce_all", reduce_all},
                                               {"reduce_max", reduce_max},
                                               {"reduce_min", reduce_min}};
  for (int mask = 0; mask < 16; ++mask) {
    for (const NamedReduce& r : reductions) {
      for (const Tensor& x : {b, mostly}) {
        expect_reduction_matches(r, x, axes_of(mask, 4), mask % 2 == 0, label(r.name, bool_, mask));
      }
    }
  }
}

// Shapes chosen to take each kernel path; sums and means on positive values so that the CPU's
// and the GPU's summation orders agree to float32 precision.
TEST(CudaReduce, LargeShapesTakeEveryKernelPath) {
  STRATA_REQUIRE_GPU();
  struct Case {
    Shape shape;
    std::vector<int> axes;
    const char* path;
  };
  const std::vector<Case> cases = {
      {{65536, 64}, {0}, "bias-gradient columns, split"},
      {{1000, 1000, 4}, {1}, "narrow columns, tiled"},
      {{2, 100, 40000}, {1}, "many columns, one thread each"},
      {{3, 1 << 20}, {1}, "few long rows, split"},
      {{1 << 22}, {0}, "one long row, split"},
      {{5000, 3000}, {1}, "block per row"},
      {{20000, 100}, {1}, "warp per row"},
      {{100000, 7}, {1}, "short rows, one thread each"},
      {{64, 30, 64, 30}, {1, 3}, "interleaved, transposed first"},
      {{64, 30, 64, 30}, {0, 2}, "interleaved, transposed first"},
      {{17, 33, 1025}, {0, 2}, "interleaved, transposed first"},
  };
  const std::vector<NamedReduce> reductions = {{"reduce_sum", reduce_sum},
                                               {"reduce_mean", reduce_mean},
                                               {"reduce_max", reduce_max},
                                               {"reduce_min", reduce_min}};
  int64_t seed = 100;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + " " + c.shape.to_string());
    const Tensor positive = random_input(c.shape, float32, ++seed, 0.5, 1.5);
    const Tensor mixed = random_input(c.shape, float32, ++seed, -1.0, 1.0);
    for (const NamedReduce& r : reductions) {
      const bool sums = r.fn == reduce_sum || r.fn == reduce_mean;
      expect_reduction_matches(r, sums ? positive : mixed, c.axes, false, r.name);
    }
    // 16-bit inputs accumulate in float; integer sums wrap identically.
    expect_reduction_matches({"reduce_mean", reduce_mean}, positive.cast(bfloat16), c.axes, false,
                             "reduce_mean bfloat16");
    expect_reduction_matches({"reduce_max", reduce_max}, mixed.cast(float16), c.axes, false,
                             "reduce_max float16");
    expect_reduction_matches({"reduce_sum", reduce_sum},
                             random_input(c.shape, int32, ++seed, -1e9, 1e9), c.axes, false,
                             "reduce_sum int32 (wrapping)");
  }
}

TEST(CudaReduce, IntegerMeansTruncateAsOnTheCpu) {
  STRATA_REQUIRE_GPU();
  const Tensor x = tensor({-7, 2, 3, 8, -1, -1}, {2, 3});
  DeviceScope on(Device::gpu(0));
  const Tensor g = x.to(Device::gpu(0));
  EXPECT_EQ(reduce_mean(g, {1}).to_vector<int32_t>(), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(reduce_mean(g, {1}).to_vector<int32_t>(), reduce_mean(x, {1}).to_vector<int32_t>());
  EXPECT_EQ(reduce_mean(g).to_vector<int32_t>(), reduce_mean(x).to_vector<int32_t>());
}

TEST(CudaReduce, EmptyReductionsGiveTheIdentity) {
  STRATA_REQUIRE_GPU();
  const Tensor x = Tensor::empty({0, 5}, float32);
  const Tensor g = x.to(Device::gpu(0));
  for (const NamedReduce& r : kNumericReductions) {
    expect_reduction_matches(r, x, {1}, true, std::string(r.name) + " with an empty result");
    if (r.fn == reduce_max || r.fn == reduce_min) {
      // +-inf: expect_all_close cannot compare infinities (inf - inf is NaN), so compare exactly.
      EXPECT_EQ(values(r.fn(g, {0}, false)), values(r.fn(x, {0}, false))) << r.name;
      EXPECT_EQ(values(r.fn(g, {}, false)), values(r.fn(x, {}, false))) << r.name;
    } else {
      expect_reduction_matches(r, x, {0}, false, std::string(r.name) + " over an empty axis");
      expect_reduction_matches(r, x, {}, false, std::string(r.name) + " of everything");
    }
  }
  EXPECT_EQ(values(reduce_sum(g, {0})), std::vector<double>(5, 0.0));
  EXPECT_EQ(values(reduce_prod(g, {0})), std::vector<double>(5, 1.0));
  EXPECT_EQ(values(reduce_max(g, {0}))[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(values(reduce_min(g, {0}))[0], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(values(reduce_mean(g, {0}))[0]));
  EXPECT_EQ(reduce_mean(Tensor::empty({0, 3}, int32).to(Device::gpu(0)), {0}).to_vector<int32_t>(),
            std::vector<int32_t>(3, 0));
  EXPECT_EQ(reduce_max(Tensor::empty({4, 0}, int32).to(Device::gpu(0)), {1}).to_vector<int32_t>(),
            std::vector<int32_t>(4, std::numeric_limits<int32_t>::lowest()));
}

TEST(CudaReduce, NaNPropagatesThroughMaxMinAndWinsArgmax) {
  STRATA_REQUIRE_GPU();
  const double nan = std::nan("");
  // Rows: NaN in the middle, NaN first, two NaNs, none; each long enough for several lanes.
  std::vector<double> v(4 * 40, 1.0);
  for (int i = 0; i < 160; ++i) v[size_t(i)] = std::sin(double(i));
  v[17] = nan;
  v[40] = nan;
  v[80 + 5] = nan;
  v[80 + 30] = nan;
  const Tensor x = Tensor::from_vector(v, {4, 40});
  for (DType dtype : testing::floating_dtypes()) {
    const Tensor xd = x.cast(dtype);
    for (const NamedReduce& r : kNumericReductions) {
      expect_reduction_matches(r, xd, {1}, false, label(r.name, dtype, 2));
      expect_reduction_matches(r, xd, {0}, false, label(r.name, dtype, 1));
    }
    expect_gpu_matches_cpu("argmax NaN", [](const std::vector<Tensor>& in) { return argmax(in[0], 1); },
                           {xd}, kExact);
    expect_gpu_matches_cpu("argmin NaN", [](const std::vector<Tensor>& in) { return argmin(in[0], 0); },
                           {xd}, kExact);
  }
  const Tensor idx = argmax(x.to(Device::gpu(0)), 1);
  EXPECT_EQ(idx.to_vector<int64_t>()[0], 17);
  EXPECT_EQ(idx.to_vector<int64_t>()[1], 0);
  EXPECT_EQ(idx.to_vector<int64_t>()[2], 5);
}

TEST(CudaReduce, ArgmaxArgminEveryAxisWithTiesGoToTheFirstIndex) {
  STRATA_REQUIRE_GPU();
  const std::vector<DType> dtypes = {float32, float64, float16, bfloat16, int32, int64, uint8};
  for (DType dtype : dtypes) {
    // Three distinct values only: ties everywhere.
    const Tensor x = random_input({3, 4, 5, 6}, dtype, 31, 0.0, 3.0);
    const Tensor tied = is_floating(dtype) ? floor(x) : x;
    for (int axis = -1; axis < 4; ++axis) {
      const std::string what = std::string(dtype_name(dtype)) + " axis " + std::to_string(axis);
      expect_gpu_matches_cpu(("argmax " + what).c_str(),
                             [axis](const std::vector<Tensor>& in) { return argmax(in[0], axis); },
                             {tied}, kExact);
      expect_gpu_matches_cpu(("argmin " + what).c_str(),
                             [axis](const std::vector<Tensor>& in) { return argmin(in[0], axis); },
                             {tied}, kExact);
    }
  }
  // Long rows (block per row), a long middle axis (one thread per column), a vector.
  const std::vector<std::pair<Shape, int>> long_cases = {
      {{7, 5000}, 1}, {{5000, 7}, 0}, {{3000}, 0}, {{40, 1025}, 1}, {{2, 70000}, 1}};
  for (const auto& [shape, axis] : long_cases) {
    const Tensor x = floor(random_input(shape, float32, 41, 0.0, 50.0));
    const int a = axis;
    expect_gpu_matches_cpu("argmax long",
                           [a](const std::vector<Tensor>& in) { return argmax(in[0], a); }, {x},
                           kExact);
    expect_gpu_matches_cpu("argmin long",
                           [a](const std::vector<Tensor>& in) { return argmin(in[0], a); }, {x},
                           kExact);
  }
  // All equal: index 0 everywhere.
  const Tensor same = Tensor::from_vector(std::vector<float>(3000, 2.f), {3, 1000}).to(Device::gpu(0));
  EXPECT_EQ(argmax(same, 1).to_vector<int64_t>(), std::vector<int64_t>(3, 0));
  EXPECT_EQ(argmin(same, 0).to_vector<int64_t>(), std::vector<int64_t>(1000, 0));
}

TEST(CudaReduce, RepeatedRunsGiveIdenticalBits) {
  STRATA_REQUIRE_GPU();
  const Tensor x = random_input({3, 1 << 20}, float32, 51).to(Device::gpu(0));
  const Tensor c = random_input({65536, 64}, float32, 52).to(Device::gpu(0));
  EXPECT_EQ(reduce_sum(x, {1}).to_vector<float>(), reduce_sum(x, {1}).to_vector<float>());
  EXPECT_EQ(reduce_sum(x).to_vector<float>(), reduce_sum(x).to_vector<float>());
  EXPECT_EQ(reduce_sum(c, {0}).to_vector<float>(), reduce_sum(c, {0}).to_vector<float>());
}

TEST(CudaReduce, GradientsOnTheGpu) {
  STRATA_REQUIRE_GPU();
  const Tensor x = random_input({3, 4, 5}, float64, 61).to(Device::gpu(0));
  for (const std::vector<int>& axes : std::vector<std::vector<int>>{{1}, {0, 2}, {}}) {
    expect_gradients_match("reduce_sum gpu",
                           [axes](const std::vector<Tensor>& in) { return reduce_sum(in[0], axes); },
                           {x});
    expect_gradients_match("reduce_mean gpu",
                           [axes](const std::vector<Tensor>& in) { return reduce_mean(in[0], axes, true); },
                           {x});
    expect_gradients_match("reduce_max gpu",
                           [axes](const std::vector<Tensor>& in) { return reduce_max(in[0], axes); },
                           {x});
  }
}

}  // namespace
}  // namespace strata
