// The end of a run with --model_dir: a kill between the end of fit() and model.h5 being on disk
// used to lose the whole run (BackupAndRestore had deleted its backup at on_train_end, and the
// rerun trained from scratch). Now the backup stays until model.h5 is written: the rerun
// restores the last epoch, trains nothing and writes the model. The app kills itself at the
// chosen moment through STRATA_TEST_KILL_AT (apps/common/test_hooks.h).
// Also: SIGTERM without --model_dir says that nothing was saved and how to make runs resumable.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/apps/app_runner.h"
#include "tests/datasets/temp_dir.h"

namespace strata::apps_testing {
namespace {
namespace fs = std::filesystem;
using strata::testing::TempDir;

std::vector<std::string> resnet_run(const fs::path& model_dir) {
  return {STRATA_RESNET_CIFAR_BIN, "--use_synthetic_data", "--train_steps=2", "--batch_size=2",
          "--skip_eval", "--log_steps=1", "--distribution_strategy=off",
          "--model_dir=" + model_dir.string()};
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(AppFinalSave, KillAfterFitDoesNotLoseTheRun) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const AppResult killed = run_app(resnet_run(dir), {"STRATA_TEST_KILL_AT=after_fit"});
  ASSERT_EQ(killed.signal, SIGKILL) << killed.output;
  EXPECT_EQ(count(killed.output, "TimeHistory:"), 2u) << killed.output;
  EXPECT_TRUE(fs::exists(dir / "backup" / "backup.h5")) << "the backup outlives fit()";
  EXPECT_FALSE(fs::exists(dir / "model.h5"));

  const AppResult rerun = run_app(resnet_run(dir));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find("BackupAndRestore: resuming from"), std::string::npos) << rerun.output;
  EXPECT_NE(rerun.output.find("at epoch 2, batch 0"), std::string::npos) << rerun.output;
  EXPECT_EQ(count(rerun.output, "TimeHistory:"), 0u) << "no step retrained:\n" << rerun.output;
  EXPECT_NE(rerun.output.find("Trained 0 steps"), std::string::npos) << rerun.output;
  EXPECT_TRUE(fs::exists(dir / "model.h5"));
  EXPECT_FALSE(fs::exists(dir / "backup")) << "removed once model.h5 is on disk";
}

TEST(AppFinalSave, KillAfterTheSaveBeforeTheBackupIsRemoved) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const AppResult killed = run_app(resnet_run(dir), {"STRATA_TEST_KILL_AT=after_final_save"});
  ASSERT_EQ(killed.signal, SIGKILL) << killed.output;
  EXPECT_TRUE(fs::exists(dir / "model.h5"));
  EXPECT_TRUE(fs::exists(dir / "backup" / "backup.h5"));
  const AppResult rerun = run_app(resnet_run(dir));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_EQ(count(rerun.output, "TimeHistory:"), 0u) << rerun.output;
  EXPECT_FALSE(fs::exists(dir / "backup"));
}

TEST(AppFinalSave, CompletedRunLeavesNoBackup) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const AppResult r = run_app(resnet_run(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "model.h5"));
  EXPECT_FALSE(fs::exists(dir / "backup"));
  EXPECT_TRUE(fs::exists(dir / ".lock"));
}

TEST(AppFinalSave, MnistKillAfterFitDoesNotLoseTheRun) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  const std::vector<std::string> args{STRATA_MNIST_BIN, "--model=seed_cnn", "--epochs=1",
                                      "--steps_per_epoch=3", "--verbose=2",
                                      "--model_dir=" + dir.string()};
  const AppResult killed = run_app(args, {"STRATA_TEST_KILL_AT=after_fit"});
  if (killed.output.find("scripts/get_datasets mnist") != std::string::npos) {
    GTEST_SKIP() << "MNIST is not installed (scripts/get_datasets mnist)";
  }
  ASSERT_EQ(killed.signal, SIGKILL) << killed.output;
  const AppResult rerun = run_app(args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find("at epoch 2, batch 0"), std::string::npos) << rerun.output;
  EXPECT_NE(rerun.output.find("saved " + (dir / "model.h5").string()), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "backup"));
}

TEST(AppInterruption, SigtermWithoutModelDirSaysNothingWasSaved) {
  TempDir tmp;
  const std::string output = (tmp.path() / "out.txt").string();
  const pid_t pid = start_app({STRATA_RESNET_CIFAR_BIN, "--use_synthetic_data",
                               "--train_steps=100000", "--batch_size=2", "--skip_eval",
                               "--log_steps=1", "--distribution_strategy=off"},
                              output);
  // Once it trains (a step reported), as a scheduler's preemption would come.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (read_text(output).find("TimeHistory:") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGTERM);
  const AppResult r = wait_app(pid, output);
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("Model.fit: stopped by SIGTERM after epoch 1, batch "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Nothing was saved: this run has no --model_dir, so running it again "
                          "starts from scratch. To make runs resumable, pass --model_dir DIR"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("run the same command again to resume"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace strata::apps_testing
