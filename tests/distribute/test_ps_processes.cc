// A parameter-server cluster of real processes on loopback: 2 ps and 2 worker tasks, each this
// test binary started again (worker_processes.h, posix_spawn; the environment, ASAN_OPTIONS /
// UBSAN_OPTIONS included, is inherited) running PsProcessChild.Run, which reads its role from
// TF_CONFIG and serves it with Server(...).join(). The test process is the chief: it builds the
// model in a ParameterServerStrategy's scope and schedules closures with a ClusterCoordinator.
// Children are killed with SIGKILL as machines die; every wait is bounded and the fixture kills
// and reaps whatever is left. Step and dataset functions travel by name, so the chief and every
// child call register_ps_test_functions() first.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "distribute/cluster/resolvers/tfconfig_cluster_resolver.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/server.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "tests/distribute/distribute_test_utils.h"
#include "tests/distribute/ps_test_task.h"
#include "tests/distribute/worker_processes.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kChildTest = "PsProcessChild.Run";
constexpr const char* kReadyFile = "STRATA_TEST_PS_READY";   // the child writes its port here
constexpr const char* kParentPid = "STRATA_TEST_PS_PARENT";  // the child dies with this process

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

ParameterServerOptions test_ps_options() {
  ParameterServerOptions o;
  o.rpc_timeout = 10s;
  return o;
}


// ---- the child: one ps or worker task ----

TEST(PsProcessChild, Run) {
  const char* ready = std::getenv(kReadyFile);
  if (ready == nullptr) GTEST_SKIP() << "runs as a ps or worker process of the PsProcesses tests";
  // A test process that dies without its teardown (a crash) takes its tasks with it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (const char* parent = std::getenv(kParentPid); parent && getppid() != std::atoi(parent)) {
    std::_Exit(3);  // the parent died before prctl
  }
  register_ps_test_functions();
  TFConfigClusterResolver resolver;
  ASSERT_TRUE(resolver.task_type().has_value() && resolver.task_id().has_value());
  Server server(resolver.cluster_spec(), *resolver.task_type(), *resolver.task_id(),
                test_ps_options());
  {
    const std::string tmp = std::string(ready) + ".tmp";
    std::ofstream(tmp) << server.port() << "\n";
    std::rename(tmp.c_str(), ready);
  }
  std::cout << "serving " << server.task() << " on port " << server.port() << std::endl;
  const int signal = server.join();
  std::cout << server.task() << ": closures run: " << server.closures_run() << std::endl;
  if (signal != 0) {
    // Preempted: the closure running finished; the server goes (its last answers delivered)
    // and the process ends as a signalled task does.
    std::cout << server.task() << ": preempted by signal " << signal << std::endl;
    std::exit(128 + signal);
  }
  std::cout << server.task() << ": the job ended" << std::endl;
}

// ---- the child: the chief, training with fit (for the preemption test) ----

constexpr const char* kChiefDir = "STRATA_TEST_PS_CHIEF_DIR";  // backups and markers go here
constexpr int64_t kChiefStepsPerEpoch = 300;  // ~3 s an epoch: a signal lands inside one

// Writes `text` to dir/name, atomically (a reader sees all of it or nothing).
void write_marker(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string tmp = dir + "/." + name + ".tmp";
  std::ofstream(tmp) << text << "\n";
  std::rename(tmp.c_str(), (dir + "/" + name).c_str());
}

// Writes a marker at each epoch's start, and the epochs it ran at the end.
struct ChiefMarkers : EpochCallback {
  explicit ChiefMarkers(std::string dir) : dir(std::move(dir)) {}
  void on_epoch_begin(int epoch, const Logs&) override {
    write_marker(dir, "epoch_begin_" + std::to_string(epoch), "began");
    ran += (ran.empty() ? "" : ",") + std::to_string(epoch);
  }
  std::string dir, ran;
};

