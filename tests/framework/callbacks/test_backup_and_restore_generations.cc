// BackupAndRestore's two generations: the previous backup is kept, a damaged or missing newest
// one falls back to it with a warning naming the file, and when nothing can be restored the
// error names every file. Damaged training state is reported as such, as a strata::Error.
#include <gtest/gtest.h>

#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <strata/strata.h>

#include "framework/callbacks/backup_and_restore.h"
#include "framework/saving/file_checksum.h"
#include "framework/saving/training_checkpoint.h"
#include "support/test_helpers.h"
#include "tests/framework/saving/h5_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
namespace h5 = testing::h5;
using testing::expect_error;

struct TrainingRun {
  std::shared_ptr<Sequential> model;
  Tensor x, y;
  int epochs_trained = 0;
};

TrainingRun make_run() {
  set_random_seed(17);
  TrainingRun r;
  r.x = random_normal({16, 3});
  r.y = random_normal({16, 2});
  r.model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(4, "relu"), std::make_shared<Dense>(2)});
  r.model->compile("adam", "mse");
  return r;
}

// Trains up to `epochs` with a BackupAndRestore on `dir` that keeps its files at the end;
// counts the epochs actually run (fewer when it resumed).
void train(TrainingRun& r, const fs::path& dir, int epochs) {
  auto count = std::make_shared<LambdaCallback>(
      LambdaCallbackOptions().on_epoch_begin([&](int, const Logs&) { ++r.epochs_trained; }));
  r.model->fit(r.x, r.y,
               FitOptions().epochs(epochs).batch_size(8).verbose(0).callbacks(
                   {std::make_shared<BackupAndRestore>(
                        dir.string(), BackupAndRestoreOptions().delete_checkpoint(false)),
                    count}));
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Changes one byte of `p` after its checksum header.
void damage(const fs::path& p) {
  std::string bytes = read_all(p);
  const size_t at = saving::kChecksumHeaderSize + 100;
  ASSERT_LT(at, bytes.size());
  bytes[at] = char(bytes[at] ^ 0x20);
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

int stored_epoch(const fs::path& p) {
  h5::Id f(h5::open_file(p.string()));
  return int(Json::parse(h5::read_strings(f, "training_state")[0]).at("epoch").as_int());
}

TEST(BackupAndRestoreGenerations, KeepsThePreviousBackup) {
  const fs::path dir = h5::temp_dir("generations_keep");
  TrainingRun r = make_run();
  train(r, dir, 3);
  ASSERT_TRUE(fs::exists(dir / "backup.h5"));
  ASSERT_TRUE(fs::exists(dir / "backup.previous.h5"));
  EXPECT_EQ(stored_epoch(dir / "backup.h5"), 3);
  EXPECT_EQ(stored_epoch(dir / "backup.previous.h5"), 2);
  // delete_checkpoint (the default) removes both, and the directory.
  TrainingRun again = make_run();
  again.model->fit(again.x, again.y,
                   FitOptions().epochs(4).batch_size(8).verbose(0).callbacks(
                       {std::make_shared<BackupAndRestore>(dir.string())}));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(BackupAndRestoreGenerations, DamagedNewestFallsBackToThePreviousWithAWarning) {
  const fs::path dir = h5::temp_dir("generations_damaged");
  TrainingRun first = make_run();
  train(first, dir, 2);  // newest: after epoch 2, previous: after epoch 1
  damage(dir / "backup.h5");

  TrainingRun second = make_run();
  ::testing::internal::CaptureStderr();
  train(second, dir, 3);
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(second.epochs_trained, 2) << "resumed after epoch 1, from the previous backup";
  EXPECT_NE(warning.find((dir / "backup.h5").string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("checksum"), std::string::npos) << warning;
  EXPECT_NE(warning.find((dir / "backup.previous.h5").string()), std::string::npos) << warning;
  // The damaged file was not kept as the previous generation (the first backup of this run
  // replaced it, the second moved that one aside): both are intact now.
  EXPECT_NE(warning.find("stays the previous backup"), std::string::npos) << warning;
  EXPECT_TRUE(saving::verify_checksum((dir / "backup.h5").string()));
  EXPECT_TRUE(saving::verify_checksum((dir / "backup.previous.h5").string()));
  EXPECT_EQ(stored_epoch(dir / "backup.h5"), 3);
}

// A previous backup without a newest one is what a finished run leaves when its owner deleted
// the newest (as the apps do after their final save): a new run starts afresh and drops it.
TEST(BackupAndRestoreGenerations, PreviousWithoutNewestIsLeftOverAndRemoved) {
  const fs::path dir = h5::temp_dir("generations_leftover");
  TrainingRun first = make_run();
  train(first, dir, 2);
  fs::remove(dir / "backup.h5");
  TrainingRun second = make_run();
  train(second, dir, 3);
  EXPECT_EQ(second.epochs_trained, 3) << "started afresh";
  EXPECT_EQ(stored_epoch(dir / "backup.previous.h5"), 2) << "this run's own previous backup";
  // delete_backups() removes both generations and the emptied directory.
  BackupAndRestore(dir.string()).delete_backups();
  EXPECT_FALSE(fs::exists(dir));
}

TEST(BackupAndRestoreGenerations, NothingRestorableNamesEveryFile) {
  const fs::path dir = h5::temp_dir("generations_none");
  TrainingRun first = make_run();
  train(first, dir, 2);
  damage(dir / "backup.h5");
  damage(dir / "backup.previous.h5");
  TrainingRun second = make_run();
  expect_error<IOError>([&] { train(second, dir, 3); },
                        {"no backup", (dir / "backup.h5").string(),
                         (dir / "backup.previous.h5").string(), "checksum", "Delete"});
  EXPECT_EQ(second.epochs_trained, 0);

  // A single backup: its own error.
  fs::remove(dir / "backup.previous.h5");
  TrainingRun third = make_run();
  expect_error<ValueError>([&] { train(third, dir, 3); },
                           {(dir / "backup.h5").string(), "checksum"});
}

// The training state itself damaged (a file without checksum, or one rewritten by hand): each
// failure names the file and the 'training_state' attribute, and is a strata::Error.
TEST(BackupAndRestoreGenerations, DamagedTrainingStateIsNamed) {
  const fs::path dir = h5::temp_dir("generations_state");
  const std::string path = (dir / "backup.h5").string();
  TrainingRun r = make_run();
  r.model->train_on_batch(r.x, r.y);
  const auto restore = [&] {
    BackupAndRestore callback(dir.string());
    callback.set_model(r.model.get());
    callback.on_train_begin({});
  };
  for (const std::string state :
       {std::string("{not json"), std::string(R"({"epoch": 1})"),
        std::string(R"({"epoch": 1, "step": 0, "data": {"pass_rng": {"seed": "x1", "offset": "0"},)"
                    R"( "consumed": 0, "spans_epochs": false, "pipeline_at_pass_start": [],)"
                    R"( "pipeline_now": []}, "rng": {"seed": "1", "offset": "0"}})")}) {
    SCOPED_TRACE(state);
    saving::write_training_checkpoint(*r.model, path, state);
    expect_error<ValueError>(restore, {path, "training_state"});
  }
  // The attribute's name damaged: reported as a missing 'training_state', naming what is there.
  saving::write_training_checkpoint(*r.model, path, "{}");
  {
    h5::Id f(h5::open_for_editing(path));
    ASSERT_GE(H5Arename(f, "training_state", "training_statf"), 0);
  }
  expect_error<ValueError>(restore, {path, "'training_state'", "'training_statf'"});
}

}  // namespace
}  // namespace strata
