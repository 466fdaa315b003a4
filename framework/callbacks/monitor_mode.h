// What ModelCheckpoint, EarlyStopping and ReduceLROnPlateau share: which direction of a monitored
// log value ("val_loss", "val_accuracy") is better, and whether a new value improves on a
// reference by more than min_delta.
#pragma once

#include <optional>
#include <string>

#include "framework/callbacks/callback.h"

namespace strata {

enum class MonitorMode { kMin, kMax };

// How mode="auto" guesses the direction from the monitor's name. Keras 2.15 guesses differently
// in each callback, and these follow it so that the same monitor behaves as it does there:
enum class AutoModeRule {
  // ModelCheckpoint: max when the name contains "acc" or starts with "fmeasure" or "auc".
  kModelCheckpoint,
  // EarlyStopping: max when the name ends with "acc", "accuracy" or "auc".
  kEarlyStopping,
  // ReduceLROnPlateau: max when the name contains "acc".
  kReduceLROnPlateau,
};

// "min", "max", or "auto" resolved by `rule`. Anything else is a ValueError naming `who` (Keras
// warns and falls back to auto; in C++ a typo is better caught than guessed around).
MonitorMode resolve_monitor_mode(const std::string& who, const std::string& mode,
                                 const std::string& monitor, AutoModeRule rule);

const char* to_string(MonitorMode mode);  // "min" / "max"

// +inf for min, -inf for max: the first real value always improves on it.
double worst_value(MonitorMode mode);

// Whether `current` beats `reference` by more than min_delta (>= 0): current < reference -
// min_delta in min mode, current > reference + min_delta in max mode. NaN never improves.
bool is_improvement(MonitorMode mode, double current, double reference, double min_delta);

// Keras' logging.warning: "WARNING: <message>" on stderr.
void warn(const std::string& message);

// The log keys joined with "," (Keras' "Available metrics are: loss,val_loss").
std::string joined_keys(const Logs& logs);

// callback.model(), or a StateError naming `who` when no model is set (fit sets it; tests that
// call the hooks directly call set_model first).
Model& model_of(const Callback& callback, const char* who);

}  // namespace strata
