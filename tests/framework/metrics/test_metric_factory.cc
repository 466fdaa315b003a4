// metrics::get, Keras' compile-time accuracy rule, and every metric's state variables as the
// creator stack sees them (what a distribution strategy will intercept).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include <strata/strata.h>

#include "support/test_helpers.h"

namespace strata {
namespace {

using testing::expect_error;

template <typename M>
bool is_a(const std::shared_ptr<metrics::Metric>& m) {
  return dynamic_cast<M*>(m.get()) != nullptr;
}

TEST(MetricFactory, KerasNames) {
  EXPECT_TRUE(is_a<metrics::Accuracy>(metrics::get("accuracy")));
  EXPECT_EQ(metrics::get("acc")->name(), "acc");
  EXPECT_TRUE(is_a<metrics::BinaryAccuracy>(metrics::get("binary_accuracy")));
  EXPECT_TRUE(is_a<metrics::SparseCategoricalAccuracy>(metrics::get("sparse_categorical_accuracy")));
  EXPECT_TRUE(is_a<metrics::CategoricalAccuracy>(metrics::get("categorical_accuracy")));
  EXPECT_TRUE(is_a<metrics::TopKCategoricalAccuracy>(metrics::get("top_k_categorical_accuracy")));
  EXPECT_TRUE(is_a<metrics::SparseTopKCategoricalAccuracy>(
      metrics::get("sparse_top_k_categorical_accuracy")));
  EXPECT_TRUE(is_a<metrics::Precision>(metrics::get("precision")));
  EXPECT_TRUE(is_a<metrics::Recall>(metrics::get("recall")));
  EXPECT_TRUE(is_a<metrics::AUC>(metrics::get("auc")));
  EXPECT_EQ(metrics::get("AUC")->name(), "auc");
  EXPECT_EQ(metrics::get("SparseCategoricalAccuracy")->name(), "sparse_categorical_accuracy");
  EXPECT_TRUE(is_a<metrics::Mean>(metrics::get("Mean")));
  EXPECT_TRUE(is_a<metrics::Sum>(metrics::get("Sum")));
}

TEST(MetricFactory, LossesAsMetrics) {
  const Tensor y = tensor({0.0f, 1.0f, 0.0f, 0.0f}, {2, 2});
  const Tensor p = tensor({1.0f, 1.0f, 0.0f, 0.0f}, {2, 2});
  auto mse = metrics::get("mse");
  EXPECT_EQ(mse->name(), "mse");
  EXPECT_TRUE(is_a<metrics::MeanMetricWrapper>(mse));
  mse->update_state(y, p);
  EXPECT_NEAR(mse->result().item<double>(), 0.25, 1e-6);
  auto mae = metrics::get("mean_absolute_error");
  mae->update_state(y, p * 3.0);  // errors [3, 2], [0, 0] -> per sample [2.5, 0]
  EXPECT_NEAR(mae->result().item<double>(), 1.25, 1e-6);
  auto scce = metrics::get("sparse_categorical_crossentropy");
  scce->update_state(tensor<int32_t>({0}), tensor({0.5f, 0.5f}, {1, 2}));
  EXPECT_NEAR(scce->result().item<double>(), std::log(2.0), 1e-6);
  EXPECT_TRUE(is_a<metrics::MeanMetricWrapper>(metrics::get("binary_crossentropy")));
  EXPECT_TRUE(is_a<metrics::MeanMetricWrapper>(metrics::get("categorical_crossentropy")));
}

TEST(MetricFactory, UnknownName) {
  expect_error<ValueError>([] { metrics::get("acuracy"); },
                           {"metrics::get", "'acuracy'", "valid names", "sparse_categorical_accuracy"});
}

TEST(MetricFactory, ResolveAccuracyLikeKerasCompile) {
  using metrics::resolve_accuracy;
  // Binary: y_pred's last axis is 1, or one score per sample, or a binary cross-entropy loss
  // (multi-label [N, C] outputs).
  EXPECT_TRUE(is_a<metrics::BinaryAccuracy>(resolve_accuracy("", {32, 1}, {32, 1})));
  EXPECT_TRUE(is_a<metrics::BinaryAccuracy>(resolve_accuracy("mse", {32}, {32})));
  EXPECT_TRUE(is_a<metrics::BinaryAccuracy>(resolve_accuracy("binary_crossentropy", {32, 5}, {32, 5})));
  EXPECT_TRUE(is_a<metrics::BinaryAccuracy>(resolve_accuracy("BinaryCrossentropy", {32, 5}, {32, 5})));
  // Sparse: the loss says so, or labels lack the class axis, or it has size 1.
  EXPECT_TRUE(is_a<metrics::SparseCategoricalAccuracy>(
      resolve_accuracy("sparse_categorical_crossentropy", {32}, {32, 10})));
  EXPECT_TRUE(is_a<metrics::SparseCategoricalAccuracy>(
      resolve_accuracy("SparseCategoricalCrossentropy", {32, 10}, {32, 10})));
  EXPECT_TRUE(is_a<metrics::SparseCategoricalAccuracy>(resolve_accuracy("", {32}, {32, 10})));
  EXPECT_TRUE(is_a<metrics::SparseCategoricalAccuracy>(resolve_accuracy("", {32, 1}, {32, 10})));
  // Categorical otherwise.
  EXPECT_TRUE(is_a<metrics::CategoricalAccuracy>(
      resolve_accuracy("categorical_crossentropy", {32, 10}, {32, 10})));
  EXPECT_TRUE(is_a<metrics::CategoricalAccuracy>(resolve_accuracy("", {8, 4, 10}, {8, 4, 10})));
  // The user's spelling is the metric's name.
  EXPECT_EQ(resolve_accuracy("", {32}, {32, 10})->name(), "accuracy");
  EXPECT_EQ(resolve_accuracy("", {32}, {32, 10}, "acc")->name(), "acc");
  // And it computes what it should: sparse labels against [N, 3] scores.
  auto acc = resolve_accuracy("sparse_categorical_crossentropy", {2}, {2, 3});
  acc->update_state(tensor<int64_t>({1, 0}), tensor({0.1f, 0.8f, 0.1f, 0.2f, 0.7f, 0.1f}, {2, 3}));
  EXPECT_NEAR(acc->result().item<double>(), 0.5, 1e-6);
}

// Every metric's variables pass through the creator stack as non-trainable, on-read, summed
// state named "<metric>/<state>", and reset_state restores their initial values.
TEST(MetricVariables, CreatorStackSeesOnReadSumState) {
  std::vector<VariableSpec> seen;
  VariableCreatorScope scope([&](const VariableSpec& spec, const NextCreator& next) {
    seen.push_back(spec);
    return next(spec);
  });
  std::vector<std::shared_ptr<metrics::Metric>> all = {
      std::make_shared<metrics::Mean>("loss"),
      std::make_shared<metrics::Sum>(),
      std::make_shared<metrics::Accuracy>(),
      std::make_shared<metrics::BinaryAccuracy>(),
      std::make_shared<metrics::SparseCategoricalAccuracy>(),
      std::make_shared<metrics::CategoricalAccuracy>(),
      std::make_shared<metrics::TopKCategoricalAccuracy>(),
      std::make_shared<metrics::SparseTopKCategoricalAccuracy>(),
      std::make_shared<metrics::Precision>(),
      std::make_shared<metrics::Recall>(),
      std::make_shared<metrics::AUC>(50),
  };
  size_t total = 0;
  for (const auto& m : all) total += m->variables().size();
  ASSERT_EQ(seen.size(), total);
  EXPECT_EQ(total, 2u + 1 + 2 * 6 + 2 + 2 + 4);
  for (const VariableSpec& spec : seen) {
    EXPECT_FALSE(spec.trainable) << spec.name;
    EXPECT_EQ(spec.synchronization, VariableSynchronization::kOnRead) << spec.name;
    EXPECT_EQ(spec.aggregation, VariableAggregation::kSum) << spec.name;
  }
  for (const auto& m : all) {
    for (const auto& v : m->variables()) {
      EXPECT_EQ(v->name().rfind(m->name() + "/", 0), 0u) << v->name();
      EXPECT_EQ(v->synchronization(), VariableSynchronization::kOnRead);
      EXPECT_EQ(v->aggregation(), VariableAggregation::kSum);
    }
  }
  EXPECT_EQ(all[0]->variables()[0]->name(), "loss/total");
  EXPECT_EQ(all[0]->variables()[1]->name(), "loss/count");
  const auto& auc_vars = all.back()->variables();
  ASSERT_EQ(auc_vars.size(), 4u);
  EXPECT_EQ(auc_vars[0]->name(), "auc/true_positives");
  EXPECT_EQ(auc_vars[1]->name(), "auc/false_positives");
  EXPECT_EQ(auc_vars[2]->name(), "auc/true_negatives");
  EXPECT_EQ(auc_vars[3]->name(), "auc/false_negatives");
  EXPECT_EQ(auc_vars[0]->shape(), Shape({50}));

  // Invalid arguments are rejected before any variable is made.
  const size_t before = seen.size();
  EXPECT_THROW(metrics::AUC(200, "bad"), ValueError);
  EXPECT_THROW(metrics::Precision({2.0}), ValueError);
  EXPECT_THROW(metrics::TopKCategoricalAccuracy(0), ValueError);
  EXPECT_EQ(seen.size(), before);

  // reset_state assigns every variable its initial value.
  auto& auc = *all.back();
  auc.update_state(tensor({1.0f, 0.0f}), tensor({0.8f, 0.3f}));
  auc.reset_state();
  for (const auto& v : auc.variables()) {
    for (double x : testing::values(v->value())) EXPECT_EQ(x, 0.0) << v->name();
  }
}

}  // namespace
}  // namespace strata
