// The coordination service's elastic membership (CoordinationOptions::elastic_min_tasks): the
// first layer of elastic MultiWorkerMirrored training (issue 28). Tasks are slots; the job runs
// with whichever are up, at least the minimum; each change is a new generation every task can
// wait for, and only fewer than the minimum fails the job.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/errors.h"
#include "support/test_helpers.h"
#include "tests/distribute/coordination_test_util.h"

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;
using Membership = CoordinationClient::Membership;
using testing::coordination_error_of;
using testing::expect_error;


// Short heartbeats so that a lost task is noticed within seconds; the waits below are
// bounded by generous timeouts (a loaded machine), never asserted on.
CoordinationOptions elastic_options(size_t min_tasks) {
  CoordinationOptions options;
  options.heartbeat_interval = 100ms;
  options.heartbeat_timeout = 3000ms;  // a live task misses 30 heartbeats first: never, under load
  options.register_timeout = 30000ms;
  options.shutdown_timeout = 20000ms;
  options.rpc_timeout = 10000ms;
  options.elastic_min_tasks = min_tasks;
  options.elastic_grace = 300ms;
  return options;
}

struct ElasticJob {
  ElasticJob(int slots, size_t min_tasks, std::chrono::milliseconds grace = 300ms)
      : tasks(testing::worker_tasks(slots, 21000)), options(elastic_options(min_tasks)) {
    options.elastic_grace = grace;
    service = CoordinationService::start("127.0.0.1:0", tasks, options);
    address = "127.0.0.1:" + std::to_string(service->port());
    clients.resize(size_t(slots));
  }
  std::unique_ptr<CoordinationClient> client(int i) const {
    return std::make_unique<CoordinationClient>(address, tasks[size_t(i)], tasks, options);
  }
  // Starts (a new process of) task i and connects it on its own thread.
  std::future<void> start(int i) {
    clients[size_t(i)] = client(i);
    CoordinationClient* c = clients[size_t(i)].get();
    return std::async(std::launch::async, [c] { c->connect(); });
  }
  // Starts tasks `which` at once and returns when each is connected.
  void start_together(const std::vector<int>& which) {
    std::vector<std::future<void>> up;
    for (int i : which) up.push_back(start(i));
    for (auto& u : up) u.get();
  }
  // The membership after `generation` as task i sees it.
  Membership after(int i, uint64_t generation) {
    return clients[size_t(i)]->membership_after(generation, 20s);
  }

  std::vector<CoordinationTask> tasks;
  CoordinationOptions options;
  std::unique_ptr<CoordinationService> service;
  std::string address;
  std::vector<std::unique_ptr<CoordinationClient>> clients;
};


