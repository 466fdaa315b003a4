// --model_dir: an unusable directory is one clear error before any work (it used to abort both
// apps with an uncaught std::filesystem::filesystem_error), and a directory in use by another
// run is refused at once, naming the PID that holds it (two runs used to share the backup and
// duplicate history.csv rows).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/common/model_dir.h"
#include "framework/core/error.h"
#include "tests/apps/app_runner.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
namespace fs = std::filesystem;
using strata::testing::TempDir;

std::string host() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

std::string prepare_error(const fs::path& dir, const std::vector<std::string>& subdirs = {},
                          const std::vector<std::string>& files = {}) {
  try {
    apps::claim_model_dir(dir, subdirs, files);
  } catch (const IOError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AppModelDir, PrepareCreatesOrExplains) {
  TempDir tmp;
  const fs::path fresh = tmp.path() / "a" / "b";
  apps::claim_model_dir(fresh, {"checkpoints", "logs"}, {"model.h5"});
  EXPECT_TRUE(fs::is_directory(fresh / "checkpoints"));
  EXPECT_TRUE(fs::is_directory(fresh / "logs"));
  EXPECT_TRUE(fs::is_empty(fresh / "logs"));
  EXPECT_FALSE(fs::exists(fresh / (".write_test." + std::to_string(::getpid()))));

  const fs::path file = tmp.file("plain");
  std::ofstream(file) << "x";
  EXPECT_EQ(prepare_error(file), "--model_dir '" + file.string() + "': '" + file.string() +
                                     "' exists and is not a directory (it is a regular file); "
                                     "pass a directory this user can create and write (or fix "
                                     "its permissions)");
  EXPECT_NE(prepare_error("/dev/null").find("'/dev/null' exists and is not a directory (it is a "
                                            "special file)"),
            std::string::npos);
  EXPECT_NE(prepare_error(file / "sub").find("cannot create '" + (file / "sub").string() +
                                             "': Not a directory"),
            std::string::npos);
  // A read-only directory (root's writes pass the mode bits, hence /proc/self below as well).
  if (::geteuid() != 0) {
    const fs::path read_only = tmp.path() / "read_only";
    fs::create_directories(read_only);
    fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(prepare_error(read_only).find("the directory is not writable (creating a file there "
                                            "failed: Permission denied)"),
              std::string::npos) << prepare_error(read_only);
    fs::permissions(read_only, fs::perms::owner_all);
  }
  // A directory nobody may write to, root included: /proc/self.
  EXPECT_NE(prepare_error("/proc/self").find("the directory is not writable"), std::string::npos)
      << prepare_error("/proc/self");
  std::ofstream(fresh / "checkpoints2") << "x";
  EXPECT_NE(prepare_error(fresh, {"checkpoints2"}).find("checkpoints2' exists and is not a directory"),
            std::string::npos);
  fs::create_directories(fresh / "model.h5");
  EXPECT_NE(prepare_error(fresh, {}, {"model.h5"}).find("model.h5' exists and is not a regular file"),
            std::string::npos);
}

TEST(AppModelDir, UnusableModelDirIsAnErrorNotAnAbort) {
  TempDir tmp;
  const fs::path file = tmp.file("plain");
  std::ofstream(file) << "x";
  const fs::path checkpoints_is_a_file = tmp.path() / "run";
  fs::create_directories(checkpoints_is_a_file);
  std::ofstream(checkpoints_is_a_file / "checkpoints") << "x";
  const std::string resnet = STRATA_RESNET_CIFAR_BIN, mnist = STRATA_MNIST_BIN;
  const std::vector<std::string> tiny = {"--use_synthetic_data", "--train_steps=1",
                                         "--batch_size=2", "--skip_eval"};
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{resnet, "--model_dir=/dev/null"}, "'/dev/null' exists and is not a directory"},
      {{mnist, "--model_dir=/dev/null"}, "'/dev/null' exists and is not a directory"},
      {{resnet, "--model_dir=" + file.string()}, "exists and is not a directory (it is a regular file)"},
      {{mnist, "--model_dir=" + (file / "sub").string()}, "Not a directory"},
      {{resnet, "--model_dir=/proc/self"}, "the directory is not writable"},
      {{mnist, "--model_dir=" + checkpoints_is_a_file.string()},
       "checkpoints' exists and is not a directory"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    if (args[0] == resnet) args.insert(args.end(), tiny.begin(), tiny.end());
    SCOPED_TRACE(args[0] + " " + args[1]);
    const AppResult r = run_app(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("error: --model_dir '"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Strategy:"), std::string::npos) << "checked before any work";
  }
}

TEST(AppModelDir, LockIsExclusiveAndNamesItsHolder) {
  TempDir tmp;
  {
    apps::ModelDirLock first(tmp.path());
    std::string message;
    try {
      apps::ModelDirLock second(tmp.path());
    } catch (const IOError& e) {
      message = e.what();
    }
    EXPECT_EQ(message, "--model_dir '" + tmp.path().string() + "' is in use by another run (PID " +
                           std::to_string(::getpid()) + " on host " + host() + " holds '" +
                           (tmp.path() / ".lock").string() +
                           "'); two runs in one directory would share its backup and logs: wait "
                           "for that run to end (or stop it), or pass another --model_dir");
  }
  apps::ModelDirLock again(tmp.path());  // released with its owner
}

TEST(AppModelDir, LockDiesWithItsProcess) {
  TempDir tmp;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    apps::ModelDirLock held(tmp.path());
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_THROW(apps::ModelDirLock(tmp.path()), IOError);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  apps::ModelDirLock after_the_crash(tmp.path());  // no stale lock
}

TEST(AppModelDir, SecondRunOnALockedDirFailsAtOnce) {
  TempDir tmp;
  apps::ModelDirLock held(tmp.path());  // as a first run would hold it
  const std::string pid = "PID " + std::to_string(::getpid()) + " on host " + host();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{STRATA_RESNET_CIFAR_BIN, "--use_synthetic_data", "--train_steps=1",
                                 "--batch_size=2", "--skip_eval", "--model_dir=" + tmp.path().string()},
        std::vector<std::string>{STRATA_MNIST_BIN, "--model_dir=" + tmp.path().string()}}) {
    SCOPED_TRACE(args[0]);
    const AppResult r = run_app(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("error: --model_dir '" + tmp.path().string() +
                            "' is in use by another run (" + pid + " holds"),
              std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("Strategy:"), std::string::npos) << "refused before any work";
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "backup"));
}

}  // namespace
}  // namespace strata::apps_testing
