// Elastic MultiWorkerMirroredStrategy (CommunicationOptions::elastic) across real processes on
// loopback: workers killed (SIGKILL) mid-epoch and workers joining a running job. Each worker
// is this test binary started again (worker_processes.h) running ElasticTrainingChild.Run; the
// survivors' (and joiners') final weights must equal one process training on the same global
// batches, since an elastic job keeps the global batch whatever the worker count.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "distribute/multi_worker_mirrored_strategy.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/distribute/scoped_environment.h"
#include "tests/distribute/worker_processes.h"

namespace strata::testing {
namespace {

constexpr const char* kScenario = "STRATA_TEST_ELASTIC_SCENARIO";
constexpr const char* kOut = "STRATA_TEST_ELASTIC_OUT";
constexpr const char* kKillAt = "STRATA_TEST_ELASTIC_KILL_AT";     // "<epoch>:<batch>"
constexpr const char* kWaitJoinAt = "STRATA_TEST_ELASTIC_WAIT_AT"; // "<epoch>:<batch>"
constexpr const char* kPauseFile = "STRATA_TEST_ELASTIC_PAUSE_FILE";  // netns_elastic_cutoff.sh
constexpr const char* kDieInSync = "STRATA_TEST_ELASTIC_DIE_IN_SYNC";  // after this many syncs
constexpr const char* kHoldAfterFit = "STRATA_TEST_ELASTIC_HOLD";   // a release file's path
constexpr const char* kPerReplica = "STRATA_TEST_ELASTIC_PER_REPLICA";  // keep_per_replica_batch
constexpr const char* kChildTest = "ElasticTrainingChild.Run";

// 96 samples in global batches of 24 (divisible by 3 workers and by 2), 3 epochs: 12 steps.
constexpr int64_t kSamples = 96, kBatch = 24;
constexpr int kEpochs = 3;
constexpr int kChaosEpochs = 20;  // 80 steps
// Keeping the per-replica batch: batches of 8 (12 an epoch), one per replica each step, in order
// (no shuffle, so that one process can replay the steps), at a learning rate scaled by the
// replicas as the hook sets it (Horovod's linear scaling).
constexpr int64_t kPerReplicaBatch = 8;
double scaled_rate(int replicas) { return 0.03 * replicas; }

// The model this process trains, for the on_replicas_changed hook (made after the strategy).
std::weak_ptr<Sequential>& trained_model() {
  static std::weak_ptr<Sequential> model;
  return model;
}

// One step as a worker ran it, keeping the per-replica batch: its epoch, the replicas in sync
// and the learning rate.
struct StepRun {
  int epoch = 0;
  int replicas = 0;
  double learning_rate = 0;
};

// Appends a line "epoch replicas learning_rate" to `path` after each training step.
class RecordReplicas final : public Callback {
 public:
  RecordReplicas(const distribute::MultiWorkerMirroredStrategy& s, std::string path)
      : s_(s), path_(std::move(path)) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_now_ = epoch; }
  void on_train_batch_end(int, const Logs&) override {
    std::ofstream(path_, std::ios::app) << epoch_now_ << " " << s_.num_replicas_in_sync() << " "
                                        << trained_model().lock()->optimizer()->learning_rate()
                                        << "\n";
  }

 private:
  const distribute::MultiWorkerMirroredStrategy& s_;
  std::string path_;
  int epoch_now_ = -1;
};

std::vector<StepRun> read_steps(const std::string& path) {
  std::vector<StepRun> steps;
  std::istringstream in(read_file_text(path));
  StepRun s;
  while (in >> s.epoch >> s.replicas >> s.learning_rate) steps.push_back(s);
  return steps;
}

// SIGKILL (a machine that dies, no cleanup) as batch `batch` of epoch `epoch` begins: the other
// workers are then in that step's collectives, or about to be.
class KillAt final : public Callback {
 public:
  KillAt(int epoch, int batch) : epoch_(epoch), batch_(batch) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_now_ = epoch; }
  void on_train_batch_begin(int batch, const Logs&) override {
    if (epoch_now_ == epoch_ && batch == batch_) raise(SIGKILL);
  }

 private:
  int epoch_, batch_, epoch_now_ = -1;
};

