#include <gtest/gtest.h>
#include <strata/strata.h>

#include "framework/callbacks/lambda_callback.h"
#include "framework/callbacks/reduce_lr_on_plateau.h"
#include "support/test_helpers.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

using testing::tiny_model;

// Feeds scripted values of `key` one epoch at a time; returns the learning rate after each.
std::vector<double> run(ReduceLROnPlateau& cb, Model& model, const std::vector<double>& values,
                        const std::string& key = "val_loss") {
  cb.set_model(&model);
  cb.on_train_begin(Logs());
  std::vector<double> lrs;
  for (size_t e = 0; e < values.size(); ++e) {
    Logs logs;
    logs.set("loss", 1.0);
    logs.set(key, values[e]);
    cb.on_epoch_end(int(e), logs);
    lrs.push_back(model.optimizer()->learning_rate());
  }
  return lrs;
}

void expect_rates(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << "epoch " << i;
}

TEST(ReduceLROnPlateau, ReducesAfterPatienceEpochsWithoutImprovement) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(0.5).patience(2).min_delta(0.0));
  expect_rates(run(cb, *model, {1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5}),
               {1.0, 1.0, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125});
}

TEST(ReduceLROnPlateau, CooldownDelaysTheNextReduction) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(0.5).patience(1).cooldown(2));
  expect_rates(run(cb, *model, {1, 1, 1, 1, 1, 1}), {1.0, 0.5, 0.5, 0.25, 0.25, 0.125});
  EXPECT_EQ(cb.cooldown_counter(), 2);
  EXPECT_TRUE(cb.in_cooldown());
}

TEST(ReduceLROnPlateau, NeverGoesBelowMinLr) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(0.1).patience(1).min_lr(0.05));
  expect_rates(run(cb, *model, {1, 1, 1, 1, 1}), {1.0, 0.1, 0.05, 0.05, 0.05});
}

TEST(ReduceLROnPlateau, MinDeltaDecidesWhatCountsAsImprovement) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(0.5).patience(1));  // min_delta 1e-4
  expect_rates(run(cb, *model, {1.0, 0.99995, 0.5}), {1.0, 0.5, 0.5});
  auto model2 = tiny_model(1.0);
  ReduceLROnPlateau exact(ReduceLROnPlateauOptions().factor(0.5).patience(1).min_delta(0.0));
  expect_rates(run(exact, *model2, {1.0, 0.99995, 0.5}), {1.0, 1.0, 1.0});
}

TEST(ReduceLROnPlateau, ModeFromMonitorName) {
  EXPECT_EQ(ReduceLROnPlateau().mode(), MonitorMode::kMin);
  EXPECT_EQ(ReduceLROnPlateau(ReduceLROnPlateauOptions().monitor("val_accuracy")).mode(),
            MonitorMode::kMax);
  // Keras 2.15's ReduceLROnPlateau only looks for "acc".
  EXPECT_EQ(ReduceLROnPlateau(ReduceLROnPlateauOptions().monitor("val_auc")).mode(),
            MonitorMode::kMin);
  EXPECT_EQ(ReduceLROnPlateau(ReduceLROnPlateauOptions().monitor("val_auc").mode("max")).mode(),
            MonitorMode::kMax);
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().monitor("val_accuracy").factor(0.5).patience(1));
  expect_rates(run(cb, *model, {0.5, 0.6, 0.6, 0.7}, "val_accuracy"), {1.0, 1.0, 0.5, 0.5});
}

TEST(ReduceLROnPlateau, VerboseMessage) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(0.5).patience(1).verbose(1));
  ::testing::internal::CaptureStdout();
  run(cb, *model, {1, 1});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "\nEpoch 2: ReduceLROnPlateau reducing learning rate to 0.5.\n");
}

TEST(ReduceLROnPlateau, MissingMonitorWarns) {
  auto model = tiny_model(1.0);
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().monitor("val_acc").patience(0));
  ::testing::internal::CaptureStderr();
  expect_rates(run(cb, *model, {1, 1}), {1.0, 1.0});
  EXPECT_NE(::testing::internal::GetCapturedStderr().find(
                "WARNING: Learning rate reduction is conditioned on metric `val_acc` which is not "
                "available. Available metrics are: loss,val_loss"),
            std::string::npos);
}

TEST(ReduceLROnPlateau, ScheduleLearningRateIsAClearError) {
  auto model = tiny_model(std::make_shared<optimizers::ExponentialDecay>(0.1, 10, 0.9));
  ReduceLROnPlateau cb(ReduceLROnPlateauOptions().patience(1));
  testing::expect_error<ValueError>(
      [&] {
        run(cb, *model, {1, 1});
      },
      {"ReduceLROnPlateau", "ExponentialDecay", "constant learning rate"});
}

TEST(ReduceLROnPlateau, BadOptions) {
  testing::expect_error<ValueError>(
      [] { ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(1.0)); },
      {"ReduceLROnPlateau", "factor", "[0, 1)", "1.0"});
  testing::expect_error<ValueError>(
      [] { ReduceLROnPlateau cb(ReduceLROnPlateauOptions().factor(-0.5)); }, {"factor"});
  testing::expect_error<ValueError>(
      [] { ReduceLROnPlateau cb(ReduceLROnPlateauOptions().cooldown(-1)); }, {"cooldown"});
  testing::expect_error<ValueError>(
      [] { ReduceLROnPlateau cb(ReduceLROnPlateauOptions().mode("down")); },
      {"ReduceLROnPlateau", "\"down\""});
}

// fit: only epoch 0 counts as an improvement (min_delta no change can meet), so with patience 1
// and cooldown 2 the rate halves at epochs 1, 3 and 5.
TEST(ReduceLROnPlateau, FitReducesAtTheRightEpochs) {
  set_random_seed(5);
  auto model = tiny_model(0.1);
  Tensor x = random_normal({32, 3}), y = random_normal({32, 1});
  auto reduce = std::make_shared<ReduceLROnPlateau>(
      ReduceLROnPlateauOptions().monitor("loss").min_delta(1e9).factor(0.5).patience(1).cooldown(
          2));
  std::vector<double> lrs;
  auto record = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_end(
      [&](int, const Logs&) { lrs.push_back(model->optimizer()->learning_rate()); }));
  model->fit(x, y, FitOptions().epochs(6).batch_size(8).verbose(0).callbacks({reduce, record}));
  expect_rates(lrs, {0.1, 0.05, 0.05, 0.025, 0.025, 0.0125});
}

}  // namespace
}  // namespace strata