TEST(PsProcessChief, Fit) {
  const char* dir = std::getenv(kChiefDir);
  if (dir == nullptr) GTEST_SKIP() << "runs as the chief process of a PsProcesses test";
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  register_ps_test_functions();
  TFConfigClusterResolver resolver;
  auto strategy = std::make_shared<ParameterServerStrategy>(resolver, nullptr, test_ps_options());
  std::shared_ptr<Model> model = ps_test_model_in(*strategy);
  auto markers = std::make_shared<ChiefMarkers>(dir);
  try {
    const History history = model->fit(
        DatasetCreator("ps_test_slow_data"),
        FitOptions().epochs(2).steps_per_epoch(kChiefStepsPerEpoch).verbose(0).callbacks(
            {std::make_shared<BackupAndRestore>(std::string(dir) + "/backup"), markers}));
  } catch (const TrainingInterrupted& e) {
    // As the apps do (apps::fit_ending_job_if_interrupted): the job ends with the chief.
    std::cout << "chief: " << e.what() << std::endl;
    strategy->shutdown_cluster();
    std::exit(128 + e.signal());
  }
  write_marker(dir, "ran_epochs", markers->ran);
  strategy->shutdown_cluster();
  std::cout << "chief: trained epochs " << markers->ran << std::endl;
}

// ---- the tests: this process is the chief ----

class PsProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "ps_processes_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    register_ps_test_functions();
    // A test that hangs (a join that never returns) ends this process after kTestLimit: the
    // children go with it (PR_SET_PDEATHSIG), and their logs stay in dir_.
    watchdog_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(watchdog_mutex_);
      if (!watchdog_cv_.wait_for(lock, kTestLimit, [&] { return test_done_; })) {
        std::fprintf(stderr, "PsProcesses: the test ran past %lld s; ending the process (the "
                     "tasks' logs are in %s)\n", static_cast<long long>(kTestLimit.count()),
                     dir_.c_str());
        std::_Exit(1);
      }
    });
  }

  // Every child killed and reaped, whatever the test did; the logs kept when it failed.
  void TearDown() override {
    {
      std::lock_guard<std::mutex> lock(watchdog_mutex_);
      test_done_ = true;
    }
    watchdog_cv_.notify_all();
    watchdog_.join();
    for (auto& [task, slot] : slots_) {
      processes_.kill(slot, SIGKILL);
      processes_.wait(slot, 10);
    }
    if (HasFailure()) {
      std::cerr << "the tasks' logs are in " << dir_ << "\n";
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  // Chooses free loopback ports for a chief, `ps` ps and `workers` worker tasks, starts the ps
  // and worker processes and waits until each serves.
  void start_cluster(int ps = 2, int workers = 2) {
    const std::vector<int> ports = free_ports(1 + ps + workers);
    size_t next = 0;
    auto port = [&] { return ports[next++]; };
    jobs_.clear();
    jobs_["chief"].push_back("localhost:" + std::to_string(port()));
    for (int i = 0; i < ps; ++i) jobs_["ps"].push_back("localhost:" + std::to_string(port()));
    for (int i = 0; i < workers; ++i) {
      jobs_["worker"].push_back("localhost:" + std::to_string(port()));
    }
    spec_ = ClusterSpec(jobs_);
    for (int i = 0; i < ps; ++i) start_task("ps", i);
    for (int i = 0; i < workers; ++i) start_task("worker", i);
    for (int i = 0; i < ps; ++i) ASSERT_NO_FATAL_FAILURE(wait_ready("ps", i));
    for (int i = 0; i < workers; ++i) ASSERT_NO_FATAL_FAILURE(wait_ready("worker", i));
  }

  std::string task_key(const std::string& job, int index) const {
    return job + "_" + std::to_string(index);
  }
  std::string ready_file(const std::string& job, int index) const {
    return dir_ + "/ready_" + task_key(job, index);
  }

  // Starts (or starts again, as a new process on the same address) task `index` of `job`
  // running `child` (the ps / worker server, or the chief), with `env` added.
  void start_task(const std::string& job, int index, const char* child = kChildTest,
                  std::vector<std::string> env = {}) {
    const std::string key = task_key(job, index);
    std::filesystem::remove(ready_file(job, index));
    std::string cluster;
    for (const auto& [name, addresses] : jobs_) {
      std::string list;
      for (const std::string& a : addresses) list += (list.empty() ? "\"" : ", \"") + a + "\"";
      cluster += (cluster.empty() ? "\"" : ", \"") + name + "\": [" + list + "]";
    }
    const std::string tf_config = "{\"cluster\": {" + cluster + "}, \"task\": {\"type\": \"" +
                                  job + "\", \"index\": " + std::to_string(index) + "}}";
    const std::string log =
        dir_ + "/log_" + key + "_" + std::to_string(starts_[key]++);
    env.push_back("TF_CONFIG=" + tf_config);
    env.push_back(std::string(kReadyFile) + "=" + ready_file(job, index));
    env.push_back(std::string(kParentPid) + "=" + std::to_string(getpid()));
    const int slot = processes_.start(child, env, log);
    slots_[key] = slot;
  }

  // Waits (bounded) until the task serves; fails with its log when it does not.
  void wait_ready(const std::string& job, int index, double timeout_s = 30) {
    const auto start = Clock::now();
    while (!std::filesystem::exists(ready_file(job, index))) {
      ASSERT_LT(seconds_since(start), timeout_s)
          << job << " " << index << " did not start serving:\n" << log(job, index);
      // gtest's last line: the child ended (a port taken, a bad TF_CONFIG) without serving.
      ASSERT_EQ(log(job, index).find("test suite ran."), std::string::npos)
          << job << " " << index << " ended without serving:\n" << log(job, index);
      std::this_thread::sleep_for(20ms);
    }
  }

  int slot(const std::string& job, int index) { return slots_.at(task_key(job, index)); }
  std::string log(const std::string& job, int index) {
    return processes_.log(slot(job, index));
  }
  void kill(const std::string& job, int index) { processes_.kill(slot(job, index), SIGKILL); }
  ChildExit wait(const std::string& job, int index, double timeout_s) {
    return processes_.wait(slot(job, index), timeout_s);
  }
  std::string address(const std::string& job, int index) const {
    return jobs_.at(job)[size_t(index)];
  }

  std::shared_ptr<ParameterServerStrategy> strategy(std::shared_ptr<const Partitioner> p = nullptr) {
    return std::make_shared<ParameterServerStrategy>(spec_, std::move(p), test_ps_options());
  }
  static CoordinatorOptions coordinator_options() {
    CoordinatorOptions o;
    o.worker_retry_interval_seconds = 0.05;
    o.worker_recovery_timeout_seconds = 30;
    o.ps_ping_interval_seconds = 0.2;
    return o;
  }
  // Total closures completed, polled until it reaches `n` (bounded).
  static void wait_completed(const ClusterCoordinator& c, int64_t n, double timeout_s = 30) {
    const auto start = Clock::now();
    for (;;) {
      const std::vector<int64_t> done = c.closures_completed_per_worker();
      if (done[0] + done[1] >= n) return;
      ASSERT_LT(seconds_since(start), timeout_s) << "fewer than " << n << " closures completed";
      std::this_thread::sleep_for(5ms);
    }
  }

  static constexpr std::chrono::seconds kTestLimit{90};

  std::string dir_;
  std::thread watchdog_;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_cv_;
  bool test_done_ = false;
  std::map<std::string, std::vector<std::string>> jobs_;
  ClusterSpec spec_;
  WorkerProcesses processes_;
  std::map<std::string, int> slots_;   // "worker_1" -> its current process's slot
  std::map<std::string, int> starts_;  // "worker_1" -> processes started for it
};

TEST_F(PsProcesses, KilledWorkerHasItsStepsRunElsewhereAndIsReadmittedWhenRestarted) {
  const auto test_start = Clock::now();
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  ClusterCoordinator coordinator(s, coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  constexpr int kSteps = 60, kAfterKill = 20;
  std::vector<RemoteValue> steps;
  for (int i = 0; i < kSteps; ++i) {
    steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  }
  // Worker 1 dies (SIGKILL, no goodbye) once training is under way on both workers.
  {
    const auto start = Clock::now();
    while (coordinator.closures_completed_per_worker()[1] < 5) {
      ASSERT_LT(seconds_since(start), 30) << "worker 1 completed no 5 steps:\n" << log("worker", 1);
      std::this_thread::sleep_for(5ms);
    }
  }
  const std::vector<int64_t> before_kill = coordinator.closures_completed_per_worker();
  kill("worker", 1);
  const auto killed_at = Clock::now();
  // Steps scheduled after the kill: worker 0 must take them, however far training had got.
  for (int i = 0; i < kAfterKill; ++i) {
    steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  }
  coordinator.join();
  const double join_s = seconds_since(killed_at);
  for (const RemoteValue& v : steps) {
    ASSERT_EQ(v.state(), RemoteValue::State::kReady) << remote_value_state_name(v.state());
    EXPECT_TRUE(std::isfinite(v.fetch_one().item<float>()));
  }
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  // Every scheduled step ran to its end exactly once as far as the coordinator counts: the step
  // worker 1 was running when it died (if any) went back to the queue (closures_requeued 1; 0
  // when the kill fell between two steps) and ran again on worker 0 (at-least-once: its pushes
  // to the ps before the kill may have landed too).
  EXPECT_EQ(done[0] + done[1], kSteps + kAfterKill);
  EXPECT_GE(coordinator.closures_requeued(), 0);
  EXPECT_LE(coordinator.closures_requeued(), 1);
  EXPECT_GT(done[0], before_kill[0]) << "worker 0 took over the rest";
  const ChildExit killed = wait("worker", 1, 10);
  EXPECT_EQ(killed.signal, SIGKILL);

  // Worker 1 comes back: a new process on the same address. The coordinator, retrying it in
  // the background, prepares it again (model and datasets rebuilt) and gives it closures.
  const auto restart = Clock::now();
  start_task("worker", 1);
  ASSERT_NO_FATAL_FAILURE(wait_ready("worker", 1));
  while (coordinator.worker_preparations(1) < 2) {
    ASSERT_LT(seconds_since(restart), 20) << "worker 1 was not re-admitted:\n" << log("worker", 1);
    std::this_thread::sleep_for(10ms);
  }
  const double readmit_s = seconds_since(restart);
  EXPECT_EQ(coordinator.worker_preparations(1), 2);
  EXPECT_EQ(coordinator.worker_preparations(0), 1);
  std::vector<RemoteValue> more;
  // Two that meet: one runs on each worker, the restarted worker 1 included.
  for (int i = 0; i < 2; ++i) {
    more.push_back(coordinator.schedule("ps_test_meet", ps_test_meet_args(dir_ + "/meet", 2)));
  }
  for (int i = 0; i < 38; ++i) more.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  coordinator.join();
  for (const RemoteValue& v : more) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  const std::vector<int64_t> after = coordinator.closures_completed_per_worker();
  EXPECT_EQ(after[0] + after[1], kSteps + kAfterKill + 40);
  EXPECT_GT(after[1], done[1]) << "the restarted worker 1 took no closure";
  std::cout << "[timing] join after the kill " << join_s << " s, re-admitted " << readmit_s
            << " s after the restart, requeued " << coordinator.closures_requeued()
            << ", per worker " << after[0] << "/" << after[1] << ", test "
            << seconds_since(test_start) << " s\n";
}

// TensorFlow's exact evaluation (parameter_server_exact_evaluation_test.py): the shards run as
// closures on the workers; a worker killed in the middle of one has that shard run again,
// whole, on the other, so every element counts once and the result is the local evaluation's.
TEST_F(PsProcesses, ExactEvaluationCountsEveryShardOnceWhenAWorkerIsKilledMidway) {
  constexpr int64_t kShards = 8;   // 2 batches of 40 ms each
  const std::map<std::string, double> expected =
      ps_test_model()->evaluate(ps_test_eval_data(), EvaluateOptions().verbose(0));
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s, kShards);   // untrained: the same weights
  ClusterCoordinator coordinator(s, coordinator_options());         // the one evaluate uses
  std::atomic<bool> evaluated{false};
  std::thread killer([&] {
    // Once worker 1 has finished a shard it is inside its next one (each takes ~80 ms). Where a
    // busy machine lets the kill fall between two shards instead, the result must be the same.
    while (coordinator.closures_completed_per_worker()[1] < 1 && !evaluated) {
      std::this_thread::sleep_for(2ms);
    }
    std::this_thread::sleep_for(20ms);
    kill("worker", 1);
  });
  std::map<std::string, double> logs;
  try {
    logs = model->evaluate(DatasetCreator("ps_test_eval_data"), EvaluateOptions().verbose(0));
  } catch (...) {
    evaluated = true;
    killer.join();
    throw;
  }
  evaluated = true;
  killer.join();
  ASSERT_EQ(logs.count("loss"), 1u);
  ASSERT_EQ(logs.count("accuracy"), 1u);
  EXPECT_NEAR(logs["loss"], expected.at("loss"), 1e-5 * std::abs(expected.at("loss")));
  EXPECT_NEAR(logs["accuracy"], expected.at("accuracy"), 1e-6);
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_GE(done[0] + done[1], kShards);
  std::cout << "[exact evaluation] shards done per worker " << done[0] << ", " << done[1]
            << "; run again after the kill: " << coordinator.closures_requeued() << std::endl;

  // An endless dataset cannot be visited once: a ValueError naming it, before any closure.
  try {
    model->evaluate(DatasetCreator("ps_test_data"), EvaluateOptions().verbose(0));
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "DatasetCreator(\"ps_test_data\")'s dataset once, so it must be finite"),
              std::string::npos)
        << e.what();
  }
}

