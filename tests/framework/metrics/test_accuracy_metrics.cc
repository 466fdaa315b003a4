// Accuracy metrics by hand (Keras' docstring examples and more): accumulation, sample weights,
// label forms, top-k ties and invalid labels, errors naming the metric and the shapes.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

double value(const metrics::Metric& m) { return m.result().item<double>(); }

TEST(AccuracyMetric, EqualityAccuracy) {
  metrics::Accuracy m;
  m.update_state(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {4, 1}), tensor({0.0f, 2.0f, 3.0f, 4.0f}, {4, 1}));
  EXPECT_NEAR(value(m), 0.75, 1e-6);
  // Integer labels against integer predictions; 1 of 2 more: 4 / 6.
  m.update_state(tensor<int64_t>({1, 1}), tensor<int64_t>({1, 0}));
  EXPECT_NEAR(value(m), 4.0 / 6.0, 1e-6);
  m.reset_state();
  m.update_state(tensor({1.0f, 2.0f, 3.0f, 4.0f}, {4, 1}), tensor({0.0f, 2.0f, 3.0f, 4.0f}, {4, 1}),
                 tensor({1.0f, 1.0f, 0.0f, 0.0f}));
  EXPECT_NEAR(value(m), 0.5, 1e-6);
}

TEST(AccuracyMetric, BinaryAccuracy) {
  const Tensor y = tensor({1.0f, 1.0f, 0.0f, 0.0f}, {4, 1});
  const Tensor p = tensor({0.98f, 1.0f, 0.0f, 0.6f}, {4, 1});
  metrics::BinaryAccuracy m;
  m.update_state(y, p);
  EXPECT_NEAR(value(m), 0.75, 1e-6);
  m.update_state(y, p, tensor({1.0f, 0.0f, 0.0f, 1.0f}));  // 3 + 1 of 4 + 2
  EXPECT_NEAR(value(m), 4.0 / 6.0, 1e-6);
  metrics::BinaryAccuracy strict(0.7);
  strict.update_state(tensor<int32_t>({1, 1, 0, 0}), p);  // [N] int labels vs [N, 1]
  EXPECT_NEAR(value(strict), 1.0, 1e-6);
  // Multi-label [N, 2]: per-element matches averaged per sample ([1, 0.5]), then over samples.
  metrics::BinaryAccuracy multi;
  multi.update_state(tensor({1.0f, 0.0f, 1.0f, 1.0f}, {2, 2}), tensor({0.9f, 0.1f, 0.8f, 0.2f}, {2, 2}),
                     tensor({1.0f, 3.0f}));
  EXPECT_NEAR(value(multi), (1.0 + 3.0 * 0.5) / 4.0, 1e-6);
}

TEST(AccuracyMetric, SparseCategoricalAccuracy) {
  const Tensor p = tensor({0.1f, 0.6f, 0.3f, 0.05f, 0.95f, 0.0f}, {2, 3});
  metrics::SparseCategoricalAccuracy m;
  m.update_state(tensor({2.0f, 1.0f}, {2, 1}), p);  // float [N, 1] labels
  EXPECT_NEAR(value(m), 0.5, 1e-6);
  m.update_state(tensor<int32_t>({1, 1}), p);  // int32 [N]: both right -> 3 / 4
  EXPECT_NEAR(value(m), 0.75, 1e-6);
  m.update_state(tensor<int64_t>({0}, {1, 1}), p.slice(0, 1));  // int64 [N, 1]: wrong -> 3 / 5
  EXPECT_NEAR(value(m), 0.6, 1e-6);
  m.reset_state();
  m.update_state(tensor({2.0f, 1.0f}), p, tensor({0.7f, 0.3f}));
  EXPECT_NEAR(value(m), 0.3, 1e-6);
}

TEST(AccuracyMetric, CategoricalAccuracy) {
  const Tensor y = tensor({0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f}, {2, 3});
  const Tensor p = tensor({0.1f, 0.9f, 0.8f, 0.05f, 0.95f, 0.0f}, {2, 3});
  metrics::CategoricalAccuracy m;
  m.update_state(y, p);
  EXPECT_NEAR(value(m), 0.5, 1e-6);
  m.update_state(y, p, tensor({0.7f, 0.3f}, {2, 1}));  // 1 + 0.3 of 2 + 1
  EXPECT_NEAR(value(m), 1.3 / 3.0, 1e-6);
  m.reset_state();
  m.update_state(y, p, tensor({0.7f, 0.3f}));
  EXPECT_NEAR(value(m), 0.3, 1e-6);
}

