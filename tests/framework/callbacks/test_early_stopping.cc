#include <gtest/gtest.h>
#include <strata/strata.h>

#include <cmath>

#include "framework/callbacks/early_stopping.h"
#include "framework/callbacks/lambda_callback.h"
#include "support/test_helpers.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

using testing::tiny_model;

// Every weight filled with `value`, so an epoch's weights are recognisable.
void fill_weights(Model& model, double value) {
  std::vector<Tensor> w = model.get_weights();
  for (Tensor& t : w) t = full_like(t, value);
  model.set_weights(w);
}

double first_weight(const Model& model) { return testing::values(model.get_weights()[0])[0]; }

// Runs the callback over scripted values of `key`, one epoch each, the way fit calls it; returns
// the epoch (0-based) after which stop_training was set, or -1. Weights are filled with the
// epoch number before each epoch end, so restore tests can tell epochs apart.
int run(EarlyStopping& es, Model& model, const std::vector<double>& values,
        const std::string& key = "val_loss") {
  es.set_model(&model);
  model.stop_training = false;
  es.on_train_begin(Logs());
  int stopped = -1;
  for (size_t e = 0; e < values.size() && stopped < 0; ++e) {
    fill_weights(model, double(e));
    Logs logs;
    logs.set("loss", 1.0);
    logs.set(key, values[e]);
    es.on_epoch_end(int(e), logs);
    if (model.stop_training) stopped = int(e);
  }
  es.on_train_end(Logs());
  return stopped;
}

TEST(EarlyStopping, StopsAfterPatienceEpochsWithoutImprovement) {
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().patience(2));
  EXPECT_EQ(run(es, *model, {1.0, 0.9, 0.95, 0.96, 0.5}), 3);
  EXPECT_EQ(es.stopped_epoch(), 3);
  EXPECT_EQ(es.best_epoch(), 1);
  EXPECT_DOUBLE_EQ(es.best(), 0.9);
  // patience 0 stops at the first epoch that does not improve (never at epoch 0).
  EarlyStopping es0(EarlyStoppingOptions().patience(0));
  EXPECT_EQ(run(es0, *model, {1.0, 0.9, 0.95}), 2);
  EXPECT_EQ(run(es0, *model, {std::nan(""), 1.0, 1.0}), 2);
}

TEST(EarlyStopping, MinDeltaIsAnAbsoluteMargin) {
  auto model = tiny_model();
  // 0.97 is not below 1.0 - 0.05: no improvement.
  EarlyStopping es(EarlyStoppingOptions().patience(1).min_delta(0.05));
  EXPECT_EQ(run(es, *model, {1.0, 0.97, 0.5}), 1);
  // A negative min_delta means the same margin, as in Keras.
  EarlyStopping neg(EarlyStoppingOptions().patience(1).min_delta(-0.05));
  EXPECT_EQ(run(neg, *model, {1.0, 0.97, 0.5}), 1);
  EarlyStopping none(EarlyStoppingOptions().patience(1));
  EXPECT_EQ(run(none, *model, {1.0, 0.97, 0.96, 0.97}), 3);
}

TEST(EarlyStopping, ModeAutoAndMax) {
  auto model = tiny_model();
  EXPECT_EQ(EarlyStopping(EarlyStoppingOptions().monitor("val_accuracy")).mode(),
            MonitorMode::kMax);
  EXPECT_EQ(EarlyStopping(EarlyStoppingOptions().monitor("val_auc")).mode(), MonitorMode::kMax);
  EXPECT_EQ(EarlyStopping(EarlyStoppingOptions().monitor("acc")).mode(), MonitorMode::kMax);
  EXPECT_EQ(EarlyStopping(EarlyStoppingOptions().monitor("val_loss")).mode(), MonitorMode::kMin);
  EXPECT_EQ(EarlyStopping(EarlyStoppingOptions().monitor("loss").mode("max")).mode(),
            MonitorMode::kMax);
  EarlyStopping es(EarlyStoppingOptions().monitor("val_accuracy").patience(1));
  EXPECT_EQ(run(es, *model, {0.5, 0.6, 0.55, 0.7}, "val_accuracy"), 2);
}

TEST(EarlyStopping, BaselineKeepsWaitRunningUntilBeaten) {
  auto model = tiny_model();
  // Improving values that never beat the baseline do not reset wait, so the first epoch
  // without improvement stops training.
  EarlyStopping es(EarlyStoppingOptions().patience(2).baseline(0.5));
  EXPECT_EQ(run(es, *model, {0.9, 0.8, 0.85, 0.7}), 2);
  EarlyStopping no_baseline(EarlyStoppingOptions().patience(2));
  EXPECT_EQ(run(no_baseline, *model, {0.9, 0.8, 0.85, 0.7}), -1);
  // Once a value beats the baseline, patience counts from there.
  EarlyStopping beaten(EarlyStoppingOptions().patience(2).baseline(0.5));
  EXPECT_EQ(run(beaten, *model, {0.9, 0.4, 0.45, 0.46}), 3);
}

TEST(EarlyStopping, StartFromEpochIgnoresWarmup) {
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().patience(1).start_from_epoch(2));
  EXPECT_EQ(run(es, *model, {1.0, 2.0, 3.0, 4.0}), 3);
  EXPECT_EQ(es.best_epoch(), 2);
  EarlyStopping from0(EarlyStoppingOptions().patience(1));
  EXPECT_EQ(run(from0, *model, {1.0, 2.0, 3.0, 4.0}), 1);
}

TEST(EarlyStopping, RestoresBestWeightsWhenStopped) {
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().patience(2).restore_best_weights(true));
  EXPECT_EQ(run(es, *model, {1.0, 0.5, 0.7, 0.8}), 3);
  EXPECT_DOUBLE_EQ(first_weight(*model), 1.0);  // epoch 1's weights
}

