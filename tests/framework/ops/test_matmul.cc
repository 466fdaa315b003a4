#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <strata/strata.h>

#include "support/gradient_check.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_gradients_match;
using testing::expect_error;

// Naive reference: out[b] = op(a[b]) @ op(b[b or 0]) in double precision.
Tensor reference_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = ta ? a.dim(ra - 1) : a.dim(ra - 2), k = ta ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t n = tb ? b.dim(rb - 2) : b.dim(rb - 1);
  const int64_t batch = a.numel() / (m * k);
  const bool b_batched = rb > 2;
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<float> out(size_t(batch * m * n));
  for (int64_t p = 0; p < batch; ++p) {
    const double* pa = av.data() + p * m * k;
    const double* pb = bv.data() + (b_batched ? p * k * n : 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l) {
          s += (ta ? pa[l * m + i] : pa[i * k + l]) * (tb ? pb[j * k + l] : pb[l * n + j]);
        }
        out[size_t((p * m + i) * n + j)] = float(s);
      }
    }
  }
  std::vector<int64_t> dims(a.shape().begin(), a.shape().end() - 2);
  dims.push_back(m);
  dims.push_back(n);
  return Tensor::from_vector(out, Shape(dims));
}

// Shape of an operand [batch..., rows, cols], stored transposed when `t`.
Shape operand(std::vector<int64_t> batch, int64_t rows, int64_t cols, bool t) {
  batch.push_back(t ? cols : rows);
  batch.push_back(t ? rows : cols);
  return Shape(batch);
}

TEST(Matmul, MatchesReferenceForEveryTransposeCombination) {
  int seed = 1;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor a = random_normal(operand({}, 7, 5, ta), 0, 1, float32, seed++);
      const Tensor b = random_normal(operand({}, 5, 3, tb), 0, 1, float32, seed++);
      const Tensor y = matmul(a, b, ta, tb);
      EXPECT_EQ(y.shape(), Shape({7, 3}));
      expect_all_close(y, reference_matmul(a, b, ta, tb), 1e-5, 1e-5);
    }
  }
}

TEST(Matmul, BatchedAndSharedRightOperand) {
  int seed = 10;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      // Batched b: one GEMM per batch element.
      const Tensor a = random_normal(operand({2, 3}, 4, 6, ta), 0, 1, float32, seed++);
      const Tensor b = random_normal(operand({2, 3}, 6, 5, tb), 0, 1, float32, seed++);
      const Tensor y = matmul(a, b, ta, tb);
      EXPECT_EQ(y.shape(), Shape({2, 3, 4, 5}));
      expect_all_close(y, reference_matmul(a, b, ta, tb), 1e-5, 1e-5);
      // b shared across the batch.
      const Tensor b2 = random_normal(operand({}, 6, 5, tb), 0, 1, float32, seed++);
      expect_all_close(matmul(a, b2, ta, tb), reference_matmul(a, b2, ta, tb), 1e-5, 1e-5);
    }
  }
}

TEST(Matmul, LargeOddSizes) {
  const Tensor a = random_normal({67, 129}, 0, 1, float32, 3);
  const Tensor b = random_normal({129, 33}, 0, 1, float32, 4);
  expect_all_close(matmul(a, b), reference_matmul(a, b, false, false), 1e-4, 1e-4);
}

TEST(Matmul, EmptyInnerDimensionGivesZeros) {
  const Tensor y = matmul(zeros({3, 0}), zeros({0, 2}));
  EXPECT_EQ(y.shape(), Shape({3, 2}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(6, 0.0f));
}

TEST(Matmul, ErrorsNameTheOpAndBothShapes) {
  EXPECT_THROW(matmul(zeros({64, 784}), zeros({100, 10})), ShapeError);
  try {
    matmul(zeros({64, 784}), zeros({100, 10}));
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()), "matmul: inner dimensions differ: [64,784] x [100,10]");
  }
  EXPECT_THROW(matmul(zeros({3}), zeros({3, 2})), ShapeError);
  expect_error<Error>([] { matmul(zeros({3}), zeros({3, 2})); }, {"matmul", "[3]", "[3,2]"});
  EXPECT_THROW(matmul(zeros({2, 4, 3}), zeros({3, 4, 5})), ShapeError);
  expect_error<Error>([] { matmul(zeros({2, 4, 3}), zeros({3, 3, 5})); },
                      {"matmul", "[2,4,3]", "[3,3,5]"});
  EXPECT_THROW(matmul(zeros({2, 3}), zeros({3, 2}, int64)), DTypeError);
  EXPECT_THROW(matmul(zeros({2, 3}, int64), zeros({3, 2}, int64)), DTypeError);
  // Transposes are taken into account.
  EXPECT_NO_THROW(matmul(zeros({3, 2}), zeros({4, 3}), true, true));
  expect_error<Error>([] { matmul(zeros({2, 3}), zeros({4, 3}), true, false); },
                      {"matmul", "[2,3]", "[4,3]"});
}

TEST(Matmul, Gradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  int seed = 100;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const std::string name = "matmul ta=" + std::to_string(ta) + " tb=" + std::to_string(tb);
      auto f = [ta, tb](const std::vector<Tensor>& in) { return matmul(in[0], in[1], ta, tb); };
      expect_gradients_match(name.c_str(), f,
                             {random_normal(operand({}, 3, 4, ta), 0, 1, float32, seed++),
                              random_normal(operand({}, 4, 2, tb), 0, 1, float32, seed++)},
                             opts);
      expect_gradients_match((name + " batched").c_str(), f,
                             {random_normal(operand({2}, 3, 4, ta), 0, 1, float32, seed++),
                              random_normal(operand({2}, 4, 2, tb), 0, 1, float32, seed++)},
                             opts);
      expect_gradients_match((name + " shared b").c_str(), f,
                             {random_normal(operand({2, 2}, 3, 4, ta), 0, 1, float32, seed++),
                              random_normal(operand({}, 4, 2, tb), 0, 1, float32, seed++)},
                             opts);
    }
  }
}

}  // namespace
}  // namespace strata
