// BackupAndRestore: a run interrupted at any point and started again ends with exactly the
// weights of an uninterrupted run. In-process for the resume logic (a callback throws to
// simulate a crash), and across processes for SIGKILL and SIGTERM (tests/tools/backup_child.cc).
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"
#include "tests/framework/callbacks/callback_test_utils.h"
#include "support/test_helpers.h"

extern char** environ;

namespace strata {
namespace {
namespace fs = std::filesystem;
using strata::testing::CrashAfter;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("strata_backup_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct TrainingRun {
  std::shared_ptr<Sequential> model;
  Tensor x, y;
};

// The same model, data and seed every time, as a restarted process would build them. Dropout
// and shuffling make the result depend on the generator state and the data order.
TrainingRun make_run() {
  set_random_seed(77);
  TrainingRun r;
  r.x = random_normal({60, 5});
  r.y = cast(greater(reduce_sum(r.x, {1}), zeros({60})), int64);
  r.model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(8, DenseOptions().activation("relu")),
      std::make_shared<Dropout>(0.25), std::make_shared<Dense>(2)});
  r.model->compile(CompileOptions()
                       .optimizer(std::make_shared<optimizers::SGD>(0.05, 0.9))
                       .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(true))
                       .metrics({"accuracy"}));
  return r;
}

std::vector<Tensor> train(TrainingRun& r, std::vector<CallbackPtr> callbacks) {
  r.model->fit(r.x, r.y,
               FitOptions().epochs(3).batch_size(8).verbose(0).validation_split(0.2).callbacks(
                   std::move(callbacks)));
  return r.model->get_weights();
}

void expect_identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].to_vector<float>(), b[i].to_vector<float>()) << "weight " << i;
  }
}

TEST(BackupAndRestore, ResumesMidEpochBitIdentically) {
  TrainingRun reference = make_run();
  const std::vector<Tensor> expected = train(reference, {});
  for (int crash_at : {3, 7, 12, 17}) {  // mid-epoch, just after a backup, at an epoch's end...
    SCOPED_TRACE("crash after batch " + std::to_string(crash_at));
    const fs::path dir = fresh_dir("mid" + std::to_string(crash_at));
    auto backup = [&] {
      return std::make_shared<BackupAndRestore>(dir.string(), BackupAndRestoreOptions().save_freq(2));
    };
    TrainingRun first = make_run();
    EXPECT_THROW(train(first, {backup(), std::make_shared<CrashAfter>(crash_at)}),
                 std::runtime_error);
    EXPECT_TRUE(fs::exists(dir / "backup.h5"));
    TrainingRun second = make_run();  // a new process: same seed, fresh model
    expect_identical(train(second, {backup()}), expected);
    EXPECT_FALSE(fs::exists(dir / "backup.h5")) << "delete_checkpoint removes it at the end";
    fs::remove_all(dir);
  }
}

TEST(BackupAndRestore, ResumesFromEpochBackups) {
  TrainingRun reference = make_run();
  const std::vector<Tensor> expected = train(reference, {});
  const fs::path dir = fresh_dir("epoch");
  TrainingRun first = make_run();
  EXPECT_THROW(train(first, {std::make_shared<BackupAndRestore>(dir.string()),
                             std::make_shared<CrashAfter>(9)}),  // epoch 2 of 3 (6 batches each)
               std::runtime_error);
  TrainingRun second = make_run();
  expect_identical(train(second, {std::make_shared<BackupAndRestore>(dir.string())}), expected);
  fs::remove_all(dir);
}

// A Dataset pipeline (shuffled with the global generator, so the order depends on the state the
// pass began with), with and without steps_per_epoch (one pass spanning epochs).
TEST(BackupAndRestore, ResumesDatasetPipelines) {
  for (int64_t steps_per_epoch : {int64_t(-1), int64_t(5)}) {
    SCOPED_TRACE("steps_per_epoch " + std::to_string(steps_per_epoch));
    auto fit = [&](TrainingRun& r, std::vector<CallbackPtr> callbacks) {
      const data::Dataset ds =
          data::Dataset::from_tensor_slices({r.x, r.y}).shuffle(24).batch(8).repeat(
              steps_per_epoch > 0 ? -1 : 1);
      FitOptions o = FitOptions().epochs(3).verbose(0).callbacks(std::move(callbacks));
      if (steps_per_epoch > 0) o.steps_per_epoch(steps_per_epoch);
      r.model->fit(ds, o);
      return r.model->get_weights();
    };
    TrainingRun reference = make_run();
    const std::vector<Tensor> expected = fit(reference, {});
    const fs::path dir = fresh_dir("dataset" + std::to_string(steps_per_epoch));
    auto backup = [&] {
      return std::make_shared<BackupAndRestore>(dir.string(), BackupAndRestoreOptions().save_freq(3));
    };
    TrainingRun first = make_run();
    EXPECT_THROW(fit(first, {backup(), std::make_shared<CrashAfter>(11)}), std::runtime_error);
    TrainingRun second = make_run();
    expect_identical(fit(second, {backup()}), expected);
    fs::remove_all(dir);
  }
}

TEST(BackupAndRestore, ChecksArguments) {
  testing::expect_error<ValueError>([] { BackupAndRestoreOptions().save_freq(0); },
                                    {"save_freq", "epoch"});
  testing::expect_error<ValueError>([] { BackupAndRestoreOptions().save_freq("batch"); },
                                    {"save_freq", "batch"});
  testing::expect_error<ValueError>([] { BackupAndRestore(""); }, {"backup_dir"});
}

// ---- across processes ----

pid_t spawn_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits until the child has written a backup at least `count` times (mtime changes), then a bit
// more so the signal lands mid-epoch, between backups.
void wait_for_backups(const fs::path& backup, int count) {
  fs::file_time_type last{};
  int seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (seen < count && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    const auto t = fs::last_write_time(backup, ec);
    if (!ec && t != last) {
      last = t;
      ++seen;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(seen, count) << "the child wrote no backup in time";
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
}

TEST(BackupAndRestore, SurvivesSigkillAndSigterm) {
  const fs::path dir = fresh_dir("process");
  const std::string child = STRATA_BACKUP_CHILD;
  ASSERT_EQ(wait_exit_code(spawn_child({child, (dir / "ref").string(), (dir / "ref.bin").string()})), 0);
  const std::string expected = read_file(dir / "ref.bin");
  ASSERT_FALSE(expected.empty());

  for (int sig : {SIGKILL, SIGTERM}) {
    SCOPED_TRACE(sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    const fs::path backup_dir = dir / ("run" + std::to_string(sig));
    const fs::path out = dir / ("out" + std::to_string(sig) + ".bin");
    const std::vector<std::string> args{child, backup_dir.string(), out.string(), "20"};
    const pid_t pid = spawn_child(args);
    wait_for_backups(backup_dir / "backup.h5", 3);
    ::kill(pid, sig);
    const int code = wait_exit_code(pid);
    if (sig == SIGKILL) {
      EXPECT_EQ(code, -SIGKILL);
    } else {
      EXPECT_EQ(code, 128 + SIGTERM) << "SIGTERM: finish the step, back up, exit 143";
    }
    ASSERT_FALSE(fs::exists(out)) << "the run must not have finished before the signal";
    ASSERT_TRUE(fs::exists(backup_dir / "backup.h5"));
    ASSERT_EQ(wait_exit_code(spawn_child(args)), 0);  // the same command again
    EXPECT_EQ(read_file(out), expected) << "resumed run's weights differ from an uninterrupted run";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata
