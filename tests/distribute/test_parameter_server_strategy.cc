// ParameterServerStrategy + ClusterCoordinator over real gRPC services, all in this process:
// two ps servers, two worker servers, the coordinator. The model travels as its Keras config,
// steps and datasets by registered name; variables live on the ps tasks (the embedding sharded
// over both, TensorFlow's tutorial shapes). A worker server that goes away mid-training has its
// closures re-run elsewhere and is re-admitted when it is back; a ps that goes away is fatal and
// named; a step's error comes out of join().
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "distribute/parameter_server/wire/worker_service.h"
#include "tests/distribute/ps_local_cluster.h"
#include "tests/distribute/ps_test_task.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;

// The in-process cluster (ps_local_cluster.h), with the test task's functions registered.
struct LocalCluster : PsLocalCluster {
  explicit LocalCluster(ParameterServerOptions options = fast_options()) : PsLocalCluster(options) {
    register_ps_test_functions();
  }
};

// A fresh directory under the test temp dir, removed at the end.
struct TempDirectory {
  explicit TempDirectory(const std::string& name)
      : path(::testing::TempDir() + name + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter()++)) {
    std::filesystem::remove_all(path);
  }
  ~TempDirectory() { std::filesystem::remove_all(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string path;
};

TEST(ParameterServerStrategy, TutorialModelShardsOverBothPsAndTrainsAsynchronously) {
  LocalCluster cluster;
  auto strategy = cluster.strategy(std::make_shared<FixedShardsPartitioner>(2));
  std::shared_ptr<Model> model = ps_test_model_in(*strategy);
  // TensorFlow's tutorial: (5, 20) on ps 0 and (4, 20) on ps 1.
  const VariablePtr table = model->trainable_variables().front();
  auto* sharded = dynamic_cast<ShardedVariable*>(table.get());
  ASSERT_NE(sharded, nullptr) << table->name();
  ASSERT_EQ(sharded->num_shards(), 2);
  EXPECT_EQ(sharded->shards()[0]->shape(), Shape({5, kPsTestDim}));
  EXPECT_EQ(sharded->shards()[1]->shape(), Shape({4, kPsTestDim}));
  EXPECT_EQ(dynamic_cast<RemoteVariable&>(*sharded->shards()[0]).task(),
            "/job:ps/replica:0/task:0");
  EXPECT_EQ(dynamic_cast<RemoteVariable&>(*sharded->shards()[1]).task(),
            "/job:ps/replica:0/task:1");

  ClusterCoordinator coordinator(strategy, LocalCluster::coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  std::vector<RemoteValue> losses;
  // Two closures that meet first: both workers train, whatever the CPU load.
  TempDirectory meeting("ps_strategy_meet");
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  for (int i = 0; i < 60; ++i) losses.push_back(coordinator.schedule("ps_test_train", {}, &it));
  coordinator.join();
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 62);
  EXPECT_GT(done[0], 0);
  EXPECT_GT(done[1], 0);
  // It learned: the coordinator's model reads the ps tasks' variables.
  const Logs eval = model->test_on_batch(
      Tensor::from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}, Shape{9, 1}),
      Tensor::from_vector(std::vector<float>{1, 1, 1, 1, 0, 0, 0, 0, 0}, Shape{9, 1}));
  EXPECT_EQ(eval.at("accuracy"), 1.0) << "loss " << eval.at("loss");
  EXPECT_LT(losses.back().fetch_one().item<float>(), losses.front().fetch_one().item<float>());
}

TEST(ParameterServerStrategy, WorkerThatGoesAwayHasItsStepsRunElsewhereAndIsReadmitted) {
  LocalCluster cluster;
  auto strategy = cluster.strategy(nullptr);
  std::shared_ptr<Model> model = ps_test_model_in(*strategy);
  ClusterCoordinator coordinator(strategy, LocalCluster::coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  std::vector<RemoteValue> steps;
  for (int i = 0; i < 40; ++i) steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  ASSERT_TRUE(eventually([&] { return cluster.workers[1]->closures_run() >= 2; }));
  cluster.workers[1].reset();  // worker 1 stops serving mid-training
  for (int i = 0; i < 40; ++i) steps.push_back(coordinator.schedule("ps_test_slow_train", {}, &it));
  coordinator.join();
  for (const RemoteValue& v : steps) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  const std::vector<int64_t> done = coordinator.closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 80);  // every scheduled step ran to its end once
  // Worker 1 comes back on its address: re-admitted with its dataset rebuilt, takes steps again.
  cluster.workers[1] = WorkerServer::start("localhost:" + std::to_string(cluster.worker_ports[1]),
                                           cluster.worker_strategies[1], 1);
  ASSERT_TRUE(eventually([&] { return coordinator.worker_preparations(1) >= 2; }));
  EXPECT_EQ(coordinator.worker_preparations(1), 2);
  // Two closures that meet run on both workers: the restarted worker 1 takes closures again.
  TempDirectory meeting("ps_strategy_meet");
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  for (int i = 0; i < 20; ++i) coordinator.schedule("ps_test_slow_train", {}, &it);
  coordinator.join();
  EXPECT_GT(cluster.workers[1]->closures_run(), 0);
}

