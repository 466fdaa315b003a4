// SidecarEvaluator: the evaluator task's loop over ModelCheckpoint's files (TensorFlow's
// sidecar_evaluator_test.py: a trained model's checkpoints evaluated, summaries written).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.h>

#include "datasets/temp_dir.h"
#include "distribute/parameter_server/sidecar_evaluator.h"
#include "framework/callbacks/lambda_callback.h"
#include "framework/callbacks/model_checkpoint.h"
#include "framework/summary/event_file_reader.h"

namespace strata::testing {
namespace {

using distribute::SidecarEvaluation;
using distribute::SidecarEvaluator;
using distribute::SidecarEvaluatorOptions;
using Clock = std::chrono::steady_clock;

std::shared_ptr<Sequential> compiled_model() {
  auto model =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  model->compile(std::make_shared<optimizers::SGD>(0.05), "mse", {"mae"});
  model->build({-1, 3});
  return model;
}

struct Data {
  Tensor x = random_normal({32, 3}), y = random_normal({32, 1});
  data::Dataset dataset() const { return data::Dataset::from_tensor_slices({x, y}).batch(8); }
};

// Collects the evaluator's messages (from the evaluator's thread; read from another).
struct Messages {
  std::vector<std::string> lines;
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        lines.push_back(line);
      }
      cv.notify_all();
    };
  }
  int count(const std::string& part) const {
    std::lock_guard<std::mutex> lock(mutex);
    int n = 0;
    for (const auto& l : lines) n += l.find(part) != std::string::npos;
    return n;
  }
  // Waits (at most 30 s) until `n` lines hold `part`; whether they do.
  bool wait_for(const std::string& part, int n) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] {
      int seen = 0;
      for (const auto& l : lines) seen += l.find(part) != std::string::npos;
      return seen >= n;
    });
  }
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Checkpoints from a training thread while the sidecar polls: each is evaluated once, in order,
// with the metrics of a fresh model loaded from the same file, and the scalars reach log_dir.
TEST(SidecarEvaluator, EvaluatesEachCheckpointOnceInOrderWhileTraining) {
  set_random_seed(3);
  TempDir dir;
  const std::string ckpt_dir = (dir.path() / "ckpt").string();
  const std::string log_dir = (dir.path() / "logs").string();
  Data data;
  auto trainer = compiled_model();
  std::string train_error;
  std::thread train([&] {
    try {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the sidecar waits first
      auto ckpt = std::make_shared<ModelCheckpoint>(
          ckpt_dir + "/ckpt-{epoch:02d}.weights.h5",
          ModelCheckpointOptions().save_weights_only(true));
      // A pause after each save, so the sidecar sees the checkpoints appear one by one.
      auto pace = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_end(
          [](int, const Logs&) { std::this_thread::sleep_for(std::chrono::milliseconds(150)); }));
      trainer->fit(data.x, data.y,
                   FitOptions().epochs(3).batch_size(8).verbose(0).callbacks({ckpt, pace}));
    } catch (const std::exception& e) {
      train_error = e.what();
    }
  });
  Messages messages;
  SidecarEvaluator sidecar(compiled_model(), data.dataset(), ckpt_dir,
                           SidecarEvaluatorOptions()
                               .max_evaluations(3)
                               .poll_interval_seconds(0.05)
                               .timeout_seconds(20)
                               .log_dir(log_dir)
                               .log(messages.sink()));
  std::vector<SidecarEvaluation> history;
  try {
    history = sidecar.start();
  } catch (...) {
    train.join();
    throw;
  }
  train.join();
  ASSERT_EQ(train_error, "");
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(messages.count("evaluated '"), 3);
  for (int i = 0; i < 3; ++i) {
    const SidecarEvaluation& e = history[size_t(i)];
    EXPECT_EQ(e.checkpoint, ckpt_dir + "/ckpt-0" + std::to_string(i + 1) + ".weights.h5");
    EXPECT_EQ(e.step, i + 1);
    auto fresh = compiled_model();
    fresh->load_weights(e.checkpoint);
    const auto want = fresh->evaluate(data.dataset(), EvaluateOptions().verbose(0));
    ASSERT_EQ(e.metrics.size(), want.size());
    for (const auto& [name, value] : want) EXPECT_NEAR(e.metrics.at(name), value, 1e-6) << name;
  }
  // Training moved the weights, so the three evaluations differ.
  EXPECT_NE(history[0].metrics.at("loss"), history[2].metrics.at("loss"));

  // TensorFlow's TensorBoard names, in the validation run, one point per checkpoint.
  const auto files = summary::list_event_files(log_dir + "/validation");
  ASSERT_EQ(files.size(), 1u);
  std::map<std::string, std::vector<std::pair<int64_t, double>>> curves;
  for (const auto& event : summary::read_events(files[0])) {
    for (const auto& s : event.scalars) curves[s.tag].push_back({event.step, s.value});
  }
  ASSERT_EQ(curves.size(), history[0].metrics.size());
  for (const auto& [name, unused] : history[0].metrics) {
    const auto& curve = curves["evaluation_" + name + "_vs_iterations"];
    ASSERT_EQ(curve.size(), 3u) << name;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(curve[i].first, int64_t(i) + 1);
      EXPECT_NEAR(curve[i].second, history[i].metrics.at(name), 1e-5 * (1 + curve[i].second));
    }
  }
}