// After batch `batch` of epoch `epoch`, waits (at most 60 s) until this worker has heard of a
// new membership (a worker that joins registered), so that the join happens mid-training
// however long the joiner takes to start.
class WaitForJoin final : public Callback {
 public:
  WaitForJoin(const distribute::MultiWorkerMirroredStrategy& s, int epoch, int batch,
              std::string marker)
      : s_(s), epoch_(epoch), batch_(batch), marker_(std::move(marker)) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_now_ = epoch; }
  void on_train_batch_end(int batch, const Logs&) override {
    if (epoch_now_ != epoch_ || batch != batch_) return;
    const uint64_t now = s_.elastic_counts().generation;
    std::ofstream(marker_) << "training\n";  // the parent starts the joiner now
    wait_until([&] { return s_.elastic_counts().generation_seen > now; }, 60);
  }

 private:
  const distribute::MultiWorkerMirroredStrategy& s_;
  int epoch_, batch_, epoch_now_ = -1;
  std::string marker_;
};

// After epoch 2's first batch, writes `file`.at and waits (at most 60 s) for `file` to exist:
// netns_elastic_cutoff.sh cuts a worker off the network meanwhile.
class PauseForFile final : public Callback {
 public:
  explicit PauseForFile(std::string file) : file_(std::move(file)) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_now_ = epoch; }
  void on_train_batch_end(int batch, const Logs&) override {
    if (epoch_now_ != 2 || batch != 0) return;
    std::ofstream(file_ + ".at") << "paused\n";
    wait_until([&] { return std::filesystem::exists(file_); }, 60);
  }

 private:
  std::string file_;
  int epoch_now_ = -1;
};

// The chaos scenario's chief: writes how many steps it has done to `progress` after each batch
// (the parent kills by it), sleeps `ms` per batch so that the job lasts, and in the last
// `final_epochs` epochs slows further while fewer than `slots` workers train, so that a worker
// restarted late still joins before the end.
class ChaosPace final : public Callback {
 public:
  ChaosPace(const distribute::MultiWorkerMirroredStrategy& s, std::string progress, int ms,
            int epochs, int final_epochs, int slots)
      : s_(s), progress_(std::move(progress)), ms_(ms), epochs_(epochs),
        final_epochs_(final_epochs), slots_(slots) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_now_ = epoch; }
  void on_train_batch_end(int, const Logs&) override {
    std::ofstream(progress_ + ".tmp") << ++steps_ << "\n";
    std::rename((progress_ + ".tmp").c_str(), progress_.c_str());
    int pause = ms_;
    if (epoch_now_ >= epochs_ - final_epochs_ && s_.num_workers() < slots_) pause = 300;
    std::this_thread::sleep_for(std::chrono::milliseconds(pause));
  }

 private:
  const distribute::MultiWorkerMirroredStrategy& s_;
  std::string progress_;
  int ms_, epochs_, final_epochs_, slots_;
  int epoch_now_ = -1, steps_ = 0;
};

struct Result {
  std::vector<std::vector<float>> weights;
  int64_t iterations = 0;
  distribute::MultiWorkerMirroredStrategy::ElasticCounts counts;
};

// Every weight of `model` as float32 values, in get_weights() order.
std::vector<std::vector<float>> weights_of(const Sequential& model) {
  std::vector<std::vector<float>> weights;
  for (const Tensor& w : model.get_weights()) weights.push_back(w.cast(float32).to_vector<float>());
  return weights;
}

std::pair<int, int> parse_at(const char* text) {
  int a = -1, b = -1;
  if (text != nullptr) std::sscanf(text, "%d:%d", &a, &b);
  return {a, b};
}

// The training every test compares: small_classifier with SGD + momentum on the global batches.
// Keeping the per-replica batch (`per_replica`): batches of kPerReplicaBatch, not shuffled.
Result train(distribute::MultiWorkerMirroredStrategy* strategy, std::vector<CallbackPtr> callbacks,
             int epochs = kEpochs, bool per_replica = false) {
  Tf32Scope exact(false);   // exact float32 on a GPU: compared at rtol 1e-5
  std::shared_ptr<Sequential> model;
  {
    std::optional<distribute::Strategy::Scope> scope;
    if (strategy) scope.emplace(strategy->scope());
    model = small_classifier("sgd_momentum");
  }
  trained_model() = model;
  const ClassifierData d = classifier_data(kSamples);
  FitOptions fit = FitOptions().batch_size(kBatch).epochs(epochs).verbose(0).callbacks(callbacks);
  if (per_replica) fit.batch_size(kPerReplicaBatch).shuffle(false);
  model->fit(d.x, d.y, fit);
  Result r;
  r.weights = weights_of(*model);
  r.iterations = model->optimizer()->iteration_count();
  if (strategy) r.counts = strategy->elastic_counts();
  return r;
}