TEST(ExactEvaluation, CompileRefusesShardsThatAreNotAutoOrACount) {
  EXPECT_THROW(ps_test_model(-5), ValueError);
  try {
    auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
    model->compile(CompileOptions().loss("mse").pss_evaluation_shards("sometimes"));
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("pss_evaluation_shards must be \"auto\""),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(ps_test_model(0));
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(1)});
  EXPECT_NO_THROW(model->compile(CompileOptions().loss("mse").pss_evaluation_shards("auto")));
}

TEST_F(PsProcesses, KilledPsFailsTheCoordinatorNamingItWithinSeconds) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  // Round-robin: the embedding on ps 0, the Dense kernel (and its slots) on ps 1.
  ClusterCoordinator coordinator(s, coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  const std::string ps1 = address("ps", 1);
  // 200 steps of ~30 ms on 2 workers (~3 s); ps 1 dies while they run.
  std::vector<RemoteValue> steps;
  for (int i = 0; i < 200; ++i) steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  ASSERT_NO_FATAL_FAILURE(wait_completed(coordinator, 8));
  kill("ps", 1);
  const auto killed_at = Clock::now();
  try {
    coordinator.join();
    FAIL() << "join() returned after ps 1 was killed";
  } catch (const CoordinationError& e) {
    const double seconds = seconds_since(killed_at);
    // Seen before any call's deadline ran out (the pings, or a worker's failed push): which
    // mechanism ended the wait, not how fast.
    EXPECT_LT(seconds, std::chrono::duration<double>(test_ps_options().rpc_timeout).count())
        << e.what();
    EXPECT_NE(std::string(e.what()).find("/job:ps/replica:0/task:1"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(ps1), std::string::npos) << e.what();
    std::cout << "[timing] CoordinationError " << seconds << " s after the ps was killed: "
              << e.what() << "\n";
  }
  // The steps still queued were failed with the same error, not left pending.
  EXPECT_THROW(steps.back().fetch(), CoordinationError);
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_LT(done[0] + done[1], 200);
  // Fatal: raised by every later call.
  EXPECT_THROW(coordinator.join(), CoordinationError);
  EXPECT_THROW(coordinator.schedule("ps_test_train", {}, &it), CoordinationError);
  EXPECT_EQ(wait("ps", 1, 10).signal, SIGKILL);
  // The rest of the job still ends cleanly (the dead ps is skipped).
  s->shutdown_cluster();
  const std::vector<std::pair<std::string, int>> survivors = {{"ps", 0}, {"worker", 0},
                                                              {"worker", 1}};
  for (const auto& [job, index] : survivors) {
    const ChildExit e = wait(job, index, 10);
    EXPECT_TRUE(e.exited && e.code == 0) << job << " " << index << ":\n" << log(job, index);
  }
}

TEST_F(PsProcesses, StepErrorComesOutOfJoinAsValueErrorAndTheClusterGoesOn) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  ClusterCoordinator coordinator(s, coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  for (int i = 0; i < 6; ++i) coordinator.schedule("ps_test_train", {}, &it);
  RemoteValue raised = coordinator.schedule("ps_test_raise");
  try {
    coordinator.join();
    FAIL() << "join() did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("ps_test_raise: the input is bad"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("/job:worker/replica:0/task:"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(raised.state(), RemoteValue::State::kAborted);
  EXPECT_THROW(raised.fetch(), ValueError);
  EXPECT_NO_THROW(coordinator.join());  // raised once
  // The cluster goes on: the same workers train again.
  const std::vector<int64_t> before = coordinator.closures_completed_per_worker();
  std::vector<RemoteValue> more;
  for (int i = 0; i < 20; ++i) more.push_back(coordinator.schedule("ps_test_train", {}, &it));
  coordinator.join();
  for (const RemoteValue& v : more) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  const std::vector<int64_t> after = coordinator.closures_completed_per_worker();
  EXPECT_EQ(after[0] + after[1] - before[0] - before[1], 20);
  EXPECT_EQ(coordinator.worker_preparations(0), 1);  // nobody was restarted
  EXPECT_EQ(coordinator.worker_preparations(1), 1);
}

TEST_F(PsProcesses, ShutdownClusterEndsEveryTaskWithExitCodeZero) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  {
    ClusterCoordinator coordinator(s, coordinator_options());
    coordinator.set_model(*model);
    PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
    for (int i = 0; i < 10; ++i) coordinator.schedule("ps_test_train", {}, &it);
    coordinator.join();
  }
  const auto start = Clock::now();
  s->shutdown_cluster();
  double slowest = 0;
  for (const std::string job : {"ps", "worker"}) {
    for (int index : {0, 1}) {
      const ChildExit e = wait(job, index, 10);
      EXPECT_TRUE(e.exited && e.code == 0)
          << job << " " << index << " (signal " << e.signal << "):\n" << log(job, index);
      EXPECT_NE(log(job, index).find(job_task_name(job, index) + ": the job ended"),
                std::string::npos)
          << log(job, index);
      slowest = std::max(slowest, seconds_since(start));
    }
  }
  // About 1 s, not milliseconds: a ps's graceful gRPC shutdown waits (up to its 1 s deadline)
  // for the connections still open to it, here this process's strategy's channels. (Printed,
  // not asserted: a busy machine takes longer; wait()'s bound catches a task that never ends.)
  std::cout << "[timing] every task exited " << slowest << " s after shutdown_cluster\n";
}

TEST_F(PsProcesses, ShardedEmbeddingOverBothPsProcessesConverges) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy(std::make_shared<FixedShardsPartitioner>(2));
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  // TensorFlow's tutorial: a 9-row table as (5, 20) on ps 0 and (4, 20) on ps 1.
  const VariablePtr table = model->trainable_variables().front();
  auto* sharded = dynamic_cast<ShardedVariable*>(table.get());
  ASSERT_NE(sharded, nullptr) << table->name();
  ASSERT_EQ(sharded->num_shards(), 2);
  const std::vector<Shape> want = {Shape({5, kPsTestDim}), Shape({4, kPsTestDim})};
  for (int i = 0; i < 2; ++i) {
    auto& shard = dynamic_cast<RemoteVariable&>(*sharded->shards()[size_t(i)]);
    EXPECT_EQ(shard.shape(), want[size_t(i)]);
    EXPECT_EQ(shard.task(), job_task_name("ps", i));
    // The shard lives in that ps process: asked directly at its address.
    ParameterClient direct(job_task_name("ps", i), address("ps", i), test_ps_options());
    EXPECT_EQ(direct.read({shard.id()}).at(0).shape(), want[size_t(i)]);
  }
  ClusterCoordinator coordinator(s, coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  std::vector<RemoteValue> losses;
  const auto start = Clock::now();
  // Two that meet first: both workers train, whatever the CPU load.
  for (int i = 0; i < 2; ++i) {
    coordinator.schedule("ps_test_meet", ps_test_meet_args(dir_ + "/meet", 2));
  }
  for (int i = 0; i < 100; ++i) losses.push_back(coordinator.schedule("ps_test_train", {}, &it));
  coordinator.join();
  const double train_s = seconds_since(start);
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 102);
  EXPECT_GT(done[0], 0);
  EXPECT_GT(done[1], 0);
  // The coordinator's model reads the ps processes' variables.
  const Logs eval = model->test_on_batch(
      Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}, Shape{9, 1}),
      Tensor::from_vector(std::vector<float>{1, 1, 1, 1, 0, 0, 0, 0, 0}, Shape{9, 1}));
  EXPECT_GE(eval.at("accuracy"), 8.0 / 9.0 - 1e-6) << "loss " << eval.at("loss");
  EXPECT_LT(losses.back().fetch_one().item<float>(), losses.front().fetch_one().item<float>());
  std::cout << "[timing] 100 steps in " << train_s << " s (per worker " << done[0] << "/"
            << done[1] << "), accuracy " << eval.at("accuracy") << ", loss " << eval.at("loss")
            << "\n";
}

