#include <gtest/gtest.h>
#include <strata/strata.h>

#include <cmath>

#include "framework/callbacks/lambda_callback.h"
#include "framework/callbacks/learning_rate_scheduler.h"
#include "support/test_helpers.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

using testing::tiny_model;

// The learning rate seen during each epoch of a fit with `sched` first in the callbacks.
std::vector<double> rates_during_fit(Model& model, std::shared_ptr<LearningRateScheduler> sched,
                                     int epochs) {
  Tensor x = random_normal({16, 3}), y = random_normal({16, 1});
  std::vector<double> lrs;
  auto record = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_begin(
      [&](int, const Logs&) { lrs.push_back(model.optimizer()->learning_rate()); }));
  model.fit(x, y, FitOptions().epochs(epochs).batch_size(8).verbose(0).callbacks({sched, record}));
  return lrs;
}

TEST(LearningRateScheduler, SetsTheRateAtEachEpochBegin) {
  set_random_seed(6);
  auto model = tiny_model(0.1);
  std::vector<std::pair<int, double>> calls;
  auto sched = std::make_shared<LearningRateScheduler>([&](int epoch, double lr) {
    calls.emplace_back(epoch, lr);
    return epoch < 2 ? lr : lr * 0.5;
  });
  const auto lrs = rates_during_fit(*model, sched, 4);
  ASSERT_EQ(lrs.size(), 4u);
  EXPECT_DOUBLE_EQ(lrs[0], 0.1);
  EXPECT_DOUBLE_EQ(lrs[1], 0.1);
  EXPECT_DOUBLE_EQ(lrs[2], 0.05);
  EXPECT_DOUBLE_EQ(lrs[3], 0.025);
  // The schedule sees the 0-based epoch and the current rate.
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[3].first, 3);
  EXPECT_DOUBLE_EQ(calls[3].second, 0.05);
}

TEST(LearningRateScheduler, EpochOnlyScheduleAndInitialEpoch) {
  set_random_seed(7);
  auto model = tiny_model(0.1);
  auto sched = std::make_shared<LearningRateScheduler>([](int epoch) { return 1.0 / (epoch + 1); });
  Tensor x = random_normal({16, 3}), y = random_normal({16, 1});
  model->fit(x, y,
             FitOptions().epochs(3).initial_epoch(1).batch_size(8).verbose(0).callbacks({sched}));
  EXPECT_DOUBLE_EQ(model->optimizer()->learning_rate(), 1.0 / 3);
}

TEST(LearningRateScheduler, VerboseMessage) {
  auto model = tiny_model(0.1);
  LearningRateScheduler sched([](int, double) { return 0.25; }, 1);
  sched.set_model(model.get());
  ::testing::internal::CaptureStdout();
  sched.on_epoch_begin(2, Logs());
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "\nEpoch 3: LearningRateScheduler setting learning rate to 0.25.\n");
}

TEST(LearningRateScheduler, Errors) {
  testing::expect_error<ValueError>(
      [] { LearningRateScheduler cb{LearningRateScheduler::Schedule{}}; }, {"empty"});
  auto model = tiny_model(0.1);
  LearningRateScheduler negative([](int, double) { return -0.1; });
  negative.set_model(model.get());
  testing::expect_error<ValueError>([&] { negative.on_epoch_begin(4, Logs()); },
                                    {"LearningRateScheduler", "-0.1", "epoch 4", ">= 0"});
  LearningRateScheduler nan([](int, double) { return std::nan(""); });
  nan.set_model(model.get());
  testing::expect_error<ValueError>([&] { nan.on_epoch_begin(0, Logs()); }, {"nan"});

  auto scheduled = tiny_model(std::make_shared<optimizers::ExponentialDecay>(0.1, 10, 0.9));
  LearningRateScheduler sched([](int, double lr) { return lr; });
  sched.set_model(scheduled.get());
  testing::expect_error<ValueError>(
      [&] { sched.on_epoch_begin(0, Logs()); },
      {"LearningRateScheduler", "ExponentialDecay", "constant learning rate"});
}

}  // namespace
}  // namespace strata
