// CUDA softmax / log-softmax against the CPU, forward and backward: every axis and floating dtype,
// short rows (one warp each) and long rows (one block each, > 1024), many rows over many blocks,
// large logits, NaN, empty tensors, and finite-difference gradients on /gpu:0. The backward
// kernel is also called directly, so that it is checked without the rest of autograd. Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda/cuda_test_inputs.h"
#include "cuda/gpu_test_utils.h"
#include "framework/backend/backend.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_gpu_matches_cpu;
using testing::expect_gradients_match;
using testing::random_input;
using testing::tolerance_for;
using testing::values;

Tensor forward(const Tensor& x, int axis, bool log) {
  return log ? log_softmax(x, axis) : softmax(x, axis);
}

// The backward kernel itself: dx from the forward output y and the incoming gradient dy.
Tensor backward_kernel(const Tensor& y, const Tensor& dy, int axis, bool log) {
  Tensor dx = Tensor::empty(y.shape(), y.dtype(), y.device());
  const int a = axis < 0 ? axis + y.rank() : axis;
  backend_for(y).softmax_backward(y, dy, a, log, dx);
  return dx;
}

// Forward and backward of (log-)softmax of x along `axis`, GPU against CPU.
void expect_softmax_matches(const Tensor& x, int axis, bool log, const std::string& what) {
  const testing::Tolerance tol = tolerance_for(x.dtype());
  const std::string name = std::string(log ? "log_softmax " : "softmax ") + what;
  expect_gpu_matches_cpu(
      name.c_str(), [&](const std::vector<Tensor>& in) { return forward(in[0], axis, log); }, {x},
      tol);
  // y from the CPU so that both sides differentiate the same values.
  const Tensor y = forward(x, axis, log);
  const Tensor dy = random_input(x.shape(), x.dtype(), 7);
  expect_gpu_matches_cpu(
      (name + " backward").c_str(),
      [&](const std::vector<Tensor>& in) { return backward_kernel(in[0], in[1], axis, log); },
      {y, dy}, tol);
}

TEST(CudaSoftmax, EveryAxisInEveryFloatingDtype) {
  STRATA_REQUIRE_GPU();
  for (DType dtype : testing::floating_dtypes()) {
    const Tensor x = random_input({4, 5, 6}, dtype, 1, -4.0, 4.0);
    for (int axis : {0, 1, 2, -1}) {
      for (bool log : {false, true}) {
        expect_softmax_matches(x, axis, log,
                               std::string(dtype_name(dtype)) + " axis " + std::to_string(axis));
      }
    }
  }
}

TEST(CudaSoftmax, ShortAndLongRows) {
  STRATA_REQUIRE_GPU();
  // Up to 1024 a warp per row; beyond, a block per row.
  for (int64_t n : {1, 7, 32, 33, 1000, 1024, 1025, 4097, 70000}) {
    const int64_t rows = 200000 / n + 3;
    for (DType dtype : {float32, float16, float64}) {
      const Tensor x = random_input({rows, n}, dtype, n, -5.0, 5.0);
      for (bool log : {false, true}) {
        expect_softmax_matches(x, -1, log, std::string(dtype_name(dtype)) + " rows of " +
                                               std::to_string(n));
      }
    }
  }
}

TEST(CudaSoftmax, ManyRowsAndStridedAxesAcrossManyBlocks) {
  STRATA_REQUIRE_GPU();
  const Tensor many = random_input({100000, 10}, float32, 2);
  expect_softmax_matches(many, 1, false, "100000 rows of 10");
  const Tensor wide = random_input({1000, 300}, bfloat16, 3);
  expect_softmax_matches(wide, 0, false, "axis 0 of [1000, 300]");
  expect_softmax_matches(wide, 0, true, "axis 0 of [1000, 300]");
  const Tensor nhwc = random_input({8, 16, 16, 10}, float32, 4);
  expect_softmax_matches(nhwc, 3, false, "channels of NHWC");
  expect_softmax_matches(nhwc, 1, true, "height of NHWC");
}

TEST(CudaSoftmax, LargeLogitsStayFinite) {
  STRATA_REQUIRE_GPU();
  const Tensor x = add(random_input({64, 2000}, float32, 5), 1000.0);
  expect_softmax_matches(x, -1, false, "logits near 1000");
  expect_softmax_matches(x, -1, true, "logits near 1000");
  const Tensor y = softmax(x.to(Device::gpu(0)));
  for (double v : values(y)) ASSERT_TRUE(std::isfinite(v));
  const std::vector<double> row_sums = values(reduce_sum(y.to(Device::cpu()), {1}));
  for (double s : row_sums) EXPECT_NEAR(s, 1.0, 1e-4);
}

TEST(CudaSoftmax, ANaNInARowMakesThatRowNaN) {
  STRATA_REQUIRE_GPU();
  std::vector<double> v(3 * 2000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::cos(double(i));
  v[5] = std::nan("");
  v[2000 + 1999] = std::nan("");
  for (int64_t n : {int64_t(2000), int64_t(20)}) {
    const Tensor x = Tensor::from_vector(v, {int64_t(v.size()) / n, n}).cast(float32);
    expect_softmax_matches(x, -1, false, "with NaN, rows of " + std::to_string(n));
    expect_softmax_matches(x, -1, true, "with NaN, rows of " + std::to_string(n));
  }
  const Tensor y = softmax(Tensor::from_vector(v, {3, 2000}).to(Device::gpu(0)));
  const std::vector<double> out = values(y);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[2000 + 10]));
  EXPECT_FALSE(std::isnan(out[4000 + 10]));
}

TEST(CudaSoftmax, EmptyTensors) {
  STRATA_REQUIRE_GPU();
  for (const Shape& shape : {Shape{0, 5}, Shape{5, 0}, Shape{2, 0, 3}}) {
    const Tensor x = Tensor::empty(shape, float32);
    for (int axis : {0, -1}) {
      expect_softmax_matches(x, axis, false, "empty " + shape.to_string());
      expect_softmax_matches(x, axis, true, "empty " + shape.to_string());
    }
  }
}

TEST(CudaSoftmax, GradientsOnTheGpu) {
  STRATA_REQUIRE_GPU();
  const Tensor x = random_input({3, 4, 5}, float64, 8).to(Device::gpu(0));
  for (int axis : {-1, 0, 1}) {
    expect_gradients_match("softmax gpu",
                           [axis](const std::vector<Tensor>& in) { return softmax(in[0], axis); },
                           {x});
    expect_gradients_match(
        "log_softmax gpu",
        [axis](const std::vector<Tensor>& in) { return log_softmax(in[0], axis); }, {x});
  }
  // A row longer than 1024: the block-per-row kernels.
  const Tensor long_rows = random_input({2, 1100}, float64, 9).to(Device::gpu(0));
  expect_gradients_match("softmax long rows gpu",
                         [](const std::vector<Tensor>& in) { return softmax(in[0]); }, {long_rows});
  expect_gradients_match("log_softmax long rows gpu",
                         [](const std::vector<Tensor>& in) { return log_softmax(in[0]); },
                         {long_rows});
}

}  // namespace
}  // namespace strata
