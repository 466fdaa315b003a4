// Model::fit / evaluate on a DatasetCreator under ParameterServerStrategy (TensorFlow's fit with a
// cluster coordinator), over an in-process cluster (ps_local_cluster.h): 2 ps, 2 workers, the
// coordinator here. The workers rebuild the model from its config and run the library's train
// step on their own datasets; epoch-level callbacks run here and read the ps variables.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/step_registry.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/distribute/ps_local_cluster.h"
#include "tests/support/test_helpers.h"

namespace strata::testing {
namespace {

using namespace distribute;
namespace fs = std::filesystem;

// Points in the plane; class 1 where x0 + x1 > 0.
std::pair<Tensor, Tensor> points(int n, int seed) {
  std::vector<float> xs;
  std::vector<int64_t> ys;
  uint32_t state = 12345u + uint32_t(seed) * 7919u;
  const auto uniform = [&state] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24) * 2.0f - 1.0f;
  };
  for (int i = 0; i < n; ++i) {
    const float a = uniform(), b = uniform();
    xs.push_back(a);
    xs.push_back(b);
    ys.push_back(a + b > 0 ? 1 : 0);
  }
  return {Tensor::from_vector(xs, Shape{n, 2}), Tensor::from_vector(ys, Shape{n})};
}

// Workers whose first batch of "ps_fit_meet_data" was drawn.
std::atomic<int> g_meet_arrivals{0};

void register_fit_functions() {
  register_dataset_function("ps_fit_data", [](const DatasetContext& ctx) {
    auto [x, y] = points(512, ctx.worker_index);
    return data::Dataset::from_tensor_slices({x, y}).shuffle(128, 3).repeat().batch(16);
  });
  // The same, but a worker's first batch waits (up to 30 s) until both workers drew theirs:
  // the first step on one worker cannot end before the other worker ran one, so both train,
  // whatever the CPU load.
  register_dataset_function("ps_fit_meet_data", [](const DatasetContext& ctx) {
    auto [x, y] = points(512, ctx.worker_index);
    auto first = std::make_shared<std::atomic<bool>>(true);
    return data::Dataset::from_tensor_slices({x, y}).shuffle(128, 3).repeat().batch(16).map(
        [first](const data::Element& batch) {
          if (first->exchange(false)) {
            ++g_meet_arrivals;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (g_meet_arrivals < 2 && std::chrono::steady_clock::now() < deadline) {
              std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
          }
          return batch;
        });
  });
}

struct Cluster : PsLocalCluster {
  Cluster() { register_fit_functions(); }
};

std::shared_ptr<Model> classifier(int seed = 7) {
  set_random_seed(seed);
  KerasTensor in = Input({2});
  KerasTensor h = Dense(16, "relu")(in);
  KerasTensor out = Dense(2, "softmax")(h);
  auto model = std::make_shared<Model>(in, out);
  model->compile(CompileOptions()
                     .optimizer(std::make_shared<optimizers::Adam>(0.02))
                     .loss("sparse_categorical_crossentropy")
                     .metrics({"accuracy"}));
  return model;
}

std::shared_ptr<Model> classifier_in(const std::shared_ptr<ParameterServerStrategy>& strategy) {
  auto scope = strategy->scope();
  return classifier();
}

// Whether two predictions agree elementwise within 1e-6.
bool same_predictions(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = values(a), y = values(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::abs(x[i] - y[i]) > 1e-6) return false;
  }
  return true;
}

FitOptions fit_options() { return FitOptions().epochs(3).steps_per_epoch(20).verbose(0); }

struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("strata_psfit_" + std::to_string(getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// A user callback with epoch hooks only: allowed under PS.
struct CountEpochs : EpochCallback {
  void on_epoch_end(int, const Logs&) override { ++epochs; }
  int epochs = 0;
};
// One with a batch hook: not allowed.
struct CountBatches : Callback {
  void on_train_batch_end(int, const Logs&) override { ++batches; }
  int batches = 0;
};

TEST(PsFit, DatasetCreatorTrainsOnTheWorkersAndHistoryHasEveryEpoch) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  // A coordinator that lives for the strategy is the one fit schedules on.
  ClusterCoordinator coordinator(strategy, PsLocalCluster::coordinator_options());
  auto epochs = std::make_shared<CountEpochs>();
  g_meet_arrivals = 0;
  const History history = model->fit(DatasetCreator("ps_fit_meet_data"),
                                     fit_options().callbacks({epochs}));
  ASSERT_EQ(history.history.at("loss").size(), 3u);
  ASSERT_EQ(history.history.at("accuracy").size(), 3u);
  EXPECT_EQ(history.epoch, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(epochs->epochs, 3);
  EXPECT_LT(history.history.at("loss").back(), history.history.at("loss").front());
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 60);
  EXPECT_GT(done[0], 0);
  EXPECT_GT(done[1], 0);
  // It learned: the coordinator's model reads the variables from the ps tasks.
  auto [x, y] = points(256, 99);
  const auto scores = model->evaluate(x, y, EvaluateOptions().verbose(0));
  EXPECT_GT(scores.at("accuracy"), 0.9) << "loss " << scores.at("loss");
  // evaluate(DatasetCreator) runs here on the function's dataset for one pipeline.
  const auto inline_scores =
      model->evaluate(DatasetCreator("ps_fit_data"), EvaluateOptions().steps(8).verbose(0));
  EXPECT_GT(inline_scores.at("accuracy"), 0.9);
  // A second fit goes on from the trained variables, on the same coordinator; the progress bar
  // prints a line per epoch.
  ::testing::internal::CaptureStdout();
  const History more = model->fit(DatasetCreator("ps_fit_data"),
                                  FitOptions().epochs(1).steps_per_epoch(10).verbose(2));
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("10/10"), std::string::npos) << printed;
  EXPECT_NE(printed.find("loss: "), std::string::npos) << printed;
  EXPECT_EQ(more.history.at("loss").size(), 1u);
  EXPECT_EQ(coordinator.closures_completed_per_worker()[0] +
                coordinator.closures_completed_per_worker()[1], 70);
}

TEST(PsFit, EpochCallbacksRunOnTheCoordinatorWithItsOwnClusterCoordinator) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  const TempDir tmp("callbacks");
  const std::string csv = (tmp.path / "log.csv").string();
  auto [vx, vy] = points(64, 50);
  // No ClusterCoordinator made: fit makes one for its duration, as TensorFlow's fit does.
  const History history = model->fit(
      DatasetCreator("ps_fit_data"),
      fit_options()
          .validation_data(vx, vy)
          .callbacks({std::make_shared<CSVLogger>(csv),
                      std::make_shared<ModelCheckpoint>(
                          (tmp.path / "ckpt.{epoch:02d}.weights.h5").string(),
                          ModelCheckpointOptions().save_weights_only(true)),
                      std::make_shared<EarlyStopping>(EarlyStoppingOptions().patience(5))}));
  ASSERT_EQ(history.history.at("val_loss").size(), 3u);
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);  // header + 3 epochs
  EXPECT_EQ(lines[0].rfind("epoch,", 0), 0u) << lines[0];
  for (int e = 1; e <= 3; ++e) {
    char name[32];
    std::snprintf(name, sizeof name, "ckpt.%02d.weights.h5", e);
    EXPECT_TRUE(fs::exists(tmp.path / name)) << name;
  }
  // The last checkpoint holds the ps variables' values after the last epoch.
  auto plain = classifier(11);
  plain->load_weights((tmp.path / "ckpt.03.weights.h5").string());
  auto [x, y] = points(32, 5);
  EXPECT_TRUE(same_predictions(plain->predict(x), model->predict(x)));
  EXPECT_EQ(strategy->coordinator(), nullptr);  // fit's own coordinator ended with it
}

// Ends fit by throwing at the end of epoch `at` (after the callbacks before it ran).
struct FailAtEpochEnd : EpochCallback {
  explicit FailAtEpochEnd(int at) : at(at) {}
  void on_epoch_end(int epoch, const Logs&) override {
    if (epoch == at) throw IOError("FailAtEpochEnd: the job was interrupted");
  }
  int at;
};

TEST(PsFit, BackupAndRestoreResumesAtTheNextEpochAndTensorBoardWritesEpochs) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  ClusterCoordinator coordinator(strategy, PsLocalCluster::coordinator_options());
  const TempDir tmp("backup");
  const std::string backup_dir = (tmp.path / "backup").string();
  const std::string log_dir = (tmp.path / "logs").string();
  EXPECT_THROW(model->fit(DatasetCreator("ps_fit_data"),
                          fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir),
                                                   std::make_shared<TensorBoard>(log_dir),
                                                   std::make_shared<FailAtEpochEnd>(1)})),
               IOError);
  EXPECT_FALSE(fs::is_empty(fs::path(log_dir) / "train"));
  // Run again: the backup of epoch 1's end is restored and training goes on at epoch 2.
  const History history = model->fit(
      DatasetCreator("ps_fit_data"),
      fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir)}));
  EXPECT_EQ(history.epoch, std::vector<int>{2});
  EXPECT_FALSE(fs::exists(fs::path(backup_dir) / "backup.h5"));  // deleted at the end
}

