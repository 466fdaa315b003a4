// Precision, Recall and AUC by hand. The AUC expectations are worked out in the comments from
// Keras' formulas (keras.metrics.AUC.result / interpolate_pr_auc); keras itself is not
// available here.
#include <gtest/gtest.h>

#include <cmath>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

double value(const metrics::Metric& m) { return m.result().item<double>(); }

TEST(PrecisionMetric, AccumulatesAndWeights) {
  // Keras' docstring: labels [0, 1, 1, 1], predictions [1, 0, 1, 1] -> tp 2, fp 1.
  metrics::Precision m;
  EXPECT_EQ(value(m), 0.0);
  m.update_state(tensor({0.0f, 1.0f, 1.0f, 1.0f}), tensor({1.0f, 0.0f, 1.0f, 1.0f}));
  EXPECT_NEAR(value(m), 2.0 / 3.0, 1e-6);
  // 0.6 > 0.5 on a positive, 0.4 is not positive: tp 3, fp 1. Integer labels.
  m.update_state(tensor<int32_t>({1, 0}), tensor({0.6f, 0.4f}));
  EXPECT_NEAR(value(m), 0.75, 1e-6);
  m.reset_state();
  m.update_state(tensor({0.0f, 1.0f, 1.0f, 1.0f}), tensor({1.0f, 0.0f, 1.0f, 1.0f}),
                 tensor({0.0f, 0.0f, 1.0f, 0.0f}));
  EXPECT_NEAR(value(m), 1.0, 1e-6);
}

TEST(RecallMetric, AccumulatesAndWeights) {
  metrics::Recall m;
  m.update_state(tensor({0.0f, 1.0f, 1.0f, 1.0f}), tensor({1.0f, 0.0f, 1.0f, 1.0f}));
  EXPECT_NEAR(value(m), 2.0 / 3.0, 1e-6);  // tp 2, fn 1
  m.update_state(tensor({1.0f, 0.0f}, {2, 1}), tensor({0.6f, 0.4f}, {2, 1}));  // tp 3, fn 1
  EXPECT_NEAR(value(m), 0.75, 1e-6);
  m.reset_state();
  m.update_state(tensor({0.0f, 1.0f, 1.0f, 1.0f}), tensor({1.0f, 0.0f, 1.0f, 1.0f}),
                 tensor({0.0f, 0.0f, 1.0f, 0.0f}));
  EXPECT_NEAR(value(m), 1.0, 1e-6);
}

TEST(PrecisionMetric, SeveralThresholdsAndMultiLabel) {
  // predictions [0.2, 0.5, 0.8], labels [0, 1, 0]. At 0.3: tp 1, fp 1 -> 0.5; at 0.7: fp 1 -> 0.
  metrics::Precision m({0.3, 0.7});
  m.update_state(tensor({0.0f, 1.0f, 0.0f}), tensor({0.2f, 0.5f, 0.8f}));
  EXPECT_EQ(m.result().shape(), Shape({2}));
  EXPECT_EQ(testing::values(m.result()), (std::vector<double>{0.5, 0.0}));
  // [N, C] multi-label with per-sample weights [2, 1]: every element is a decision.
  // sample 0: labels [1, 0], preds [0.9, 0.8] -> tp 2, fp 2; sample 1: [1, 1], [0.9, 0.1] -> tp 1.
  metrics::Recall r;
  r.update_state(tensor({1.0f, 0.0f, 1.0f, 1.0f}, {2, 2}), tensor({0.9f, 0.8f, 0.9f, 0.1f}, {2, 2}),
                 tensor({2.0f, 1.0f}));
  EXPECT_NEAR(value(r), 3.0 / 4.0, 1e-6);  // tp 2 + 1, fn 1 (sample 1's second label)
  metrics::Precision p;
  p.update_state(tensor({1.0f, 0.0f, 1.0f, 1.0f}, {2, 2}), tensor({0.9f, 0.8f, 0.9f, 0.1f}, {2, 2}),
                 tensor({2.0f, 1.0f}, {2, 1}));
  EXPECT_NEAR(value(p), 3.0 / 5.0, 1e-6);  // tp 3, fp 2
}

TEST(AUCMetric, KerasDocstringExample) {
  // Keras' docstring, num_thresholds 3: thresholds [-1e-7, 0.5, 1 + 1e-7], labels [0, 0, 1, 1],
  // predictions [0, 0.5, 0.3, 0.9]: tp [2, 1, 0], fp [2, 0, 0], fn [0, 1, 2], tn [0, 2, 2].
  // ROC: recall [1, 0.5, 0], fp rate [1, 0, 0];
  // trapezoids (1 - 0) * (1 + 0.5) / 2 + (0 - 0) * (0.5 + 0) / 2 = 0.75.
  const Tensor y = tensor({0.0f, 0.0f, 1.0f, 1.0f});
  const Tensor p = tensor({0.0f, 0.5f, 0.3f, 0.9f});
  metrics::AUC roc(3);
  roc.update_state(y, p);
  EXPECT_NEAR(value(roc), 0.75, 1e-6);
  EXPECT_EQ(testing::values(roc.variables()[0]->value()), (std::vector<double>{2, 1, 0}));
  // Minoring: heights min(1, 0.5), min(0.5, 0) -> 0.5; majoring: max -> 1.
  metrics::AUC minoring(3, "ROC", "minoring");
  minoring.update_state(y, p);
  EXPECT_NEAR(value(minoring), 0.5, 1e-6);
  metrics::AUC majoring(3, "roc", "Majoring");
  majoring.update_state(y, p);
  EXPECT_NEAR(value(majoring), 1.0, 1e-6);
}