void write_result(const std::string& path, const Result& r) {
  std::ofstream out(path + ".tmp");
  out << "iterations " << r.iterations << " reformations " << r.counts.reformations
      << " synchronizations " << r.counts.synchronizations << " taken_over "
      << r.counts.steps_taken_over << " completed " << r.counts.completed_steps << "\n";
  for (const auto& w : r.weights) {
    out << "w " << w.size();
    char buf[32];
    for (float f : w) {
      std::snprintf(buf, sizeof buf, " %.9g", double(f));
      out << buf;
    }
    out << "\n";
  }
  out.close();
  std::rename((path + ".tmp").c_str(), path.c_str());
}

Result read_result(const std::string& path) {
  Result r;
  std::istringstream in(read_file_text(path));
  std::string tag;
  in >> tag >> r.iterations >> tag >> r.counts.reformations >> tag >> r.counts.synchronizations >>
      tag >> r.counts.steps_taken_over >> tag >> r.counts.completed_steps;
  size_t n = 0;
  while (in >> tag >> n) {
    std::vector<float> v(n);
    for (float& f : v) in >> f;
    r.weights.push_back(v);
  }
  return r;
}

distribute::CommunicationOptions elastic_options(double grace_seconds, bool per_replica = false) {
  distribute::ElasticOptions elastic =
      distribute::ElasticOptions().min_workers(2).start_grace_seconds(grace_seconds);
  if (per_replica) {
    elastic.keep_per_replica_batch(true).on_replicas_changed([](int replicas) {
      trained_model().lock()->optimizer()->set_learning_rate(scaled_rate(replicas));
    });
  }
  return distribute::CommunicationOptions()
      .timeout_seconds(30)
      .heartbeat_timeout_seconds(2)
      .register_timeout_seconds(40)
      .implementation(distribute::CommunicationImplementation::kRing)
      .elastic(elastic);
}

TEST(ElasticTrainingChild, Run) {
  const char* scenario = std::getenv(kScenario);
  if (scenario == nullptr) GTEST_SKIP() << "runs as a worker process of ElasticTraining tests";
  const std::string what = scenario;
  // "all": every slot comes at the start; "two_then_join": two start without the third.
  const bool per_replica = std::getenv(kPerReplica) != nullptr;
  const distribute::CommunicationOptions options =
      elastic_options(what == "two_then_join" || what == "late" ? 1 : 30, per_replica);
  std::shared_ptr<distribute::MultiWorkerMirroredStrategy> strategy;
  try {
    strategy = std::make_shared<distribute::MultiWorkerMirroredStrategy>(nullptr, options);
  } catch (const distribute::JobFinishedError& e) {
    // A worker that came after the training was over: nothing to do (the apps exit 0 so).
    std::ofstream(std::getenv(kOut)) << "finished " << e.what() << "\n";
    return;
  }
  if (const char* after = std::getenv(kDieInSync)) {
    // SIGKILL inside a synchronization (its state not yet broadcast) after `after` of them.
    const int64_t n = std::atoll(after);
    distribute::MultiWorkerMirroredStrategy* s = strategy.get();
    strategy->set_elastic_synchronization_hook([s, n] {
      if (s->elastic_counts().synchronizations >= n) raise(SIGKILL);
    });
  }
  std::vector<CallbackPtr> callbacks;
  if (const auto [epoch, batch] = parse_at(std::getenv(kKillAt)); epoch >= 0) {
    callbacks.push_back(std::make_shared<KillAt>(epoch, batch));
  }
  if (const auto [epoch, batch] = parse_at(std::getenv(kWaitJoinAt)); epoch >= 0) {
    callbacks.push_back(std::make_shared<WaitForJoin>(*strategy, epoch, batch,
                                                      std::string(std::getenv(kOut)) + ".marker"));
  }
  if (const char* pause = std::getenv(kPauseFile); pause != nullptr && strategy->is_chief()) {
    callbacks.push_back(std::make_shared<PauseForFile>(pause));
  }
  if (what == "chaos" && strategy->is_chief()) {
    callbacks.push_back(std::make_shared<ChaosPace>(*strategy, std::string(std::getenv(kOut)) +
                                                    ".progress", 20, kChaosEpochs, 5, 3));
  }
  if (per_replica) {
    callbacks.push_back(std::make_shared<RecordReplicas>(*strategy, std::string(std::getenv(kOut)) +
                                                         ".steps"));
  }
  // "netns": long enough for a worker to be cut off, dropped, and started again to join.
  const int epochs = what == "netns" ? 8 : what == "chaos" ? kChaosEpochs : kEpochs;
  write_result(std::getenv(kOut), train(strategy.get(), callbacks, epochs, per_replica));
  if (const char* release = std::getenv(kHoldAfterFit)) {
    // Training is over; before leaving (the shutdown barrier, as the strategy goes), wait for a
    // late worker to register (a new generation heard of), then for the parent's release.
    const std::string out = std::getenv(kOut);
    const uint64_t now = strategy->elastic_counts().generation;
    std::ofstream(out + ".done") << "done\n";
    if (wait_until([&] { return strategy->elastic_counts().generation_seen > now; }, 60)) {
      std::ofstream(out + ".seen") << "seen\n";
    }
    wait_until([&] { return std::filesystem::exists(release); }, 60);
  }
}