// Full-model files (ModelCheckpoint without save_weights_only) load too; checkpoints already
// there when start() begins are all evaluated, oldest first; a timeout after evaluations is a
// clean end.
TEST(SidecarEvaluator, FullModelFilesAlreadyPresentThenTimeoutEndsCleanly) {
  set_random_seed(4);
  TempDir dir;
  const std::string ckpt_dir = (dir.path() / "ckpt").string();
  Data data;
  auto trainer = compiled_model();
  auto ckpt = std::make_shared<ModelCheckpoint>(ckpt_dir + "/model-{epoch}.keras");
  trainer->fit(data.x, data.y, FitOptions().epochs(2).batch_size(8).verbose(0).callbacks({ckpt}));
  Messages messages;
  SidecarEvaluator sidecar(compiled_model(), data.dataset(), ckpt_dir,
                           SidecarEvaluatorOptions()
                               .steps(2)
                               .poll_interval_seconds(0.05)
                               .timeout_seconds(0.5)
                               .log(messages.sink()));
  const auto history = sidecar.start();
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].checkpoint, ckpt_dir + "/model-1.keras");
  EXPECT_EQ(history[1].checkpoint, ckpt_dir + "/model-2.keras");
  auto fresh = compiled_model();
  fresh->load_weights(history[1].checkpoint);
  const auto want = fresh->evaluate(data.dataset(), EvaluateOptions().steps(2).verbose(0));
  EXPECT_NEAR(history[1].metrics.at("loss"), want.at("loss"), 1e-6);
  EXPECT_EQ(messages.count("no new checkpoint in '" + ckpt_dir + "'"), 1);
}

// A fixed-name ModelCheckpoint rewrites one file: each rewrite is a new checkpoint, and with no
// number in the name the summary step is the evaluation's count. The trainer rewrites it only
// once the sidecar has evaluated the previous version (a sidecar slower than two rewrites sees
// only the last one: TensorFlow's evaluates the latest checkpoint too), whatever the load.
TEST(SidecarEvaluator, RewrittenFileIsEvaluatedAgain) {
  set_random_seed(6);
  TempDir dir;
  const std::string ckpt_dir = (dir.path() / "ckpt").string();
  const std::string path = ckpt_dir + "/latest.weights.h5";
  Data data;
  auto trainer = compiled_model();
  Messages messages;
  std::string train_error;
  std::thread train([&] {
    try {
      auto ckpt = std::make_shared<ModelCheckpoint>(
          path, ModelCheckpointOptions().save_weights_only(true));
      auto pace = std::make_shared<LambdaCallback>(LambdaCallbackOptions().on_epoch_end(
          [&messages](int epoch, const Logs&) {
            if (!messages.wait_for("evaluated '", epoch + 1)) {
              throw IOError("the sidecar did not evaluate checkpoint " +
                            std::to_string(epoch + 1) + " within 30 s");
            }
            // A rewrite in the same clock tick would look unchanged (same path, same mtime).
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }));
      trainer->fit(data.x, data.y,
                   FitOptions().epochs(2).batch_size(8).verbose(0).callbacks({ckpt, pace}));
    } catch (const std::exception& e) {
      train_error = e.what();
    }
  });
  SidecarEvaluator sidecar(compiled_model(), data.dataset(), ckpt_dir,
                           SidecarEvaluatorOptions()
                               .max_evaluations(2)
                               .poll_interval_seconds(0.05)
                               .timeout_seconds(20)
                               .log(messages.sink()));
  std::vector<SidecarEvaluation> history;
  try {
    history = sidecar.start();
  } catch (...) {
    train.join();
    throw;
  }
  train.join();
  ASSERT_EQ(train_error, "");
  ASSERT_EQ(history.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(history[i].checkpoint, path);
    EXPECT_EQ(history[i].step, int64_t(i) + 1);
  }
  EXPECT_NE(history[0].metrics.at("loss"), history[1].metrics.at("loss"));
}

