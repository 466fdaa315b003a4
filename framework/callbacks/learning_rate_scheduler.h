// LearningRateScheduler: Keras' callback that sets the learning rate at the start of each epoch
// from schedule(epoch, current_lr) (epoch 0-based).
//
//   auto sched = std::make_shared<LearningRateScheduler>(
//       [](int epoch, double lr) { return epoch < 10 ? lr : lr * std::exp(-0.1); });
//
// Keras' older one-argument form, schedule(epoch), is accepted too. As with ReduceLROnPlateau,
// Keras' logs["lr"] is not written (the hooks' logs are read-only here).
#pragma once

#include <functional>

#include "framework/callbacks/callback.h"

namespace strata {

class LearningRateScheduler : public Callback {
 public:
  bool implements_batch_hooks() const override { return false; }  // epoch-level only
  using Schedule = std::function<double(int epoch, double lr)>;
  using EpochSchedule = std::function<double(int epoch)>;

  // verbose 1: "Epoch N: LearningRateScheduler setting learning rate to X." on stdout.
  // ValueError for an empty schedule.
  explicit LearningRateScheduler(Schedule schedule, int verbose = 0);
  explicit LearningRateScheduler(EpochSchedule schedule, int verbose = 0);

  // ValueError when the schedule returns a negative or non-finite rate, or when the optimizer's
  // learning rate is a LearningRateSchedule (which a constant cannot replace).
  void on_epoch_begin(int epoch, const Logs& logs) override;

 private:
  Schedule schedule_;
  int verbose_;
};

}  // namespace strata
