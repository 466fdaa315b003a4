// Deferred batch logs: fit() hands callbacks logs whose values are read from the metrics (on a
// GPU: from device memory, waiting for the step) only when a callback looks.
#include <gtest/gtest.h>

#include <strata/strata.h>

#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

TEST(DeferredLogs, ComputedOnceOnFirstReadAndNeverWhenUnread) {
  int calls = 0;
  auto make = [&calls] {
    ++calls;
    Logs l;
    l.set("loss", 0.5);
    return l;
  };
  {
    const Logs unread = Logs::deferred(make);
    unread.resolve_if_shared();  // nobody kept a copy: still nothing computed
  }
  EXPECT_EQ(calls, 0);
  const Logs logs = Logs::deferred(make);
  EXPECT_DOUBLE_EQ(logs.at("loss"), 0.5);
  EXPECT_TRUE(logs.contains("loss"));
  EXPECT_EQ(logs.items().size(), 1u);
  EXPECT_EQ(calls, 1);
}

TEST(DeferredLogs, KeptCopyHoldsTheValuesOfItsStep) {
  double current = 1.0;
  const Logs step1 = Logs::deferred([&current] {
    Logs l;
    l.set("loss", current);
    return l;
  });
  const Logs kept = step1;     // a callback keeps the logs of step 1 without reading them
  step1.resolve_if_shared();   // what fit() does before the next step
  current = 2.0;               // the next step changes the metric
  EXPECT_DOUBLE_EQ(kept.at("loss"), 1.0);
  Logs writable = kept;
  writable.set("lr", 0.1);     // setting resolves first, keeping the deferred values
  EXPECT_DOUBLE_EQ(writable.at("loss"), 1.0);
  EXPECT_DOUBLE_EQ(writable.at("lr"), 0.1);
}

// A callback that records every batch's loss sees each step's own value, as without deferral.
class LossRecorder : public Callback {
 public:
  void on_train_batch_end(int, const Logs& logs) override { kept.push_back(logs); }
  std::vector<Logs> kept;
};

TEST(DeferredLogs, FitBatchLogsKeptByACallbackMatchHistoryPerStep) {
  auto model = testing::tiny_model();
  model->compile("sgd", "mse");
  const Tensor x = random_uniform({16, 3}, -1.0, 1.0, float32, 1);
  const Tensor y = random_uniform({16, 1}, -1.0, 1.0, float32, 2);
  auto recorder = std::make_shared<LossRecorder>();
  model->fit(x, y, FitOptions().batch_size(4).epochs(1).verbose(0).callbacks({recorder}));
  ASSERT_EQ(recorder->kept.size(), 4u);
  // The loss is a running mean over the epoch: it differs from step to step, so stale values
  // (all equal to the last step's) would show.
  bool differs = false;
  for (size_t i = 1; i < recorder->kept.size(); ++i) {
    differs |= recorder->kept[i].at("loss") != recorder->kept[0].at("loss");
  }
  EXPECT_TRUE(differs);
  const double last = recorder->kept.back().at("loss");
  EXPECT_DOUBLE_EQ(last, model->metrics_logs().at("loss"));
}

}  // namespace
}  // namespace strata