class ElasticTraining : public WorkerJobTest {
 protected:
  ElasticTraining() : WorkerJobTest("elastic") {}

  int start(WorkerProcesses& job, const std::vector<std::string>& configs, int w,
            const std::string& scenario, std::vector<std::string> env = {},
            const std::string& log_suffix = "") {
    env.push_back("TF_CONFIG=" + configs[size_t(w)]);
    env.push_back(std::string(kScenario) + "=" + scenario);
    env.push_back(std::string(kOut) + "=" + out(w));
    return job.start(kChildTest, env, log(w) + log_suffix);
  }

};

void expect_same_weights(const Result& got, const Result& want, const std::string& who) {
  SCOPED_TRACE(who);
  ASSERT_EQ(got.weights.size(), want.weights.size());
  for (size_t w = 0; w < want.weights.size(); ++w) {
    ASSERT_EQ(got.weights[w].size(), want.weights[w].size());
    for (size_t i = 0; i < want.weights[w].size(); ++i) {
      ASSERT_NEAR(got.weights[w][i], want.weights[w][i], 1e-6 + 1e-5 * std::fabs(want.weights[w][i]))
          << "weight " << w << " element " << i;
    }
  }
}

// 3 workers; worker 2 is killed (SIGKILL) as batch 1 of epoch 1 begins. Workers 0 and 1 re-form
// without it and finish; the global batch stays 24 (12 each instead of 8), so their weights equal
// one process's on the same batches, and every one of the 12 steps is applied once.
TEST_F(ElasticTraining, AWorkerKilledMidEpochLeavesTheRestTrainingAsAnUninterruptedRun) {
  const Result reference = train(nullptr, {});
  ASSERT_EQ(reference.iterations, 12);
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  for (int w = 0; w < 3; ++w) {
    start(job, configs, w, "all",
          w == 2 ? std::vector<std::string>{std::string(kKillAt) + "=1:1"} : std::vector<std::string>{});
  }
  const ChildExit killed = job.wait(2, 120);
  EXPECT_EQ(killed.signal, SIGKILL) << job.log(2);
  for (int w = 0; w < 2; ++w) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
    const Result r = read_result(out(w));
    expect_same_weights(r, reference, "worker " + std::to_string(w));
    EXPECT_EQ(r.iterations, 12) << "worker " << w;
    EXPECT_EQ(r.counts.completed_steps + r.counts.steps_taken_over, 12) << "worker " << w;
    EXPECT_GE(r.counts.reformations, 1) << "worker " << w;
  }
}

