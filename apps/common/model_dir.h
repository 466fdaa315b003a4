// --model_dir for the apps: checked up front, so an unusable directory is one clear error before
// any work, and locked for the whole run, so two runs never share one backup or CSV log.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace apps {

// Makes `dir` (the --model_dir value) usable or throws strata::IOError naming it, what is wrong
// and the fix: creates it if missing; it must be a directory and writable (a probe file is
// created and removed, which also catches a read-only file system and root's bypassed
// permission bits).
void prepare_model_dir(const std::filesystem::path& dir);

// Checks what a run will write inside `dir`: each of `subdirs` a directory (created if missing),
// each of `files` a regular file if it exists; strata::IOError naming it otherwise.
void prepare_model_dir_layout(const std::filesystem::path& dir,
                              const std::vector<std::string>& subdirs,
                              const std::vector<std::string>& files);

// An exclusive lock on a model dir for as long as the object lives (released by the kernel when
// the process dies, SIGKILL included, so a crash leaves no stale lock): flock() on
// <dir>/.lock, which holds the owner's PID and host for the message of a run that finds it
// taken. That run gets strata::IOError at once, naming the directory and the PID.
class ModelDirLock {
 public:
  explicit ModelDirLock(const std::filesystem::path& dir);
  ~ModelDirLock();
  ModelDirLock(const ModelDirLock&) = delete;
  ModelDirLock& operator=(const ModelDirLock&) = delete;

  static constexpr const char* kFileName = ".lock";

 private:
  int fd_ = -1;
};

// What an app does with --model_dir before any work, in this order: prepare_model_dir, take the
// lock (so a second run touches nothing), prepare_model_dir_layout. The lock lives as long as the
// returned object.
std::unique_ptr<ModelDirLock> claim_model_dir(const std::filesystem::path& dir,
                                              const std::vector<std::string>& subdirs,
                                              const std::vector<std::string>& files);

}  // namespace apps