// A worker that hangs (SIGSTOP: its connections stay open, nothing answers) is seen by the
// channel's keepalive (1 s pings, 3 s timeout) long before the closure timeout: its step runs
// elsewhere. Resumed (SIGCONT), it is re-admitted; it first finishes the step it was given
// (at-least-once: that step's pushes land twice). A coordinator destroyed while a worker hangs
// mid-closure is bounded by the same keepalive, not by the closure timeout.
TEST_F(PsProcesses, HungWorkerIsSeenByKeepaliveAndReadmittedWhenItResumes) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  CoordinatorOptions options = coordinator_options();
  options.closure_timeout_seconds = 30;
  auto coordinator = std::make_unique<ClusterCoordinator>(s, options);
  coordinator->set_model(*model);
  PerWorkerIterator it = coordinator->create_per_worker_dataset("ps_test_data").iterator();
  std::vector<RemoteValue> steps;
  for (int i = 0; i < 60; ++i) {
    steps.push_back(coordinator->schedule("ps_test_slow_train", {}, &it));
  }
  {
    const auto start = Clock::now();
    while (coordinator->closures_completed_per_worker()[1] < 5) {
      ASSERT_LT(seconds_since(start), 30) << "worker 1 completed no 5 steps:\n" << log("worker", 1);
      std::this_thread::sleep_for(5ms);
    }
  }
  processes_.kill(slot("worker", 1), SIGSTOP);
  const auto stopped_at = Clock::now();
  // Steps scheduled after the stop: worker 1 is sent one (or holds one) whatever the timing.
  for (int i = 0; i < 20; ++i) {
    steps.push_back(coordinator->schedule("ps_test_slow_train", {}, &it));
  }
  coordinator->join();
  const double join_s = seconds_since(stopped_at);
  // Keepalive, not the closure timeout, gave the hung worker up.
  EXPECT_LT(join_s, options.closure_timeout_seconds) << "the hung worker was not seen by keepalive";
  for (const RemoteValue& v : steps) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  const std::vector<int64_t> done = coordinator->closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 80);
  EXPECT_GE(coordinator->closures_requeued(), 1);

  processes_.kill(slot("worker", 1), SIGCONT);
  const auto resumed_at = Clock::now();
  while (coordinator->worker_preparations(1) < 2) {
    ASSERT_LT(seconds_since(resumed_at), 20) << "worker 1 was not re-admitted:\n"
                                             << log("worker", 1);
    std::this_thread::sleep_for(10ms);
  }
  const double readmit_s = seconds_since(resumed_at);
  for (int i = 0; i < 2; ++i) {
    coordinator->schedule("ps_test_meet", ps_test_meet_args(dir_ + "/meet", 2));
  }
  for (int i = 0; i < 38; ++i) coordinator->schedule("ps_test_slow_train", {}, &it);
  coordinator->join();
  const std::vector<int64_t> after = coordinator->closures_completed_per_worker();
  EXPECT_EQ(after[0] + after[1], 120);
  EXPECT_GT(after[1], done[1]) << "the resumed worker 1 took no closure";

  // Worker 1 hangs again mid-closure, and the coordinator goes away.
  std::vector<RemoteValue> last;
  for (int i = 0; i < 40; ++i) last.push_back(coordinator->schedule("ps_test_slow_train", {}, &it));
  {
    const auto start = Clock::now();
    while (coordinator->closures_completed_per_worker()[1] < after[1] + 2) {
      ASSERT_LT(seconds_since(start), 30);
      std::this_thread::sleep_for(5ms);
    }
  }
  processes_.kill(slot("worker", 1), SIGSTOP);
  const auto destroy_start = Clock::now();
  coordinator.reset();
  const double destroy_s = seconds_since(destroy_start);
  EXPECT_LT(destroy_s, options.closure_timeout_seconds);  // keepalive ended the call, not its deadline
  // Nothing is left pending: each value ran, or was cancelled.
  for (const RemoteValue& v : last) EXPECT_NE(v.state(), RemoteValue::State::kPending);
  processes_.kill(slot("worker", 1), SIGCONT);
  std::cout << "[timing] join " << join_s << " s after the SIGSTOP, re-admitted " << readmit_s
            << " s after the SIGCONT, coordinator destroyed in " << destroy_s
            << " s with worker 1 stopped mid-closure\n";
}



