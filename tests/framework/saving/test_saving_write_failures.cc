// A save that fails for lack of space is a clean IOError naming the file and the OS error, the
// previous file survives intact, and the process exits normally afterwards. libhdf5 1.10 used to
// be left with a half-closed file after the failed flush, and segfaulted at exit in
// H5_term_library (exit status 139) although the save had reported its error.
//
// Two ways to run out of space, each in a child process (a crash at exit must fail this test,
// not the test binary): a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: writes fail with
// EFBIG), always; and a full 2 MB tmpfs (ENOSPC), when this process may mount one (root).
#include <gtest/gtest.h>

#include <hdf5.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cstdlib>
#include <fstream>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"
#include "layers/load_model.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/child_process_util.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;
using testing::expect_error;

constexpr const char* kDirVariable = "STRATA_WRITE_FAILURE_DIR";
constexpr const char* kModeVariable = "STRATA_WRITE_FAILURE_MODE";

std::shared_ptr<Sequential> model_128() {
  auto m = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(128), std::make_shared<Dense>(2)});
  m->build({-1, 128});
  m->compile("adam", "mse");
  return m;
}

std::vector<std::vector<float>> values_of(const Model& m) {
  std::vector<std::vector<float>> out;
  for (const auto& w : m.weights()) out.push_back(w->read_value().to_vector<float>());
  return out;
}

std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos) out.push_back(e.path());
  }
  return out;
}

// Fills the file system of `dir` until `keep` bytes are left.
void fill_leaving(const fs::path& dir, uint64_t keep) {
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(dir.c_str(), &vfs), 0);
  const uint64_t free_bytes = uint64_t(vfs.f_bavail) * vfs.f_frsize;
  ASSERT_GT(free_bytes, keep);
  std::ofstream(dir / "filler", std::ios::binary) << std::string(free_bytes - keep, 'f');
}

// The child: saves, runs out of space, checks, and must then exit normally.
TEST(SavingWriteFailures, Child) {
  const char* dir_env = std::getenv(kDirVariable);
  const char* mode_env = std::getenv(kModeVariable);
  if (dir_env == nullptr || mode_env == nullptr) {
    GTEST_SKIP() << "only run as the child of OutOfSpaceIsAnIOErrorAndExitIsClean";
  }
  const fs::path dir(dir_env);
  const std::string mode(mode_env);
  set_random_seed(21);
  const Tensor x = random_normal({16, 128}), y = random_normal({16, 2});
  auto model = model_128();
  const std::string weights = (dir / "w.h5").string();
  const std::string full = (dir / "m.h5").string();
  const fs::path backup_dir = dir / "backup";
  const auto fit_with_backup = [&](int epochs) {
    model->fit(x, y, FitOptions().epochs(epochs).batch_size(8).verbose(0).callbacks(
                         {std::make_shared<BackupAndRestore>(
                             backup_dir.string(),
                             BackupAndRestoreOptions().delete_checkpoint(false))}));
  };
  // The previous files, written while there is space.
  fit_with_backup(1);
  model->save_weights(weights);
  model->save(full);
  const auto previous = values_of(*model);

  // Out of space: every file below is larger than what is left (~200 KB of weights and slots).
  rlimit saved_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_limit), 0);
  if (mode == "rlimit") {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_limit;
    limit.rlim_cur = 48 << 10;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  } else {
    fill_leaving(dir, 48 << 10);
  }
  const std::string os_error = mode == "rlimit" ? "File too large" : "No space left on device";
  model->train_on_batch(x, y);
  expect_error<IOError>([&] { model->save_weights(weights); }, {weights, os_error});
  expect_error<IOError>([&] { model->save(full); }, {full, os_error});
  // Resumes after epoch 1, trains epoch 2, and cannot write its backup.
  expect_error<IOError>([&] { fit_with_backup(2); },
                        {(backup_dir / "backup.h5").string(), os_error});
  if (mode == "rlimit") {
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved_limit), 0);
  } else {
    fs::remove(dir / "filler");
  }

  // Nothing half-written is left, the previous files are intact, and HDF5 holds no object.
  EXPECT_EQ(temporaries(dir), std::vector<std::string>{});
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
  auto reloaded = model_128();
  reloaded->load_weights(weights);
  EXPECT_EQ(values_of(*reloaded), previous);
  EXPECT_EQ(values_of(*load_model(full)), previous);
  auto restored = model_128();
  BackupAndRestore callback(backup_dir.string());
  callback.set_model(restored.get());
  callback.on_train_begin({});
  EXPECT_EQ(values_of(*restored), previous);
  EXPECT_EQ(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL), 0);
  std::printf("write failures (%s): clean IOErrors, previous files intact\n", mode.c_str());
}

void run_child(const fs::path& dir, const std::string& mode) {
  const std::string log = (dir.parent_path() / (mode + ".log")).string();
  const int status = testing::run_test_in_child(
      "SavingWriteFailures.Child",
      {std::string(kDirVariable) + "=" + dir.string(), std::string(kModeVariable) + "=" + mode,
       "STRATA_NUM_THREADS=1", "OMP_WAIT_POLICY=PASSIVE"},
      log);
  const std::string output = testing::tail_of(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << mode << ": the child " << testing::describe_status(status) << "; its output:\n"
      << output;
  EXPECT_NE(output.find("previous files intact"), std::string::npos) << output;
}

TEST(SavingWriteFailures, OutOfSpaceIsAnIOErrorAndExitIsClean) {
  const fs::path root = h5::temp_dir("write_failures");
  fs::create_directories(root / "rlimit");
  run_child(root / "rlimit", "rlimit");

  const fs::path tiny = root / "tmpfs";
  fs::create_directories(tiny);
  if (::mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=2m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                 << "); only the RLIMIT_FSIZE case ran";
  }
  run_child(tiny, "tmpfs");
  ::umount2(tiny.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace strata
