// EarlyStopping: Keras' callback that ends fit when a monitored value stops improving.
//
//   auto stop = std::make_shared<EarlyStopping>(
//       EarlyStoppingOptions().monitor("val_loss").patience(3).restore_best_weights(true));
//   model.fit(x, y, FitOptions().epochs(100).validation_split(0.1).callbacks({stop}));
//
// At each epoch end (from start_from_epoch on) the value counts as an improvement when it beats
// the best so far by more than min_delta. `wait` counts epochs since the last improvement that
// also beat `baseline`; when wait reaches patience (never at epoch 0) it sets
// model.stop_training. With restore_best_weights the weights of the best epoch (or of the first
// monitored epoch, if none improved) are put back at the end of training, whether or not it
// stopped early: current Keras (tf-keras and Keras 3) restores in on_train_end.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/callbacks/callback.h"
#include "framework/callbacks/monitor_mode.h"
#include "framework/core/tensor.h"

namespace strata {

struct EarlyStoppingOptions {
  std::string monitor_ = "val_loss";
  double min_delta_ = 0.0;  // its absolute value is used, as in Keras
  int patience_ = 0;
  int verbose_ = 0;  // 1: "Epoch N: early stopping" and the restore message on stdout
  // "auto" (max when monitor ends with "acc", "accuracy" or "auc"), "min" or "max".
  std::string mode_ = "auto";
  std::optional<double> baseline_;
  bool restore_best_weights_ = false;
  int start_from_epoch_ = 0;  // epochs to ignore before monitoring starts

  EarlyStoppingOptions& monitor(std::string v) { monitor_ = std::move(v); return *this; }
  EarlyStoppingOptions& min_delta(double v) { min_delta_ = v; return *this; }
  EarlyStoppingOptions& patience(int v) { patience_ = v; return *this; }
  EarlyStoppingOptions& verbose(int v) { verbose_ = v; return *this; }
  EarlyStoppingOptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  EarlyStoppingOptions& baseline(double v) { baseline_ = v; return *this; }
  EarlyStoppingOptions& restore_best_weights(bool v) { restore_best_weights_ = v; return *this; }
  EarlyStoppingOptions& start_from_epoch(int v) { start_from_epoch_ = v; return *this; }
};

class EarlyStopping : public Callback {
 public:
  bool implements_batch_hooks() const override { return false; }  // epoch-level only
  // ValueError for an unknown mode or a negative patience / start_from_epoch.
  explicit EarlyStopping(EarlyStoppingOptions options = {});

  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

  const EarlyStoppingOptions& options() const { return options_; }
  MonitorMode mode() const { return mode_; }
  int wait() const { return wait_; }
  // The 0-based epoch that set stop_training; 0 when training was not stopped.
  int stopped_epoch() const { return stopped_epoch_; }
  int best_epoch() const { return best_epoch_; }
  double best() const { return best_; }

 private:
  void reset();

  EarlyStoppingOptions options_;
  MonitorMode mode_;
  double min_delta_;
  int wait_ = 0;
  int stopped_epoch_ = 0;
  int best_epoch_ = 0;
  double best_ = 0.0;
  std::vector<Tensor> best_weights_;
  bool has_best_weights_ = false;
};

}  // namespace strata