// The number in "<task>: closures run: N" of a task's log, or -1.
int64_t closures_run_in(const std::string& log) {
  const std::string key = "closures run: ";
  const size_t at = log.rfind(key);
  return at == std::string::npos ? -1 : std::atoll(log.c_str() + at + key.size());
}

// SIGTERM on a worker task mid-training (a preemption): it finishes the closure it runs, takes
// no more (answered ABORTED, the coordinator re-queues them elsewhere) and exits with 143
// (128 + SIGTERM), as a signalled task does; every step still runs exactly once: the closures
// both workers ran add up to those scheduled (none lost, none run twice).
TEST_F(PsProcesses, PreemptedWorkerFinishesItsClosureExitsWith143AndTheRestRunElsewhere) {
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  auto s = strategy();
  std::shared_ptr<Model> model = ps_test_model_in(*s);
  ClusterCoordinator coordinator(s, coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  std::vector<RemoteValue> steps;
  for (int i = 0; i < 60; ++i) steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  {
    const auto start = Clock::now();
    while (coordinator.closures_completed_per_worker()[1] < 3) {
      ASSERT_LT(seconds_since(start), 30) << "worker 1 completed no 3 steps:\n" << log("worker", 1);
      std::this_thread::sleep_for(5ms);
    }
  }
  processes_.kill(slot("worker", 1), SIGTERM);
  // Steps scheduled after the signal: there is work left whatever the timing.
  for (int i = 0; i < 20; ++i) steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  const ChildExit preempted = wait("worker", 1, 30);
  EXPECT_TRUE(preempted.exited && preempted.code == 128 + SIGTERM)
      << "exited " << preempted.exited << " code " << preempted.code << " signal "
      << preempted.signal << ":\n" << log("worker", 1);
  EXPECT_NE(log("worker", 1).find("preempted by signal 15"), std::string::npos) << log("worker", 1);
  coordinator.join();
  for (const RemoteValue& v : steps) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 80);
  s->shutdown_cluster();
  const ChildExit ended = wait("worker", 0, 30);
  EXPECT_TRUE(ended.exited && ended.code == 0) << log("worker", 0);
  const int64_t ran_0 = closures_run_in(log("worker", 0)), ran_1 = closures_run_in(log("worker", 1));
  EXPECT_EQ(ran_0 + ran_1, 80) << "worker 0 ran " << ran_0 << ", worker 1 ran " << ran_1
                               << ": a closure was lost or ran twice";
  EXPECT_EQ(ran_1, done[1]);
  std::cout << "[preemption] worker 1 ran " << ran_1 << " closures and exited with "
            << preempted.code << "; worker 0 ran " << ran_0 << "; re-queued "
            << coordinator.closures_requeued() << "\n";
}

