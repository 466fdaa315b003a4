#include <gtest/gtest.h>
#include <strata/strata.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "framework/callbacks/model_checkpoint.h"
#include "support/test_helpers.h"
#include "tests/framework/callbacks/callback_test_utils.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Records the paths it would write instead of writing them, to test ModelCheckpoint's decisions.
class RecordingCheckpoint : public ModelCheckpoint {
 public:
  using ModelCheckpoint::ModelCheckpoint;
  std::vector<std::string> saved;

 protected:
  void save_to(const std::string& path) override { saved.push_back(path); }
};

using testing::tiny_model;

Logs logs_with(const std::string& key, double value) {
  Logs logs;
  logs.set("loss", 1.0);
  logs.set(key, value);
  return logs;
}

// Epoch ends with scripted values of `key`, as fit would call them.
void run_epochs(ModelCheckpoint& ckpt, const std::vector<double>& values,
                const std::string& key = "val_loss") {
  for (size_t e = 0; e < values.size(); ++e) {
    ckpt.on_epoch_begin(int(e), Logs());
    ckpt.on_epoch_end(int(e), logs_with(key, values[e]));
  }
}

// A fresh temporary directory path, removed again when the test ends (pass or fail).
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("strata_ckpt_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

TEST(ModelCheckpoint, EpochInTheNameIsOneBased) {
  set_random_seed(11);
  auto model = tiny_model();
  auto ckpt = std::make_shared<RecordingCheckpoint>("ckpt-{epoch:02d}.h5");
  Tensor x = random_normal({16, 3}), y = random_normal({16, 1});
  model->fit(x, y, FitOptions().epochs(3).batch_size(8).verbose(0).callbacks({ckpt}));
  EXPECT_EQ(ckpt->saved, (std::vector<std::string>{"ckpt-01.h5", "ckpt-02.h5", "ckpt-03.h5"}));
}

TEST(ModelCheckpoint, LogValuesInTheName) {
  set_random_seed(12);
  auto model = tiny_model();
  auto ckpt = std::make_shared<RecordingCheckpoint>("w-{epoch:02d}-{loss:.2f}-{val_loss:.3f}.h5");
  Tensor x = random_normal({32, 3}), y = random_normal({32, 1});
  History h = model->fit(
      x, y,
      FitOptions().epochs(2).batch_size(8).validation_split(0.25).verbose(0).callbacks({ckpt}));
  ASSERT_EQ(ckpt->saved.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    char want[128];
    std::snprintf(want, sizeof want, "w-%02d-%.2f-%.3f.h5", int(e) + 1, h.history["loss"][e],
                  h.history["val_loss"][e]);
    EXPECT_EQ(ckpt->saved[e], want);
  }
}

TEST(ModelCheckpoint, SaveBestOnlyMin) {
  RecordingCheckpoint ckpt("m-{epoch}.h5", ModelCheckpointOptions().save_best_only(true));
  EXPECT_EQ(ckpt.mode(), MonitorMode::kMin);
  run_epochs(ckpt, {1.0, 0.8, 0.9, 0.7, 0.7});  // an equal value is no improvement
  EXPECT_EQ(ckpt.saved, (std::vector<std::string>{"m-1.h5", "m-2.h5", "m-4.h5"}));
  EXPECT_DOUBLE_EQ(ckpt.best(), 0.7);
}

TEST(ModelCheckpoint, SaveBestOnlyMaxForAccuracy) {
  RecordingCheckpoint ckpt("m-{epoch}-{val_accuracy:.1f}.h5",
                           ModelCheckpointOptions().monitor("val_accuracy").save_best_only(true));
  EXPECT_EQ(ckpt.mode(), MonitorMode::kMax);
  run_epochs(ckpt, {0.5, 0.4, 0.6, 0.6, 0.9}, "val_accuracy");
  EXPECT_EQ(ckpt.saved, (std::vector<std::string>{"m-1-0.5.h5", "m-3-0.6.h5", "m-5-0.9.h5"}));
}

TEST(ModelCheckpoint, InitialValueThreshold) {
  RecordingCheckpoint ckpt(
      "m-{epoch}.h5", ModelCheckpointOptions().save_best_only(true).initial_value_threshold(0.75));
  EXPECT_DOUBLE_EQ(ckpt.best(), 0.75);
  run_epochs(ckpt, {1.0, 0.8, 0.7, 0.72});
  EXPECT_EQ(ckpt.saved, (std::vector<std::string>{"m-3.h5"}));
}

TEST(ModelCheckpoint, AutoModeFromMonitorName) {
  auto mode = [](const char* monitor, const char* m = "auto") {
    return ModelCheckpoint("x.h5", ModelCheckpointOptions().monitor(monitor).mode(m)).mode();
  };
  EXPECT_EQ(mode("val_loss"), MonitorMode::kMin);
  EXPECT_EQ(mode("val_accuracy"), MonitorMode::kMax);
  EXPECT_EQ(mode("acc"), MonitorMode::kMax);
  EXPECT_EQ(mode("fmeasure"), MonitorMode::kMax);
  EXPECT_EQ(mode("auc"), MonitorMode::kMax);
  EXPECT_EQ(mode("val_auc"), MonitorMode::kMin);  // Keras 2.15's rule; pass mode "max" for it
  EXPECT_EQ(mode("val_auc", "max"), MonitorMode::kMax);
  EXPECT_EQ(mode("val_accuracy", "min"), MonitorMode::kMin);
}

TEST(ModelCheckpoint, MissingMonitorWarnsAndSkipsBestOnlySaves) {
  RecordingCheckpoint best("m-{epoch}.h5",
                           ModelCheckpointOptions().monitor("val_acc").save_best_only(true));
  ::testing::internal::CaptureStderr();
  run_epochs(best, {1.0, 0.5});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(best.saved.empty());
  EXPECT_NE(err.find("WARNING: Can save best model only with val_acc available, skipping."),
            std::string::npos)
      << err;
  // Without save_best_only the monitor does not matter.
  RecordingCheckpoint every("m-{epoch}.h5", ModelCheckpointOptions().monitor("val_acc"));
  run_epochs(every, {1.0, 0.5});
  EXPECT_EQ(every.saved, (std::vector<std::string>{"m-1.h5", "m-2.h5"}));
}

TEST(ModelCheckpoint, SaveFreqCountsBatchesAcrossEpochs) {
  set_random_seed(13);
  auto model = tiny_model();
  // 10 samples in batches of 2: 5 batches per epoch; a save every 3 batches.
  auto ckpt = std::make_shared<RecordingCheckpoint>("b-{epoch}-{batch}.h5",
                                                    ModelCheckpointOptions().save_freq(3));
  Tensor x = random_normal({10, 3}), y = random_normal({10, 1});
  model->fit(x, y, FitOptions().epochs(2).batch_size(2).verbose(0).callbacks({ckpt}));
  EXPECT_EQ(ckpt->saved, (std::vector<std::string>{"b-1-3.h5", "b-2-1.h5", "b-2-4.h5"}));
}

TEST(ModelCheckpoint, SaveFreqWithSkippedBatchIndices) {
  // steps_per_execution reports only every Nth batch: the count advances by the gap.
  RecordingCheckpoint ckpt("b-{epoch}-{batch}-{loss:.1f}.h5",
                           ModelCheckpointOptions().save_freq(4));
  Logs logs;
  logs.set("loss", 0.5);
  ckpt.on_epoch_begin(0, Logs());
  for (int b : {1, 3, 5}) ckpt.on_train_batch_end(b, logs);
  ckpt.on_epoch_end(0, logs);  // no epoch-end save with an integer save_freq
  ckpt.on_epoch_begin(1, Logs());
  for (int b : {1, 3}) ckpt.on_train_batch_end(b, logs);
  EXPECT_EQ(ckpt.saved, (std::vector<std::string>{"b-1-4-0.5.h5", "b-2-2-0.5.h5"}));
}

TEST(ModelCheckpoint, VerboseMessages) {
  RecordingCheckpoint ckpt("m-{epoch}.h5",
                           ModelCheckpointOptions().save_best_only(true).verbose(1));
  ::testing::internal::CaptureStdout();
  run_epochs(ckpt, {1.0, 2.0});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "\nEpoch 1: val_loss improved from inf to 1.00000, saving model to m-1.h5\n"
            "\nEpoch 2: val_loss did not improve from 1.00000\n");
  RecordingCheckpoint every("m-{epoch}.h5", ModelCheckpointOptions().verbose(1));
  ::testing::internal::CaptureStdout();
  run_epochs(every, {1.0});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "\nEpoch 1: saving model to m-1.h5\n");
}

