// ModelCheckpoint: Keras' callback that saves the model (or its weights) during fit.
//
//   auto ckpt = std::make_shared<ModelCheckpoint>(
//       "ckpt/weights-{epoch:02d}-{val_loss:.2f}.h5",
//       ModelCheckpointOptions().save_weights_only(true).save_best_only(true));
//   model.fit(x, y, FitOptions().epochs(10).validation_split(0.1).callbacks({ckpt}));
//
// `filepath` is a Python str.format template (filepath_format.h) filled with epoch (1-based, as
// in Keras), batch (1-based; only when saving every N batches) and every log value of that
// moment: at epoch end the epoch logs (val_* included), at a batch the running batch logs. A field
// that has no value is a ValueError naming it and the keys there are.
//
// save_best_only saves only when the monitored value beats the best so far (strictly; no
// min_delta, as in Keras); the best starts at initial_value_threshold, else +-inf, and persists
// across fit() calls. A missing monitor key prints a warning and saves nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "framework/callbacks/callback.h"
#include "framework/callbacks/filepath_format.h"
#include "framework/callbacks/monitor_mode.h"

namespace strata {

struct ModelCheckpointOptions {
  std::string monitor_ = "val_loss";
  int verbose_ = 0;  // 1: a line per save decision on stdout
  bool save_best_only_ = false;
  bool save_weights_only_ = false;  // Model::save_weights instead of Model::save
  // "auto", "min" or "max"; auto is max when monitor contains "acc" or starts with "fmeasure" or
  // "auc", else min.
  std::string mode_ = "auto";
  // "epoch", or a number of training batches between saves (counted across epochs).
  std::variant<std::string, int64_t> save_freq_ = std::string("epoch");
  std::optional<double> initial_value_threshold_;  // the best value to beat at first

  ModelCheckpointOptions& monitor(std::string v) { monitor_ = std::move(v); return *this; }
  ModelCheckpointOptions& verbose(int v) { verbose_ = v; return *this; }
  ModelCheckpointOptions& save_best_only(bool v) { save_best_only_ = v; return *this; }
  ModelCheckpointOptions& save_weights_only(bool v) { save_weights_only_ = v; return *this; }
  ModelCheckpointOptions& mode(std::string v) { mode_ = std::move(v); return *this; }
  ModelCheckpointOptions& save_freq(std::string v) { save_freq_ = std::move(v); return *this; }
  ModelCheckpointOptions& save_freq(int64_t batches) { save_freq_ = batches; return *this; }
  ModelCheckpointOptions& initial_value_threshold(double v) {
    initial_value_threshold_ = v;
    return *this;
  }
};

class ModelCheckpoint : public Callback {
 public:
  // ValueError for an empty or malformed filepath template, an unknown mode, or a save_freq that
  // is neither "epoch" nor a positive integer.
  explicit ModelCheckpoint(std::string filepath, ModelCheckpointOptions options = {});

  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  // Batch-level only with an integer save_freq.
  bool implements_batch_hooks() const override {
    return std::holds_alternative<int64_t>(options_.save_freq_);
  }

  const std::string& filepath() const { return filepath_.pattern(); }
  const ModelCheckpointOptions& options() const { return options_; }
  MonitorMode mode() const { return mode_; }
  // The best monitored value saved so far (save_best_only), or the starting threshold.
  double best() const { return best_; }
  // The file a save at 0-based `epoch` (and 0-based `batch` for batch-level saves) would write.
  std::string file_path(int epoch, std::optional<int> batch, const Logs& logs) const;

 protected:
  // Writes the checkpoint at `path`: creates its directory, then Model::save_weights or
  // Model::save. Override to send checkpoints elsewhere (or to record them in tests).
  virtual void save_to(const std::string& path);

 private:
  bool should_save_on_batch(int batch);
  void save_model(int epoch, std::optional<int> batch, const Logs& logs);

  FilepathTemplate filepath_;
  ModelCheckpointOptions options_;
  MonitorMode mode_;
  std::optional<int64_t> batches_per_save_;  // empty: save every epoch
  double best_;
  int current_epoch_ = 0;
  int64_t batches_since_save_ = 0;
  int last_batch_seen_ = -1;
};

}  // namespace strata
