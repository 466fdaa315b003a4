// TensorBoard: Keras' TensorBoard callback. Writes the loss, the metrics and the learning rate
// as TensorBoard scalars, in the files and under the names Keras uses:
//
//   auto tb = std::make_shared<TensorBoard>("logs");          // or ("logs", "batch"), ("logs", 100)
//   model.fit(x, y, FitOptions().epochs(10).validation_split(0.1).callbacks({tb}));
//   // then: tensorboard --logdir logs
//
//   <log_dir>/train/       epoch_loss, epoch_<metric>..., epoch_learning_rate   step = epoch
//                          batch_loss, batch_<metric>...   (update_freq "batch" or N)
//                                                          step = batches trained in this fit
//   <log_dir>/validation/  epoch_loss, epoch_<metric>... from the val_* logs     step = epoch
//                          evaluation_<name>_vs_iterations, when evaluate() gets the callback
//                                                          step = optimizer iterations
//
// Batch-level values are the running averages the progress bar shows. Event files are created
// when fit begins (the validation one on first use), flushed at every epoch end, and closed when
// fit ends; a later fit starts new files, as in Keras.
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "framework/callbacks/callback.h"

namespace strata {

namespace summary {
class SummaryWriter;
}

// Keras' update_freq: "epoch" (write at epoch ends only), "batch" (every batch), or N (every N
// batches). Anything else is a ValueError.
class UpdateFreq {
 public:
  UpdateFreq(const char* name) : UpdateFreq(std::string(name)) {}  // NOLINT: Keras' strings
  UpdateFreq(const std::string& name);                               // NOLINT
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  UpdateFreq(T batches)  // NOLINT: Keras' integer form
      : batches_(checked(std::in_range<int64_t>(batches) ? static_cast<int64_t>(batches) : -1)) {}

  // Batches between batch-level writes; 0 for "epoch".
  int64_t batches() const { return batches_; }

 private:
  static int64_t checked(int64_t batches);
  int64_t batches_ = 0;
};

// The TensorBoard callback's other Keras arguments.
struct TensorBoardOptions {
  UpdateFreq update_freq_ = "epoch";
  // Weight histograms are not written yet: only 0 (Keras' default) is accepted.
  int histogram_freq_ = 0;
  // Accepted for Keras compatibility; no graph is written.
  bool write_graph_ = true;
  // Adds epoch_steps_per_second (and batch_steps_per_second when writing batches).
  bool write_steps_per_second_ = false;

  TensorBoardOptions& update_freq(UpdateFreq v) { update_freq_ = v; return *this; }
  TensorBoardOptions& histogram_freq(int v) { histogram_freq_ = v; return *this; }
  TensorBoardOptions& write_graph(bool v) { write_graph_ = v; return *this; }
  TensorBoardOptions& write_steps_per_second(bool v) { write_steps_per_second_ = v; return *this; }
};

class TensorBoard : public Callback {
 public:
  explicit TensorBoard(std::string log_dir = "logs", UpdateFreq update_freq = "epoch");
  // ValueError for a histogram_freq other than 0.
  TensorBoard(std::string log_dir, TensorBoardOptions options);
  ~TensorBoard() override;

  // IOError naming log_dir when its train/ event file cannot be created.
  void on_train_begin(const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_begin(int batch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_test_end(const Logs& logs) override;
  // Batch-level only with update_freq "batch" or N.
  bool implements_batch_hooks() const override { return options_.update_freq_.batches() > 0; }

  const std::string& log_dir() const { return log_dir_; }
  const TensorBoardOptions& options() const { return options_; }

 private:
  summary::SummaryWriter& train_writer();
  summary::SummaryWriter& val_writer();
  void close_writers();

  std::string log_dir_;
  TensorBoardOptions options_;
  std::unique_ptr<summary::SummaryWriter> train_, val_;
  int64_t global_batch_ = 0;  // batches trained in this fit
  int64_t epoch_base_ = 0;    // global_batch_ when the epoch began
  using Clock = std::chrono::steady_clock;
  Clock::time_point epoch_start_, batch_start_;
  int64_t epoch_start_iterations_ = 0;
};

}  // namespace strata