TEST(ModelCheckpoint, ConstructionErrors) {
  using Opts = ModelCheckpointOptions;
  testing::expect_error<ValueError>(
      [] { ModelCheckpoint c("m.h5", Opts().mode("maximum")); },
      {"ModelCheckpoint", "\"maximum\"", "\"auto\", \"min\" or \"max\""});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m.h5", Opts().save_freq("batch")); },
                                    {"ModelCheckpoint", "save_freq", "\"batch\"", "\"epoch\""});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m.h5", Opts().save_freq(0)); },
                                    {"save_freq", "positive", "0"});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m.h5", Opts().save_freq(-5)); },
                                    {"save_freq", "-5"});
  testing::expect_error<ValueError>([] { ModelCheckpoint c(""); }, {"ModelCheckpoint", "empty"});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m-{epoch.h5"); },
                                    {"ModelCheckpoint", "m-{epoch.h5", "'}'"});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m-{}.h5"); }, {"positional"});
  testing::expect_error<ValueError>([] { ModelCheckpoint c("m-{epoch:02x}.h5"); }, {"{epoch:02x}"});
}

TEST(ModelCheckpoint, UnknownFieldsAtSaveTime) {
  RecordingCheckpoint acc("m-{val_acc:.2f}.h5");
  testing::expect_error<ValueError>(
      [&] { run_epochs(acc, {1.0}); },
      {"ModelCheckpoint", "{val_acc}", "available: epoch, loss, val_loss"});
  RecordingCheckpoint batch("m-{epoch}-{batch}.h5");
  testing::expect_error<ValueError>([&] { run_epochs(batch, {1.0}); },
                                    {"{batch}", "integer save_freq"});
  RecordingCheckpoint val_in_batch("m-{val_loss}.h5", ModelCheckpointOptions().save_freq(1));
  Logs logs;
  logs.set("loss", 0.5);
  testing::expect_error<ValueError>([&] { val_in_batch.on_train_batch_end(0, logs); },
                                    {"{val_loss}", "available: epoch, batch, loss", "batch logs"});
  RecordingCheckpoint float_as_int("m-{loss:02d}.h5");
  testing::expect_error<ValueError>([&] { run_epochs(float_as_int, {1.0}); },
                                    {"ModelCheckpoint", "{loss:02d}", "'d'"});
  EXPECT_EQ(acc.file_path(4, std::nullopt, logs_with("val_acc", 0.123)), "m-0.12.h5");
}

