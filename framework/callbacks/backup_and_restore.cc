#include "framework/callbacks/backup_and_restore.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "framework/callbacks/worker_files.h"
#include "framework/core/error.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/file_checksum.h"
#include "framework/saving/keras_attributes.h"
#include "framework/saving/training_checkpoint.h"

namespace strata {
namespace fs = std::filesystem;

namespace {

// Generator states are full 64-bit values: JSON numbers would lose their top bits in some
// readers, so they are stored as decimal strings.
Json rng_json(const GeneratorState& s) {
  return Json::object({{"seed", std::to_string(s.seed)}, {"offset", std::to_string(s.offset)}});
}

// A decimal uint64 of the state; ValueError when it is not one (a damaged backup).
uint64_t parse_u64(const std::string& s, const char* what) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    throw ValueError(std::string("the backup's ") + what + " '" + s + "' is not an unsigned "
                     "integer");
  }
  return v;
}

GeneratorState rng_from(const Json& j) {
  return GeneratorState{parse_u64(j.at("seed").as_string(), "random seed"),
                        parse_u64(j.at("offset").as_string(), "random offset")};
}

Json counters_json(const std::vector<uint64_t>& v) {
  std::vector<std::string> s;
  for (uint64_t x : v) s.push_back(std::to_string(x));
  return Json(s);
}

