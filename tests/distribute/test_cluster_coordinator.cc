// ClusterCoordinator's semantics with in-process workers (no processes: the closure queue, the
// re-queue of a failed worker's closure, re-admission, errors), ported from TensorFlow's
// cluster_coordinator_test.py and fault_tolerance_test_base.py. The multi-process tests run the
// same semantics over gRPC workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "distribute/coordination/key_value_store.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "framework/ops/creation.h"

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;

// A worker in this process. Functions: "add_one" (args[0] + 1), "slow" (sleeps 5 ms, returns
// its worker index), "raise" (a ValueError), "ps_gone" (a parameter server did not answer),
// "next" (the next element of the closure's per-worker dataset: a counter from 0).
class FakeWorker final : public ClosureRunner {
 public:
  explicit FakeWorker(int index) : index_(index) {}

  std::string task() const override {
    return "/job:worker/replica:0/task:" + std::to_string(index_) + " (fake)";
  }

  ClosureOutcome run(const Closure& c) override {
    ClosureOutcome out;
    if (down || fail_runs_from == runs_started.fetch_add(1)) {
      down = true;
      out.kind = ClosureOutcome::Kind::kWorkerUnavailable;
      out.message = "connection refused";
      return out;
    }
    if (c.function == "add_one") {
      out.values = {scalar(c.args.at(0).item<float>() + 1.0f)};
    } else if (c.function == "slow") {
      std::this_thread::sleep_for(5ms);
      out.values = {scalar(float(index_))};
    } else if (c.function == "raise") {
      out.kind = ClosureOutcome::Kind::kUserError;
      out.error_type = "ValueError";
      out.message = "step: bad input on " + task();
    } else if (c.function == "ps_gone") {
      out.kind = ClosureOutcome::Kind::kPsUnavailable;
      out.message = "the parameter server /job:ps/replica:0/task:1 (localhost:1) did not answer";
    } else if (c.function == "next") {
      std::lock_guard<std::mutex> lock(mutex_);
      out.values = {scalar(float(iterators_.at(c.dataset_id)++))};
    } else {
      out.kind = ClosureOutcome::Kind::kUserError;
      out.error_type = "ValueError";
      out.message = "no step function '" + c.function + "'";
    }
    ++completed;
    return out;
  }

  bool prepare(const WorkerSetup& setup) override {
    if (down && !come_back) return false;
    if (down) {
      down = false;
      fail_runs_from = -1;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (setup.rebuild) iterators_.clear();
    for (const PerWorkerDatasetSpec& d : setup.datasets) iterators_[d.id] = 0;
    if (setup.model) model_json = setup.model->model_json;
    ++prepared;
    return true;
  }

  static Tensor scalar(float v) { return Tensor::from_vector(std::vector<float>{v}, Shape{}); }

  // Fails the run with this number (0-based) and every later one until it comes back.
  std::atomic<int> fail_runs_from{-1};
  std::atomic<int> runs_started{0};
  std::atomic<bool> down{false}, come_back{false};
  std::atomic<int> completed{0}, prepared{0};
  std::string model_json;  // the last model it was given

 private:
  int index_;
  std::mutex mutex_;
  std::map<int64_t, int64_t> iterators_;
};

struct Cluster {
  explicit Cluster(int n, CoordinatorOptions options = fast()) {
    std::vector<std::unique_ptr<ClosureRunner>> runners;
    for (int i = 0; i < n; ++i) {
      auto w = std::make_unique<FakeWorker>(i);
      workers.push_back(w.get());
      runners.push_back(std::move(w));
    }
    coordinator = std::make_unique<ClusterCoordinator>(std::move(runners), options);
  }
  static CoordinatorOptions fast() {
    CoordinatorOptions o;
    o.worker_retry_interval_seconds = 0.02;
    o.worker_recovery_timeout_seconds = 20;
    return o;
  }
  std::vector<FakeWorker*> workers;
  std::unique_ptr<ClusterCoordinator> coordinator;
};

Tensor scalar(float v) { return FakeWorker::scalar(v); }

TEST(ClusterCoordinator, ScheduleAndJoinRunEveryClosureOnce) {
  Cluster c(2);
  std::vector<RemoteValue> values;
  for (int i = 0; i < 50; ++i) values.push_back(c.coordinator->schedule("add_one", {scalar(i)}));
  c.coordinator->join();
  EXPECT_TRUE(c.coordinator->done());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(values[size_t(i)].state(), RemoteValue::State::kReady);
    EXPECT_FLOAT_EQ(values[size_t(i)].fetch_one().item<float>(), float(i + 1));
  }
  const std::vector<int64_t> done = c.coordinator->closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 50);
  EXPECT_EQ(c.coordinator->closures_requeued(), 0);
}

