// Cross-entropy losses against hand-computed values, logits vs probabilities, label smoothing,
// errors, and finite-difference gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <strata/strata.h>

#include "support/gradient_check.h"

namespace strata {
namespace {

using testing::expect_all_close;
using testing::expect_gradients_match;

Tensor probs_2x3() { return tensor({0.1f, 0.6f, 0.3f, 0.7f, 0.2f, 0.1f}, {2, 3}); }

TEST(SparseCategoricalCrossentropy, ProbabilitiesByHand) {
  // Labels [1, 0] pick 0.6 and 0.7: [-log 0.6, -log 0.7] = [0.5108256, 0.3566749].
  const Tensor per_sample = losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0}), probs_2x3());
  expect_all_close(per_sample, tensor({0.5108256f, 0.3566749f}), 1e-5);
  // The loss object's default reduction is the mean over the batch: 0.4337503.
  losses::SparseCategoricalCrossentropy scce;
  EXPECT_NEAR(scce(tensor<int64_t>({1, 0}), probs_2x3()).item<double>(), 0.4337503, 1e-6);
  EXPECT_EQ(scce.name(), "sparse_categorical_crossentropy");
}

TEST(SparseCategoricalCrossentropy, LabelDtypesAndShapesAgree) {
  const Tensor expected = tensor({0.5108256f, 0.3566749f});
  expect_all_close(losses::sparse_categorical_crossentropy(tensor<int32_t>({1, 0}), probs_2x3()),
                   expected, 1e-5);
  expect_all_close(losses::sparse_categorical_crossentropy(tensor({1.0f, 0.0f}), probs_2x3()), expected,
                   1e-5);
  expect_all_close(
      losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0}, {2, 1}), probs_2x3()), expected,
      1e-5);
}

TEST(SparseCategoricalCrossentropy, LogitsAgreeWithProbabilities) {
  const Tensor logits = tensor({2.0f, -1.0f, 0.5f, 0.0f, 3.0f, -2.0f}, {2, 3});
  const Tensor labels = tensor<int64_t>({2, 1});
  expect_all_close(losses::sparse_categorical_crossentropy(labels, logits, /*from_logits=*/true),
                   losses::sparse_categorical_crossentropy(labels, softmax(logits)), 1e-5, 1e-6);
  // Extreme logits stay finite: log_softmax never exponentiates a large positive number.
  const Tensor big = tensor({1000.0f, 0.0f, -1000.0f}, {1, 3});
  EXPECT_NEAR(losses::sparse_categorical_crossentropy(tensor<int64_t>({0}), big, true).item<double>(),
              0.0, 1e-6);
  EXPECT_NEAR(losses::sparse_categorical_crossentropy(tensor<int64_t>({1}), big, true).item<double>(),
              1000.0, 1e-3);
}

TEST(SparseCategoricalCrossentropy, LabelSmoothingMatchesCategorical) {
  const Tensor one_hot_labels = tensor({0.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f}, {2, 3});
  expect_all_close(
      losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0}), probs_2x3(), false, -1, 0.1),
      losses::categorical_crossentropy(one_hot_labels, probs_2x3(), false, 0.1), 1e-5);
}

TEST(SparseCategoricalCrossentropy, Errors) {
  try {
    losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 3}), probs_2x3());
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("label 3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("3 classes"), std::string::npos) << msg;
  }
  EXPECT_THROW(losses::sparse_categorical_crossentropy(tensor<int64_t>({-1, 0}), probs_2x3()),
               ValueError);
  try {
    losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0, 2}), probs_2x3());
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
  }
  EXPECT_THROW(losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0}),
                                                       tensor<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3})),
               DTypeError);
  EXPECT_THROW(losses::sparse_categorical_crossentropy(tensor<int64_t>({1, 0}), probs_2x3(), false, 0),
               ValueError);
}

TEST(CategoricalCrossentropy, ByHandWithLabelSmoothing) {
  const Tensor y = tensor({0.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f}, {2, 3});
  expect_all_close(losses::categorical_crossentropy(y, probs_2x3()), tensor({0.5108256f, 0.3566749f}),
                   1e-5);
  // Smoothing 0.1 over 3 classes: targets 0.1/3 and 0.9 + 0.1/3. Sample 0:
  //   -(0.0333 log 0.1 + 0.9333 log 0.6 + 0.0333 log 0.3) = 0.5936558
  const double s = 0.1 / 3, h = 0.9 + s;
  const double sample0 = -(s * std::log(0.1) + h * std::log(0.6) + s * std::log(0.3));
  const double sample1 = -(h * std::log(0.7) + s * std::log(0.2) + s * std::log(0.1));
  losses::CategoricalCrossentropy cce(false, 0.1);
  EXPECT_NEAR(cce(y, probs_2x3()).item<double>(), (sample0 + sample1) / 2, 1e-5);
  EXPECT_NEAR(sample0, 0.5936558, 1e-6);
  // Unnormalised probabilities are renormalised first, as Keras does.
  expect_all_close(losses::categorical_crossentropy(y, probs_2x3() * 3.0),
                   losses::categorical_crossentropy(y, probs_2x3()), 1e-5);
}

