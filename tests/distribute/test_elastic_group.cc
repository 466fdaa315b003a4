// ElasticGroup: a Gloo communicator per membership generation of an elastic coordination
// service (issue 28's second layer). Three tasks as threads of this process, each with its own
// CoordinationClient and group, over real gRPC and loopback TCP: a member that dies fails the
// survivors' collective, they form the next generation without it, and a task that joins is in
// the one after.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/elastic_group.h"
#include "distribute/errors.h"
#include "support/test_helpers.h"
#include "tests/distribute/coordination_test_util.h"
#include "tests/distribute/gloo_test_util.h"
#include "framework/core/tensor.h"

namespace strata::distribute {
namespace {

using namespace std::chrono_literals;
using testing::expect_error;

CoordinationOptions elastic_options() {
  CoordinationOptions options;
  options.heartbeat_interval = 100ms;
  options.heartbeat_timeout = 3000ms;  // a live task misses 30 heartbeats first: never, under load
  options.register_timeout = 30000ms;
  options.rpc_timeout = 10000ms;
  options.elastic_min_tasks = 2;
  options.elastic_grace = 200ms;
  return options;
}

// One task: its client and its group.
struct Task {
  Task(const std::string& address, const std::vector<CoordinationTask>& tasks, int i)
      : client(address, tasks[size_t(i)], tasks, elastic_options()) {}
  CoordinationClient client;
  std::unique_ptr<ElasticGroup> group;
  ElasticGroup::View view;
};

GlooOptions gloo_options() {
  GlooOptions options;
  options.timeout = 10000ms;
  options.rank_name = [](int task) { return "worker " + std::to_string(task); };
  return options;
}

// Starts task i (connects it and forms its first group) on its own thread.
std::future<void> start(std::unique_ptr<Task>& task, const std::string& address,
                        const std::vector<CoordinationTask>& tasks, int i) {
  task = std::make_unique<Task>(address, tasks, i);
  Task* t = task.get();
  return std::async(std::launch::async, [t] {
    t->client.connect();
    t->group = std::make_unique<ElasticGroup>(t->client, gloo_options());
    t->view = t->group->form(0, 30s);
  });
}

// Every listed task all-reduces a tensor of ones on its own thread; their sums.
std::vector<float> all_reduce_ones(std::vector<std::unique_ptr<Task>>& tasks,
                                   const std::vector<int>& which) {
  std::vector<std::future<float>> sums;
  for (int i : which) {
    Task* t = tasks[size_t(i)].get();
    sums.push_back(std::async(std::launch::async, [t] {
      Tensor x = Tensor::from_vector<float>({1.0f, 1.0f});
      t->view.communicator->all_reduce(x, ReduceOp::kSum);
      return x.to_vector<float>()[0];
    }));
  }
  std::vector<float> out;
  for (auto& s : sums) out.push_back(s.get());
  return out;
}

TEST(ElasticGroup, SurvivorsReformWithoutALostMemberAndTakeInOneThatJoins) {
  const std::vector<CoordinationTask> tasks = testing::worker_tasks(3, 22000);
  auto service = CoordinationService::start("127.0.0.1:0", tasks, elastic_options());
  const std::string address = "127.0.0.1:" + std::to_string(service->port());
  std::vector<std::unique_ptr<Task>> t(3);
  {
    std::vector<std::future<void>> up;
    for (int i = 0; i < 3; ++i) up.push_back(start(t[size_t(i)], address, tasks, i));
    for (auto& u : up) u.get();
  }
  const uint64_t first = t[0]->view.generation;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t[size_t(i)]->view.members, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(t[size_t(i)]->view.rank, i);
  }
  EXPECT_EQ(all_reduce_ones(t, {0, 1, 2}), (std::vector<float>{3, 3, 3}));

  // Task 2 dies: its connections close and its heartbeats stop.
  t[2]->view.communicator->abort("worker 2 was killed");
  t[2].reset();
  for (int i : {0, 1}) {
    Tensor x = Tensor::from_vector<float>({1.0f});
    EXPECT_THROW(t[size_t(i)]->view.communicator->all_reduce(x, ReduceOp::kSum), CoordinationError);
  }
  {
    std::vector<std::future<void>> reformed;
    for (int i : {0, 1}) {
      Task* s = t[size_t(i)].get();
      reformed.push_back(std::async(std::launch::async,
                                    [s] { s->view = s->group->form(s->view.generation, 30s); }));
    }
    for (auto& r : reformed) r.get();
  }
  EXPECT_GT(t[0]->view.generation, first);
  EXPECT_EQ(t[0]->view.generation, t[1]->view.generation);
  EXPECT_EQ(t[0]->view.members, (std::vector<int>{0, 1}));
  EXPECT_EQ(all_reduce_ones(t, {0, 1}), (std::vector<float>{2, 2}));
  EXPECT_FALSE(t[0]->client.posted_error().has_value());