std::vector<uint64_t> counters_from(const Json& j) {
  std::vector<uint64_t> out;
  for (const std::string& s : j.as_string_vector()) out.push_back(parse_u64(s, "random counter"));
  return out;
}

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// Whether the backup at `path` is intact, as far as its checksum tells (a file without one, from
// an older Strata, counts as intact); `why` says what is wrong otherwise.
bool intact(const std::string& path, std::string& why) {
  try {
    saving::verify_checksum(path);
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
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

std::string BackupAndRestore::previous_backup_path() const {
  return (fs::path(backup_dir_) / "backup.previous.h5").string();
}

void BackupAndRestore::restore_from(const std::string& path) {
  Model& m = *model();
  const std::string state_json = saving::read_training_checkpoint(m, path);
  ResumePoint point;
  Json lr;
  try {
    const Json state = Json::parse(state_json);
    point.epoch = int(state.at("epoch").as_int());
    point.step = state.at("step").as_int();
    const Json data = state.at("data");
    point.data.pass_rng = rng_from(data.at("pass_rng"));
    point.data.consumed = data.at("consumed").as_int();
    point.data.spans_epochs = data.at("spans_epochs").as_bool();
    point.data.pipeline_at_pass_start = counters_from(data.at("pipeline_at_pass_start"));
    point.data.pipeline_now = counters_from(data.at("pipeline_now"));
    point.rng = rng_from(state.at("rng"));
    lr = state.get("learning_rate", Json(nullptr));
    if (!lr.is_null()) lr.as_double();  // checked here, with the others
  } catch (const Error& e) {
    throw ValueError("BackupAndRestore: the training state (attribute 'training_state') of '" +
                     path + "' is unreadable: " + e.what() + "; the backup is damaged");
  }
  // A learning rate set by a callback (ReduceLROnPlateau, LearningRateScheduler) is not in the
  // optimizer's variables; schedules are recomputed from the restored step count.
  if (!lr.is_null() && !m.optimizer()->learning_rate_schedule()) {
    m.optimizer()->set_learning_rate(lr.as_double());
  }
  m.resume_at(point);
  std::cout << "BackupAndRestore: resuming from " << path << " at epoch " << point.epoch + 1
            << ", batch " << point.step << std::endl;
}

void BackupAndRestore::on_train_begin(const Logs&) {
  batches_since_backup_ = 0;
  std::error_code ec;
  fs::create_directories(backup_dir_, ec);
  if (ec || !fs::is_directory(backup_dir_, ec)) {
    throw IOError("BackupAndRestore: cannot use backup_dir '" + backup_dir_ + "': " +
                  (ec ? ec.message() : std::string("it exists and is not a directory")) +
                  "; pass a directory this process can create and write");
  }
  // Found now rather than at the first backup, after an epoch of training.
  if (::access(backup_dir_.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw IOError("BackupAndRestore: backup_dir '" + backup_dir_ + "' is not writable: " +
                  std::strerror(err) + "; pass a directory this process can write");
  }
  if (!exists(backup_path())) {
    // The newest backup exists whenever a run is under way (see backup()); a previous one
    // alone is what a finished run left (its newest deleted), and must not be resumed.
    std::error_code ignored;
    if (writes_real_files(model(), WorkerFiles::kCheckpoints)) {
      fs::remove(previous_backup_path(), ignored);
    }
    return;
  }
  // Every worker restores from the chief's backup in backup_dir, so all resume the same step.
  std::vector<std::string> candidates{backup_path()};
  if (exists(previous_backup_path())) candidates.push_back(previous_backup_path());
  std::string failures;
  for (const std::string& path : candidates) {
    try {
      restore_from(path);
    } catch (const Error& e) {
      if (candidates.size() == 1) throw;
      failures += "\n  '" + path + "': " + e.what();
      continue;
    }
    if (path != backup_path()) {
      saving::warn("BackupAndRestore: cannot restore the newest backup:" + failures +
                   "\nResumed from the previous backup '" + path + "' instead");
    }
    return;
  }
  throw IOError("BackupAndRestore: no backup in '" + backup_dir_ + "' can be restored:" +
                failures + "\nDelete '" + backup_dir_ + "' to start training afresh, or train the "
                "model (architecture and optimizer) the backups were written from");
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
  // Once the new file is complete, the current newest becomes the previous generation: a hard
  // link renamed over the previous one, so the newest never goes missing (a crash between two
  // renames would leave only the previous). A damaged newest is not kept over an intact
  // previous backup.
  // Every worker backs up alike (the same reads and decisions), but only the chief's files are
  // the real ones: the others write to a temporary directory of their own, removed at once
  // (worker_files.h).
  const std::string dir = write_dirpath(backup_dir_, model(), WorkerFiles::kCheckpoints);
  const WorkerTempRemover remove_temp(WorkerTempRemover::What::kDir, backup_dir_, model(),
                                      WorkerFiles::kCheckpoints);
  if (dir != backup_dir_) {
    std::error_code ec;
    fs::create_directories(dir, ec);
  }
  const std::string newest = (fs::path(dir) / "backup.h5").string();
  const std::string previous = (fs::path(dir) / "backup.previous.h5").string();
  const auto keep_newest = [&] {
    if (!exists(newest)) return;
    std::string why;
    if (!intact(newest, why)) {
      saving::warn("BackupAndRestore: " + why + "\nIt is replaced, and '" + previous +
                   "' stays the previous backup");
      return;
    }
    const std::string link = previous + ".link";
    ::unlink(link.c_str());  // left by a crash here
    if (::link(newest.c_str(), link.c_str()) != 0 || ::rename(link.c_str(), previous.c_str()) != 0) {
      const int err = errno;
      ::unlink(link.c_str());
      saving::warn("BackupAndRestore: cannot keep '" + newest + "' as '" + previous + "': " +
                   std::strerror(err) + "; only the newest backup is kept");
    }
  };
  saving::write_training_checkpoint(m, newest, state.dump(), keep_newest);
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
  // Only the worker that writes the backups deletes them.
  if (options_.delete_checkpoint_ && writes_real_files(model(), WorkerFiles::kCheckpoints)) {
    delete_backups();
  }
}

void BackupAndRestore::delete_backups() const {
  std::error_code ec;
  // The newest last: until it goes, a restart still resumes.
  fs::remove(previous_backup_path(), ec);
  fs::remove(previous_backup_path() + ".link", ec);
  fs::remove(backup_path(), ec);
  fs::remove(backup_dir_, ec);  // only if now empty, as Keras leaves other files alone
}

}  // namespace strata