// SIGTERM in the middle of an epoch (raised by a worker's input pipeline at the epoch's 5th
// batch: the workers run in this process): fit stops at a step boundary, the steps running
// finish, the rest of the epoch is dropped, BackupAndRestore saves on preemption, and fit
// throws TrainingInterrupted naming the epoch. Run again, it resumes at that epoch's start.
// (The steps after the signal wait until the coordinator dropped the queued ones: whatever
// the load, the epoch cannot have finished before fit saw the signal.)
std::atomic<int64_t> g_signal_batches{0};
std::atomic<int64_t> g_signal_at{-1};
ClusterCoordinator* g_signal_coordinator = nullptr;

void register_signal_functions() {
  register_dataset_function("ps_fit_signal_data", [](const DatasetContext& ctx) {
    auto [x, y] = points(512, ctx.worker_index);
    return data::Dataset::from_tensor_slices({x, y}).repeat().batch(16).map(
        [](const data::Element& batch) {
          const int64_t n = ++g_signal_batches;
          if (n == g_signal_at) std::raise(SIGTERM);
          if (g_signal_at >= 0 && n > g_signal_at) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            while (g_signal_coordinator->closures_queued() > 0 &&
                   std::chrono::steady_clock::now() < deadline) {
              std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
          }
          return batch;
        });
  });
}

TEST(PsFit, SignalDuringAnEpochStopsAtAStepBoundaryAndTheBackupResumesThatEpoch) {
  Cluster cluster;
  register_signal_functions();
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  ClusterCoordinator coordinator(strategy, PsLocalCluster::coordinator_options());
  g_signal_coordinator = &coordinator;
  g_signal_batches = 0;
  g_signal_at = 20 + 5;  // epoch 2's 5th batch
  const TempDir tmp("signal_during");
  const std::string backup_dir = (tmp.path / "backup").string();
  try {
    model->fit(DatasetCreator("ps_fit_signal_data"),
               fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir)}));
    FAIL() << "fit ran to its end";
  } catch (const TrainingInterrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
    EXPECT_NE(std::string(e.what()).find("stopped by SIGTERM during epoch 2"), std::string::npos)
        << e.what();
  }
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_LT(done[0] + done[1], 40) << "epoch 2 ran to its end";
  EXPECT_GE(done[0] + done[1], 25);
  EXPECT_TRUE(fs::exists(fs::path(backup_dir) / "backup.h5"));
  g_signal_at = -1;
  const History history = model->fit(
      DatasetCreator("ps_fit_signal_data"),
      fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir)}));
  EXPECT_EQ(history.epoch, (std::vector<int>{1, 2}));
  g_signal_coordinator = nullptr;
}

// SIGTERM after an epoch's last step (here from its on_epoch_end): the epoch is whole, so the
// backup made on preemption resumes at the next epoch, not this one again.
struct SignalAtEpochEnd : EpochCallback {
  explicit SignalAtEpochEnd(int at) : at(at) {}
  void on_epoch_end(int epoch, const Logs&) override {
    if (epoch == at) std::raise(SIGTERM);
  }
  int at;
};

TEST(PsFit, SignalAfterAnEpochsLastStepResumesAtTheNextEpoch) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  ClusterCoordinator coordinator(strategy, PsLocalCluster::coordinator_options());
  const TempDir tmp("signal_after");
  const std::string backup_dir = (tmp.path / "backup").string();
  try {
    model->fit(DatasetCreator("ps_fit_data"),
               fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir),
                                        std::make_shared<SignalAtEpochEnd>(0)}));
    FAIL() << "fit ran to its end";
  } catch (const TrainingInterrupted& e) {
    EXPECT_NE(std::string(e.what()).find("after epoch 1"), std::string::npos) << e.what();
  }
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 20);
  const History history = model->fit(
      DatasetCreator("ps_fit_data"),
      fit_options().callbacks({std::make_shared<BackupAndRestore>(backup_dir)}));
  EXPECT_EQ(history.epoch, (std::vector<int>{1, 2}));
}

TEST(PsFit, WeightsMoveBetweenParameterServersAndNoStrategy) {
  Cluster cluster;
  auto strategy = cluster.strategy(std::make_shared<FixedShardsPartitioner>(2));
  auto model = classifier_in(strategy);
  model->fit(DatasetCreator("ps_fit_data"), FitOptions().epochs(1).steps_per_epoch(10).verbose(0));
  const TempDir tmp("weights");
  auto [x, y] = points(32, 8);
  // Saved under PS (read from the ps tasks), loaded without a strategy.
  const std::string from_ps = (tmp.path / "from_ps.weights.h5").string();
  model->save_weights(from_ps);
  auto plain = classifier(21);
  plain->load_weights(from_ps);
  EXPECT_TRUE(same_predictions(plain->predict(x), model->predict(x)));
  // Saved without a strategy, loaded under PS (written to the ps tasks).
  auto other = classifier(33);
  EXPECT_FALSE(same_predictions(other->predict(x), model->predict(x)));
  const std::string plain_file = (tmp.path / "plain.weights.h5").string();
  other->save_weights(plain_file);
  model->load_weights(plain_file);
  EXPECT_TRUE(same_predictions(other->predict(x), model->predict(x)));
}