TEST(ClusterCoordinator, ClosuresGoToEveryFreeWorker) {
  Cluster c(2);
  for (int i = 0; i < 40; ++i) c.coordinator->schedule("slow");
  EXPECT_FALSE(c.coordinator->done());
  c.coordinator->join();
  const std::vector<int64_t> done = c.coordinator->closures_completed_per_worker();
  EXPECT_GT(done[0], 0);
  EXPECT_GT(done[1], 0);
}

TEST(ClusterCoordinator, FailedWorkersClosureRunsElsewhereAndTheWorkerIsReadmitted) {
  Cluster c(2);
  c.workers[1]->fail_runs_from = 2;  // dies during its third closure
  std::vector<RemoteValue> values;
  for (int i = 0; i < 40; ++i) values.push_back(c.coordinator->schedule("slow"));
  // Every closure completes although worker 1 is gone.
  for (RemoteValue& v : values) v.fetch();
  EXPECT_GE(c.coordinator->closures_requeued(), 1);
  EXPECT_EQ(c.coordinator->worker_preparations(1), 1);
  // It comes back: re-admitted (prepared again) and given closures again.
  const int before = c.workers[1]->completed;
  c.workers[1]->come_back = true;
  for (int i = 0; i < 200 && c.coordinator->worker_preparations(1) < 2; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(c.coordinator->worker_preparations(1), 2);
  for (int i = 0; i < 40; ++i) c.coordinator->schedule("slow");
  c.coordinator->join();
  EXPECT_GT(c.workers[1]->completed, before);
  const std::vector<int64_t> done = c.coordinator->closures_completed_per_worker();
  EXPECT_EQ(done[0] + done[1], 80);  // each closure counted once as completed
}

TEST(ClusterCoordinator, PerWorkerDatasetsAreRebuiltOnAWorkerThatCameBack) {
  Cluster c(1);
  PerWorkerDataset data = c.coordinator->create_per_worker_dataset("counter");
  PerWorkerIterator it = data.iterator();
  EXPECT_FLOAT_EQ(c.coordinator->schedule("next", {}, &it).fetch_one().item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(c.coordinator->schedule("next", {}, &it).fetch_one().item<float>(), 1.0f);
  c.workers[0]->fail_runs_from = 2;
  c.workers[0]->come_back = true;
  // The failed closure is re-run on the rebuilt iterator, which starts over (TensorFlow's).
  EXPECT_FLOAT_EQ(c.coordinator->schedule("next", {}, &it).fetch_one().item<float>(), 0.0f);
  EXPECT_EQ(c.coordinator->worker_preparations(0), 2);
}

TEST(ClusterCoordinator, DatasetsCreatedLaterReachRunningWorkers) {
  Cluster c(2);
  c.coordinator->schedule("slow");
  c.coordinator->join();
  PerWorkerDataset data = c.coordinator->create_per_worker_dataset("counter");
  PerWorkerIterator it = data.iterator();
  std::vector<RemoteValue> values;
  for (int i = 0; i < 6; ++i) values.push_back(c.coordinator->schedule("next", {}, &it));
  c.coordinator->join();
  for (RemoteValue& v : values) EXPECT_LT(v.fetch_one().item<float>(), 6.0f);
}

TEST(ClusterCoordinator, FirstUserErrorComesOutOfJoinOnceAndCancelsTheQueue) {
  Cluster c(1);
  std::vector<RemoteValue> before, after;
  for (int i = 0; i < 3; ++i) before.push_back(c.coordinator->schedule("add_one", {scalar(i)}));
  RemoteValue failing = c.coordinator->schedule("raise");
  for (int i = 0; i < 20; ++i) after.push_back(c.coordinator->schedule("slow"));
  try {
    c.coordinator->join();
    FAIL() << "join() did not raise the step's error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad input"), std::string::npos) << e.what();
  }
  for (RemoteValue& v : before) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  EXPECT_THROW(failing.fetch(), ValueError);
  int cancelled = 0;
  for (RemoteValue& v : after) {
    if (v.state() == RemoteValue::State::kAborted) {
      EXPECT_THROW(v.fetch(), CancelledError);
      ++cancelled;
    }
  }
  EXPECT_GT(cancelled, 0);
  // Raised once: the next join is clean, and scheduling works again.
  EXPECT_NO_THROW(c.coordinator->join());
  EXPECT_FLOAT_EQ(c.coordinator->schedule("add_one", {scalar(1)}).fetch_one().item<float>(), 2);
}

