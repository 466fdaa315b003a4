#include "framework/callbacks/model_checkpoint.h"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "framework/callbacks/worker_files.h"
#include "framework/core/error.h"
#include "framework/model/model.h"

namespace strata {
namespace {

FilepathTemplate checked_template(std::string filepath) {
  if (filepath.empty()) {
    throw ValueError(
        "ModelCheckpoint: filepath is empty; give a file such as "
        "\"ckpt/model-{epoch:02d}.h5\"");
  }
  try {
    return FilepathTemplate(std::move(filepath));
  } catch (const ValueError& e) {
    throw ValueError(std::string("ModelCheckpoint: ") + e.what());
  }
}

}  // namespace

ModelCheckpoint::ModelCheckpoint(std::string filepath, ModelCheckpointOptions options)
    : filepath_(checked_template(std::move(filepath))),
      options_(std::move(options)),
      mode_(resolve_monitor_mode("ModelCheckpoint", options_.mode_, options_.monitor_,
                                 AutoModeRule::kModelCheckpoint)),
      best_(options_.initial_value_threshold_.value_or(worst_value(mode_))) {
  if (const auto* s = std::get_if<std::string>(&options_.save_freq_)) {
    if (*s != "epoch") {
      throw ValueError("ModelCheckpoint: unrecognized save_freq \"" + *s +
                       "\"; expected \"epoch\" or a positive integer number of batches");
    }
  } else {
    const int64_t n = std::get<int64_t>(options_.save_freq_);
    if (n < 1) {
      throw ValueError(
          "ModelCheckpoint: save_freq must be \"epoch\" or a positive number of "
          "batches, got " +
          std::to_string(n));
    }
    batches_per_save_ = n;
  }
}

void ModelCheckpoint::on_epoch_begin(int epoch, const Logs&) { current_epoch_ = epoch; }

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  if (!batches_per_save_) save_model(epoch, std::nullopt, logs);
}

void ModelCheckpoint::on_train_batch_end(int batch, const Logs& logs) {
  if (should_save_on_batch(batch)) save_model(current_epoch_, batch, logs);
}

// Counts batches across epochs. fit may skip batch indices (steps_per_execution reports every
// Nth batch), so the count advances by the gap since the last batch seen; a smaller index means
// a new epoch began.
bool ModelCheckpoint::should_save_on_batch(int batch) {
  if (!batches_per_save_) return false;
  batches_since_save_ += batch <= last_batch_seen_ ? batch + 1 : batch - last_batch_seen_;
  last_batch_seen_ = batch;
  if (batches_since_save_ < *batches_per_save_) return false;
  batches_since_save_ = 0;
  return true;
}

std::string ModelCheckpoint::file_path(int epoch, std::optional<int> batch,
                                       const Logs& logs) const {
  FormatFields fields{{"epoch", int64_t{epoch} + 1}};
  // As in Keras, a "batch" log value takes precedence over the batch number.
  if (batch && !logs.contains("batch")) fields.emplace_back("batch", int64_t{*batch} + 1);
  for (const auto& [k, v] : logs.items()) {
    if (k != "epoch") fields.emplace_back(k, v);
  }
  for (const std::string& name : filepath_.field_names()) {
    bool found = false;
    for (const auto& field : fields) found = found || field.first == name;
    if (found) continue;
    std::string keys;
    for (const auto& field : fields) keys += (keys.empty() ? "" : ", ") + field.first;
    std::string hint = "fix the name, or compile the metric it refers to";
    if (name == "batch") {
      hint = "{batch} has a value only when saving every N batches (an integer save_freq)";
    } else if (name.rfind("val_", 0) == 0) {
      hint = batch ? "saves after a batch see the batch logs, which have no val_* values"
                   : "val_* values exist only in epochs where fit runs validation "
                     "(validation_split or validation_data, and validation_freq)";
    }
    throw ValueError("ModelCheckpoint: filepath \"" + filepath_.pattern() + "\" uses the field {" +
                     name + "}, which has no value at epoch " + std::to_string(epoch + 1) +
                     "; available: " + keys + ". " + hint);
  }
  try {
    return filepath_.format(fields);
  } catch (const ValueError& e) {
    throw ValueError(std::string("ModelCheckpoint: ") + e.what());
  }
}

void ModelCheckpoint::save_model(int epoch, std::optional<int> batch, const Logs& logs) {
  // Every worker decides and saves alike; only the chief's file is the real one (worker_files.h).
  const std::string real = file_path(epoch, batch, logs);
  const std::string path = write_filepath(real, model(), WorkerFiles::kCheckpoints);
  const WorkerTempRemover remove_temp(WorkerTempRemover::What::kFile, real, model(),
                                      WorkerFiles::kCheckpoints);
  const std::string prefix = "\nEpoch " + std::to_string(epoch + 1) + ": ";
  if (!options_.save_best_only_) {
    if (options_.verbose_ > 0) std::cout << prefix << "saving model to " << path << std::endl;
    save_to(path);
    return;
  }
  const std::optional<double> current = logs.get(options_.monitor_);
  if (!current) {
    warn("Can save best model only with " + options_.monitor_ + " available, skipping.");
    return;
  }
  if (!is_improvement(mode_, *current, best_, 0.0)) {
    if (options_.verbose_ > 0) {
      std::cout << prefix << options_.monitor_ << " did not improve from "
                << format_value(best_, ".5f") << std::endl;
    }
    return;
  }
  if (options_.verbose_ > 0) {
    std::cout << prefix << options_.monitor_ << " improved from " << format_value(best_, ".5f")
              << " to " << format_value(*current, ".5f") << ", saving model to " << path
              << std::endl;
  }
  best_ = *current;
  save_to(path);
}

void ModelCheckpoint::save_to(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw IOError("ModelCheckpoint: filepath \"" + path +
                  "\" is an existing directory; give a "
                  "file path inside it, e.g. \"" +
                  path + "/ckpt-{epoch:02d}.h5\"");
  }
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) {
      throw IOError("ModelCheckpoint: cannot create the directory \"" + dir.string() + "\" for " +
                    path + ": " + ec.message() +
                    "; give a filepath in a directory this process can create and write");
    }
  }
  Model& model = model_of(*this, "ModelCheckpoint");
  if (options_.save_weights_only_) {
    model.save_weights(path);
  } else {
    model.save(path);
  }
}

}  // namespace strata