TEST(PsFit, BatchLevelCallbacksAreAValueErrorNamingThem) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  const auto fit_with = [&](CallbackPtr c) {
    model->fit(DatasetCreator("ps_fit_data"), fit_options().callbacks({std::move(c)}));
  };
  auto batches = std::make_shared<CountBatches>();
  expect_error<ValueError>([&] { fit_with(batches); },
                            {"batch-level callbacks are not supported with "
                             "ParameterServerStrategy",
                             "CountBatches"});
  EXPECT_EQ(batches->batches, 0);
  expect_error<ValueError>([&] { fit_with(std::make_shared<TerminateOnNaN>()); },
                            {"strata::TerminateOnNaN"});
  expect_error<ValueError>(
      [&] {
        fit_with(std::make_shared<ModelCheckpoint>(
            "/tmp/unused.weights.h5",
            ModelCheckpointOptions().save_weights_only(true).save_freq(int64_t(5))));
      },
      {"strata::ModelCheckpoint"});
  expect_error<ValueError>([&] { fit_with(std::make_shared<TensorBoard>("/tmp/unused", 2)); },
                            {"strata::TensorBoard"});
}

TEST(PsFit, StepsPerEpochIsRequired) {
  Cluster cluster;
  auto strategy = cluster.strategy(nullptr);
  auto model = classifier_in(strategy);
  expect_error<ValueError>(
      [&] { model->fit(DatasetCreator("ps_fit_data"), FitOptions().epochs(1).verbose(0)); },
      {"steps_per_epoch must be specified with ParameterServerStrategy"});
  expect_error<ValueError>(
      [&] { model->evaluate(DatasetCreator("ps_fit_data"), EvaluateOptions().verbose(0)); },
      {"steps must be specified"});
  // An unregistered function is named with the registered ones.
  expect_error<ValueError>(
      [&] {
        model->fit(DatasetCreator("no_such_data"), FitOptions().steps_per_epoch(2).verbose(0));
      },
      {"no_such_data"});
}

TEST(PsFit, DatasetCreatorWithoutParameterServerStrategyIsAValueError) {
  auto model = classifier();
  expect_error<ValueError>(
      [&] { model->fit(DatasetCreator("ps_fit_data"), fit_options()); },
      {"DatasetCreator(\"ps_fit_data\") needs ParameterServerStrategy", "has no strategy"});
  expect_error<ValueError>(
      [&] { model->evaluate(DatasetCreator("ps_fit_data"), EvaluateOptions().steps(2)); },
      {"needs ParameterServerStrategy"});
}

TEST(PsFit, CallbacksSayWhetherTheyImplementBatchHooks) {
  EXPECT_FALSE(CountEpochs().implements_batch_hooks());
  EXPECT_TRUE(CountBatches().implements_batch_hooks());
  EXPECT_TRUE(Callback().implements_batch_hooks());  // it cannot know: a subclass must say
  EXPECT_FALSE(History().implements_batch_hooks());
  EXPECT_FALSE(CSVLogger("/tmp/unused.csv").implements_batch_hooks());
  EXPECT_FALSE(EarlyStopping().implements_batch_hooks());
  EXPECT_FALSE(ProgbarLogger().implements_batch_hooks());
  EXPECT_TRUE(TerminateOnNaN().implements_batch_hooks());
  EXPECT_FALSE(ModelCheckpoint("/tmp/x.h5").implements_batch_hooks());
  EXPECT_TRUE(ModelCheckpoint("/tmp/x.h5", ModelCheckpointOptions().save_freq(int64_t(3)))
                  .implements_batch_hooks());
  EXPECT_FALSE(BackupAndRestore("/tmp/unused_backup").implements_batch_hooks());
  EXPECT_FALSE(TensorBoard("/tmp/unused_tb").implements_batch_hooks());
  EXPECT_TRUE(TensorBoard("/tmp/unused_tb", "batch").implements_batch_hooks());
  EXPECT_FALSE(LambdaCallback(LambdaCallbackOptions().on_epoch_end([](int, const Logs&) {}))
                   .implements_batch_hooks());
  EXPECT_TRUE(LambdaCallback(LambdaCallbackOptions().on_batch_end([](int, const Logs&) {}))
                  .implements_batch_hooks());
}

}  // namespace
}  // namespace strata::testing
