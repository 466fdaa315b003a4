// Coordinated preemption under MultiWorkerMirroredStrategy, across real processes on loopback
// (worker_processes.h): SIGTERM or SIGINT on any worker stops every worker after the same step
// (the flag travels with the state all-gather that ends every step), the chief writes the
// backup, every worker exits 128 + signal, and the whole job started again resumes there and
// ends with the weights of an uninterrupted run.
//
// No test assumes timing: a worker that is to be signalled at a chosen step holds there until
// the signal has arrived (it reports that it holds; the parent then signals it), and a signal at
// an arbitrary moment is sent once a step has been reported, every worker holding before the
// last step until its own signal came, so the signal always lands while the job still trains.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "distribute/multi_worker_mirrored_strategy.h"
#include "distribute/preemption_checkpoint_handler.h"
#include "framework/callbacks/backup_and_restore.h"
#include "framework/saving/training_checkpoint.h"
#include "framework/strategy/replica_context.h"
#include "framework/trainer/termination_signals.h"
#include "support/test_helpers.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/distribute/worker_processes.h"

namespace strata::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChildTest = "MultiWorkerPreemptionChild.Run";
constexpr const char* kScenario = "STRATA_TEST_PREEMPT_SCENARIO";  // fit, custom, evaluate
constexpr const char* kOut = "STRATA_TEST_PREEMPT_OUT";            // result file of this worker
constexpr const char* kBackupDir = "STRATA_TEST_PREEMPT_BACKUP";
// Where this worker waits until its own SIGTERM / SIGINT has arrived: "train:<epoch>:<batch>"
// (after that training batch), "val:<epoch>:<batch>" (after that validation batch of fit),
// "test:<batch>" (evaluate), "run:<n>" (custom loop, after its n-th step), "preemption" (in
// on_preemption: until the process is ended); fit takes several, comma-separated.
constexpr const char* kHold = "STRATA_TEST_PREEMPT_HOLD";

// The job: 4 epochs of 4 steps (96 samples, global batch 24, shuffled), validation on 48 samples
// (2 batches) after each epoch, SGD with momentum, a backup at each epoch end (and on
// preemption).
constexpr int kEpochs = 4;
constexpr int64_t kSamples = 96, kBatch = 24;

// ---- files between the parent and the workers ----

std::string holding_marker(const std::string& out) { return out + ".holding"; }
std::string steps_marker(const std::string& out) { return out + ".steps"; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path + ".tmp") << text;
  std::rename((path + ".tmp").c_str(), path.c_str());
}

