// Which worker writes the job's files (TensorFlow's distribute_file_utils). With several workers
// every one runs the same callbacks (and so the same collectives and decisions), but only the
// one whose strategy says should_checkpoint / should_save_summary (the chief) writes the real
// checkpoints, summaries and logs; the others write to a temporary directory of their own beside
// them ("workertemp_<index>"), removed once written, so no two workers write the same path.
// Without a strategy, or with a single worker, paths are used as given.
#pragma once

#include <string>
#include <utility>

namespace strata {

class Model;

enum class WorkerFiles { kCheckpoints, kSummaries };

// Whether this worker writes the real files of that kind.
bool writes_real_files(const Model* model, WorkerFiles kind);
// `dirpath` itself for the writing worker, else `dirpath/workertemp_<worker index>`.
std::string write_dirpath(const std::string& dirpath, const Model* model, WorkerFiles kind);
// `filepath` itself for the writing worker, else `<its directory>/workertemp_<index>/<its name>`.
std::string write_filepath(const std::string& filepath, const Model* model, WorkerFiles kind);
// Removes what write_dirpath / write_filepath made for a non-writing worker (nothing otherwise).
void remove_worker_temp_dir(const std::string& dirpath, const Model* model, WorkerFiles kind);
void remove_worker_temp_file(const std::string& filepath, const Model* model, WorkerFiles kind);

// Calls remove_worker_temp_file (or _dir) for `path` when it goes out of scope, error or not.
class WorkerTempRemover {
 public:
  enum class What { kFile, kDir };
  WorkerTempRemover(What what, std::string path, const Model* model, WorkerFiles kind)
      : what_(what), path_(std::move(path)), model_(model), kind_(kind) {}
  ~WorkerTempRemover() {
    if (what_ == What::kFile) {
      remove_worker_temp_file(path_, model_, kind_);
    } else {
      remove_worker_temp_dir(path_, model_, kind_);
    }
  }
  WorkerTempRemover(const WorkerTempRemover&) = delete;
  WorkerTempRemover& operator=(const WorkerTempRemover&) = delete;

 private:
  What what_;
  std::string path_;
  const Model* model_;
  WorkerFiles kind_;
};

}  // namespace strata