TEST(ParameterServerStrategy, PsThatGoesAwayFailsTheCoordinatorNamingIt) {
  LocalCluster cluster;
  auto strategy = cluster.strategy(nullptr);
  std::shared_ptr<Model> model = ps_test_model_in(*strategy);
  ClusterCoordinator coordinator(strategy, LocalCluster::coordinator_options());
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_test_data").iterator();
  coordinator.schedule("ps_test_train", {}, &it);
  coordinator.join();
  const std::string ps1 = "localhost:" + std::to_string(cluster.ps[1]->port());
  cluster.ps[1].reset();
  const auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0; i < 1000; ++i) {
      coordinator.schedule("ps_test_train", {}, &it);
      std::this_thread::sleep_for(10ms);
    }
    coordinator.join();
    FAIL() << "no error after the ps went away";
  } catch (const CoordinationError& e) {
    EXPECT_NE(std::string(e.what()).find("/job:ps/replica:0/task:1"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(ps1), std::string::npos) << e.what();
  }
  // Seen by the coordinator's pings of the ps (or a worker's failing call), before any call's
  // deadline ran out: which mechanism ended the wait, not how fast.
  EXPECT_LT(std::chrono::steady_clock::now() - start, LocalCluster::fast_options().rpc_timeout);
  EXPECT_THROW(coordinator.join(), CoordinationError);  // fatal: raised every time
}

TEST(ParameterServerStrategy, StepErrorComesOutOfJoinAsItsClass) {
  LocalCluster cluster;
  auto strategy = cluster.strategy(nullptr);
  ClusterCoordinator coordinator(strategy, LocalCluster::coordinator_options());
  coordinator.schedule("ps_test_raise");
  try {
    coordinator.join();
    FAIL() << "join() did not raise";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("the input is bad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/job:worker/replica:0/task:"), std::string::npos);
  }
  EXPECT_NO_THROW(coordinator.join());
  // An unknown function is the worker's error, naming what is registered.
  coordinator.schedule("no_such_step");
  EXPECT_THROW(coordinator.join(), ValueError);
}

std::atomic<int> g_sleep_starts{0}, g_sleeping{0}, g_most_sleeping{0}, g_big_runs{0};

// "ps_test_sleep" (args[0] ms; counts its starts and how many run at once), "ps_test_big"
// (a result of 2 MiB).
void register_timing_functions() {
  register_step_function("ps_test_sleep", [](StepContext& ctx) {
    ++g_sleep_starts;
    const int now = ++g_sleeping;
    for (int most = g_most_sleeping; now > most && !g_most_sleeping.compare_exchange_weak(most, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ctx.args.at(0).item<int64_t>()));
    --g_sleeping;
    return std::vector<Tensor>{};
  });
  register_step_function("ps_test_big", [](StepContext&) {
    ++g_big_runs;
    return std::vector<Tensor>{zeros({512, 1024}, DType::kFloat32)};
  });
}

Tensor milliseconds(int64_t ms) { return Tensor::from_vector(std::vector<int64_t>{ms}, Shape{}); }

// A step longer than closure_timeout_seconds, on a worker that still answers: an error naming
// the option, from join(); the step ran once, never on two workers at once (it may be applying
// updates); its worker takes closures again once the step is over.
TEST(ParameterServerStrategy, StepLongerThanTheClosureTimeoutIsAnErrorAndRunsOnce) {
  LocalCluster cluster;
  register_timing_functions();
  g_sleep_starts = 0;
  g_most_sleeping = 0;
  auto strategy = cluster.strategy(nullptr);
  CoordinatorOptions options = LocalCluster::coordinator_options();
  options.closure_timeout_seconds = 0.3;
  ClusterCoordinator coordinator(strategy, options);
  RemoteValue slow = coordinator.schedule("ps_test_sleep", {milliseconds(1500)});
  const std::exception_ptr error = bounded_join(coordinator);
  ASSERT_TRUE(error) << "join() returned although the step ran past the closure timeout";
  try {
    std::rethrow_exception(error);
  } catch (const CoordinationError& e) {
    EXPECT_NE(std::string(e.what()).find("closure_timeout_seconds"), std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("the test: join() waited"), std::string::npos);
  }
  EXPECT_THROW(slow.fetch(), CoordinationError);
  // Both workers take closures again (the slow one once its step is over).
  ASSERT_TRUE(eventually([&] {
    return coordinator.worker_available(0) && coordinator.worker_available(1);
  }));
  TempDirectory meeting("ps_strategy_meet");
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  coordinator.schedule("ps_test_meet", ps_test_meet_args(meeting.path, 2));
  EXPECT_FALSE(bounded_join(coordinator));
  EXPECT_EQ(g_sleep_starts, 1) << "the timed-out step was run again";
  EXPECT_EQ(g_most_sleeping, 1);
  EXPECT_EQ(coordinator.closures_requeued(), 0);
}