// Waits (bounded) until this process's own termination signal is pending; reports that it holds
// first, so the parent knows when to signal it.
void hold_until_signalled(const std::string& out, const std::string& where) {
  write_text(holding_marker(out), where + "\n");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
  while (TerminationSignalScope::pending() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::fprintf(stderr, "held at %s until signal %d\n", where.c_str(), TerminationSignalScope::pending());
}

// Weights, the per-epoch losses and how the run ended ("done" or "interrupted <signal>").
void write_result(const std::string& path, const std::vector<Tensor>& weights,
                  const std::vector<double>& loss, const std::string& end) {
  std::ostringstream text;
  char buf[32];
  for (const Tensor& w : weights) {
    const std::vector<float> v = w.cast(float32).to_vector<float>();
    text << "w " << v.size();
    for (float f : v) {
      std::snprintf(buf, sizeof buf, " %.9g", double(f));
      text << buf;
    }
    text << "\n";
  }
  text << "loss " << loss.size();
  for (double l : loss) text << " " << l;
  text << "\nend " << end << "\n";
  write_text(path, text.str());
}

struct Result {
  std::vector<std::vector<float>> weights;
  std::vector<double> loss;
  std::string end;
};

Result read_result(const std::string& path) {
  Result r;
  std::istringstream in(read_file_text(path));
  std::string tag;
  while (in >> tag) {
    if (tag == "end") {
      std::getline(in >> std::ws, r.end);
      continue;
    }
    size_t n = 0;
    in >> n;
    if (tag == "w") {
      std::vector<float> v(n);
      for (float& f : v) in >> f;
      r.weights.push_back(v);
    } else {
      r.loss.resize(n);
      for (double& l : r.loss) in >> l;
    }
  }
  return r;
}

// ---- the worker ----

// Holds at the chosen training or validation batch; records every finished training step.
class Holds final : public Callback {
 public:
  Holds(std::string out, std::string hold) : out_(std::move(out)), hold_(std::move(hold)) {}
  void on_epoch_begin(int epoch, const Logs&) override { epoch_ = epoch; }
  void on_train_batch_end(int batch, const Logs&) override {
    write_text(steps_marker(out_), std::to_string(epoch_) + " " + std::to_string(batch) + "\n");
    at("train:" + std::to_string(epoch_) + ":" + std::to_string(batch));
  }
  void on_test_batch_end(int batch, const Logs&) override {
    at("val:" + std::to_string(epoch_) + ":" + std::to_string(batch));
  }
  void on_preemption(int) override {
    if (!holds("preemption")) return;
    // Waits to be ended by a second signal (bounded: then the run ends as if it had saved).
    write_text(holding_marker(out_), "preemption\n");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(50);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  // hold_: one place or several, comma-separated.
  bool holds(const std::string& where) const {
    return ("," + hold_ + ",").find("," + where + ",") != std::string::npos;
  }
  void at(const std::string& where) {
    if (holds(where)) hold_until_signalled(out_, where);
  }
  std::string out_, hold_;
  int epoch_ = 0;
};

ClassifierData validation_data() { return classifier_data(48, 21); }

// Returns the exit status the worker's program would have (0, or 128 + signal).
int run_fit(distribute::MultiWorkerMirroredStrategy& strategy, const std::string& out,
            const std::string& backup_dir, const std::string& hold) {
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier("sgd_momentum");
  }
  const ClassifierData d = classifier_data(kSamples);
  const ClassifierData v = validation_data();
  std::vector<CallbackPtr> callbacks{std::make_shared<BackupAndRestore>(backup_dir),
                                     std::make_shared<Holds>(out, hold)};
  try {
    History h = model->fit(d.x, d.y, FitOptions()
                                         .batch_size(kBatch)
                                         .epochs(kEpochs)
                                         .validation_data(v.x, v.y)
                                         .verbose(0)
                                         .callbacks(callbacks));
    write_result(out, model->get_weights(), h.history["loss"], "done");
    return 0;
  } catch (const TrainingInterrupted& e) {
    std::fprintf(stderr, "%s\n", e.what());
    write_result(out, model->get_weights(), {}, "interrupted " + std::to_string(e.signal()));
    return 128 + e.signal();
  }
}

// A custom loop of 12 steps (the 96 samples three times over, in global batches of 24) under a
// PreemptionCheckpointHandler whose save function has the chief write a training checkpoint
// (weights, optimizer state, the steps done) in backup_dir; a restart restores it and goes on.
int run_custom(distribute::MultiWorkerMirroredStrategy& strategy, const std::string& out,
               const std::string& backup_dir, const std::string& hold) {
  constexpr int64_t kSteps = 12;
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier("sgd_momentum");
  }
  std::shared_ptr<optimizers::Optimizer> opt = model->optimizer();
  const std::string checkpoint = backup_dir + "/custom.h5";
  int64_t start = 0;
  if (fs::exists(checkpoint)) {
    auto scope = strategy.scope();
    opt->build(model->trainable_variables());
    start = std::stoll(saving::read_training_checkpoint(*model, checkpoint));
    std::fprintf(stderr, "custom loop: resuming after step %lld\n", static_cast<long long>(start));
  }
  const ClassifierData d = classifier_data(kSamples);
  auto it = strategy
                .experimental_distribute_dataset(
                    data::Dataset::from_tensor_slices({d.x, d.y}).batch(kBatch).repeat())
                .make_iterator();
  for (int64_t s = 0; s < start; ++s) it->next();
  int saves = 0;
  distribute::PreemptionCheckpointHandler preemption(strategy, [&] {
    ++saves;
    if (!strategy.should_checkpoint()) return;
    fs::create_directories(backup_dir);
    saving::write_training_checkpoint(*model, checkpoint,
                                      std::to_string(start + preemption.total_run_calls()));
  });
  const losses::SparseCategoricalCrossentropy per_sample(true, losses::Reduction::kNone);
  const auto step = [&](const data::Element& b) {
    const double fraction = distribute::current_replica_context()->batch_fraction();
    GradientTape tape;
    const Tensor loss = reduce_mean(per_sample(b[1], (*model)(b[0], true))) * fraction;
    const std::vector<VariablePtr> vars = model->trainable_variables();
    opt->apply_gradients(tape.gradient(loss, vars), vars);
    return loss;
  };
  try {
    for (int64_t s = start; s < kSteps; ++s) {
      const std::optional<distribute::DistributedBatch> batch = it->next();
      preemption.run([&] { strategy.run(step, *batch); });
      write_text(steps_marker(out), std::to_string(s) + "\n");
      if (hold == "run:" + std::to_string(s + 1)) hold_until_signalled(out, hold);
    }
  } catch (const TrainingInterrupted& e) {
    std::fprintf(stderr, "%s\nsave called %d time(s)\n", e.what(), saves);
    write_result(out, model->get_weights(), {}, "interrupted " + std::to_string(e.signal()) +
                                                    " saves " + std::to_string(saves));
    return 128 + e.signal();
  }
  write_result(out, model->get_weights(), {}, "done saves " + std::to_string(saves));
  return 0;
}

