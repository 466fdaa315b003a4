// The end of a resumable run: write the final model, then drop BackupAndRestore's backup.
//
// BackupAndRestore deletes its backup when fit() ends (Keras' delete_checkpoint=True), before
// the app has written anything: a kill in that gap lost the whole run, whose rerun found neither
// a backup nor a model and trained from scratch. The apps therefore create it with
// delete_checkpoint(false) and end here: model.h5 is written atomically and durably (the
// library's save: temp file, fsync, rename, fsync of the directory), and only then is the backup
// removed. Killed anywhere in between, the directory holds the backup or the final model (or
// both); a rerun restores the backup's last epoch, trains nothing more and writes the model.
#pragma once

#include <filesystem>
#include <string>

#include <strata/strata.h>

namespace apps {

void save_final_model(strata::Model& model, const std::filesystem::path& model_path,
                      const strata::BackupAndRestore& backup);

}  // namespace apps
