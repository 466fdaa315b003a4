#include "framework/callbacks/reduce_lr_on_plateau.h"

#include <algorithm>
#include <iostream>

#include "framework/callbacks/filepath_format.h"
#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"

namespace strata {

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options)
    : options_(std::move(options)),
      mode_(resolve_monitor_mode("ReduceLROnPlateau", options_.mode_, options_.monitor_,
                                 AutoModeRule::kReduceLROnPlateau)) {
  const auto& o = options_;
  if (o.factor_ >= 1.0 || !(o.factor_ >= 0.0)) {
    throw ValueError("ReduceLROnPlateau: factor must be in [0, 1) (new_lr = lr * factor), got " +
                     python_float_repr(o.factor_));
  }
  if (o.patience_ < 0 || o.cooldown_ < 0 || !(o.min_lr_ >= 0.0)) {
    throw ValueError("ReduceLROnPlateau: patience, cooldown and min_lr must be >= 0, got " +
                     std::to_string(o.patience_) + ", " + std::to_string(o.cooldown_) + " and " +
                     python_float_repr(o.min_lr_));
  }
  reset();
}

void ReduceLROnPlateau::on_train_begin(const Logs&) { reset(); }

void ReduceLROnPlateau::reset() {
  best_ = worst_value(mode_);
  cooldown_counter_ = 0;
  wait_ = 0;
}

void ReduceLROnPlateau::on_epoch_end(int epoch, const Logs& logs) {
  const std::optional<double> current = logs.get(options_.monitor_);
  if (!current) {
    warn("Learning rate reduction is conditioned on metric `" + options_.monitor_ +
         "` which is not available. Available metrics are: " + joined_keys(logs));
    return;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (is_improvement(mode_, *current, best_, options_.min_delta_)) {
    best_ = *current;
    wait_ = 0;
  } else if (!in_cooldown()) {
    ++wait_;
    if (wait_ >= options_.patience_) reduce(epoch);
  }
}

void ReduceLROnPlateau::reduce(int epoch) {
  auto& optimizer = *model_of(*this, "ReduceLROnPlateau").optimizer();
  if (const auto& schedule = optimizer.learning_rate_schedule()) {
    throw ValueError("ReduceLROnPlateau: the optimizer's learning rate is a " + schedule->name() +
                     " schedule, which this callback cannot lower; compile with a constant "
                     "learning rate to use ReduceLROnPlateau, or drop the callback and let the "
                     "schedule decide");
  }
  const double old_lr = optimizer.learning_rate();
  // Keras holds the rate in a float32 variable and compares it with float32(min_lr); comparing
  // in float keeps a rate that already sits at min_lr (up to rounding) from "reducing" again.
  if (!(static_cast<float>(old_lr) > static_cast<float>(options_.min_lr_))) return;
  const double new_lr = std::max(old_lr * options_.factor_, options_.min_lr_);
  optimizer.set_learning_rate(new_lr);
  if (options_.verbose_ > 0) {
    std::cout << "\nEpoch " << epoch + 1 << ": ReduceLROnPlateau reducing learning rate to "
              << python_float_repr(new_lr) << "." << std::endl;
  }
  cooldown_counter_ = options_.cooldown_;
  wait_ = 0;
}

}  // namespace strata
