#include "framework/callbacks/worker_files.h"

#include <filesystem>

#include "framework/model/model.h"
#include "framework/strategy/strategy.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string temp_name(const Model* model) {
  return "workertemp_" + std::to_string(model->distribute_strategy()->worker_index());
}

}  // namespace

bool writes_real_files(const Model* model, WorkerFiles kind) {
  const distribute::Strategy* s = model ? model->distribute_strategy() : nullptr;
  if (s == nullptr) return true;
  return kind == WorkerFiles::kCheckpoints ? s->should_checkpoint() : s->should_save_summary();
}

std::string write_dirpath(const std::string& dirpath, const Model* model, WorkerFiles kind) {
  if (writes_real_files(model, kind)) return dirpath;
  return (fs::path(dirpath) / temp_name(model)).string();
}

std::string write_filepath(const std::string& filepath, const Model* model, WorkerFiles kind) {
  if (writes_real_files(model, kind)) return filepath;
  const fs::path p(filepath);
  return (p.parent_path() / temp_name(model) / p.filename()).string();
}

void remove_worker_temp_dir(const std::string& dirpath, const Model* model, WorkerFiles kind) {
  if (writes_real_files(model, kind)) return;
  std::error_code ec;  // best effort: a leftover temporary directory harms nothing
  fs::remove_all(write_dirpath(dirpath, model, kind), ec);
}

void remove_worker_temp_file(const std::string& filepath, const Model* model, WorkerFiles kind) {
  if (writes_real_files(model, kind)) return;
  std::error_code ec;
  fs::remove_all(fs::path(write_filepath(filepath, model, kind)).parent_path(), ec);
}

}  // namespace strata