// The minimum up forms the first membership after the grace period (the third slot empty);
// the third task then joins in the next generation.
TEST(CoordinationElastic, TheMinimumFormsAfterTheGraceAndALaterTaskJoins) {
  ElasticJob job(3, 2);
  job.start_together({0, 1});
  const Membership first = job.after(0, 0);
  EXPECT_EQ(first.generation, 1u);
  EXPECT_EQ(first.members, (std::vector<int>{0, 1}));
  job.start(2).get();
  const Membership second = job.after(1, first.generation);
  EXPECT_EQ(second.generation, 2u);
  EXPECT_EQ(second.members, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(job.after(2, 0).generation, 2u) << "a task that falls behind reads the latest";
}

// Every slot up forms it at once, without waiting for the grace period to end.
TEST(CoordinationElastic, EveryTaskUpFormsAtOnce) {
  ElasticJob job(2, 1, /*grace=*/60s);   // longer than connect's register_timeout
  job.start_together({0, 1});
  EXPECT_EQ(job.after(0, 0).members, (std::vector<int>{0, 1}));
}

// A task that stops heartbeating leaves the membership; the job goes on (no error), and a
// barrier the survivors reach completes without it.
TEST(CoordinationElastic, ALostTaskLeavesTheMembershipWithoutFailingTheJob) {
  ElasticJob job(3, 2);
  job.start_together({0, 1, 2});
  const Membership all = job.after(0, 0);
  ASSERT_EQ(all.members, (std::vector<int>{0, 1, 2}));
  // Worker 1 waits at a barrier that worker 2 will never reach.
  auto waiting = std::async(std::launch::async, [&] { job.clients[1]->barrier("step", 20s); });
  job.clients[2].reset();   // gone without shutdown: no more heartbeats
  const Membership left = job.after(0, all.generation);
  EXPECT_EQ(left.members, (std::vector<int>{0, 1}));
  // Heartbeats bring the new generation too (the cheap way to notice a change).
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (job.clients[0]->membership_generation_seen() < left.generation &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(job.clients[0]->membership_generation_seen(), left.generation);
  job.clients[0]->barrier("step", 20s);
  waiting.get();
  EXPECT_FALSE(job.clients[0]->posted_error().has_value());
  job.clients[0]->set("k", "v");   // the store still serves the job
  EXPECT_EQ(job.clients[1]->get("k", 5s), "v");
}

// A restarted process of a member replaces its predecessor (a new generation, the same
// members); the predecessor is refused from then on.
TEST(CoordinationElastic, ARestartedTaskRejoinsAndItsPredecessorIsRefused) {
  ElasticJob job(2, 1);
  job.start_together({0, 1});
  const Membership before = job.after(0, 0);
  std::unique_ptr<CoordinationClient> old = std::move(job.clients[1]);
  job.start(1).get();
  const Membership after = job.after(0, before.generation);
  EXPECT_EQ(after.members, (std::vector<int>{0, 1}));
  EXPECT_GT(after.generation, before.generation);
  const std::string refused = coordination_error_of([&] { old->set("k", "v"); });
  EXPECT_NE(refused.find("an earlier process of worker 1"), std::string::npos) << refused;
}

// Fewer than the minimum left is the job's error, naming the lost task and who is left.
TEST(CoordinationElastic, FewerThanTheMinimumFailsTheJobNamingWhy) {
  ElasticJob job(2, 2);
  job.start_together({0, 1});
  std::promise<std::string> failed;
  job.clients[0]->set_error_callback([&](const std::string& m) { failed.set_value(m); });
  job.clients[1].reset();
  auto message = failed.get_future();
  ASSERT_EQ(message.wait_for(20s), std::future_status::ready);
  const std::string m = message.get();
  EXPECT_NE(m.find("worker 1 (localhost:21001) sent no heartbeat"), std::string::npos) << m;
  EXPECT_NE(m.find("1 task(s) left (worker 0 (localhost:21000)), fewer than the 2"),
            std::string::npos) << m;
}

// A task whose collective broke on a closed connection reports a lost peer: for a while the
// service declares a member lost after suspicion_timeout() of silence (2 s here) instead of the
// heartbeat timeout (8 s). The message tells which rule dropped it; the live members, still
// heartbeating, stay.
TEST(CoordinationElastic, AReportedLostPeerIsDroppedAfterTheShorterSilence) {
  ElasticJob job(3, 3);   // min 3: the loss is the job's error, whose message says which rule
  job.options.heartbeat_timeout = 8000ms;
  job.service = CoordinationService::start("127.0.0.1:0", job.tasks, job.options);
  job.address = "127.0.0.1:" + std::to_string(job.service->port());
  ASSERT_EQ(job.options.suspicion_timeout(), 2000ms);
  job.start_together({0, 1, 2});
  ASSERT_EQ(job.after(0, 0).members, (std::vector<int>{0, 1, 2}));
  std::promise<std::string> failed;
  job.clients[1]->set_error_callback([&](const std::string& m) { failed.set_value(m); });
  // The live members outlast a suspicion window: heartbeats keep them in.
  job.clients[0]->report_lost_peer();
  std::this_thread::sleep_for(3000ms);
  EXPECT_FALSE(job.clients[0]->posted_error().has_value()) << *job.clients[0]->posted_error();
  job.clients[2].reset();   // killed: no more heartbeats
  job.clients[0]->report_lost_peer();
  auto message = failed.get_future();
  ASSERT_EQ(message.wait_for(20s), std::future_status::ready);
  const std::string m = message.get();
  EXPECT_NE(m.find("worker 2 (localhost:21002) sent no heartbeat for 2000 ms after another task's "
                   "connection to the job's collectives broke"),
            std::string::npos) << m;
}

// The membership keys are the service's: no task may write them.
TEST(CoordinationElastic, TasksCannotWriteTheMembershipKeys) {
  ElasticJob job(1, 1);
  job.start(0).get();
  for (const std::string key : {"strata/membership", "strata/membership/7"}) {
    const std::string m = coordination_error_of([&] { job.clients[0]->set(key, "9:0"); });
    EXPECT_NE(m.find("the coordination service's own"), std::string::npos) << m;
    coordination_error_of([&] { job.clients[0]->erase(key); });
    coordination_error_of([&] { job.clients[0]->add(key, 1); });
    coordination_error_of([&] { job.clients[0]->set_many({{"free", "x"}, {key, "9:0"}}); });
  }
  EXPECT_EQ(job.after(0, 0).members, (std::vector<int>{0}));
}

// Too few tasks ever: connect() ends at register_timeout naming the generation waited for.
TEST(CoordinationElastic, ConnectWithoutTheMinimumTimesOutSayingSo) {
  ElasticJob job(3, 2);
  job.options.register_timeout = 1500ms;
  const std::string m = coordination_error_of([&] { job.start(0).get(); });
  EXPECT_NE(m.find("no membership generation 1"), std::string::npos) << m;
  EXPECT_NE(m.find("fewer than elastic_min_tasks"), std::string::npos) << m;
}

// Once a member reached the shutdown barrier the training is over: a task that registers
// then (a worker restarted after the last step) is told so (JobFinishedError, which the apps
// turn into exit status 0), and heartbeats tell every task why.
TEST(CoordinationElastic, ATaskRegisteringAfterTheShutdownBarrierIsToldTheJobFinished) {
  ElasticJob job(3, 2);
  job.start_together({0, 1});
  EXPECT_EQ(job.after(0, 0).members, (std::vector<int>{0, 1}));
  EXPECT_EQ(job.clients[0]->job_finishing(), "");
  std::vector<std::future<void>> leaving;
  for (int i : {0, 1}) {
    CoordinationClient* c = job.clients[size_t(i)].get();
    leaving.push_back(std::async(std::launch::async, [c] { c->shutdown(); }));
  }
  for (auto& l : leaving) l.get();
  auto late = job.client(2);
  const std::string not_admitted = job.tasks[2].name() + " was not admitted";
  expect_error<JobFinishedError>([&] { late->connect(); },
                                 {"the job is finishing", "reached the shutdown barrier",
                                  not_admitted});
}

}  // namespace
}  // namespace strata::distribute