// No checkpoint ever: an IOError naming the directory once the timeout has passed, not a hang.
TEST(SidecarEvaluator, MissingDirectoryTimesOutWithAnErrorNamingIt) {
  TempDir dir;
  const std::string missing = (dir.path() / "never_written").string();
  Data data;
  SidecarEvaluator sidecar(compiled_model(), data.dataset(), missing,
                           SidecarEvaluatorOptions()
                               .poll_interval_seconds(0.05)
                               .timeout_seconds(0.3)
                               .log([](const std::string&) {}));
  const Clock::time_point began = Clock::now();
  try {
    sidecar.start();
    FAIL() << "expected an IOError";
  } catch (const IOError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(missing), std::string::npos) << what;
    EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
    EXPECT_NE(what.find("timeout_seconds"), std::string::npos) << what;
  }
  EXPECT_GE(seconds_since(began), 0.3);  // it waited its timeout out first
}

// Corrupt files (garbage; a real checkpoint cut in half, as a writer that is not atomic leaves
// it) are retried, then skipped with a message naming each; the good one after them is still
// evaluated, and nothing crashes. Hidden temporaries of an atomic save are not checkpoints.
TEST(SidecarEvaluator, CorruptCheckpointsAreSkippedWithAMessageNamingThem) {
  set_random_seed(5);
  TempDir dir;
  const std::string ckpt_dir = (dir.path() / "ckpt").string();
  std::filesystem::create_directories(ckpt_dir);
  Data data;
  auto trainer = compiled_model();
  const std::string garbage = ckpt_dir + "/ckpt-01.weights.h5";
  std::ofstream(garbage) << "not an HDF5 file";
  std::ofstream(ckpt_dir + "/.ckpt-03.weights.h5.tmp-host-1-0") << "half written";
  const std::string truncated = ckpt_dir + "/ckpt-02.h5";
  trainer->save_weights(truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 2);
  const std::string good = ckpt_dir + "/ckpt-03.weights.h5";
  trainer->save_weights(good);
  // Modification times in name order, whatever the file system's timestamp granularity.
  const auto now = std::filesystem::file_time_type::clock::now();
  std::filesystem::last_write_time(garbage, now - std::chrono::seconds(3));
  std::filesystem::last_write_time(truncated, now - std::chrono::seconds(2));
  Messages messages;
  SidecarEvaluator sidecar(compiled_model(), data.dataset(), ckpt_dir,
                           SidecarEvaluatorOptions()
                               .max_evaluations(1)
                               .max_load_attempts(2)
                               .poll_interval_seconds(0.05)
                               .timeout_seconds(10)
                               .log(messages.sink()));
  const auto history = sidecar.start();
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].checkpoint, good);
  EXPECT_EQ(history[0].step, 3);
  EXPECT_EQ(sidecar.skipped(), (std::vector<std::string>{garbage, truncated}));
  for (const std::string& bad : {garbage, truncated}) {
    EXPECT_EQ(messages.count("cannot load '" + bad + "' yet (attempt 1 of 2)"), 1) << bad;
    EXPECT_EQ(messages.count("skipping '" + bad + "'"), 1) << bad;
  }
  EXPECT_EQ(messages.count(".tmp-"), 0);
}

TEST(SidecarEvaluator, ArgumentErrors) {
  Data data;
  auto uncompiled =
      std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  EXPECT_THROW(SidecarEvaluator(uncompiled, data.dataset(), "ckpt"), ValueError);
  EXPECT_THROW(SidecarEvaluator(nullptr, data.dataset(), "ckpt"), ValueError);
  EXPECT_THROW(SidecarEvaluator(compiled_model(), data.dataset(), ""), ValueError);
  for (const auto& options : {SidecarEvaluatorOptions().steps(0),
                              SidecarEvaluatorOptions().max_evaluations(0),
                              SidecarEvaluatorOptions().poll_interval_seconds(0),
                              SidecarEvaluatorOptions().timeout_seconds(-2),
                              SidecarEvaluatorOptions().max_load_attempts(0)}) {
    EXPECT_THROW(SidecarEvaluator(compiled_model(), data.dataset(), "ckpt", options), ValueError);
  }
}

}  // namespace
}  // namespace strata::testing
