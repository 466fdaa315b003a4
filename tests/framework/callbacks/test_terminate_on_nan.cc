#include <gtest/gtest.h>
#include <strata/strata.h>

#include <cmath>
#include <limits>

#include "framework/callbacks/lambda_callback.h"
#include "framework/callbacks/terminate_on_nan.h"
#include "support/test_helpers.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

std::shared_ptr<Sequential> tiny_model() { return testing::tiny_model(0.1); }

TEST(TerminateOnNaN, StopsOnNanOrInfLoss) {
  auto model = tiny_model();
  TerminateOnNaN cb;
  cb.set_model(model.get());
  Logs logs;
  logs.set("loss", 0.5);
  cb.on_train_batch_end(0, logs);
  EXPECT_FALSE(model->stop_training);
  cb.on_train_batch_end(1, Logs());  // no loss: nothing to check
  EXPECT_FALSE(model->stop_training);

  logs.set("loss", std::numeric_limits<double>::infinity());
  ::testing::internal::CaptureStdout();
  cb.on_train_batch_end(7, logs);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "Batch 7: Invalid loss, terminating training\n");
  EXPECT_TRUE(model->stop_training);

  model->stop_training = false;
  logs.set("loss", std::nan(""));
  ::testing::internal::CaptureStdout();
  cb.on_train_batch_end(0, logs);
  ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(model->stop_training);
}

// A NaN in the inputs makes the first batch's loss NaN: fit ends after that one batch.
TEST(TerminateOnNaN, FitStopsAtTheFirstNanBatch) {
  auto model = tiny_model();
  Tensor x = full({32, 3}, std::nan("")), y = zeros({32, 1});
  int batches = 0;
  auto count = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions().on_batch_end([&](int, const Logs&) { ++batches; }));
  ::testing::internal::CaptureStdout();
  History h = model->fit(x, y,
                         FitOptions().epochs(5).batch_size(8).verbose(0).callbacks(
                             {std::make_shared<TerminateOnNaN>(), count}));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "Batch 0: Invalid loss, terminating training\n");
  EXPECT_EQ(batches, 1);
  EXPECT_EQ(h.epoch.size(), 1u);
  EXPECT_TRUE(std::isnan(h.history["loss"][0]));
}

}  // namespace
}  // namespace strata