// SIGTERM on the chief during fit: it stops at a step boundary (the steps running finish, the
// rest are dropped), BackupAndRestore saves on preemption, the job ends (every ps and worker
// task exits 0) and the chief exits with 143. Run again, the job resumes from the backup at
// the epoch it was stopped in.
TEST_F(PsProcesses, PreemptedChiefStopsAtAStepBoundarySavesEndsTheJobAndARestartResumes) {
  const std::string chief_dir = dir_ + "/chief";
  std::filesystem::create_directories(chief_dir);
  const std::string chief_env = std::string(kChiefDir) + "=" + chief_dir;
  const auto end_of_job = [&](const char* when) {
    for (const std::string job : {"ps", "worker"}) {
      for (int index : {0, 1}) {
        const ChildExit e = wait(job, index, 30);
        EXPECT_TRUE(e.exited && e.code == 0)
            << when << ": " << job << " " << index << " (signal " << e.signal << "):\n"
            << log(job, index);
      }
    }
  };
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  start_task("chief", 0, "PsProcessChief.Fit", {chief_env});
  {
    const auto start = Clock::now();
    while (!std::filesystem::exists(chief_dir + "/epoch_begin_1")) {
      ASSERT_LT(seconds_since(start), 60) << "the chief never began epoch 2:\n" << log("chief", 0);
      ASSERT_EQ(log("chief", 0).find("test suite ran."), std::string::npos) << log("chief", 0);
      std::this_thread::sleep_for(5ms);
    }
  }
  processes_.kill(slot("chief", 0), SIGTERM);
  const ChildExit chief = wait("chief", 0, 60);
  const std::string chief_log = log("chief", 0);
  EXPECT_TRUE(chief.exited && chief.code == 128 + SIGTERM)
      << "exited " << chief.exited << " code " << chief.code << " signal " << chief.signal
      << ":\n" << chief_log;
  EXPECT_NE(chief_log.find("stopped by SIGTERM during epoch 2"), std::string::npos) << chief_log;
  EXPECT_TRUE(std::filesystem::exists(chief_dir + "/backup/backup.h5")) << chief_log;
  end_of_job("after the preemption");

  // The same job again: it resumes at epoch 2 from the backup and trains it to the end.
  std::filesystem::remove(chief_dir + "/epoch_begin_1");
  ASSERT_NO_FATAL_FAILURE(start_cluster());
  start_task("chief", 0, "PsProcessChief.Fit", {chief_env});
  const ChildExit resumed = wait("chief", 0, 80);
  const std::string resumed_log = log("chief", 0);
  EXPECT_TRUE(resumed.exited && resumed.code == 0) << resumed_log;
  EXPECT_NE(resumed_log.find("resuming from"), std::string::npos) << resumed_log;
  EXPECT_EQ(read_file_text(chief_dir + "/ran_epochs"), "1\n") << resumed_log;
  end_of_job("after the resumed run");
}

}  // namespace
}  // namespace strata::testing

