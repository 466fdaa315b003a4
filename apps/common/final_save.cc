#include "apps/common/final_save.h"

#include "apps/common/test_hooks.h"

namespace apps {
namespace fs = std::filesystem;

void save_final_model(strata::Model& model, const fs::path& model_path,
                      const strata::BackupAndRestore& backup) {
  kill_point("before_final_save");
  model.save(model_path.string());
  kill_point("after_final_save");
  // Both backup generations, then the backup folder if that leaves it empty (BackupAndRestore's
  // own delete); a leftover would only make a rerun restore it and train nothing.
  backup.delete_backups();
}

}  // namespace apps
