#include "framework/callbacks/learning_rate_scheduler.h"

#include <cmath>
#include <iostream>

#include "framework/callbacks/filepath_format.h"
#include "framework/callbacks/monitor_mode.h"
#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"

namespace strata {

LearningRateScheduler::LearningRateScheduler(Schedule schedule, int verbose)
    : schedule_(std::move(schedule)), verbose_(verbose) {
  if (!schedule_) throw ValueError("LearningRateScheduler: the schedule function is empty");
}

LearningRateScheduler::LearningRateScheduler(EpochSchedule schedule, int verbose)
    : verbose_(verbose) {
  if (!schedule) throw ValueError("LearningRateScheduler: the schedule function is empty");
  schedule_ = [f = std::move(schedule)](int epoch, double) { return f(epoch); };
}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  auto& optimizer = *model_of(*this, "LearningRateScheduler").optimizer();
  if (const auto& schedule = optimizer.learning_rate_schedule()) {
    throw ValueError("LearningRateScheduler: the optimizer's learning rate is a " +
                     schedule->name() +
                     " schedule, which a per-epoch rate cannot replace; "
                     "compile with a constant learning rate, or use either the schedule or this "
                     "callback, not both");
  }
  const double lr = schedule_(epoch, optimizer.learning_rate());
  if (!std::isfinite(lr) || lr < 0.0) {
    throw ValueError("LearningRateScheduler: the schedule returned " + python_float_repr(lr) +
                     " for epoch " + std::to_string(epoch) +
                     "; a learning rate must be a finite number >= 0");
  }
  optimizer.set_learning_rate(lr);
  if (verbose_ > 0) {
    std::cout << "\nEpoch " << epoch + 1 << ": LearningRateScheduler setting learning rate to "
              << python_float_repr(lr) << "." << std::endl;
  }
}

}  // namespace strata