// evaluate on 20 batches of the validation data.
int run_evaluate(distribute::MultiWorkerMirroredStrategy& strategy, const std::string& out,
                 const std::string& hold) {
  std::shared_ptr<Sequential> model;
  {
    auto scope = strategy.scope();
    model = small_classifier("sgd_momentum");
  }
  const ClassifierData v = classifier_data(20 * 8, 21);
  class HoldAtTestBatch final : public Callback {
   public:
    HoldAtTestBatch(std::string out, std::string hold) : out_(std::move(out)), hold_(std::move(hold)) {}
    void on_test_batch_end(int batch, const Logs&) override {
      write_text(steps_marker(out_), std::to_string(batch) + "\n");
      if (hold_ == "test:" + std::to_string(batch)) hold_until_signalled(out_, hold_);
    }

   private:
    std::string out_, hold_;
  };
  try {
    model->evaluate(v.x, v.y, EvaluateOptions().batch_size(8).verbose(0).callbacks(
                                  {std::make_shared<HoldAtTestBatch>(out, hold)}));
    write_result(out, model->get_weights(), {}, "done");
    return 0;
  } catch (const TrainingInterrupted& e) {
    std::fprintf(stderr, "%s\n", e.what());
    write_result(out, model->get_weights(), {}, "interrupted " + std::to_string(e.signal()));
    return 128 + e.signal();
  }
}

TEST(MultiWorkerPreemptionChild, Run) {
  const char* scenario = std::getenv(kScenario);
  if (scenario == nullptr) GTEST_SKIP() << "runs as a worker process of MultiWorkerPreemption tests";
  const std::string what = scenario, out = std::getenv(kOut);
  const std::string hold = std::getenv(kHold) ? std::getenv(kHold) : "";
  const std::string backup_dir = std::getenv(kBackupDir) ? std::getenv(kBackupDir) : "";
  int status = 0;
  {
    // Generous bounds: a worker holding for its signal keeps the others waiting in a collective.
    distribute::MultiWorkerMirroredStrategy strategy(
        nullptr, distribute::CommunicationOptions()
                     .timeout_seconds(90)
                     .heartbeat_timeout_seconds(10)
                     .register_timeout_seconds(60)
                     .implementation(distribute::CommunicationImplementation::kRing));
    if (what == "fit") {
      status = run_fit(strategy, out, backup_dir, hold);
    } else if (what == "custom") {
      status = run_custom(strategy, out, backup_dir, hold);
    } else if (what == "evaluate") {
      status = run_evaluate(strategy, out, hold);
    } else {
      FAIL() << "unknown scenario " << what;
    }
  }  // the strategy leaves the job here (every worker together), as the apps' main does
  std::fflush(nullptr);
  if (status != 0) std::_Exit(status);  // as a program's exit status
}

