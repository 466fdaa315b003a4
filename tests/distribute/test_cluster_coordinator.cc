// ClusterCoordinator's semantics with in-process workers (no processes: the closure queue, the
// re-queue of a failed worker's closure, re-admission, errors), ported from TensorFlow's
// cluster_coordinator_test.py and fault_tolerance_test_base.py. The multi-process tests run the
// same semantics over gRPC workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "distribute/errors.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "framework/ops/creation.h"

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;

// Bounded waits: a condition that does not come true within this long is a failure, not a hang.
constexpr auto kWaitLimit = 30s;

// Polls `condition` until it holds or kWaitLimit passes; whether it held.
template <typename Condition>
bool eventually(Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// What the fake workers of one cluster share: a gate that holds every run until opened (so a
// test schedules all it means to before any closure runs, whatever the CPU load), and a
// meeting point ("meet" returns only once `meet_count` workers are inside it, so that many
// closures scheduled at once land on as many different workers).
struct Shared {
  std::mutex mutex;
  std::condition_variable cv;
  bool gate_open = true;
  int meeting = 0;       // workers waiting in "meet" now
  int64_t meetings = 0;  // meetings held
  int meet_count = 2;

  void close_gate() {
    std::lock_guard<std::mutex> lock(mutex);
    gate_open = false;
  }
  void open_gate() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      gate_open = true;
    }
    cv.notify_all();
  }
  bool pass_gate() {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, kWaitLimit, [&] { return gate_open; });
  }
  bool meet() {
    std::unique_lock<std::mutex> lock(mutex);
    const int64_t this_meeting = meetings;
    if (++meeting >= meet_count) {  // the last one in lets everyone go
      meeting = 0;
      ++meetings;
      cv.notify_all();
      return true;
    }
    return cv.wait_for(lock, kWaitLimit, [&] { return meetings != this_meeting; });
  }
};

// A worker in this process. Functions: "add_one" (args[0] + 1), "slow" (sleeps 5 ms, returns
// its worker index), "raise" (a ValueError), "ps_gone" (a parameter server did not answer),
// "next" (the next element of the closure's per-worker dataset: a counter from 0), "meet" (see
// Shared), "time_out" (the closure ran past the closure timeout; the worker then says it is
// busy to the next `busy_probes` probes).
class FakeWorker final : public ClosureRunner {
 public:
  FakeWorker(int index, Shared& shared) : index_(index), shared_(shared) {}

  std::string task() const override {
    return "/job:worker/replica:0/task:" + std::to_string(index_) + " (fake)";
  }

