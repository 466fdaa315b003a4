#include "framework/callbacks/tensorboard.h"

#include <filesystem>

#include "framework/callbacks/worker_files.h"
#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/summary/summary_writer.h"

namespace strata {
namespace {

bool is_validation(const std::string& key) { return key.rfind("val_", 0) == 0; }

const optimizers::Optimizer* optimizer_of(const Model* model) {
  return model && model->compiled() ? model->optimizer().get() : nullptr;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

UpdateFreq::UpdateFreq(const std::string& name) {
  if (name == "epoch") {
    batches_ = 0;
  } else if (name == "batch") {
    batches_ = 1;
  } else {
    throw ValueError("TensorBoard: update_freq must be \"epoch\", \"batch\" or a number of "
                     "batches, got \"" + name + "\"; pass an integer (not a string) for N batches");
  }
}

int64_t UpdateFreq::checked(int64_t batches) {
  if (batches < 1) {
    throw ValueError("TensorBoard: update_freq must be a number of batches >= 1 (or \"epoch\" / "
                     "\"batch\"), got " + std::to_string(batches));
  }
  return batches;
}

TensorBoard::TensorBoard(std::string log_dir, UpdateFreq update_freq)
    : TensorBoard(std::move(log_dir), TensorBoardOptions().update_freq(update_freq)) {}

TensorBoard::TensorBoard(std::string log_dir, TensorBoardOptions options)
    : log_dir_(std::move(log_dir)), options_(options) {
  if (options_.histogram_freq_ != 0) {
    throw ValueError("TensorBoard: histogram_freq=" + std::to_string(options_.histogram_freq_) +
                     " is not supported (weight histograms are not written yet); use 0");
  }
}

TensorBoard::~TensorBoard() = default;

summary::SummaryWriter& TensorBoard::train_writer() {
  if (!train_) {
    train_ = std::make_unique<summary::SummaryWriter>(
        (std::filesystem::path(write_dirpath(log_dir_, model(), WorkerFiles::kSummaries)) / "train")
            .string());
  }
  return *train_;
}

summary::SummaryWriter& TensorBoard::val_writer() {
  if (!val_) {
    val_ = std::make_unique<summary::SummaryWriter>(
        (std::filesystem::path(write_dirpath(log_dir_, model(), WorkerFiles::kSummaries)) /
         "validation")
            .string());
  }
  return *val_;
}

void TensorBoard::close_writers() {
  // Reset before closing, so a failed close (disk full) still lets the next fit start new files.
  auto train = std::move(train_);
  auto val = std::move(val_);
  if (train) train->close();
  if (val) val->close();
}

void TensorBoard::on_train_begin(const Logs&) {
  // Files left open by a fit that ended in an exception (or by evaluate()) are closed: each fit
  // writes files of its own, as Keras' set_model makes new writers.
  close_writers();
  global_batch_ = 0;
  epoch_base_ = 0;
  // Opened now rather than at the first epoch end, so an unusable log_dir fails before training.
  train_writer();
}

void TensorBoard::on_train_end(const Logs&) {
  close_writers();
  remove_worker_temp_dir(log_dir_, model(), WorkerFiles::kSummaries);
}

void TensorBoard::on_epoch_begin(int, const Logs&) {
  epoch_base_ = global_batch_;
  epoch_start_ = Clock::now();
  if (const auto* opt = optimizer_of(model())) epoch_start_iterations_ = opt->iteration_count();
}

void TensorBoard::on_train_batch_begin(int, const Logs&) { batch_start_ = Clock::now(); }

void TensorBoard::on_train_batch_end(int batch, const Logs& logs) {
  // Counted from the batch index rather than from calls, so steps stay right when fit reports
  // only every steps_per_execution batches.
  const int64_t before = global_batch_;
  global_batch_ = epoch_base_ + batch + 1;
  const int64_t every = options_.update_freq_.batches();
  if (every == 0 || global_batch_ / every == before / every) return;  // no multiple of N reached
  summary::SummaryWriter& w = train_writer();
  for (const auto& [name, value] : logs.items()) w.scalar("batch_" + name, value, global_batch_);
  const double elapsed = seconds_since(batch_start_);
  if (options_.write_steps_per_second_ && elapsed > 0) {
    w.scalar("batch_steps_per_second", static_cast<double>(global_batch_ - before) / elapsed,
             global_batch_);
  }
}

void TensorBoard::on_epoch_end(int epoch, const Logs& logs) {
  if (logs.empty()) return;
  Logs train, val;
  for (const auto& [name, value] : logs.items()) {
    if (is_validation(name)) {
      val.set(name.substr(4), value);
    } else {
      train.set(name, value);
    }
  }
  const optimizers::Optimizer* opt = optimizer_of(model());
  if (opt) train.set("learning_rate", opt->learning_rate());
  const double elapsed = seconds_since(epoch_start_);
  if (options_.write_steps_per_second_ && opt && elapsed > 0) {
    train.set("steps_per_second",
              static_cast<double>(opt->iteration_count() - epoch_start_iterations_) / elapsed);
  }
  summary::SummaryWriter& tw = train_writer();
  for (const auto& [name, value] : train.items()) tw.scalar("epoch_" + name, value, epoch);
  tw.flush();
  if (!val.empty()) {
    summary::SummaryWriter& vw = val_writer();
    for (const auto& [name, value] : val.items()) vw.scalar("epoch_" + name, value, epoch);
    vw.flush();
  }
}

// Keras writes the results of evaluate() (and of validation, where the fit loop passes its
// callbacks to the evaluation) against the optimizer's step count.
void TensorBoard::on_test_end(const Logs& logs) {
  const optimizers::Optimizer* opt = optimizer_of(model());
  if (!opt || logs.empty()) return;
  summary::SummaryWriter& w = val_writer();
  for (const auto& [name, value] : logs.items()) {
    w.scalar("evaluation_" + name + "_vs_iterations", value, opt->iteration_count());
  }
  w.flush();
}

}  // namespace strata