TEST(CategoricalCrossentropy, LogitsAgreeWithProbabilities) {
  const Tensor logits = tensor({2.0f, -1.0f, 0.5f, 0.0f, 3.0f, -2.0f}, {2, 3});
  const Tensor y = tensor({0.2f, 0.3f, 0.5f, 0.0f, 1.0f, 0.0f}, {2, 3});
  expect_all_close(losses::categorical_crossentropy(y, logits, true),
                   losses::categorical_crossentropy(y, softmax(logits)), 1e-5, 1e-6);
  EXPECT_THROW(losses::categorical_crossentropy(tensor<int64_t>({1, 0}), logits, true), ShapeError);
}

TEST(BinaryCrossentropy, ByHand) {
  // [-log 0.8, -log 0.7] = [0.2231436, 0.3566749], mean 0.2899092.
  const Tensor y = tensor({1.0f, 0.0f}, {2, 1});
  const Tensor p = tensor({0.8f, 0.3f}, {2, 1});
  expect_all_close(losses::binary_crossentropy(y, p), tensor({0.2231436f, 0.3566749f}), 1e-5);
  EXPECT_NEAR(losses::BinaryCrossentropy()(y, p).item<double>(), 0.2899092, 1e-6);
  // [N] labels against [N, 1] predictions (Keras matches the ranks).
  expect_all_close(losses::binary_crossentropy(tensor({1.0f, 0.0f}), p),
                   tensor({0.2231436f, 0.3566749f}), 1e-5);
  // The mean over the last axis: [1, 2] -> one value, (0.2231436 + 0.3566749) / 2.
  EXPECT_NEAR(losses::binary_crossentropy(tensor({1.0f, 0.0f}, {1, 2}), tensor({0.8f, 0.3f}, {1, 2}))
                  .item<double>(),
              0.2899092, 1e-6);
}

TEST(BinaryCrossentropy, LogitsAgreeAndStayStable) {
  const Tensor y = tensor({1.0f, 0.0f, 0.3f}, {3, 1});
  const Tensor logits = tensor({1.5f, -0.4f, 0.2f}, {3, 1});
  expect_all_close(losses::binary_crossentropy(y, logits, true),
                   losses::binary_crossentropy(y, sigmoid(logits)), 1e-5, 1e-6);
  // max(x,0) - x z + log1p(exp(-|x|)): 100 for the wrong sign, ~0 for the right one.
  const Tensor extreme = losses::binary_crossentropy(tensor({0.0f, 1.0f, 1.0f}, {3, 1}),
                                                     tensor({100.0f, -100.0f, 100.0f}, {3, 1}), true);
  expect_all_close(extreme, tensor({100.0f, 100.0f, 0.0f}), 1e-6, 1e-6);
}

TEST(BinaryCrossentropy, LabelSmoothing) {
  // Smoothing 0.2: targets 1 -> 0.9, 0 -> 0.1. Sample 0: -(0.9 log 0.8 + 0.1 log 0.2).
  const Tensor y = tensor({1.0f, 0.0f}, {2, 1});
  const Tensor p = tensor({0.8f, 0.3f}, {2, 1});
  const double s0 = -(0.9 * std::log(0.8) + 0.1 * std::log(0.2));
  const double s1 = -(0.1 * std::log(0.3) + 0.9 * std::log(0.7));
  expect_all_close(losses::binary_crossentropy(y, p, false, 0.2), tensor({float(s0), float(s1)}),
                   1e-5);
  EXPECT_THROW(losses::BinaryCrossentropy(false, 1.5), ValueError);
}

TEST(CrossentropyGradients, MatchFiniteDifferences) {
  testing::GradCheckOptions opt;
  opt.epsilon = 1e-3;
  const Tensor probs = tensor({0.2, 0.5, 0.3, 0.6, 0.1, 0.3}, {2, 3});
  const Tensor logits = tensor({0.3, -1.2, 0.8, 1.1, 0.4, -0.7}, {2, 3});
  const Tensor labels = tensor<int64_t>({1, 2});
  const Tensor soft = tensor({0.1, 0.7, 0.2, 0.3, 0.3, 0.4}, {2, 3});
  expect_gradients_match("scce/logits", [&](const std::vector<Tensor>& in) {
    return losses::sparse_categorical_crossentropy(labels, in[0], true, -1, 0.1);
  }, {logits}, opt);
  expect_gradients_match("scce/probs", [&](const std::vector<Tensor>& in) {
    return losses::sparse_categorical_crossentropy(labels, in[0]);
  }, {probs}, opt);
  expect_gradients_match("cce/logits", [&](const std::vector<Tensor>& in) {
    return losses::categorical_crossentropy(in[0], in[1], true, 0.1);
  }, {soft, logits}, opt);
  expect_gradients_match("cce/probs", [&](const std::vector<Tensor>& in) {
    return losses::categorical_crossentropy(soft, in[0]);
  }, {probs}, opt);
  const Tensor bin = tensor({1.0, 0.0, 0.3, 0.8}, {2, 2});
  const Tensor bin_p = tensor({0.7, 0.2, 0.4, 0.9}, {2, 2});
  const Tensor bin_x = tensor({0.9, -1.3, 0.25, 2.0}, {2, 2});
  expect_gradients_match("bce/probs", [&](const std::vector<Tensor>& in) {
    return losses::binary_crossentropy(in[0], in[1], false, 0.1);
  }, {bin, bin_p}, opt);
  expect_gradients_match("bce/logits", [&](const std::vector<Tensor>& in) {
    return losses::binary_crossentropy(in[0], in[1], true);
  }, {bin, bin_x}, opt);
}

}  // namespace
}  // namespace strata