TEST(ClusterCoordinator, UserErrorComesOutOfTheNextSchedule) {
  Cluster c(1);
  RemoteValue failing = c.coordinator->schedule("raise");
  EXPECT_THROW(failing.fetch(), ValueError);
  EXPECT_THROW(c.coordinator->schedule("add_one", {scalar(1)}), ValueError);
  EXPECT_NO_THROW(c.coordinator->join());
  EXPECT_FLOAT_EQ(c.coordinator->schedule("add_one", {scalar(1)}).fetch_one().item<float>(), 2);
}

TEST(ClusterCoordinator, UserErrorComesOutOfDone) {
  Cluster c(1);
  RemoteValue failing = c.coordinator->schedule("raise");
  EXPECT_THROW(failing.fetch(), ValueError);
  EXPECT_THROW(c.coordinator->done(), ValueError);
  EXPECT_TRUE(c.coordinator->done());
}

TEST(ClusterCoordinator, ParameterServerFailureIsFatalAndNamesIt) {
  Cluster c(2);
  for (int i = 0; i < 5; ++i) c.coordinator->schedule("slow");
  c.coordinator->schedule("ps_gone");
  for (int i = 0; i < 5; ++i) c.coordinator->schedule("slow");
  for (int attempt = 0; attempt < 2; ++attempt) {  // raised every time, not once
    try {
      c.coordinator->join();
      FAIL() << "join() did not raise";
    } catch (const CoordinationError& e) {
      EXPECT_NE(std::string(e.what()).find("/job:ps/replica:0/task:1"), std::string::npos);
    }
  }
  EXPECT_THROW(c.coordinator->schedule("slow"), CoordinationError);
  EXPECT_THROW(c.coordinator->done(), CoordinationError);
}

TEST(ClusterCoordinator, ReportedFatalErrorStopsScheduling) {
  Cluster c(1);
  c.coordinator->report_fatal_error("ps task /job:ps/replica:0/task:0 stopped answering pings");
  EXPECT_THROW(c.coordinator->schedule("slow"), CoordinationError);
  EXPECT_THROW(c.coordinator->join(), CoordinationError);
}

TEST(ClusterCoordinator, ValuesFetchAfterTheirWorkerDied) {
  Cluster c(2);
  RemoteValue v = c.coordinator->schedule("add_one", {scalar(41)});
  c.coordinator->join();
  c.workers[0]->down = true;
  c.workers[1]->down = true;
  EXPECT_FLOAT_EQ(v.fetch_one().item<float>(), 42.0f);
}

TEST(ClusterCoordinator, NoWorkerLeftFailsNamingTheWorkers) {
  CoordinatorOptions o = Cluster::fast();
  o.worker_recovery_timeout_seconds = 0.2;
  Cluster c(1, o);
  c.workers[0]->fail_runs_from = 0;
  c.coordinator->schedule("slow");
  try {
    c.coordinator->join();
    FAIL() << "join() did not raise";
  } catch (const CoordinationError& e) {
    EXPECT_NE(std::string(e.what()).find("/job:worker/replica:0/task:0"), std::string::npos)
        << e.what();
  }
}

TEST(ClusterCoordinator, DestroyingCancelsQueuedClosures) {
  std::vector<RemoteValue> values;
  {
    Cluster c(1);
    for (int i = 0; i < 200; ++i) values.push_back(c.coordinator->schedule("slow"));
  }
  int cancelled = 0;
  for (RemoteValue& v : values) {
    ASSERT_NE(v.state(), RemoteValue::State::kPending);
    if (v.state() == RemoteValue::State::kAborted) ++cancelled;
  }
  EXPECT_GT(cancelled, 0);
}

TEST(ClusterCoordinator, NeedsAWorker) {
  EXPECT_THROW(ClusterCoordinator(std::vector<std::unique_ptr<ClosureRunner>>{}), ValueError);
}

}  // namespace
}  // namespace strata::distribute
