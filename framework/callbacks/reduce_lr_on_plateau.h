// ReduceLROnPlateau: Keras' callback that multiplies the learning rate by `factor` when a
// monitored value has not improved for `patience` epochs.
//
//   auto reduce = std::make_shared<ReduceLROnPlateau>(
//       ReduceLROnPlateauOptions().monitor("val_loss").factor(0.2).patience(5).min_lr(1e-4));
//
// Each epoch end: during a cooldown (the `cooldown` epochs after a reduction) the counter runs
// down and wait stays 0; a value better than best - min_delta (min mode) becomes the new best
// and resets wait; otherwise, out of cooldown, wait grows and on reaching patience the rate
// becomes max(lr * factor, min_lr), if lr is still above min_lr.
//
// Keras also writes the rate into the epoch logs (logs["lr"] in Keras 2.15, "learning_rate" in
// Keras 3) so that History and CSVLogger record it; Strata's hooks receive the logs read-only,
// so this callback cannot (read it from model.optimizer()->learning_rate()).
#pragma once

#include <string>

#include "framework/callbacks/callback.h"
#include "framework/callbacks/monitor_mode.h"

namespace strata {

struct ReduceLROnPlateauOptions {
  std::string monitor_ = "val_loss";
  double factor_ = 0.1;  // new_lr = lr * factor; must be in [0, 1)
  int patience_ = 10;
  int verbose_ = 0;  // 1: a line on stdout at each reduction
  // "auto" (max when monitor contains "acc"), "min" or "max".
  std::string mode_ = "auto";
  double min_delta_ = 1e-4;
  int cooldown_ = 0;
  double min_lr_ = 0.0;

  ReduceLROnPlateauOptions& monitor(std::string v) { monitor_ = std::move(v); return *this; }
  ReduceLROnPlateauOptions& factor(double v) { factor_ = v; return *this; }
  ReduceLROnPlateauOptions& patience(int v) { patience_ = v; return *this; }
  ReduceLROnPlateauOptions& verbose(int v) { verbose_ = v; return *this; }
  ReduceLROnPlateauOptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  ReduceLROnPlateauOptions& min_delta(double v) { min_delta_ = v; return *this; }
  ReduceLROnPlateauOptions& cooldown(int v) { cooldown_ = v; return *this; }
  ReduceLROnPlateauOptions& min_lr(double v) { min_lr_ = v; return *this; }
};

class ReduceLROnPlateau : public Callback {
 public:
  bool implements_batch_hooks() const override { return false; }  // epoch-level only
  // ValueError for factor >= 1 (as Keras) or < 0, negative patience / cooldown / min_lr, or an
  // unknown mode.
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});

  void on_train_begin(const Logs& logs) override;
  // ValueError when a reduction is due and the optimizer's learning rate is a schedule.
  void on_epoch_end(int epoch, const Logs& logs) override;

  const ReduceLROnPlateauOptions& options() const { return options_; }
  MonitorMode mode() const { return mode_; }
  int wait() const { return wait_; }
  int cooldown_counter() const { return cooldown_counter_; }
  double best() const { return best_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

 private:
  void reset();
  void reduce(int epoch);

  ReduceLROnPlateauOptions options_;
  MonitorMode mode_;
  int wait_ = 0;
  int cooldown_counter_ = 0;
  double best_ = 0.0;
};

}  // namespace strata