// ---- the tests ----

struct Job {
  std::vector<ChildExit> exits;
  std::vector<std::string> logs;
};

class MultiWorkerPreemption : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "mwms_preempt_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string out(int w) const { return dir_ + "/out_" + std::to_string(w); }

  // Runs a job of `workers` workers of `scenario` on `backup_dir` to its end; `holds[w]` makes
  // worker w hold there (kHold); `act` runs once all are started (it waits for what it needs,
  // then signals), before the workers are waited for.
  Job run_job(int workers, const std::string& scenario, const std::string& backup_dir,
              const std::vector<std::string>& holds = {},
              const std::function<void(WorkerProcesses&)>& act = {}) {
    WorkerProcesses job;
    const std::vector<std::string> configs = tf_configs(workers);
    for (int w = 0; w < workers; ++w) {
      fs::remove(out(w));
      fs::remove(holding_marker(out(w)));
      fs::remove(steps_marker(out(w)));
      const std::string hold = size_t(w) < holds.size() ? holds[size_t(w)] : "";
      job.start(kChildTest,
                {"TF_CONFIG=" + configs[size_t(w)], std::string(kScenario) + "=" + scenario,
                 std::string(kOut) + "=" + out(w), std::string(kBackupDir) + "=" + backup_dir,
                 std::string(kHold) + "=" + hold},
                dir_ + "/log_" + std::to_string(w) + "_" + std::to_string(++runs_));
    }
    if (act) act(job);
    Job result;
    for (int w = 0; w < workers; ++w) {
      result.exits.push_back(job.wait(w, 120));
      result.logs.push_back(job.log(w));
    }
    return result;
  }

  // Waits (bounded) until `path` exists; false after a minute.
  static bool wait_for(const std::string& path) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!fs::exists(path)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // Worker `w` holds (reported), then gets `sig`.
  std::function<void(WorkerProcesses&)> signal_once_held(int w, int sig) {
    return [this, w, sig](WorkerProcesses& job) {
      ASSERT_TRUE(wait_for(holding_marker(out(w)))) << "worker " << w << " never held:\n" << job.log(w);
      job.kill(w, sig);
    };
  }

  // The uninterrupted job's weights (2 workers).
  Result reference(const std::string& scenario) {
    const Job clean = run_job(2, scenario, dir_ + "/reference_backup");
    for (int w = 0; w < 2; ++w) {
      EXPECT_TRUE(clean.exits[size_t(w)].exited && clean.exits[size_t(w)].code == 0)
          << "worker " << w << ":\n" << clean.logs[size_t(w)];
    }
    return read_result(out(0));
  }

  // Every worker ended with 128 + `sig` and said so, naming `stopped` (the step) and the
  // worker that received the signal.
  static void expect_stopped_together(const Job& job, int sig, const std::string& stopped,
                                      const std::string& received_by) {
    for (size_t w = 0; w < job.exits.size(); ++w) {
      SCOPED_TRACE("worker " + std::to_string(w));
      EXPECT_TRUE(job.exits[w].exited) << job.logs[w];
      EXPECT_EQ(job.exits[w].code, 128 + sig) << job.logs[w];
      EXPECT_NE(job.logs[w].find(stopped), std::string::npos) << job.logs[w];
      EXPECT_NE(job.logs[w].find(received_by + " (localhost:"), std::string::npos) << job.logs[w];
      EXPECT_NE(job.logs[w].find("every worker of the job stopped after this same step"),
                std::string::npos) << job.logs[w];
    }
  }

  // The restarted job (no signal) ends every worker with `want`'s weights, element by element
  // within rtol 1e-6.
  void expect_resumes_to(const std::string& scenario, const std::string& backup_dir,
                         const Result& want, const std::string& resumed_at) {
    const Job again = run_job(2, scenario, backup_dir);
    for (int w = 0; w < 2; ++w) {
      SCOPED_TRACE("restarted worker " + std::to_string(w));
      ASSERT_TRUE(again.exits[size_t(w)].exited && again.exits[size_t(w)].code == 0) << again.logs[size_t(w)];
      EXPECT_NE(again.logs[size_t(w)].find(resumed_at), std::string::npos) << again.logs[size_t(w)];
      const Result got = read_result(out(w));
      ASSERT_EQ(got.weights.size(), want.weights.size());
      for (size_t k = 0; k < want.weights.size(); ++k) {
        ASSERT_EQ(got.weights[k].size(), want.weights[k].size());
        for (size_t i = 0; i < want.weights[k].size(); ++i) {
          ASSERT_NEAR(got.weights[k][i], want.weights[k][i], 1e-6 * std::fabs(want.weights[k][i]))
              << "weight " << k << " element " << i;
        }
      }
    }
  }

  // Only the chief's backup is left in backup_dir: the others' workertemp copies are gone.
  static void expect_only_the_chiefs_backup(const std::string& backup_dir) {
    EXPECT_TRUE(fs::exists(backup_dir + "/backup.h5"));
    for (const auto& entry : fs::directory_iterator(backup_dir)) {
      EXPECT_EQ(entry.path().filename().string().rfind("workertemp", 0), std::string::npos)
          << entry.path() << " was left behind";
    }
  }

  std::string dir_;
  int runs_ = 0;
};

