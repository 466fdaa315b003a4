// Sample weights and reductions of the loss objects, and the losses::get factory.
#include <gtest/gtest.h>

#include <string>

#include <strata/strata.h>

#include "support/gradient_check.h"

namespace strata {
namespace {

using losses::Reduction;
using testing::expect_all_close;

// Per-sample squared errors [1, 4].
Tensor targets() { return tensor({0.0f, 0.0f}, {2, 1}); }
Tensor preds() { return tensor({1.0f, 2.0f}, {2, 1}); }

TEST(LossReduction, SampleWeightsAndReductions) {
  const Tensor sw = tensor({1.0f, 0.5f});  // weighted losses [1, 2]
  EXPECT_NEAR(losses::MeanSquaredError()(targets(), preds()).item<double>(), 2.5, 1e-7);
  // sum_over_batch_size divides by the number of losses, not the sum of weights: 3 / 2.
  EXPECT_NEAR(losses::MeanSquaredError()(targets(), preds(), sw).item<double>(), 1.5, 1e-7);
  EXPECT_NEAR(losses::MeanSquaredError(Reduction::kSum)(targets(), preds(), sw).item<double>(), 3.0, 1e-7);
  expect_all_close(losses::MeanSquaredError(Reduction::kNone)(targets(), preds(), sw), tensor({1.0f, 2.0f}));
  EXPECT_NEAR(losses::MeanSquaredError(Reduction::kMeanWithSampleWeight)(targets(), preds(), sw).item<double>(),
              2.0, 1e-7);  // 3 / 1.5
  // [N, 1] weights and scalar weights work too.
  EXPECT_NEAR(losses::MeanSquaredError()(targets(), preds(), reshape(sw, {2, 1})).item<double>(), 1.5, 1e-7);
  EXPECT_NEAR(losses::MeanSquaredError()(targets(), preds(), Tensor::scalar(2.0f)).item<double>(), 5.0, 1e-7);
  // Integer weights are cast.
  EXPECT_NEAR(losses::MeanSquaredError(Reduction::kSum)(targets(), preds(), tensor<int32_t>({0, 1}))
                  .item<double>(),
              4.0, 1e-7);
}

TEST(LossReduction, CrossentropyWithSampleWeights) {
  // Per-sample [-log 0.6, -log 0.7]; weights [0, 2] keep only 2 * 0.3566749, divided by 2.
  const Tensor probs = tensor({0.1f, 0.6f, 0.3f, 0.7f, 0.2f, 0.1f}, {2, 3});
  losses::SparseCategoricalCrossentropy scce;
  EXPECT_NEAR(scce(tensor<int64_t>({1, 0}), probs, tensor({0.0f, 2.0f})).item<double>(),
              0.3566749, 1e-6);
}

TEST(LossReduction, BadSampleWeightShape) {
  try {
    losses::MeanSquaredError()(targets(), preds(), ones({3}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("sample_weight"), std::string::npos) << e.what();
  }
}

TEST(LossReduction, ReductionNames) {
  EXPECT_EQ(losses::reduction_from_name("sum_over_batch_size"), Reduction::kSumOverBatchSize);
  EXPECT_EQ(losses::reduction_from_name("mean"), Reduction::kSumOverBatchSize);
  EXPECT_EQ(losses::reduction_from_name("sum"), Reduction::kSum);
  EXPECT_EQ(losses::reduction_from_name("none"), Reduction::kNone);
  EXPECT_STREQ(losses::reduction_name(Reduction::kSum), "sum");
  try {
    losses::reduction_from_name("avg");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'avg'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sum_over_batch_size"), std::string::npos) << e.what();
  }
}

TEST(LossReduction, FactoryWithKerasAliases) {
  EXPECT_EQ(losses::get("sparse_categorical_crossentropy")->name(),
            "sparse_categorical_crossentropy");
  EXPECT_EQ(losses::get("mse")->name(), "mean_squared_error");
  EXPECT_EQ(losses::get("MSE")->name(), "mean_squared_error");
  EXPECT_EQ(losses::get("mae")->name(), "mean_absolute_error");
  EXPECT_EQ(losses::get("BinaryCrossentropy")->name(), "binary_crossentropy");
  EXPECT_EQ(losses::get("huber")->name(), "huber_loss");
  EXPECT_NEAR((*losses::get("mse"))(targets(), preds()).item<double>(), 2.5, 1e-7);
  try {
    losses::get("mean_squared_logarithmic_error");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'mean_squared_logarithmic_error'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("mse"), std::string::npos) << msg;
  }
}

TEST(LossReduction, GradientThroughTheWeightedMean) {
  const Tensor probs = tensor({0.2, 0.5, 0.3, 0.6, 0.1, 0.3}, {2, 3});
  const Tensor sw = tensor({0.5, 2.0});
  losses::SparseCategoricalCrossentropy scce;
  testing::expect_gradients_match("scce weighted mean", [&](const std::vector<Tensor>& in) {
    return scce(tensor<int64_t>({1, 2}), in[0], sw);
  }, {probs});
}

}  // namespace
}  // namespace strata