// 2 of 3 slots start (the third's grace runs out); once the job is in its second epoch a third
// process starts in the free slot, joins at a step boundary and takes over the state and the
// place in the data. All three end with the weights of one process on the same batches.
TEST_F(ElasticTraining, AWorkerThatJoinsMidEpochTakesOverTheStateAndPlace) {
  const Result reference = train(nullptr, {});
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  const std::vector<std::string> wait_env{std::string(kWaitJoinAt) + "=1:0"};
  for (int w = 0; w < 2; ++w) start(job, configs, w, "two_then_join", wait_env);
  // The third starts once worker 0 trains (in epoch 1: the first two formed without it).
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(out(0) + ".marker"); }, 60))
      << job.log(0);
  start(job, configs, 2, "two_then_join");
  for (int w = 0; w < 3; ++w) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
    const Result r = read_result(out(w));
    expect_same_weights(r, reference, "worker " + std::to_string(w));
    EXPECT_EQ(r.iterations, 12) << "worker " << w;
  }
  // The joiner ran only the steps after it joined; the others ran all 12.
  const Result joiner = read_result(out(2));
  EXPECT_GT(joiner.counts.completed_steps, 0);
  EXPECT_LT(joiner.counts.completed_steps, 12);
  EXPECT_GE(read_result(out(0)).counts.reformations, 1);
}

// One process replaying the steps a worker recorded, keeping the per-replica batch: each step
// trains on the epoch's next min(replicas, left) batches of kPerReplicaBatch, in order, at the
// learning rate scaled for its replicas; every epoch uses every sample once.
Result replay(const std::vector<StepRun>& steps) {
  Tf32Scope exact(false);
  std::shared_ptr<Sequential> model = small_classifier("sgd_momentum");
  const ClassifierData d = classifier_data(kSamples);
  int epoch = -1;
  int64_t at = 0;
  for (const StepRun& s : steps) {
    if (s.epoch != epoch) {
      if (epoch >= 0) EXPECT_EQ(at, kSamples) << "epoch " << epoch << " did not use every sample";
      epoch = s.epoch;
      at = 0;
    }
    const int64_t rows = std::min<int64_t>(s.replicas * kPerReplicaBatch, kSamples - at);
    EXPECT_GT(rows, 0) << "a step of epoch " << epoch << " after every sample was used";
    if (rows <= 0) break;
    model->optimizer()->set_learning_rate(scaled_rate(s.replicas));
    model->train_on_batch(d.x.slice(at, at + rows), d.y.slice(at, at + rows));
    at += rows;
  }
  EXPECT_EQ(at, kSamples) << "the last epoch did not use every sample";
  Result r;
  r.weights = weights_of(*model);
  r.iterations = model->optimizer()->iteration_count();
  return r;
}

// Every step ran at the learning rate the hook set for its replicas.
void expect_hook_rates(const std::vector<StepRun>& steps, const std::string& who) {
  for (size_t i = 0; i < steps.size(); ++i) {
    EXPECT_NEAR(steps[i].learning_rate, scaled_rate(steps[i].replicas), 1e-9)
        << who << ", step " << i << " with " << steps[i].replicas << " replicas";
  }
}

// Keeping the per-replica batch (Horovod's choice): 3 workers take 3 batches of 8 a step; worker
// 2 is killed as step 1 of epoch 1 begins. The survivors run that step again with 2 batches (the
// third given back to the next step) and go on with 2 a step, at the learning rate the hook set
// for 2 replicas: epoch 0 has 4 steps, epochs 1 and 2 have 6 (1 with 3 replicas, 5 with 2; then
// 6 with 2). Their weights equal one process replaying those steps.
TEST_F(ElasticTraining, KeepingThePerReplicaBatchAWorkerKilledLeavesStepsOfTwoBatches) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  for (int w = 0; w < 3; ++w) {
    std::vector<std::string> env{std::string(kPerReplica) + "=1"};
    if (w == 2) env.push_back(std::string(kKillAt) + "=1:1");
    start(job, configs, w, "all", env);
  }
  const ChildExit killed = job.wait(2, 120);
  EXPECT_EQ(killed.signal, SIGKILL) << job.log(2);
  std::vector<StepRun> expected;
  for (int i = 0; i < 4; ++i) expected.push_back({0, 3, 0});
  expected.push_back({1, 3, 0});
  for (int i = 0; i < 5; ++i) expected.push_back({1, 2, 0});
  for (int i = 0; i < 6; ++i) expected.push_back({2, 2, 0});
  for (int w = 0; w < 2; ++w) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
    const std::vector<StepRun> steps = read_steps(out(w) + ".steps");
    ASSERT_EQ(steps.size(), expected.size()) << "worker " << w;
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(steps[i].epoch, expected[i].epoch) << "worker " << w << ", step " << i;
      EXPECT_EQ(steps[i].replicas, expected[i].replicas) << "worker " << w << ", step " << i;
    }
    expect_hook_rates(steps, "worker " + std::to_string(w));
    const Result r = read_result(out(w));
    const Result reference = replay(steps);
    EXPECT_EQ(reference.iterations, 16);
    expect_same_weights(r, reference, "worker " + std::to_string(w));
    EXPECT_EQ(r.iterations, 16) << "worker " << w;
  }
}