TEST_F(MultiWorkerPreemption, SigtermOnANonChiefMidEpochStopsEveryWorkerAndTheRestartResumes) {
  const Result want = reference("fit");
  ASSERT_EQ(want.loss.size(), size_t(kEpochs));
  const std::string backup = dir_ + "/backup";
  // Worker 1 gets SIGTERM after the second batch of the second epoch: its flag travels with the
  // third batch's all-gather, so both stop after that batch.
  const Job stopped = run_job(2, "fit", backup, {"", "train:1:1"}, signal_once_held(1, SIGTERM));
  expect_stopped_together(stopped, SIGTERM, "Model.fit: stopped by SIGTERM after epoch 2, batch 3",
                          "worker 1");
  expect_only_the_chiefs_backup(backup);
  expect_resumes_to("fit", backup, want, "resuming from " + backup + "/backup.h5 at epoch 2, batch 3");
}

TEST_F(MultiWorkerPreemption, SigintOnTheChiefStopsEveryWorkerAndTheRestartResumes) {
  const Result want = reference("fit");
  const std::string backup = dir_ + "/backup";
  const Job stopped = run_job(2, "fit", backup, {"train:2:0", ""}, signal_once_held(0, SIGINT));
  expect_stopped_together(stopped, SIGINT, "Model.fit: stopped by SIGINT after epoch 3, batch 2",
                          "worker 0");
  expect_only_the_chiefs_backup(backup);
  expect_resumes_to("fit", backup, want, "at epoch 3, batch 2");
}

TEST_F(MultiWorkerPreemption, SigtermDuringValidationStopsEveryWorkerAndTheRestartResumes) {
  const Result want = reference("fit");
  const std::string backup = dir_ + "/backup";
  // During the first validation batch after epoch 2: both stop after the second (last) one,
  // and resume at the end of epoch 2's training steps (its validation runs again).
  const Job stopped = run_job(2, "fit", backup, {"", "val:1:0"}, signal_once_held(1, SIGTERM));
  expect_stopped_together(stopped, SIGTERM,
                          "Model.fit: stopped by SIGTERM after epoch 2, batch 4, during its validation",
                          "worker 1");
  expect_resumes_to("fit", backup, want, "at epoch 2, batch 4");
}