  ClosureOutcome run(const Closure& c) override {
    ClosureOutcome out;
    const int run_number = runs_started.fetch_add(1);
    if (!shared_.pass_gate()) {
      out.kind = ClosureOutcome::Kind::kUserError;
      out.error_type = "StateError";
      out.message = "the test never opened the gate";
      return out;
    }
    if (down || fail_runs_from == run_number) {
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
    } else if (c.function == "meet") {
      if (!shared_.meet()) {
        out.kind = ClosureOutcome::Kind::kUserError;
        out.error_type = "StateError";
        out.message = "meet: the other workers never came";
        return out;
      }
      out.values = {scalar(float(index_))};
    } else if (c.function == "raise") {
      out.kind = ClosureOutcome::Kind::kUserError;
      out.error_type = "ValueError";
      out.message = "step: bad input on " + task();
    } else if (c.function == "ps_gone") {
      out.kind = ClosureOutcome::Kind::kPsUnavailable;
      out.message = "the parameter server /job:ps/replica:0/task:1 (localhost:1) did not answer";
    } else if (c.function == "time_out") {
      ++timed_out;
      busy_probes = 3;
      out.kind = ClosureOutcome::Kind::kTimedOut;
      out.message = "closure 'time_out' ran longer than closure_timeout_seconds on " + task();
      return out;
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
    ++prepare_calls;
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

  Probe probe() override {
    if (busy_probes > 0) {
      --busy_probes;
      ++probes_answered_busy;
      runs_when_busy = runs_started.load();
      return Probe::kBusy;
    }
    return Probe::kIdle;
  }

  // The coordinator is going away: nothing waits at the gate for it.
  void cancel() override { shared_.open_gate(); }

  static Tensor scalar(float v) { return Tensor::from_vector(std::vector<float>{v}, Shape{}); }

  // Fails the run with this number (0-based) and every later one until it comes back.
  std::atomic<int> fail_runs_from{-1};
  std::atomic<int> runs_started{0};
  std::atomic<bool> down{false}, come_back{false};
  std::atomic<int> completed{0}, prepared{0}, prepare_calls{0};
  std::atomic<int> timed_out{0}, busy_probes{0}, probes_answered_busy{0};
  std::atomic<int> runs_when_busy{0};  // runs started when it last answered "busy"
  std::string model_json;  // the last model it was given

 private:
  int index_;
  Shared& shared_;
  std::mutex mutex_;
  std::map<int64_t, int64_t> iterators_;
};

struct Cluster {
  // `setup` configures the workers before the coordinator starts them.
  explicit Cluster(int n, CoordinatorOptions options = fast(),
                   const std::function<void(FakeWorker&)>& setup = nullptr) {
    std::vector<std::unique_ptr<ClosureRunner>> runners;
    for (int i = 0; i < n; ++i) {
      auto w = std::make_unique<FakeWorker>(i, shared);
      if (setup) setup(*w);
      workers.push_back(w.get());
      runners.push_back(std::move(w));
    }
    shared.meet_count = n;
    coordinator = std::make_unique<ClusterCoordinator>(std::move(runners), options);
  }
  static CoordinatorOptions fast() {
    CoordinatorOptions o;
    o.worker_retry_interval_seconds = 0.02;
    o.worker_recovery_timeout_seconds = 20;
    return o;
  }
  Shared shared;  // first: the workers refer to it until the coordinator is gone
  std::vector<FakeWorker*> workers;
  std::unique_ptr<ClusterCoordinator> coordinator;
};

// join(), bounded: a join still waiting after kWaitLimit is ended with a fatal error (so the
// test fails instead of hanging). Returns the error join() raised, or null.
std::exception_ptr bounded_join(ClusterCoordinator& c) {
  auto joined = std::async(std::launch::async, [&c] { c.join(); });
  if (joined.wait_for(kWaitLimit) != std::future_status::ready) {
    c.report_fatal_error("the test: join() waited past the test's limit");
  }
  try {
    joined.get();
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

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

// Two "meet" closures scheduled at once must run on both workers (one waiting in "meet" cannot
// take the other), whatever the load; the gate keeps every closure queued until the test has
// looked at done().
TEST(ClusterCoordinator, ClosuresGoToEveryFreeWorker) {
  Cluster c(2);
  c.shared.close_gate();
  c.coordinator->schedule("meet");
  c.coordinator->schedule("meet");
  for (int i = 0; i < 38; ++i) c.coordinator->schedule("slow");
  EXPECT_FALSE(c.coordinator->done());
  c.shared.open_gate();
  c.coordinator->join();
  const std::vector<int64_t> done = c.coordinator->closures_completed_per_worker();
  EXPECT_GT(done[0], 0);
  EXPECT_GT(done[1], 0);
  EXPECT_EQ(done[0] + done[1], 40);
}

TEST(ClusterCoordinator, FailedWorkersClosureRunsElsewhereAndTheWorkerIsReadmitted) {
  Cluster c(2);
  c.workers[1]->fail_runs_from = 0;  // dies during its first closure
  c.shared.close_gate();
  std::vector<RemoteValue> values;
  for (int i = 0; i < 40; ++i) values.push_back(c.coordinator->schedule("slow"));
  // Both workers hold a closure before any runs: worker 1's is the one it fails.
  ASSERT_TRUE(eventually([&] {
    return c.workers[0]->runs_started >= 1 && c.workers[1]->runs_started >= 1;
  }));
  c.shared.open_gate();
  // Every closure completes although worker 1 is gone.
  for (RemoteValue& v : values) v.fetch();
  EXPECT_GE(c.coordinator->closures_requeued(), 1);
  EXPECT_EQ(c.coordinator->worker_preparations(1), 1);
  // It comes back: re-admitted (prepared again) and given closures again.
  const int before = c.workers[1]->completed;
  c.workers[1]->come_back = true;
  ASSERT_TRUE(eventually([&] { return c.coordinator->worker_preparations(1) >= 2; }));
  EXPECT_EQ(c.coordinator->worker_preparations(1), 2);
  c.coordinator->schedule("meet");
  c.coordinator->schedule("meet");
  for (int i = 0; i < 38; ++i) c.coordinator->schedule("slow");
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

// The closures are all scheduled before any runs (the gate): the step's error then comes out of
// join(). (Without the gate, "raise" may run while the test still schedules, and the next
// schedule() raises it, as TensorFlow's does: that is the semantics, not this test's subject.)
TEST(ClusterCoordinator, FirstUserErrorComesOutOfJoinOnceAndCancelsTheQueue) {
  Cluster c(1);
  c.shared.close_gate();
  std::vector<RemoteValue> before, after;
  for (int i = 0; i < 3; ++i) before.push_back(c.coordinator->schedule("add_one", {scalar(i)}));
  RemoteValue failing = c.coordinator->schedule("raise");
  for (int i = 0; i < 20; ++i) after.push_back(c.coordinator->schedule("slow"));
  c.shared.open_gate();
  try {
    c.coordinator->join();
    FAIL() << "join() did not raise the step's error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad input"), std::string::npos) << e.what();
  }
  for (RemoteValue& v : before) EXPECT_EQ(v.state(), RemoteValue::State::kReady);
  EXPECT_THROW(failing.fetch(), ValueError);
  // One worker runs them in order: every closure after the failing one was still queued.
  for (RemoteValue& v : after) {
    ASSERT_EQ(v.state(), RemoteValue::State::kAborted);
    EXPECT_THROW(v.fetch(), CancelledError);
  }
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
  c.shared.close_gate();  // all scheduled before "ps_gone" runs
  for (int i = 0; i < 5; ++i) c.coordinator->schedule("slow");
  c.coordinator->schedule("ps_gone");
  for (int i = 0; i < 5; ++i) c.coordinator->schedule("slow");
  c.shared.open_gate();
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

// Every worker gone while nothing is queued (here: none ever started): the next schedule/join
// does not wait for ever. Closures cannot wait longer than worker_recovery_timeout_seconds for
// a worker: a CoordinationError names the workers and the option. The worker is still tried:
// when it answers, it takes closures again (TensorFlow keeps trying too).
TEST(ClusterCoordinator, NoWorkerForTheRecoveryTimeoutFailsScheduleAndTheWorkerIsReadmitted) {
  CoordinatorOptions o = Cluster::fast();
  o.worker_recovery_timeout_seconds = 0.2;
  Cluster c(1, o, [](FakeWorker& w) { w.down = true; });
  // Past the recovery timeout, with the worker tried and refused several times meanwhile.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] {
    return c.workers[0]->prepare_calls >= 3 && std::chrono::steady_clock::now() - start > 400ms;
  }));
  std::exception_ptr error;
  try {
    RemoteValue v = c.coordinator->schedule("add_one", {scalar(1)});
    error = bounded_join(*c.coordinator);
    if (!error) FAIL() << "the closure ran with no worker: " << v.fetch_one().item<float>();
  } catch (const CoordinationError&) {
    error = std::current_exception();
  }
  ASSERT_TRUE(error) << "neither schedule() nor join() raised";
  try {
    std::rethrow_exception(error);
  } catch (const CoordinationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/job:worker/replica:0/task:0"), std::string::npos) << what;
    EXPECT_NE(what.find("worker_recovery_timeout_seconds"), std::string::npos) << what;
    EXPECT_EQ(what.find("the test: join() waited"), std::string::npos) << what;
  }
  // The worker answers at last: re-admitted, and closures run again.
  c.workers[0]->come_back = true;
  ASSERT_TRUE(eventually([&] { return c.coordinator->worker_preparations(0) >= 1; }));
  RemoteValue again = c.coordinator->schedule("add_one", {scalar(1)});
  EXPECT_FALSE(bounded_join(*c.coordinator));
  EXPECT_FLOAT_EQ(again.fetch_one().item<float>(), 2.0f);
}

// The same after the only worker failed during a closure: the queued closure fails after the
// recovery timeout, once; the worker, back later, takes closures again.
TEST(ClusterCoordinator, AfterNoWorkerWasLeftAWorkerThatAnswersTakesClosuresAgain) {
  CoordinatorOptions o = Cluster::fast();
  o.worker_recovery_timeout_seconds = 0.2;
  Cluster c(1, o);
  c.workers[0]->fail_runs_from = 0;
  RemoteValue lost = c.coordinator->schedule("slow");
  const std::exception_ptr error = bounded_join(*c.coordinator);
  ASSERT_TRUE(error);
  EXPECT_NE(what_of(error).find("worker_recovery_timeout_seconds"), std::string::npos)
      << what_of(error);
  EXPECT_THROW(lost.fetch(), CoordinationError);
  EXPECT_FALSE(bounded_join(*c.coordinator));  // raised once
  c.workers[0]->come_back = true;
  ASSERT_TRUE(eventually([&] { return c.coordinator->worker_preparations(0) >= 2; }));
  RemoteValue again = c.coordinator->schedule("add_one", {scalar(41)});
  EXPECT_FALSE(bounded_join(*c.coordinator));
  EXPECT_FLOAT_EQ(again.fetch_one().item<float>(), 42.0f);
}

// A closure past the closure timeout on a worker that still answers: an error from join(),
// the closure not re-run anywhere, the queue cancelled; the worker takes no closure before it
// says it is idle (it may still be applying the step's updates).
TEST(ClusterCoordinator, TimedOutClosureIsAnErrorNotRerunAndItsWorkerWaitsUntilIdle) {
  Cluster c(2);
  c.shared.close_gate();
  RemoteValue slow = c.coordinator->schedule("time_out");
  std::vector<RemoteValue> queued;
  for (int i = 0; i < 5; ++i) queued.push_back(c.coordinator->schedule("slow"));
  c.shared.open_gate();
  const std::exception_ptr error = bounded_join(*c.coordinator);
  ASSERT_TRUE(error);
  EXPECT_NE(what_of(error).find("closure_timeout_seconds"), std::string::npos) << what_of(error);
  EXPECT_THROW(slow.fetch(), CoordinationError);
  EXPECT_EQ(c.workers[0]->timed_out + c.workers[1]->timed_out, 1);
  EXPECT_EQ(c.coordinator->closures_requeued(), 0);
  const size_t w = c.workers[0]->timed_out == 1 ? 0 : 1;
  // It was asked until it said idle, and took nothing meanwhile; then it takes closures again.
  ASSERT_TRUE(eventually([&] { return c.coordinator->worker_available(int(w)); }));
  EXPECT_EQ(c.workers[w]->probes_answered_busy, 3);
  EXPECT_EQ(c.workers[w]->runs_when_busy, 1);
  c.shared.meet_count = 2;
  c.coordinator->schedule("meet");
  c.coordinator->schedule("meet");
  EXPECT_FALSE(bounded_join(*c.coordinator));
  EXPECT_GT(c.workers[w]->completed, 0);
}

// join_for() says whether the closures ran; cancel_queued() drops the ones not started, with no
// error raised for it (a fit stopping at a step boundary).
TEST(ClusterCoordinator, JoinForAndCancelQueued) {
  Cluster c(1);
  c.shared.close_gate();
  RemoteValue first = c.coordinator->schedule("add_one", {scalar(1)});
  std::vector<RemoteValue> rest;
  for (int i = 0; i < 10; ++i) rest.push_back(c.coordinator->schedule("slow"));
  ASSERT_TRUE(eventually([&] { return c.workers[0]->runs_started >= 1; }));
  EXPECT_FALSE(c.coordinator->join_for(20ms));
  EXPECT_EQ(c.coordinator->cancel_queued("stopped by the test"), 10);
  c.shared.open_gate();
  EXPECT_TRUE(c.coordinator->join_for(std::chrono::duration_cast<std::chrono::milliseconds>(kWaitLimit)));
  EXPECT_FLOAT_EQ(first.fetch_one().item<float>(), 2.0f);
  for (RemoteValue& v : rest) {
    try {
      v.fetch();
      FAIL() << "a cancelled closure ran";
    } catch (const CancelledError& e) {
      EXPECT_NE(std::string(e.what()).find("stopped by the test"), std::string::npos);
    }
  }
  EXPECT_NO_THROW(c.coordinator->join());
  EXPECT_EQ(c.workers[0]->completed, 1);
}

TEST(ClusterCoordinator, DestroyingCancelsQueuedClosures) {
  std::vector<RemoteValue> values;
  {
    Cluster c(1);
    c.shared.close_gate();  // the worker holds at most one closure when the coordinator goes
    for (int i = 0; i < 200; ++i) values.push_back(c.coordinator->schedule("slow"));
  }
  int cancelled = 0;
  for (RemoteValue& v : values) {
    ASSERT_NE(v.state(), RemoteValue::State::kPending);
    if (v.state() == RemoteValue::State::kAborted) ++cancelled;
  }
  EXPECT_GE(cancelled, 199);
}

TEST(ClusterCoordinator, NeedsAWorker) {
  EXPECT_THROW(ClusterCoordinator(std::vector<std::unique_ptr<ClosureRunner>>{}), ValueError);
}

}  // namespace
}  // namespace strata::distribute