// Keeping the per-replica batch: 2 of 3 slots start (2 batches a step); a third joins in epoch 1,
// mid-pass, takes over the state and the place in the data, and from then every step takes 3
// batches at the learning rate for 3 replicas (the hook called on all three, the joiner's
// first synchronization included). All three end with the weights of one process replaying the
// chief's steps, and every epoch uses every sample once.
TEST_F(ElasticTraining, KeepingThePerReplicaBatchAWorkerThatJoinsAddsABatchAStep) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  const std::vector<std::string> env{std::string(kPerReplica) + "=1",
                                     std::string(kWaitJoinAt) + "=1:0"};
  for (int w = 0; w < 2; ++w) start(job, configs, w, "two_then_join", env);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(out(0) + ".marker"); }, 60))
      << job.log(0);
  start(job, configs, 2, "two_then_join", {std::string(kPerReplica) + "=1"});
  for (int w = 0; w < 3; ++w) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
  }
  const std::vector<StepRun> steps = read_steps(out(0) + ".steps");
  // Epoch 0: 6 steps of 2 batches; the join in epoch 1; epoch 2: 4 steps of 3.
  ASSERT_GE(steps.size(), 12u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(steps[i].replicas, 2) << "step " << i;
  for (size_t i = steps.size() - 4; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].epoch, 2) << "step " << i;
    EXPECT_EQ(steps[i].replicas, 3) << "step " << i;
  }
  const Result reference = replay(steps);
  for (int w = 0; w < 3; ++w) {
    const std::vector<StepRun> own = read_steps(out(w) + ".steps");
    expect_hook_rates(own, "worker " + std::to_string(w));
    const Result r = read_result(out(w));
    expect_same_weights(r, reference, "worker " + std::to_string(w));
    EXPECT_EQ(r.iterations, int64_t(steps.size())) << "worker " << w;
  }
  // The joiner ran only the steps after it joined, all with 3 replicas.
  const std::vector<StepRun> joiner = read_steps(out(2) + ".steps");
  ASSERT_GT(joiner.size(), 4u);
  ASSERT_LT(joiner.size(), steps.size());
  for (const StepRun& s : joiner) EXPECT_EQ(s.replicas, 3);
}

// An elastic job of one worker (of two slots) with two local replicas, keeping the per-replica
// batch.
class ElasticPerReplicaBatch : public ::testing::Test {
 protected:
  void SetUp() override { config::set_logical_cpu_devices(2); }
  void TearDown() override { config::set_logical_cpu_devices(1); }
  static distribute::CommunicationOptions options() {
    return distribute::CommunicationOptions()
        .timeout_seconds(30)
        .implementation(distribute::CommunicationImplementation::kRing)
        .elastic(distribute::ElasticOptions().min_workers(1).start_grace_seconds(0)
                     .keep_per_replica_batch(true));
  }
  // Two slots, the second never started: the job trains with the first alone.
  ScopedEnvironment env_{{"TF_CONFIG", tf_configs(2)[0]}};
};

// 48 samples in batches of 8: each step takes two (one per replica), so an epoch is 3 steps,
// each the mean over 16 rows in order: one process training on 16-row slices gets the same.
TEST_F(ElasticPerReplicaBatch, TwoLocalReplicasTakeTwoBatchesAStep) {
  Tf32Scope exact(false);
  const ClassifierData d = classifier_data(48);
  Result reference;
  {
    std::shared_ptr<Sequential> model = small_classifier("sgd_momentum");
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (int64_t at = 0; at < 48; at += 16) {
        model->train_on_batch(d.x.slice(at, at + 16), d.y.slice(at, at + 16));
      }
    }
    reference.weights = weights_of(*model);
  }
  distribute::MultiWorkerMirroredStrategy strategy(nullptr, options());
  ASSERT_EQ(strategy.num_replicas_in_sync(), 2);
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier("sgd_momentum");
  }
  model->fit(d.x, d.y, FitOptions().batch_size(8).epochs(2).shuffle(false).verbose(0));
  EXPECT_EQ(model->optimizer()->iteration_count(), 6);
  Result got;
  got.weights = weights_of(*model);
  expect_same_weights(got, reference, "one worker, two replicas");
}