TEST(ModelCheckpoint, ExistingDirectoryAsFilepathIsAnIOError) {
  const TempDir tmp("isdir");
  const fs::path& dir = tmp.path;
  fs::create_directories(dir);
  auto model = tiny_model();
  ModelCheckpoint ckpt(dir.string());
  ckpt.set_model(model.get());
  testing::expect_error<IOError>([&] { run_epochs(ckpt, {1.0}); },
                                 {"ModelCheckpoint", dir.string(), "existing directory"});
}

// Real files through Model::save_weights / Model::save, in a directory ModelCheckpoint creates.
TEST(ModelCheckpoint, WritesRealFiles) {
  set_random_seed(14);
  const TempDir tmp("files");
  const fs::path& dir = tmp.path;
  auto model = tiny_model();
  Tensor x = random_normal({16, 3}), y = random_normal({16, 1});
  auto weights =
      std::make_shared<ModelCheckpoint>((dir / "w" / "w-{epoch:02d}.weights.h5").string(),
                                        ModelCheckpointOptions().save_weights_only(true));
  auto full = std::make_shared<ModelCheckpoint>(
      (dir / "m" / "m-{epoch}.h5").string(),
      ModelCheckpointOptions().monitor("loss").save_best_only(true));
  model->fit(x, y, FitOptions().epochs(2).batch_size(8).verbose(0).callbacks({weights, full}));
  EXPECT_TRUE(fs::is_regular_file(dir / "w" / "w-01.weights.h5"));
  EXPECT_TRUE(fs::is_regular_file(dir / "w" / "w-02.weights.h5"));
  EXPECT_TRUE(fs::is_regular_file(dir / "m" / "m-1.h5"));
  // The saved weights load back.
  auto restored = tiny_model();
  restored->load_weights((dir / "w" / "w-02.weights.h5").string());
  EXPECT_EQ(testing::values(restored->get_weights()[0]), testing::values(model->get_weights()[0]));
}

}  // namespace
}  // namespace strata
