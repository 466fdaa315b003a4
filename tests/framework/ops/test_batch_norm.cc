#include <gtest/gtest.h>

#include <cmath>
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

struct Stats {
  std::vector<double> mean, variance;
};

// Per-channel (last axis) batch statistics, variance biased.
Stats reference_stats(const Tensor& x) {
  const int64_t c = x.dim(-1), rows = x.numel() / c;
  const std::vector<double> v = x.to_vector<double>();
  Stats s{std::vector<double>(size_t(c), 0.0), std::vector<double>(size_t(c), 0.0)};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) s.mean[size_t(j)] += v[size_t(r * c + j)] / double(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) {
      const double d = v[size_t(r * c + j)] - s.mean[size_t(j)];
      s.variance[size_t(j)] += d * d / double(rows);
    }
  return s;
}

Tensor reference_normalise(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           const std::vector<double>& mean, const std::vector<double>& var,
                           double eps) {
  const int64_t c = x.dim(-1);
  const std::vector<double> v = x.to_vector<double>(), g = gamma.to_vector<double>(),
                            b = beta.to_vector<double>();
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t j = i % size_t(c);
    y[i] = g[j] * (v[i] - mean[j]) / std::sqrt(var[j] + eps) + b[j];
  }
  return Tensor::from_vector(y, x.shape()).cast(float32);
}

Tensor vec(const std::vector<double>& v) { return Tensor::from_vector(v).cast(float32); }

TEST(BatchNorm, TrainingMatchesReference) {
  int seed = 1;
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{6, 3}, Shape{4, 5, 7}, Shape{3, 4, 4, 32}}) {
    SCOPED_TRACE(shape.to_string());
    const int64_t c = shape[shape.rank() - 1];
    const Tensor x = random_normal(shape, 1.5, 2.0, float32, seed++);
    const Tensor gamma = random_uniform({c}, 0.5, 1.5, float32, seed++);
    const Tensor beta = random_normal({c}, 0, 1, float32, seed++);
    const BatchNormResult r = batch_norm_training(x, gamma, beta, 1e-3f);
    const Stats s = reference_stats(x);
    expect_all_close(r.mean, vec(s.mean), 1e-5, 1e-5);
    expect_all_close(r.variance, vec(s.variance), 1e-4, 1e-5);
    expect_all_close(r.y, reference_normalise(x, gamma, beta, s.mean, s.variance, 1e-3), 1e-4,
                     1e-4);
  }
}

TEST(BatchNorm, InferenceMatchesReference) {
  const Tensor x = random_normal({2, 3, 3, 4}, 0, 1, float32, 7);
  const Tensor gamma = random_uniform({4}, 0.5, 1.5, float32, 8);
  const Tensor beta = random_normal({4}, 0, 1, float32, 9);
  const std::vector<double> mean = {0.1, -0.2, 0.3, 0.0}, var = {1.0, 0.5, 2.0, 0.25};
  const Tensor y = batch_norm_inference(x, gamma, beta, vec(mean), vec(var), 1e-3f);
  expect_all_close(y, reference_normalise(x, gamma, beta, mean, var, 1e-3), 1e-5, 1e-5);
}

TEST(BatchNorm, TrainingGradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  for (const Shape& shape : {Shape{2, 3, 2, 3}, Shape{5, 2}}) {
    const int64_t c = shape[shape.rank() - 1];
    expect_gradients_match(
        ("batch_norm_training " + shape.to_string()).c_str(),
        [](const std::vector<Tensor>& in) {
          return batch_norm_training(in[0], in[1], in[2], 1e-3f).y;
        },
        {random_normal(shape, 0, 1, float32, 11), random_uniform({c}, 0.5, 1.5, float32, 12),
         random_normal({c}, 0, 1, float32, 13)},
        opts);
  }
}

TEST(BatchNorm, InferenceGradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  const Tensor mean = vec({0.1, -0.2, 0.3}), var = vec({1.0, 0.5, 2.0});
  expect_gradients_match(
      "batch_norm_inference",
      [mean, var](const std::vector<Tensor>& in) {
        return batch_norm_inference(in[0], in[1], in[2], mean, var, 1e-3f);
      },
      {random_normal({2, 2, 2, 3}, 0, 1, float32, 21), random_uniform({3}, 0.5, 1.5, float32, 22),
       random_normal({3}, 0, 1, float32, 23)},
      opts);
}

// The fused batch-norm + ReLU kernel gives relu(batch_norm(x)) and its gradients.
TEST(BatchNorm, FusedReluMatchesUnfused) {
  for (const Shape& shape : {Shape{4, 5, 5, 16}, Shape{6, 3}}) {
    SCOPED_TRACE(shape.to_string());
    const int64_t c = shape[shape.rank() - 1];
    const Tensor x = random_normal(shape, 0.5, 2.0, float32, 31);
    const Tensor gamma = random_uniform({c}, 0.5, 1.5, float32, 32);
    const Tensor beta = random_normal({c}, 0, 1, float32, 33);
    const Tensor weighting = random_normal(shape, 0, 1, float32, 34);
    auto grads_of = [&](bool fused) {
      GradientTape tape(/*persistent=*/false);
      for (const Tensor& t : {x, gamma, beta}) tape.watch(t);
      const BatchNormResult r = batch_norm_training(x, gamma, beta, 1e-3f, fused);
      const Tensor y = fused ? r.y : relu(r.y);
      std::vector<Tensor> out = tape.gradient(reduce_sum(y * weighting), {x, gamma, beta});
      out.insert(out.begin(), y);
      out.push_back(r.mean);
      out.push_back(r.variance);
      return out;
    };
    const std::vector<Tensor> fused = grads_of(true), unfused = grads_of(false);
    const char* names[] = {"y", "dx", "dgamma", "dbeta", "mean", "variance"};
    for (size_t i = 0; i < fused.size(); ++i) {
      SCOPED_TRACE(names[i]);
      expect_all_close(fused[i], unfused[i], 1e-5, 1e-5);
    }
  }
}

TEST(BatchNorm, FusedReluGradients) {
  const testing::GradCheckOptions opts{1e-2, 2e-2, 2e-3};
  expect_gradients_match(
      "batch_norm_training(fuse_relu)",
      [](const std::vector<Tensor>& in) {
        return batch_norm_training(in[0], in[1], in[2], 1e-3f, /*fuse_relu=*/true).y;
      },
      {random_normal({2, 3, 2, 3}, 0, 1, float32, 41), random_uniform({3}, 0.5, 1.5, float32, 42),
       random_normal({3}, 0, 1, float32, 43)},
      opts);
}

TEST(BatchNorm, Errors) {
  expect_error<ShapeError>([] { batch_norm_training(zeros({4, 3}), ones({4}), zeros({3})); },
                           {"batch_norm_training", "[4]", "[4,3]"});
  EXPECT_THROW(batch_norm_training(zeros({4, 3}), ones({3}), zeros({3, 1})), ShapeError);
  EXPECT_THROW(batch_norm_inference(zeros({4, 3}), ones({3}), zeros({3}), zeros({2}), ones({3})),
               ShapeError);
  EXPECT_THROW(batch_norm_training(zeros({4, 3}, int64), ones({3}), zeros({3})), DTypeError);
  EXPECT_THROW(batch_norm_training(zeros({4, 3}), ones({3}), zeros({3}), -1.0f), ValueError);
}

}  // namespace
}  // namespace strata