  // A new process in slot 2 joins: the members see the change and re-form with it.
  const uint64_t survivors = t[0]->view.generation;
  auto joined = start(t[2], address, tasks, 2);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!(t[0]->group->changed(t[0]->view) && t[1]->group->changed(t[1]->view)) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(t[0]->group->changed(t[0]->view)) << "no heartbeat brought the new generation";
  {
    std::vector<std::future<void>> reformed;
    for (int i : {0, 1}) {
      Task* s = t[size_t(i)].get();
      reformed.push_back(std::async(std::launch::async,
                                    [s] { s->view = s->group->form(s->view.generation, 30s); }));
    }
    joined.get();
    for (auto& r : reformed) r.get();
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(t[size_t(i)]->view.generation, survivors);
    EXPECT_EQ(t[size_t(i)]->view.members, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_EQ(all_reduce_ones(t, {0, 1, 2}), (std::vector<float>{3, 3, 3}));
  // The generations left behind are gone from the store; the live one's keys are there.
  EXPECT_FALSE(t[0]->client.try_get("gloo/g" + std::to_string(first) + "/endpoints/2"));
  EXPECT_FALSE(t[0]->client.try_get("gloo/g" + std::to_string(survivors) + "/endpoints/0"));
  EXPECT_TRUE(t[0]->client.try_get("gloo/g" + std::to_string(t[0]->view.generation) +
                                   "/endpoints/0"));
}

// Task 2 dies while the first generation forms: after publishing its ends of the pairs, before
// dialing (its addresses compare larger, so the others listen for it). The others must give up
// on that generation once the service drops task 2 (a heartbeat timeout, 3 s) and form the next
// one without it. Before GlooOptions::abandon reached the connect wait, they waited in Gloo's
// connect 5x the rendezvous timeout (here 150 s, past form()'s 30 s: form() failed).
TEST(ElasticGroup, AMemberThatDiesWhileTheFirstGenerationFormsIsLeftOut) {
  const std::vector<CoordinationTask> tasks = testing::worker_tasks(3, 22200);
  CoordinationOptions all_three = elastic_options();
  all_three.elastic_grace = 60s;   // the first generation holds all three, however slow they come
  auto service = CoordinationService::start("127.0.0.1:0", tasks, all_three);
  const std::string address = "127.0.0.1:" + std::to_string(service->port());
  auto dying = std::make_unique<CoordinationClient>(address, tasks[2], tasks, elastic_options());
  std::vector<std::unique_ptr<Task>> t(3);
  std::vector<std::future<void>> up;
  for (int i : {0, 1}) {
    t[size_t(i)] = std::make_unique<Task>(address, tasks, i);
    Task* task = t[size_t(i)].get();
    up.push_back(std::async(std::launch::async, [task] {
      task->client.connect();
      GlooOptions options = gloo_options();
      options.timeout = 60000ms;
      task->group = std::make_unique<ElasticGroup>(task->client, options);
      task->view = task->group->form(0, 30s);
    }));
  }
  dying->connect();   // every slot up: generation 1 holds all three
  const CoordinationClient::Membership first = dying->membership_after(0, 20s);
  ASSERT_EQ(first.members, (std::vector<int>{0, 1, 2}));
  testing::publish_ends_that_never_dial(*dying, "gloo/g" + std::to_string(first.generation), 2,
                                       {0, 1});
  dying.reset();   // killed: no more heartbeats, never dials
  for (auto& u : up) u.get();
  for (int i : {0, 1}) {
    EXPECT_GT(t[size_t(i)]->view.generation, first.generation);
    EXPECT_EQ(t[size_t(i)]->view.members, (std::vector<int>{0, 1}));
  }
  EXPECT_EQ(all_reduce_ones(t, {0, 1}), (std::vector<float>{2, 2}));
}

// A task that registers after the last step (a worker restarted then) is a member of a
// generation nobody else forms: once a member reaches the shutdown barrier the job is
// finishing, its form() throws JobFinishedError at once (not after the rendezvous timeout), and
// its shutdown() lets the others' barrier complete.
TEST(ElasticGroup, ATaskWaitingToBeTakenInWhenTheJobFinishesLeavesThroughTheShutdownBarrier) {
  const std::vector<CoordinationTask> tasks = testing::worker_tasks(3, 22100);
  CoordinationOptions options = elastic_options();
  options.shutdown_timeout = 60000ms;
  auto service = CoordinationService::start("127.0.0.1:0", tasks, options);
  const std::string address = "127.0.0.1:" + std::to_string(service->port());
  std::vector<std::unique_ptr<Task>> t(3);
  {
    std::vector<std::future<void>> up;
    for (int i : {0, 1}) up.push_back(start(t[size_t(i)], address, tasks, i));
    for (auto& u : up) u.get();
  }
  EXPECT_EQ(t[0]->view.members, (std::vector<int>{0, 1}));
  // Task 2 registers (a new generation holds it) and waits for the others to re-form.
  auto joining = start(t[2], address, tasks, 2);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!t[0]->group->changed(t[0]->view) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(t[0]->group->changed(t[0]->view)) << "task 2 never registered";
  // The training is over: tasks 0 and 1 leave instead of re-forming.
  std::vector<std::future<void>> leaving;
  for (int i : {0, 1}) {
    CoordinationClient* c = &t[size_t(i)]->client;
    leaving.push_back(std::async(std::launch::async, [c] { c->shutdown(); }));
  }
  expect_error<JobFinishedError>([&] { joining.get(); },
                                 {"reached the shutdown barrier", "was not taken in"});
  t[2]->client.shutdown();   // what WorkerCluster does then: the barrier needs every member
  for (auto& l : leaving) EXPECT_NO_THROW(l.get());
  EXPECT_FALSE(t[0]->client.posted_error().has_value());
}

}  // namespace
}  // namespace strata::distribute
