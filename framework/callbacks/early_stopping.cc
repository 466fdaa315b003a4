#include "framework/callbacks/early_stopping.h"

#include <cmath>
#include <iostream>

#include "framework/core/error.h"
#include "framework/model/model.h"

namespace strata {

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)),
      mode_(resolve_monitor_mode("EarlyStopping", options_.mode_, options_.monitor_,
                                 AutoModeRule::kEarlyStopping)),
      min_delta_(std::fabs(options_.min_delta_)) {
  if (options_.patience_ < 0 || options_.start_from_epoch_ < 0) {
    throw ValueError("EarlyStopping: patience and start_from_epoch must be >= 0, got " +
                     std::to_string(options_.patience_) + " and " +
                     std::to_string(options_.start_from_epoch_));
  }
  reset();
}

// Keras resets here so that one instance can serve several fit() calls.
void EarlyStopping::on_train_begin(const Logs&) { reset(); }

void EarlyStopping::reset() {
  wait_ = 0;
  stopped_epoch_ = 0;
  best_epoch_ = 0;
  best_ = worst_value(mode_);
  best_weights_.clear();
  has_best_weights_ = false;
}

void EarlyStopping::on_epoch_end(int epoch, const Logs& logs) {
  const std::optional<double> current = logs.get(options_.monitor_);
  if (!current) {
    warn("Early stopping conditioned on metric `" + options_.monitor_ +
         "` which is not available. Available metrics are: " + joined_keys(logs));
    return;
  }
  if (epoch < options_.start_from_epoch_) return;
  // The first monitored epoch's weights, so that something is restored even if nothing improves.
  if (options_.restore_best_weights_ && !has_best_weights_) {
    best_weights_ = model_of(*this, "EarlyStopping").get_weights();
    has_best_weights_ = true;
    best_epoch_ = epoch;
  }
  ++wait_;
  if (is_improvement(mode_, *current, best_, min_delta_)) {
    best_ = *current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights_)
      best_weights_ = model_of(*this, "EarlyStopping").get_weights();
    // Patience restarts only when the value also beats the baseline.
    if (!options_.baseline_ || is_improvement(mode_, *current, *options_.baseline_, min_delta_)) {
      wait_ = 0;
    }
    return;
  }
  if (wait_ >= options_.patience_ && epoch > 0) {
    stopped_epoch_ = epoch;
    model_of(*this, "EarlyStopping").stop_training = true;
  }
}

void EarlyStopping::on_train_end(const Logs&) {
  if (stopped_epoch_ > 0 && options_.verbose_ > 0) {
    std::cout << "Epoch " << stopped_epoch_ + 1 << ": early stopping" << std::endl;
  }
  if (options_.restore_best_weights_ && has_best_weights_) {
    if (options_.verbose_ > 0) {
      std::cout << "Restoring model weights from the end of the best epoch: " << best_epoch_ + 1
                << "." << std::endl;
    }
    model_of(*this, "EarlyStopping").set_weights(best_weights_);
  }
}

}  // namespace strata
