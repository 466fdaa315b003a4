#include <gtest/gtest.h>
#include <strata/strata.h>

#include "framework/callbacks/lambda_callback.h"
#include "support/test_helpers.h"

namespace strata {
namespace {

TEST(LambdaCallback, EveryHookIsCalledInOrderDuringFit) {
  set_random_seed(9);
  auto model =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->compile(std::make_shared<optimizers::SGD>(0.05), "mse");
  Tensor x = random_normal({12, 3}), y = random_normal({12, 1});
  std::vector<std::string> events;
  std::vector<double> epoch_losses;
  auto cb = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions()
          .on_train_begin([&](const Logs&) { events.push_back("train_begin"); })
          .on_epoch_begin(
              [&](int e, const Logs&) { events.push_back("epoch_begin " + std::to_string(e)); })
          .on_batch_begin(
              [&](int b, const Logs&) { events.push_back("batch_begin " + std::to_string(b)); })
          .on_batch_end([&](int b, const Logs& logs) {
            events.push_back("batch_end " + std::to_string(b) +
                             (logs.contains("loss") ? " loss" : ""));
          })
          .on_epoch_end([&](int e, const Logs& logs) {
            events.push_back("epoch_end " + std::to_string(e));
            epoch_losses.push_back(logs.at("loss"));
          })
          .on_train_end([&](const Logs&) { events.push_back("train_end"); }));
  History h = model->fit(
      x, y, FitOptions().epochs(2).batch_size(8).shuffle(false).verbose(0).callbacks({cb}));
  const std::vector<std::string> epoch0{"epoch_begin 0", "batch_begin 0", "batch_end 0 loss",
                                        "batch_begin 1", "batch_end 1 loss", "epoch_end 0"};
  const std::vector<std::string> epoch1{"epoch_begin 1", "batch_begin 0", "batch_end 0 loss",
                                        "batch_begin 1", "batch_end 1 loss", "epoch_end 1"};
  std::vector<std::string> want{"train_begin"};
  want.insert(want.end(), epoch0.begin(), epoch0.end());
  want.insert(want.end(), epoch1.begin(), epoch1.end());
  want.push_back("train_end");
  EXPECT_EQ(events, want);
  EXPECT_EQ(epoch_losses, h.history["loss"]);
}

TEST(LambdaCallback, UnsetHooksDoNothingAndStopTrainingWorks) {
  set_random_seed(10);
  auto model =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->compile(std::make_shared<optimizers::SGD>(0.05), "mse");
  Tensor x = random_normal({12, 3}), y = random_normal({12, 1});
  Model* m = model.get();
  auto stop = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions().on_epoch_end([m](int epoch, const Logs&) {
        if (epoch == 1) m->stop_training = true;
      }));
  History h = model->fit(x, y,
                         FitOptions().epochs(5).batch_size(8).verbose(0).callbacks(
                             {stop, std::make_shared<LambdaCallback>()}));
  EXPECT_EQ(h.epoch, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace strata