// A finite dataset of 3 batches with steps_per_epoch 4: the second step takes the pass's last
// batch and, the pass started again, its first. No place in one pass describes where that step
// starts, so fit refuses it naming the remedy rather than let a joiner start elsewhere.
TEST_F(ElasticPerReplicaBatch, AStepDrawingFromTwoPassesOfTheDatasetIsAValueErrorNamingRepeat) {
  const ClassifierData d = classifier_data(48);
  distribute::MultiWorkerMirroredStrategy strategy(nullptr, options());
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier("sgd_momentum");
  }
  const data::Dataset ds = data::Dataset::from_tensor_slices({d.x, d.y}).batch(16);
  expect_error<ValueError>(
      [&] { model->fit(ds, FitOptions().steps_per_epoch(4).epochs(1).verbose(0)); },
      {"two passes of the dataset", "repeat()", "steps_per_epoch"});
}

// The training is over on workers 0 and 1 (2 of 3 slots) when a third process starts in the free
// slot (a worker restarted after the last step): it registers, but nobody will re-form with it.
// Once a worker reaches the shutdown barrier it is told there is nothing to do
// (JobFinishedError), passes the barrier with them, and every process exits with success
// (before: it waited for a generation that never formed and the chief's barrier failed).
TEST_F(ElasticTraining, AWorkerThatComesAfterTheLastStepHasNothingToDoAndTheJobSucceeds) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  const std::string release = out(0) + ".release";
  for (int w = 0; w < 2; ++w) {
    start(job, configs, w, "late", {std::string(kHoldAfterFit) + "=" + release});
  }
  ASSERT_TRUE(wait_until([&] {
    return std::filesystem::exists(out(0) + ".done") && std::filesystem::exists(out(1) + ".done");
  }, 60)) << job.log(0) << job.log(1);
  start(job, configs, 2, "late");
  const bool seen = wait_until([&] {
    return std::filesystem::exists(out(0) + ".seen") && std::filesystem::exists(out(1) + ".seen");
  }, 60);
  std::ofstream(release) << "go\n";
  ASSERT_TRUE(seen) << "worker 2 never registered:\n" << job.log(2);
  for (int w = 0; w < 3; ++w) {
    const ChildExit e = job.wait(w, 60);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
  }
  for (int w = 0; w < 2; ++w) EXPECT_EQ(read_result(out(w)).iterations, 12) << "worker " << w;
  const std::string late = read_file_text(out(2));
  EXPECT_EQ(late.rfind("finished ", 0), 0u) << late;
  EXPECT_NE(late.find("reached the shutdown barrier"), std::string::npos) << late;
  EXPECT_NE(late.find("was not taken in"), std::string::npos) << late;
}

// 4 workers: worker 3 is killed as batch 1 of epoch 1 begins, and worker 2 dies in the state
// synchronization of the re-formation that follows (after the broadcast's agreement, before
// the state arrives). Workers 0 and 1 re-form once more and finish as an uninterrupted run.
TEST_F(ElasticTraining, AWorkerKilledDuringTheStateSynchronizationIsLeftOutToo) {
  const Result reference = train(nullptr, {});
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(4);
  for (int w = 0; w < 4; ++w) {
    std::vector<std::string> env;
    if (w == 3) env.push_back(std::string(kKillAt) + "=1:1");
    if (w == 2) env.push_back(std::string(kDieInSync) + "=1");  // the first is the start's
    start(job, configs, w, "all", env);
  }
  for (int w : {3, 2}) EXPECT_EQ(job.wait(w, 120).signal, SIGKILL) << job.log(w);
  for (int w = 0; w < 2; ++w) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(w);
    const Result r = read_result(out(w));
    expect_same_weights(r, reference, "worker " + std::to_string(w));
    EXPECT_EQ(r.iterations, 12) << "worker " << w;
    EXPECT_GE(r.counts.reformations, 2) << "worker " << w;
  }
}

