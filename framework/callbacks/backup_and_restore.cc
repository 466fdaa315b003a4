#include "framework/callbacks/backup_and_restore.h"

#include <charconv>
#include <filesystem>
#include <iostream>

#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/training_checkpoint.h"

namespace strata {
namespace fs = std::filesystem;

namespace {

// Generator states are full 64-bit values: JSON numbers would lose their top bits in some
// readers, so they are stored as decimal strings.
Json rng_json(const GeneratorState& s) {
  return Json::object({{"seed", std::to_string(s.seed)}, {"offset", std::to_string(s.offset)}});
}

GeneratorState rng_from(const Json& j) {
  return GeneratorState{std::stoull(j.at("seed").as_string()),
                        std::stoull(j.at("offset").as_string())};
}

Json counters_json(const std::vector<uint64_t>& v) {
  std::vector<std::string> s;
  for (uint64_t x : v) s.push_back(std::to_string(x));
  return Json(s);
}

std::vector<uint64_t> counters_from(const Json& j) {
  std::vector<uint64_t> out;
  for (const std::string& s : j.as_string_vector()) {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
      throw ValueError("BackupAndRestore: the backup's random counter '" + s + "' is not an "
                       "unsigned integer; the backup is corrupt: delete it to start afresh");
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

BackupAndRestoreOptions& BackupAndRestoreOptions::save_freq(const std::string& freq) {
  if (freq != "epoch") {
    throw ValueError("BackupAndRestore: save_freq must be \"epoch\" or a positive number of "
                     "batches, got \"" + freq + "\"");
  }
  save_freq_ = 0;
  return *this;
}

BackupAndRestoreOptions& BackupAndRestoreOptions::save_freq(int64_t batches) {
  if (batches < 1) {
    throw ValueError("BackupAndRestore: save_freq must be \"epoch\" or a positive number of "
                     "batches, got " + std::to_string(batches));
  }
  save_freq_ = batches;
  return *this;
}

BackupAndRestore::BackupAndRestore(std::string backup_dir, const BackupAndRestoreOptions& options)
    : backup_dir_(std::move(backup_dir)), options_(options) {
  if (backup_dir_.empty()) {
    throw ValueError("BackupAndRestore: backup_dir is empty; pass a directory for the backup");
  }
}

std::string BackupAndRestore::backup_path() const {
  return (fs::path(backup_dir_) / "backup.h5").string();
}

void BackupAndRestore::on_train_begin(const Logs&) {
  batches_since_backup_ = 0;
  std::error_code ec;
  fs::create_directories(backup_dir_, ec);
  if (ec) {
    throw IOError("BackupAndRestore: cannot create backup_dir '" + backup_dir_ + "': " +
                  ec.message());
  }
  if (!fs::exists(backup_path())) return;
  Model& m = *model();
  const Json state = Json::parse(saving::read_training_checkpoint(m, backup_path()));
  ResumePoint point;
  point.epoch = int(state.at("epoch").as_int());
  point.step = state.at("step").as_int();
  const Json data = state.at("data");
  point.data.pass_rng = rng_from(data.at("pass_rng"));
  point.data.consumed = data.at("consumed").as_int();
  point.data.spans_epochs = data.at("spans_epochs").as_bool();
  point.data.pipeline_at_pass_start = counters_from(data.at("pipeline_at_pass_start"));
  point.data.pipeline_now = counters_from(data.at("pipeline_now"));
  point.rng = rng_from(state.at("rng"));
  // A learning rate set by a callback (ReduceLROnPlateau, LearningRateScheduler) is not in the
  // optimizer's variables; schedules are recomputed from the restored step count.
  const Json lr = state.get("learning_rate", Json(nullptr));
  if (!lr.is_null() && !m.optimizer()->learning_rate_schedule()) {
    m.optimizer()->set_learning_rate(lr.as_double());
  }
  m.resume_at(point);
  std::cout << "BackupAndRestore: resuming from " << backup_path() << " at epoch "
            << point.epoch + 1 << ", batch " << point.step << std::endl;
}

void BackupAndRestore::backup(bool epoch_done) {
  const Model& m = *model();
  const TrainingProgress p = m.training_progress();
  const auto& optimizer = m.optimizer();
  Json state = Json::object(
      {{"epoch", epoch_done ? p.epoch + 1 : p.epoch},
       {"step", epoch_done ? int64_t(0) : p.step},
       {"data", Json::object({{"pass_rng", rng_json(p.data.pass_rng)},
                              {"consumed", p.data.consumed},
                              {"spans_epochs", p.data.spans_epochs},
                              {"pipeline_at_pass_start", counters_json(p.data.pipeline_at_pass_start)},
                              {"pipeline_now", counters_json(p.data.pipeline_now)}})},
       {"rng", rng_json(get_generator_state())},
       {"learning_rate",
        optimizer->learning_rate_schedule() ? Json(nullptr) : Json(optimizer->learning_rate())}});
  saving::write_training_checkpoint(m, backup_path(), state.dump());
  batches_since_backup_ = 0;
}

void BackupAndRestore::on_train_batch_end(int, const Logs&) {
  if (options_.save_freq_ > 0 && ++batches_since_backup_ >= options_.save_freq_) backup(false);
}

void BackupAndRestore::on_epoch_end(int, const Logs&) {
  if (options_.save_freq_ == 0) backup(true);
}

void BackupAndRestore::on_preemption(int) {
  if (options_.save_before_preemption_) backup(false);
}

void BackupAndRestore::on_train_end(const Logs&) {
  if (!options_.delete_checkpoint_) return;
  std::error_code ec;
  fs::remove(backup_path(), ec);
  fs::remove(backup_dir_, ec);  // only if now empty, as Keras leaves other files alone
}

}  // namespace strata