TEST(AccuracyMetric, TopKCategoricalAccuracy) {
  const Tensor y = tensor({0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f}, {2, 3});
  const Tensor p = tensor({0.1f, 0.9f, 0.8f, 0.05f, 0.95f, 0.0f}, {2, 3});
  metrics::TopKCategoricalAccuracy top1(1);
  top1.update_state(y, p);
  EXPECT_NEAR(value(top1), 0.5, 1e-6);
  top1.reset_state();
  top1.update_state(y, p, tensor({0.7f, 0.3f}));
  EXPECT_NEAR(value(top1), 0.3, 1e-6);
  metrics::TopKCategoricalAccuracy top2(2);
  top2.update_state(y, p);  // 0.8 is second of the first row
  EXPECT_NEAR(value(top2), 1.0, 1e-6);
}

TEST(AccuracyMetric, SparseTopKCategoricalAccuracy) {
  const Tensor p = tensor({0.1f, 0.9f, 0.8f, 0.05f, 0.95f, 0.0f}, {2, 3});
  metrics::SparseTopKCategoricalAccuracy top1(1);
  top1.update_state(tensor<int32_t>({2, 1}), p);
  EXPECT_NEAR(value(top1), 0.5, 1e-6);
  top1.update_state(tensor({2.0f, 1.0f}, {2, 1}), p, tensor({0.7f, 0.3f}));  // 1.3 / 3
  EXPECT_NEAR(value(top1), 1.3 / 3.0, 1e-6);

  metrics::SparseTopKCategoricalAccuracy top5;  // k = 5 >= 3 classes: every valid label hits
  EXPECT_EQ(top5.k(), 5);
  top5.update_state(tensor<int64_t>({0, 2}), p);
  EXPECT_NEAR(value(top5), 1.0, 1e-6);

  // TensorFlow's in_top_k: a tie at the boundary counts as in; labels outside [0, C) miss.
  metrics::SparseTopKCategoricalAccuracy tie(1);
  tie.update_state(tensor<int32_t>({1, 0, 3, -1}),
                   tensor({0.5f, 0.5f, 0.1f, 0.5f, 0.5f, 0.1f, 0.2f, 0.3f, 0.5f, 0.2f, 0.3f, 0.5f},
                          {4, 3}));
  EXPECT_NEAR(value(tie), 0.5, 1e-6);
}

TEST(AccuracyMetric, FunctionsArePerSample) {
  const Tensor p = tensor({0.1f, 0.6f, 0.3f, 0.05f, 0.95f, 0.0f}, {2, 3});
  EXPECT_EQ(testing::values(metrics::sparse_categorical_accuracy(tensor({2.0f, 1.0f}, {2, 1}), p)),
            (std::vector<double>{0.0, 1.0}));
  EXPECT_EQ(testing::values(metrics::sparse_top_k_categorical_accuracy(tensor<int32_t>({2, 0}), p, 2)),
            (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(testing::values(metrics::binary_accuracy(tensor({1.0f, 0.0f}), tensor({0.4f, 0.4f}))),
            (std::vector<double>{0.0, 1.0}));
}

TEST(AccuracyMetric, ErrorsNameTheMetricAndShapes) {
  metrics::SparseCategoricalAccuracy sparse("acc");
  expect_error<ShapeError>([&] { sparse.update_state(ones({3}), ones({2, 4})); },
                           {"SparseCategoricalAccuracy 'acc'", "[3]", "[2,4]", "batch"});
  expect_error<ShapeError>([&] { sparse.update_state(ones({2, 2}), ones({2, 4})); },
                           {"SparseCategoricalAccuracy 'acc'", "[2,2]", "[2,4]"});
  expect_error<ShapeError>([&] { sparse.update_state(ones({2}), ones({2, 4}), ones({3})); },
                           {"'acc'", "sample_weight", "[3]"});
  metrics::CategoricalAccuracy cat;
  expect_error<ShapeError>([&] { cat.update_state(ones({2, 3}), ones({2, 4})); },
                           {"CategoricalAccuracy", "[2,3]", "[2,4]"});
  metrics::BinaryAccuracy bin;
  expect_error<ShapeError>([&] { bin.update_state(ones({2, 3}), ones({2, 2})); },
                           {"BinaryAccuracy 'binary_accuracy'", "[2,3]", "[2,2]"});
  expect_error<DTypeError>([&] { bin.update_state(ones({2}), ones({2}, int32)); },
                           {"BinaryAccuracy", "floating"});
  expect_error<ValueError>([] { metrics::TopKCategoricalAccuracy bad(0); },
                           {"TopKCategoricalAccuracy", "k must be >= 1", "0"});
  expect_error<ValueError>([] { metrics::SparseTopKCategoricalAccuracy bad(-2); },
                           {"SparseTopKCategoricalAccuracy", "-2"});
  expect_error<ValueError>([] { metrics::sparse_top_k_categorical_accuracy(ones({1}), ones({1, 2}), 0); },
                           {"sparse_top_k_categorical_accuracy", "k must be >= 1"});
  expect_error<ShapeError>([] { metrics::accuracy(ones({2, 3}), ones({3, 3})); },
                           {"accuracy", "[2,3]", "[3,3]"});
}

}  // namespace
}  // namespace strata