// 3 workers with min_workers 2: workers 1 and 2 are killed at the same batch. One worker is too
// few: the chief fails naming a lost worker and the minimum, no hang.
TEST_F(ElasticTraining, FewerThanMinWorkersLeftIsAnErrorNamingTheLostOnes) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  for (int w = 0; w < 3; ++w) {
    start(job, configs, w, "all",
          w > 0 ? std::vector<std::string>{std::string(kKillAt) + "=1:1"} : std::vector<std::string>{});
  }
  for (int w : {1, 2}) EXPECT_EQ(job.wait(w, 120).signal, SIGKILL) << job.log(w);
  const ChildExit chief = job.wait(0, 120);
  ASSERT_TRUE(chief.exited) << job.log(0);
  EXPECT_NE(chief.code, 0);
  const std::string log = job.log(0);
  EXPECT_NE(log.find("fewer than the 2"), std::string::npos) << log;
  // The service may notice the two apart: the last one lost is the one named.
  EXPECT_TRUE(log.find("worker 1") != std::string::npos || log.find("worker 2") != std::string::npos)
      << log;
}

// The chief hosts the coordination service: its death ends an elastic job too. Both workers
// fail naming it (the service unreachable), within the heartbeat timeout, no hang.
TEST_F(ElasticTraining, TheChiefKilledEndsTheJobNamingIt) {
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  for (int w = 0; w < 3; ++w) {
    start(job, configs, w, "all",
          w == 0 ? std::vector<std::string>{std::string(kKillAt) + "=1:1"} : std::vector<std::string>{});
  }
  EXPECT_EQ(job.wait(0, 120).signal, SIGKILL) << job.log(0);
  for (int w : {1, 2}) {
    const ChildExit e = job.wait(w, 120);
    ASSERT_TRUE(e.exited) << "worker " << w << " hung:\n" << job.log(w);
    EXPECT_NE(e.code, 0);
    const std::string log = job.log(w);
    EXPECT_NE(log.find("worker 0"), std::string::npos) << log;
  }
}

// Chaos, shortened (bench/elastic_chaos.sh runs the 3-minute one): 6 kills (SIGKILL) of a random
// non-chief worker during an 80-step job of 3 workers, each worker started again at once in its
// slot, as strata-launch --max_restarts does. The job finishes, every step is applied once (the
// iteration count is 80 everywhere) and the weights equal one process on the same batches (to
// 1e-4: 80 steps of sums over 2 or 3 workers in different orders).
TEST_F(ElasticTraining, KillsAndRestartsDuringTrainingLeaveTheResultOfAnUninterruptedRun) {
  const Result reference = train(nullptr, {}, kChaosEpochs);
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(3);
  std::vector<int> slot_of = {0, 1, 2};  // job slot (process) of each worker
  for (int w = 0; w < 3; ++w) start(job, configs, w, "chaos");
  std::mt19937 random(20261128);
  int run = 0;
  for (int kill = 1; kill <= 6; ++kill) {
    // Kill at steps 8, 16, ..., 48 of the chief.
    wait_until([&] { return std::atoi(read_file_text(out(0) + ".progress").c_str()) >= 8 * kill; },
               90);
    const int w = 1 + int(random() % 2);
    job.kill(slot_of[size_t(w)]);
    const ChildExit e = job.wait(slot_of[size_t(w)], 30);
    ASSERT_EQ(e.signal, SIGKILL) << "worker " << w << " ended otherwise:\n" << job.log(slot_of[size_t(w)]);
    // Started again in its slot: a new process that joins the running job.
    slot_of[size_t(w)] = start(job, configs, w, "chaos", {}, "_" + std::to_string(++run));
  }
  for (int w = 0; w < 3; ++w) {
    const ChildExit e = job.wait(slot_of[size_t(w)], 120);
    ASSERT_TRUE(e.exited && e.code == 0) << "worker " << w << " failed:\n" << job.log(slot_of[size_t(w)]);
    const Result r = read_result(out(w));
    EXPECT_EQ(r.iterations, 4 * kChaosEpochs) << "worker " << w;
    for (size_t v = 0; v < reference.weights.size(); ++v) {
      for (size_t i = 0; i < reference.weights[v].size(); ++i) {
        ASSERT_NEAR(r.weights[v][i], reference.weights[v][i],
                    1e-5 + 1e-4 * std::fabs(reference.weights[v][i]))
            << "worker " << w << " weight " << v << " element " << i;
      }
    }
  }
  EXPECT_GE(read_result(out(0)).counts.reformations, 6);
}

}  // namespace
}  // namespace strata::testing