// A result over max_message_bytes: a ResourceExhaustedError from join() naming the option;
// the step ran once (each run of a train step pushes its updates).
TEST(ParameterServerStrategy, ResultOverMaxMessageBytesIsAnErrorAndTheStepRunsOnce) {
  ParameterServerOptions small = PsLocalCluster::fast_options();
  small.max_message_bytes = size_t(1) << 20;
  LocalCluster cluster(small);
  register_timing_functions();
  g_big_runs = 0;
  ClusterCoordinator coordinator(cluster.strategy(nullptr), LocalCluster::coordinator_options());
  coordinator.schedule("ps_test_big");
  const std::exception_ptr error = bounded_join(coordinator);
  ASSERT_TRUE(error);
  try {
    std::rethrow_exception(error);
  } catch (const ResourceExhaustedError& e) {
    EXPECT_NE(std::string(e.what()).find("max_message_bytes"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a ResourceExhaustedError, got: " << e.what();
  }
  EXPECT_EQ(g_big_runs, 1);
  EXPECT_EQ(coordinator.closures_requeued(), 0);
}

// A variable whose part cannot travel to its ps is refused before its initial value is made.
TEST(ParameterServerStrategy, VariableOverMaxMessageBytesIsAValueErrorBeforeAllocation) {
  ParameterServerOptions small = PsLocalCluster::fast_options();
  small.max_message_bytes = size_t(1) << 20;
  LocalCluster cluster(small);
  auto strategy = cluster.strategy(nullptr);
  auto scope = strategy->scope();
  // 4e12 parameters: made, it would be 16 TB.
  auto huge = std::make_shared<Sequential>(std::vector<std::shared_ptr<Layer>>{
      std::make_shared<Dense>(int64_t(2000000))});
  try {
    huge->build({-1, 2000000});
    FAIL() << "built";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("max_message_bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("variable_partitioner"), std::string::npos) << e.what();
  }
}

TEST(ParameterServerStrategy, ClusterWithoutPsOrWorkerIsAValueError) {
  using Jobs = std::map<std::string, std::vector<std::string>>;
  EXPECT_THROW(ParameterServerStrategy(ClusterSpec(Jobs{{"worker", {"localhost:1"}}})), ValueError);
  EXPECT_THROW(ParameterServerStrategy(ClusterSpec(Jobs{{"ps", {"localhost:1"}}})), ValueError);
}

// TF_CONFIG's roles: chief or master coordinates; without either, worker 0 does and also serves
// as a worker (the seed's two-job config); ps and evaluator tasks are what they say.
TEST(ParameterServerRole, FromTheTaskAndTheCluster) {
  using Jobs = std::map<std::string, std::vector<std::string>>;
  using Kind = ParameterServerRole::Kind;
  const ClusterSpec two_jobs(Jobs{{"ps", {"h3:1", "h4:1"}}, {"worker", {"h1:1", "h2:1"}}});
  const ClusterSpec with_chief(
      Jobs{{"chief", {"h0:1"}}, {"ps", {"h3:1"}}, {"worker", {"h1:1", "h2:1"}}});
  const ClusterSpec with_master(Jobs{{"master", {"h0:1"}}, {"ps", {"h3:1"}}, {"worker", {"h1:1"}}});
  auto role = [](const ClusterSpec& c, const std::string& type, int index) {
    return parameter_server_role(
        SimpleClusterResolver(c, SimpleClusterResolverOptions().task_type(type).task_id(index)));
  };
  EXPECT_EQ(role(with_chief, "chief", 0).kind, Kind::kCoordinator);
  EXPECT_FALSE(role(with_chief, "chief", 0).also_worker);
  EXPECT_EQ(role(with_master, "master", 0).kind, Kind::kCoordinator);
  EXPECT_EQ(role(with_chief, "worker", 0).kind, Kind::kWorker);
  EXPECT_EQ(role(with_chief, "ps", 0).kind, Kind::kPs);
  EXPECT_EQ(role(two_jobs, "worker", 0).kind, Kind::kCoordinator);
  EXPECT_TRUE(role(two_jobs, "worker", 0).also_worker);
  EXPECT_NE(role(two_jobs, "worker", 0).describe().find("so worker 0 does"), std::string::npos);
  EXPECT_EQ(role(two_jobs, "worker", 1).kind, Kind::kWorker);
  EXPECT_EQ(role(two_jobs, "ps", 1).kind, Kind::kPs);
  EXPECT_EQ(role(with_chief, "evaluator", 0).kind, Kind::kEvaluator);
  EXPECT_THROW(role(ClusterSpec(Jobs{{"worker", {"h1:1"}}}), "worker", 0), ValueError);
  EXPECT_THROW(role(with_chief, "driver", 0), ValueError);
  EXPECT_THROW(parameter_server_role(SimpleClusterResolver(with_chief)), ValueError);
}

}  // namespace
}  // namespace strata::testing