TEST(EarlyStopping, RestoresBestWeightsAtTrainEndWithoutStopping) {
  // Current Keras restores in on_train_end whether or not training stopped early.
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().patience(10).restore_best_weights(true));
  EXPECT_EQ(run(es, *model, {1.0, 0.4, 0.6, 0.8}), -1);
  EXPECT_DOUBLE_EQ(first_weight(*model), 1.0);
  // Without restore_best_weights the last epoch's weights stay.
  EarlyStopping keep(EarlyStoppingOptions().patience(10));
  run(keep, *model, {1.0, 0.4, 0.6, 0.8});
  EXPECT_DOUBLE_EQ(first_weight(*model), 3.0);
}

TEST(EarlyStopping, RestoresFirstMonitoredEpochWhenNothingImproves) {
  auto model = tiny_model();
  EarlyStopping es(
      EarlyStoppingOptions().patience(2).restore_best_weights(true).start_from_epoch(1));
  EXPECT_EQ(run(es, *model, {0.1, std::nan(""), std::nan(""), 0.5}), 2);
  EXPECT_DOUBLE_EQ(first_weight(*model), 1.0);
  EXPECT_EQ(es.best_epoch(), 1);
}

TEST(EarlyStopping, ReuseResetsState) {
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().patience(1));
  EXPECT_EQ(run(es, *model, {1.0, 2.0}), 1);
  EXPECT_EQ(run(es, *model, {5.0, 4.0, 3.0, 3.5}), 3);
}

TEST(EarlyStopping, MissingMonitorWarnsAndDoesNothing) {
  auto model = tiny_model();
  EarlyStopping es(EarlyStoppingOptions().monitor("val_acc").patience(0));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(es, *model, {1.0, 2.0, 3.0}), -1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("WARNING: Early stopping conditioned on metric `val_acc` which is not "
                     "available. Available metrics are: loss,val_loss"),
            std::string::npos)
      << err;
}

TEST(EarlyStopping, BadOptions) {
  testing::expect_error<ValueError>([] { EarlyStopping cb(EarlyStoppingOptions().mode("mni")); },
                                    {"EarlyStopping", "\"mni\"", "\"auto\", \"min\" or \"max\""});
  testing::expect_error<ValueError>([] { EarlyStopping cb(EarlyStoppingOptions().patience(-1)); },
                                    {"patience", "-1"});
  // The patience logic needs no model; restoring (or stopping) does.
  EarlyStopping es(EarlyStoppingOptions().restore_best_weights(true));
  Logs logs;
  logs.set("val_loss", 1.0);
  testing::expect_error<StateError>([&] { es.on_epoch_end(0, logs); },
                                    {"EarlyStopping", "set_model"});
  EarlyStopping no_model;
  no_model.on_epoch_end(0, logs);
  EXPECT_EQ(no_model.wait(), 0);
}

// fit: monitoring "loss" with a min_delta no change can meet, only epoch 0 improves, so
// patience 1 stops after epoch 2 and the weights go back to the end of epoch 0.
TEST(EarlyStopping, FitStopsAtTheRightEpochAndRestoresBestWeights) {
  set_random_seed(3);
  auto model = tiny_model();
  Tensor x = random_normal({32, 3}), y = random_normal({32, 1});
  std::vector<std::vector<Tensor>> weights_at_end;
  auto record = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_end(
      [&](int, const Logs&) { weights_at_end.push_back(model->get_weights()); }));
  auto es = std::make_shared<EarlyStopping>(EarlyStoppingOptions()
                                                .monitor("loss")
                                                .min_delta(1e9)
                                                .patience(1)
                                                .restore_best_weights(true)
                                                .verbose(1));
  ::testing::internal::CaptureStdout();
  History h =
      model->fit(x, y, FitOptions().epochs(10).batch_size(8).verbose(0).callbacks({record, es}));
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(h.epoch, (std::vector<int>{0, 1}));
  EXPECT_EQ(es->stopped_epoch(), 1);
  EXPECT_NE(out.find("Epoch 2: early stopping"), std::string::npos) << out;
  EXPECT_NE(out.find("Restoring model weights from the end of the best epoch: 1."),
            std::string::npos);
  ASSERT_EQ(weights_at_end.size(), 2u);
  const auto now = model->get_weights();
  for (size_t i = 0; i < now.size(); ++i) {
    EXPECT_EQ(testing::values(now[i]), testing::values(weights_at_end[0][i]));
    EXPECT_NE(testing::values(now[i]), testing::values(weights_at_end[1][i]));
  }
}

TEST(EarlyStopping, FitWithoutStoppingStillRestoresBestWeights) {
  set_random_seed(4);
  auto model = tiny_model();
  Tensor x = random_normal({32, 3}), y = random_normal({32, 1});
  std::vector<Tensor> first;
  auto record = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions().on_epoch_end([&](int epoch, const Logs&) {
        if (epoch == 0) first = model->get_weights();
      }));
  // max mode with a huge min_delta: only epoch 0 ever counts as best; patience is never reached.
  auto es = std::make_shared<EarlyStopping>(EarlyStoppingOptions()
                                                .monitor("loss")
                                                .mode("max")
                                                .min_delta(1e9)
                                                .patience(100)
                                                .restore_best_weights(true));
  History h =
      model->fit(x, y, FitOptions().epochs(3).batch_size(8).verbose(0).callbacks({record, es}));
  EXPECT_EQ(h.epoch.size(), 3u);
  EXPECT_EQ(es->stopped_epoch(), 0);
  EXPECT_EQ(testing::values(model->get_weights()[0]), testing::values(first[0]));
}

}  // namespace
}  // namespace strata
