#include "apps/common/final_save.h"

#include <iostream>
#include <system_error>

#include "apps/common/test_hooks.h"

namespace apps {
namespace fs = std::filesystem;

void save_final_model(strata::Model& model, const fs::path& model_path,
                      const strata::BackupAndRestore& backup) {
  kill_point("before_final_save");
  model.save(model_path.string());
  kill_point("after_final_save");
  const fs::path backup_file = backup.backup_path();
  std::error_code ec;
  fs::remove(backup_file, ec);
  if (ec) {
    // The model is saved; a leftover backup only makes a rerun restore it and train nothing.
    std::cerr << "warning: could not remove the backup " << backup_file << " (" << ec.message()
              << "); the model is saved; delete the backup by hand\n";
    return;
  }
  fs::remove(backup_file.parent_path(), ec);  // only if now empty, as BackupAndRestore does
}

}  // namespace apps