TEST(AUCMetric, PrInterpolation) {
  // Same counts; p = tp + fp = [4, 1, 0]. Bucket 0: dtp 1, dp 3, slope 1/3,
  // intercept 1 - 1/3 * 1 = 2/3, p ratio 4/1, increment 1/3 * (1 + 2/3 * ln 4) / (tp + fn = 2)
  // = 0.3206994; bucket 1: dtp 1, dp 1, slope 1, intercept 0, ratio 1 (p = 0), increment
  // 1 * 1 / 2 = 0.5. Sum 0.8206994.
  metrics::AUC pr(3, "PR");
  pr.update_state(tensor({0.0f, 0.0f, 1.0f, 1.0f}), tensor({0.0f, 0.5f, 0.3f, 0.9f}));
  const double expected = (1.0 + 2.0 / 3.0 * std::log(4.0)) / 6.0 + 0.5;
  EXPECT_NEAR(value(pr), expected, 1e-6);
  EXPECT_NEAR(expected, 0.8206994, 1e-7);
}

TEST(AUCMetric, DefaultThresholdsGiveExactRocAucWithWeightsAndAccumulation) {
  // 200 thresholds, spacing 1/199 ~ 0.005: no two predictions share a bucket, so each ROC
  // segment is vertical or horizontal and the trapezoids give the exact AUC, the fraction of
  // (positive, negative) pairs ordered correctly. Positives 0.9, 0.8, 0.4, 0.35; negatives
  // 0.7, 0.3, 0.2, 0.1: 0.9 and 0.8 beat all 4 negatives, 0.4 and 0.35 beat 3 -> 14 / 16.
  metrics::AUC m;
  EXPECT_EQ(m.num_thresholds(), 200);
  m.update_state(tensor({1.0f, 0.0f, 1.0f, 0.0f}), tensor({0.9f, 0.7f, 0.8f, 0.3f}));
  m.update_state(tensor({1.0f, 1.0f, 0.0f, 0.0f}, {4, 1}), tensor({0.4f, 0.35f, 0.2f, 0.1f}, {4, 1}));
  EXPECT_NEAR(value(m), 14.0 / 16.0, 1e-5);
  // Weight 2 on the positive 0.9: sum over pairs of w_p * w_n * [p > n] / (W_p * W_n)
  // = (2*4 + 4 + 3 + 3) / (5 * 4) = 0.9.
  m.reset_state();
  EXPECT_EQ(value(m), 0.0);
  m.update_state(tensor({1.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f}),
                 tensor({0.9f, 0.7f, 0.8f, 0.3f, 0.4f, 0.35f, 0.2f, 0.1f}),
                 tensor({2.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}));
  EXPECT_NEAR(value(m), 0.9, 1e-5);
}

TEST(AUCMetric, Errors) {
  expect_error<ValueError>([] { metrics::AUC bad(1); }, {"AUC 'auc'", "num_thresholds", "1"});
  expect_error<ValueError>([] { metrics::AUC bad(10, "XY"); }, {"AUC", "curve", "XY"});
  expect_error<ValueError>([] { metrics::AUC bad(10, "PR", "riemann"); },
                           {"AUC", "summation_method", "riemann"});
  metrics::AUC m;
  expect_error<ShapeError>([&] { m.update_state(ones({3}), ones({2})); },
                           {"AUC 'auc'", "[3]", "[2]"});
  expect_error<ShapeError>([&] { m.update_state(ones({2, 3}), ones({2, 2})); },
                           {"AUC 'auc'", "[2,3]", "[2,2]"});
}

TEST(PrecisionRecallMetric, Errors) {
  expect_error<ValueError>([] { metrics::Precision bad({1.5}); },
                           {"Precision 'precision'", "thresholds must be in [0, 1]", "1.5"});
  expect_error<ValueError>([] { metrics::Recall bad({-0.1}, "rec"); }, {"Recall 'rec'", "-0.1"});
  expect_error<ValueError>([] { metrics::Recall bad(std::vector<double>{}); }, {"Recall", "empty"});
  metrics::Precision m;
  expect_error<ShapeError>([&] { m.update_state(ones({4}), ones({4}), ones({3})); },
                           {"Precision 'precision'", "sample_weight", "[3]", "[4]"});
  expect_error<DTypeError>([&] { m.update_state(ones({2}), ones({2}, int64)); },
                           {"Precision", "floating"});
}

}  // namespace
}  // namespace strata
