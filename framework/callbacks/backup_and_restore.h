// keras.callbacks.BackupAndRestore: fault tolerance for long runs. The callback keeps one backup
// in `backup_dir` (weights, optimizer slots and step count, epoch and batch, the global random
// generator, the learning rate, the input pipeline's position); when fit() starts and a backup
// exists, training resumes exactly there, so a run killed at any moment (SIGKILL included) and
// started again with the same command ends with the weights an uninterrupted run would have
// had, bit for bit on the CPU. On SIGTERM / SIGINT fit() finishes its step, this callback
// writes a backup (save_before_preemption) and fit() stops with TrainingInterrupted. Under
// MultiWorkerMirroredStrategy a signal to any worker stops every worker after the same step;
// the chief writes the backup there (the others a workertemp copy, removed at once), and the
// whole job started again resumes from it.
//
// Two generations are kept: backup.h5 (the newest) and backup.previous.h5 (the one before it).
// Each backup is written to a temporary file first; the newest, if its checksum verifies, is then
// hard-linked as the previous one, and the new file renamed over the newest, so that the newest
// exists at every moment (where hard links are not supported, only the newest is kept). When the
// newest cannot be restored (damaged: its checksum fails), the callback warns, naming it and the
// reason, and resumes from the previous one; when neither can be restored, on_train_begin
// throws, naming both files and what is wrong with each (a single backup's own error is
// rethrown). A previous backup without a newest one is left from a finished run and removed.
// Delete backup_dir to start afresh.
//
//   model.fit(x, y, FitOptions().epochs(10).callbacks({
//       std::make_shared<BackupAndRestore>("/tmp/backup", BackupAndRestoreOptions().save_freq(100))}));
#pragma once

#include <string>

#include "framework/callbacks/callback.h"

namespace strata {

struct BackupAndRestoreOptions {
  int64_t save_freq_ = 0;  // 0: "epoch" (at each epoch end); N: every N batches as well
  bool delete_checkpoint_ = true;
  bool save_before_preemption_ = true;

  // "epoch", or a positive number of batches.
  BackupAndRestoreOptions& save_freq(const std::string& freq);
  BackupAndRestoreOptions& save_freq(int64_t batches);
  // Delete the backup when training ends normally (Keras' default).
  BackupAndRestoreOptions& delete_checkpoint(bool v) { delete_checkpoint_ = v; return *this; }
  BackupAndRestoreOptions& save_before_preemption(bool v) { save_before_preemption_ = v; return *this; }
};

class BackupAndRestore : public Callback {
 public:
  explicit BackupAndRestore(std::string backup_dir, const BackupAndRestoreOptions& options = {});

  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  void on_preemption(int signal) override;
  // Batch-level only with an integer save_freq.
  bool implements_batch_hooks() const override { return options_.save_freq_ > 0; }

  // The newest backup: <backup_dir>/backup.h5.
  std::string backup_path() const;
  // The one before it: <backup_dir>/backup.previous.h5.
  std::string previous_backup_path() const;
  // Removes both backups, and backup_dir when that leaves it empty (what delete_checkpoint does
  // when fit() ends): for a caller that keeps them until its final model is saved.
  void delete_backups() const;

 private:
  // Restores model and training progress from `path` (any strata::Error when it cannot).
  void restore_from(const std::string& path);
  // Writes a backup from which training resumes at the model's current progress; with
  // epoch_done, at the start of the next epoch.
  void backup(bool epoch_done);

  std::string backup_dir_;
  BackupAndRestoreOptions options_;
  int64_t batches_since_backup_ = 0;
};

}  // namespace strata
