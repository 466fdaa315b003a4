// The optimizer's step count under a parameter server: workers update at once, so each update
// must own one step of the count on the ps (TensorFlow's iterations.assign_add), and its
// learning rate and bias correction use that step. Two workers (threads, each with its own
// ParameterServerStrategy, channel and optimizer, as two worker processes would have) push 50
// steps each to one ps over loopback; a schedule makes them meet at every step, so both are
// inside a step at once: the interleaving in which a count that is read, then written, loses
// updates.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <thread>

#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "tests/distribute/distribute_test_utils.h"

namespace strata::testing {
namespace {

using namespace distribute;

constexpr int kWorkers = 2;
constexpr int kSteps = 50;

ParameterServerOptions options() {
  ParameterServerOptions o;
  o.rpc_timeout = std::chrono::seconds(10);
  return o;
}

// lr(step) = 0.001 * (step + 1). Records every step it is asked for; each call waits (at most
// 10 s, so that a broken count fails the test's checks instead of hanging it) until the other
// worker has asked too.
class MeetingSchedule final : public optimizers::LearningRateSchedule {
 public:
  double operator()(int64_t step) const override {
    std::unique_lock<std::mutex> lock(mutex_);
    asked_.push_back(step);
    const int64_t generation = generation_;
    if (++arrived_ == kWorkers) {
      arrived_ = 0;
      ++generation_;
      met_.notify_all();
    } else {
      met_.wait_for(lock, std::chrono::seconds(10), [&] { return generation_ != generation; });
    }
    return 0.001 * double(step + 1);
  }
  std::string get_config() const override { return "{}"; }
  std::string name() const override { return "MeetingSchedule"; }

  std::vector<int64_t> asked() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable met_;
  mutable std::vector<int64_t> asked_;
  mutable int arrived_ = 0;
  mutable int64_t generation_ = 0;
};

TEST(PsStepCount, TwoWorkersRacingOwnOneStepEachAndTheScheduleSeesEveryStepOnce) {
  auto ps = ParameterServer::start("localhost:0", options());
  const ClusterSpec cluster(std::map<std::string, std::vector<std::string>>{
      {"ps", {"localhost:" + std::to_string(ps->port())}},
      {"worker", {"localhost:1", "localhost:2"}}});
  auto schedule = std::make_shared<MeetingSchedule>();

  std::vector<std::thread> workers;
  std::vector<std::string> errors(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      try {
        ParameterServerStrategy strategy(cluster, nullptr, options());
        auto scope = strategy.scope();
        // Both workers build the same variables: the second finds them on the ps.
        VariablePtr weight = create_variable(VariableSpec{"w", {4}, float32});
        optimizers::SGD sgd(schedule);
        ASSERT_NE(dynamic_cast<RemoteVariable*>(sgd.iterations().get()), nullptr);
        for (int s = 0; s < kSteps; ++s) sgd.apply_gradients({ones({4})}, {weight});
      } catch (const std::exception& e) {
        errors[size_t(w)] = e.what();
      }
    });
  }
  for (std::thread& t : workers) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");

  ParameterClient client("/job:ps/replica:0/task:0", "localhost:" + std::to_string(ps->port()),
                         options());
  const std::vector<Tensor> values = client.read({"SGD/iter", "w"});
  EXPECT_EQ(values[0].item<int64_t>(), kWorkers * kSteps);
  // Every step 0 .. 99 asked for exactly once: no two updates shared a step, none was skipped.
  std::vector<int64_t> asked = schedule->asked();
  std::sort(asked.begin(), asked.end());
  std::vector<int64_t> every(kWorkers * kSteps);
  std::iota(every.begin(), every.end(), 0);
  EXPECT_EQ(asked, every);
  // And each update used its own step's rate: w = -sum over the steps of lr(step) * 1.
  const double total = 0.001 * (kWorkers * kSteps) * (kWorkers * kSteps + 1) / 2;
  for (float x : values[1].to_vector<float>()) EXPECT_NEAR(x, -total, 1e-3);
}

}  // namespace
}  // namespace strata::testing