TEST_F(MultiWorkerPreemption, SigtermToEveryWorkerAtAnyMomentStopsThemAtOneStep) {
  // As strata-launch passes a SIGTERM on to every task: sent once a first step is reported,
  // wherever the workers are then (in a collective, the all-gather, a callback, between
  // epochs); every worker holds before the last step until its signal came, so it lands while
  // the job trains.
  const Result want = reference("fit");
  const std::string backup = dir_ + "/backup";
  const std::string before_last = "train:" + std::to_string(kEpochs - 1) + ":2";
  const Job stopped = run_job(2, "fit", backup, {before_last, before_last}, [this](WorkerProcesses& job) {
    ASSERT_TRUE(wait_for(steps_marker(out(1)))) << job.log(1);
    job.kill(0, SIGTERM);
    job.kill(1, SIGTERM);
  });
  // The same step on both, whichever it was.
  std::string at[2];
  for (int w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_TRUE(stopped.exits[size_t(w)].exited && stopped.exits[size_t(w)].code == 128 + SIGTERM)
        << stopped.logs[size_t(w)];
    const std::string& log = stopped.logs[size_t(w)];
    const size_t from = log.find("Model.fit: stopped by SIGTERM after ");
    ASSERT_NE(from, std::string::npos) << log;
    at[w] = log.substr(from, log.find(" (", from) - from);
    // The stop the job agreed on (worker 0's signal when both had one at that step).
    EXPECT_NE(log.find("received it, and every worker of the job stopped after this same step"),
              std::string::npos) << log;
  }
  EXPECT_EQ(at[0], at[1]);
  expect_only_the_chiefs_backup(backup);
  expect_resumes_to("fit", backup, want, "resuming from " + backup + "/backup.h5");
}

TEST_F(MultiWorkerPreemption, SecondSignalEndsTheProcessAtOnce) {
  // Worker 1 gets SIGTERM, stops with the job and then hangs in on_preemption: a second signal
  // (SIGINT after SIGTERM) ends it there, with that signal's default action.
  WorkerProcesses job;
  const std::vector<std::string> configs = tf_configs(2);
  for (int w = 0; w < 2; ++w) {
    fs::remove(holding_marker(out(w)));
    job.start(kChildTest,
              {"TF_CONFIG=" + configs[size_t(w)], std::string(kScenario) + "=fit",
               std::string(kOut) + "=" + out(w), std::string(kBackupDir) + "=" + dir_ + "/backup",
               std::string(kHold) + "=" + (w == 1 ? "train:0:1,preemption" : "")},
              dir_ + "/log_" + std::to_string(w));
  }
  ASSERT_TRUE(wait_for(holding_marker(out(1)))) << job.log(1);
  fs::remove(holding_marker(out(1)));
  job.kill(1, SIGTERM);
  ASSERT_TRUE(wait_for(holding_marker(out(1)))) << "never reached on_preemption:\n" << job.log(1);
  job.kill(1, SIGINT);
  const ChildExit e = job.wait(1, 40);
  EXPECT_FALSE(e.exited) << "exited with " << e.code << "\n" << job.log(1);
  EXPECT_EQ(e.signal, SIGINT) << "the second signal must end the process\n" << job.log(1);
  job.wait(0, 60);
}

TEST_F(MultiWorkerPreemption, CustomLoopStopsEveryWorkerAtOneRunAndResumes) {
  const Job clean = run_job(2, "custom", dir_ + "/reference_backup");
  for (int w = 0; w < 2; ++w) {
    ASSERT_TRUE(clean.exits[size_t(w)].exited && clean.exits[size_t(w)].code == 0) << clean.logs[size_t(w)];
  }
  const Result want = read_result(out(0));
  EXPECT_EQ(want.end, "done saves 0");
  const std::string backup = dir_ + "/backup";
  // Worker 1 gets SIGTERM after run 5: both stop after run 6 and call save once each.
  const Job stopped = run_job(2, "custom", backup, {"", "run:5"}, signal_once_held(1, SIGTERM));
  expect_stopped_together(stopped, SIGTERM, "PreemptionCheckpointHandler: stopped by SIGTERM after run 6",
                          "worker 1");
  for (int w = 0; w < 2; ++w) EXPECT_EQ(read_result(out(w)).end, "interrupted 15 saves 1");
  expect_resumes_to("custom", backup, want, "custom loop: resuming after step 6");
}

TEST_F(MultiWorkerPreemption, EvaluateStopsEveryWorkerAtOneBatch) {
  const Job stopped = run_job(2, "evaluate", "", {"", "test:2"}, signal_once_held(1, SIGTERM));
  expect_stopped_together(stopped, SIGTERM, "Model.evaluate: stopped by SIGTERM after batch 4",
                          "worker 1");
}

}  // namespace
}  // namespace strata::testing
