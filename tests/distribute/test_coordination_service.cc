// The coordination service over real gRPC on 127.0.0.1 (port 0: a free port per test): the
// key-value store, barriers, connect, errors posted and detected, shutdown, and requests no
// Strata client sends (fields missing, oversized, out of range; limits reached), sent through
// the generated stub; one test across two processes. Every wait in these tests is bounded; a
// failure names what it waited for.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/coordination.grpc.pb.h"
#include "distribute/cluster/coordination/coordination_client.h"
#include "distribute/cluster/coordination/coordination_service.h"
#include "distribute/collectives/gloo/gloo_communicator.h"
#include "distribute/collectives/nccl_support.h"
#include "tests/distribute/coordination_test_util.h"
#include "tests/framework/saving/child_process_util.h"


namespace strata::distribute {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::vector<CoordinationTask> workers(int n) { return testing::worker_tasks(n, 20000); }

CoordinationOptions fast_options() {
  CoordinationOptions options;
  options.heartbeat_interval = 100ms;
  options.heartbeat_timeout = 5000ms;  // generous: sanitizer builds on a loaded machine
  options.register_timeout = 20000ms;
  options.shutdown_timeout = 20000ms;
  options.rpc_timeout = 10000ms;
  return options;
}

template <class F>
std::string error_of(F&& f) {
  return testing::coordination_error_of(std::forward<F>(f));
}

template <class Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A service for `n` workers and one client per worker, not yet connected.
struct Job {
  explicit Job(int n, CoordinationOptions opts = fast_options())
      : tasks(workers(n)), options(opts) {
    service = CoordinationService::start("127.0.0.1:0", tasks, options);
    address = "127.0.0.1:" + std::to_string(service->port());
    for (int i = 0; i < n; ++i) clients.push_back(client(i));
  }
  std::unique_ptr<CoordinationClient> client(int i, CoordinationOptions opts) const {
    return std::make_unique<CoordinationClient>(address, tasks[i], tasks, opts);
  }
  std::unique_ptr<CoordinationClient> client(int i) const { return client(i, options); }
  // connect() returns once every task registered: each client connects on its own thread.
  void connect_all() {
    std::vector<std::future<void>> done;
    for (auto& c : clients) done.push_back(std::async(std::launch::async, [&c] { c->connect(); }));
    for (auto& d : done) d.get();
  }

  std::vector<CoordinationTask> tasks;
  CoordinationOptions options;
  std::unique_ptr<CoordinationService> service;
  std::string address;
  std::vector<std::unique_ptr<CoordinationClient>> clients;
};

TEST(CoordinationService, TaskNames) {
  EXPECT_EQ((CoordinationTask{"worker", 2, "localhost:20002"}.name()),
            "worker 2 (localhost:20002)");
  EXPECT_EQ((CoordinationTask{"chief", 0, ""}.name()), "chief 0");
}

TEST(CoordinationService, SetGetAcrossClients) {
  Job job(2);
  job.connect_all();
  job.clients[0]->set("greeting", "hello");
  EXPECT_EQ(job.clients[1]->get("greeting", 5s), "hello");
  EXPECT_EQ(job.clients[1]->try_get("greeting"), "hello");
  EXPECT_EQ(job.clients[1]->try_get("missing"), std::nullopt);
  job.clients[1]->set("greeting", "again");  // overwrites
  EXPECT_EQ(job.clients[0]->get("greeting", 5s), "again");
  job.clients[0]->erase("greeting");
  EXPECT_EQ(job.clients[1]->try_get("greeting"), std::nullopt);
  job.clients[0]->erase("greeting");  // erasing an unset key does nothing
}

TEST(CoordinationService, GetBlocksUntilAnotherClientSets) {
  Job job(2);
  job.connect_all();
  const auto start = Clock::now();
  auto value = std::async(std::launch::async, [&] { return job.clients[1]->get("late", 20s); });
  std::this_thread::sleep_for(300ms);
  job.clients[0]->set("late", "here");
  ASSERT_EQ(value.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(value.get(), "here");
  EXPECT_GE(Clock::now() - start, 300ms);
}

TEST(CoordinationService, GetTimeoutNamesTheKey) {
  Job job(2);
  job.connect_all();
  const auto start = Clock::now();
  const std::string message = error_of([&] { job.clients[0]->get("gloo/rank_1", 300ms); });
  EXPECT_TRUE(contains(message, "get('gloo/rank_1') timed out after 300 ms")) << message;
  EXPECT_GE(Clock::now() - start, 300ms);
  EXPECT_LT(Clock::now() - start, 300ms + job.options.rpc_timeout);   // its own deadline: no hang
}

TEST(CoordinationService, SetManyAndGetManyInOneRequestEach) {
  Job job(2);
  job.connect_all();
  job.clients[0]->set_many({{"pair/0/1", "a"}, {"pair/0/2", std::string("\0b", 2)},
                            {"pair/0/1", "last"}});   // a key listed twice keeps its last value
  EXPECT_EQ(job.clients[1]->get_many({"pair/0/2", "pair/0/1"}, 5s),
            (std::vector<std::string>{std::string("\0b", 2), "last"}));
  EXPECT_EQ(job.clients[1]->try_get("pair/0/1"), "last");
  EXPECT_EQ(job.clients[1]->get_many({}, 5s), std::vector<std::string>{});
  job.clients[0]->set_many({});
}

TEST(CoordinationService, GetManyWaitsForKeysSetLaterAndNamesOneStillMissing) {
  Job job(3);
  job.connect_all();
  job.clients[0]->set("k0", "zero");
  auto values = std::async(std::launch::async, [&] {
    return job.clients[2]->get_many({"k0", "k1", "k2"}, 20s);
  });
  std::this_thread::sleep_for(200ms);
  job.clients[1]->set_many({{"k2", "two"}, {"k1", "one"}});
  ASSERT_EQ(values.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(values.get(), (std::vector<std::string>{"zero", "one", "two"}));
  const auto start = Clock::now();
  const std::string message =
      error_of([&] { job.clients[0]->get_many({"k0", "never/1", "never/2"}, 300ms); });
  EXPECT_TRUE(contains(message, "get('never/1') timed out after")) << message;
  EXPECT_LT(Clock::now() - start, 300ms + job.options.rpc_timeout);   // its own deadline: no hang
}

TEST(CoordinationService, AddIsAtomicAcrossThreads) {
  Job job(2);
  job.connect_all();
  constexpr int kThreadsPerClient = 3, kAdds = 40;
  std::vector<std::future<std::vector<int64_t>>> results;
  for (auto& client : job.clients) {
    for (int t = 0; t < kThreadsPerClient; ++t) {
      results.push_back(std::async(std::launch::async, [&client] {
        std::vector<int64_t> seen;
        for (int i = 0; i < kAdds; ++i) seen.push_back(client->add("counter", 1));
        return seen;
      }));
    }
  }
  std::set<int64_t> all;
  for (auto& r : results) {
    for (int64_t v : r.get()) all.insert(v);
  }
  const int64_t total = 2 * kThreadsPerClient * kAdds;
  EXPECT_EQ(int64_t(all.size()), total);  // every add saw a value of its own
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), total);
  EXPECT_EQ(job.clients[0]->add("counter", -total), 0);
  EXPECT_EQ(job.clients[1]->get("counter", 1s), "0");
  job.clients[0]->set("text", "not a number");
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->add("text", 1); }), "not a decimal"));
}

TEST(CoordinationService, BinaryValues) {
  Job job(2);
  job.connect_all();
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(char(i));
  bytes += std::string("\0\0tail", 6);
  job.clients[0]->set("address", bytes);
  EXPECT_EQ(job.clients[1]->get("address", 5s), bytes);
  EXPECT_EQ(job.clients[1]->try_get("address"), bytes);
}

// MultiWorkerMirroredStrategy's NCCL set-up over the real store: worker 0's unique id (binary,
// made once) reaches worker 1 (no NCCL needed: the id is opaque), and a worker left waiting for
// an id that never comes is told which task to look at.
TEST(CoordinationService, CarriesTheNcclUniqueId) {
  Job job(2);
  job.connect_all();
  std::string id(128, '\0');
  for (size_t i = 0; i < id.size(); ++i) id[i] = char(255 - i);
  CrossProcessNcclOptions options;
  options.worker_name = [&](int w) { return job.tasks[size_t(w)].name(); };
  auto reader = std::async(std::launch::async, [&] {
    return exchange_nccl_unique_id(*job.clients[1], 1, 1, [] { return std::string(); }, 10s,
                                   options);
  });
  EXPECT_EQ(exchange_nccl_unique_id(*job.clients[0], 0, 1, [&] { return id; }, 10s, options), id);
  EXPECT_EQ(reader.get(), id);
  EXPECT_EQ(nccl_workers_missing(*job.clients[0], 2, options), "");
  options.generation = 1;  // worker 0 never publishes this one
  const std::string error = error_of([&] {
    exchange_nccl_unique_id(*job.clients[1], 1, 1, [] { return std::string(); }, 300ms, options);
  });
  EXPECT_TRUE(contains(error, "worker 0 (localhost:20000)")) << error;
  EXPECT_TRUE(contains(error, "nccl/1/unique_id")) << error;
  EXPECT_EQ(nccl_workers_missing(*job.clients[1], 2, options), "worker 0 (localhost:20000)");
}

TEST(CoordinationService, BarrierWithThreeClients) {
  Job job(3);
  job.connect_all();
  for (int round = 0; round < 2; ++round) {  // the same id again once it completed
    std::vector<std::future<void>> done;
    for (auto& c : job.clients) {
      done.push_back(std::async(std::launch::async, [&c] { c->barrier("epoch", 10s); }));
    }
    for (auto& d : done) {
      ASSERT_EQ(d.wait_for(15s), std::future_status::ready);
      d.get();
    }
  }
}

TEST(CoordinationService, BarrierTimeoutNamesExactlyTheMissingTask) {
  Job job(3);
  job.connect_all();
  auto first = std::async(std::launch::async, [&] {
    return error_of([&] { job.clients[0]->barrier("sync", 500ms); });
  });
  const std::string message = error_of([&] { job.clients[1]->barrier("sync", 500ms); });
  EXPECT_TRUE(contains(message, "barrier 'sync' timed out after 500 ms")) << message;
  EXPECT_TRUE(contains(message, "1 of 3 tasks did not reach it: worker 2 (localhost:20002)."))
      << message;
  EXPECT_FALSE(contains(message, "worker 0")) << message;
  EXPECT_FALSE(contains(message, "worker 1")) << message;
  EXPECT_EQ(first.get(), message);
  // The late task learns the barrier's failure at once instead of waiting alone.
  EXPECT_EQ(error_of([&] { job.clients[2]->barrier("sync", 10s); }), message);
}

TEST(CoordinationService, ClientsConnectBeforeTheServiceStarts) {
  auto tasks = workers(2);
  int port;
  {
    auto probe = CoordinationService::start("127.0.0.1:0", tasks, fast_options());
    port = probe->port();
  }
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::vector<std::unique_ptr<CoordinationClient>> clients;
  std::vector<std::future<void>> connected;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(
        std::make_unique<CoordinationClient>(address, tasks[i], tasks, fast_options()));
    connected.push_back(std::async(std::launch::async, [&c = *clients.back()] { c.connect(); }));
  }
  std::this_thread::sleep_for(1s);
  auto service = CoordinationService::start(address, tasks, fast_options());
  for (auto& c : connected) {
    ASSERT_EQ(c.wait_for(15s), std::future_status::ready);
    c.get();
  }
  clients[0]->set("up", "yes");
  EXPECT_EQ(clients[1]->get("up", 5s), "yes");
}

TEST(CoordinationService, ConnectTimeoutNamesTheMissingTask) {
  CoordinationOptions options = fast_options();
  options.register_timeout = 700ms;
  Job job(3, options);
  job.clients.pop_back();  // worker 2 never starts
  std::vector<std::future<std::string>> errors;
  for (auto& c : job.clients) {
    errors.push_back(
        std::async(std::launch::async, [&c] { return error_of([&] { c->connect(); }); }));
  }
  for (auto& e : errors) {
    ASSERT_EQ(e.wait_for(10s), std::future_status::ready);
    const std::string message = e.get();
    EXPECT_TRUE(contains(message, "connect: not every task registered within")) << message;
    EXPECT_TRUE(contains(message, "never came: worker 2 (localhost:20002).")) << message;
  }
}

TEST(CoordinationService, UnreachableServiceIsNamed) {
  auto tasks = workers(2);
  int port;
  {
    auto probe = CoordinationService::start("127.0.0.1:0", tasks, fast_options());
    port = probe->port();
  }
  CoordinationOptions options = fast_options();
  options.register_timeout = 500ms;
  const std::string address = "127.0.0.1:" + std::to_string(port);
  CoordinationClient client(address, tasks[1], tasks, options);
  const std::string message = error_of([&] { client.connect(); });
  EXPECT_TRUE(contains(message, "the coordination service at " + address +
                                    " (hosted by worker 0 (localhost:20000)) did not answer"))
      << message;
  // Calls other than connect() fail at once when nothing listens.
  EXPECT_TRUE(contains(error_of([&] { client.set("k", "v"); }), "is unreachable"));
}

TEST(CoordinationService, ReportedErrorReachesEveryClient) {
  Job job(3);
  job.connect_all();
  std::promise<std::string> callback_message;
  job.clients[2]->set_error_callback([&](const std::string& m) { callback_message.set_value(m); });
  auto pending_barrier = std::async(
      std::launch::async, [&] { return error_of([&] { job.clients[0]->barrier("never", 60s); }); });
  auto pending_get = std::async(
      std::launch::async, [&] { return error_of([&] { job.clients[2]->get("never", 60s); }); });
  std::this_thread::sleep_for(300ms);  // both parked on the service
  const auto posted_at = Clock::now();
  job.clients[1]->report_error("out of disk space");
  const std::string posted = "worker 1 (localhost:20001) reported an error: out of disk space";
  ASSERT_EQ(pending_barrier.wait_for(5s), std::future_status::ready);
  ASSERT_EQ(pending_get.wait_for(5s), std::future_status::ready);
  EXPECT_LT(Clock::now() - posted_at, 5s);
  EXPECT_TRUE(contains(pending_barrier.get(), posted));
  EXPECT_TRUE(contains(pending_get.get(), posted));
  auto callback = callback_message.get_future();
  ASSERT_EQ(callback.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(callback.get(), posted);
  for (auto& c : job.clients) {
    EXPECT_TRUE(eventually([&] { return c->posted_error() == posted; }, 5s)) << c->self().name();
  }
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set("k", "v"); }), posted));
  job.clients[0]->report_error("a consequence");  // the first error stays the job's
  EXPECT_EQ(job.clients[0]->posted_error(), posted);
}

TEST(CoordinationService, SilentTaskIsReportedDead) {
  CoordinationOptions options = fast_options();
  options.heartbeat_timeout = 1500ms;
  Job job(2, options);
  job.connect_all();
  std::promise<std::string> callback_message;
  job.clients[0]->set_error_callback([&](const std::string& m) { callback_message.set_value(m); });
  job.clients[1].reset();  // gone without shutdown(): no more heartbeats
  auto callback = callback_message.get_future();
  ASSERT_EQ(callback.wait_for(10s), std::future_status::ready);
  const std::string message = callback.get();
  EXPECT_TRUE(contains(message, "worker 1 (localhost:20001) sent no heartbeat for 1500 ms"))
      << message;
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->get("k", 10s); }), message));
}

TEST(CoordinationService, RestartedTaskIsReported) {
  Job job(2);
  job.connect_all();
  auto restarted = job.client(1);  // a new process for worker 1: a new incarnation
  EXPECT_NE(restarted->incarnation(), job.clients[1]->incarnation());
  const std::string message = error_of([&] { restarted->connect(); });
  EXPECT_TRUE(contains(message, "worker 1 (localhost:20001) restarted")) << message;
  EXPECT_TRUE(contains(message, "BackupAndRestore")) << message;
  EXPECT_TRUE(eventually(
      [&] {
        auto error = job.clients[0]->posted_error();
        return error && contains(*error, "worker 1 (localhost:20001) restarted");
      },
      5s));
}

TEST(CoordinationService, OversizedRequestsAreRefused) {
  CoordinationOptions options = fast_options();
  options.max_message_bytes = 64 << 10;
  Job job(2, options);
  CoordinationOptions larger = options;
  larger.max_message_bytes = 1 << 20;
  job.clients[1] = job.client(1, larger);  // misconfigured: allows more than the service
  job.connect_all();
  const std::string big(100 << 10, 'x');
  // Refused by the client itself, naming the limit ...
  const std::string local = error_of([&] { job.clients[0]->set("big", big); });
  EXPECT_TRUE(contains(local, "set('big'): the value is 102400 bytes")) << local;
  EXPECT_TRUE(contains(local, "max_message_bytes (65536)")) << local;
  // ... or by the service.
  const std::string remote = error_of([&] { job.clients[1]->set("big", big); });
  EXPECT_TRUE(contains(remote, "set('big'): the request was refused as too large")) << remote;
  job.clients[1]->set("small", "fine");  // the service is still fine
  EXPECT_EQ(job.clients[0]->get("small", 5s), "fine");
}

TEST(CoordinationService, InvalidRequestsAreRefused) {
  Job job(2);
  CoordinationClient stranger(job.address, {"ps", 0, "localhost:30000"}, job.tasks, job.options);
  const std::string unknown = error_of([&] { stranger.connect(); });
  EXPECT_TRUE(contains(unknown, "'ps' 0 is not a task of the cluster")) << unknown;
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set("k", "v"); }), "call connect() first"));
  job.connect_all();
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set("", "v"); }),
                       "set(''): field 'key' is empty"));
  EXPECT_TRUE(
      contains(error_of([&] { job.clients[0]->barrier("strata/connect", 1s); }), "reserved"));
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->barrier("", 1s); }),
                       "barrier '': field 'id' is empty"));
}

// ---- requests no Strata client sends: every field checked, every store bounded ----

namespace pb = coordination_pb;

// A raw stub on the job's service, and the ids of its tasks as the service knows them.
struct RawCaller {
  explicit RawCaller(const Job& job)
      : stub(pb::Coordination::NewStub(
            grpc::CreateChannel(job.address, grpc::InsecureChannelCredentials()))) {
    for (const auto& c : job.clients) incarnations.push_back(c->incarnation());
  }
  pb::TaskId task(int i) const {
    pb::TaskId id;
    id.set_job("worker");
    id.set_index(i);
    id.set_incarnation(incarnations[size_t(i)]);
    return id;
  }
  static std::unique_ptr<grpc::ClientContext> context() {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + 10s);
    return c;
  }
  grpc::Status set(const std::string& key, const std::string& value, int i = 0) {
    pb::SetRequest request;
    *request.mutable_task() = task(i);
    request.set_key(key);
    request.set_value(value);
    pb::SetResponse response;
    return stub->Set(context().get(), request, &response);
  }
  std::unique_ptr<pb::Coordination::Stub> stub;
  std::vector<uint64_t> incarnations;
};

void expect_status(const grpc::Status& status, grpc::StatusCode code, const std::string& part) {
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_TRUE(contains(status.error_message(), part)) << status.error_message() << "\nlacks: "
                                                      << part;
}

TEST(CoordinationServiceHostile, TaskFieldsAreChecked) {
  Job job(2);
  job.connect_all();
  RawCaller raw(job);
  pb::SetRequest set;
  set.set_key("k");
  pb::SetResponse set_response;
  expect_status(raw.stub->Set(raw.context().get(), set, &set_response),
                grpc::StatusCode::INVALID_ARGUMENT, "set('k'): field 'task' is missing");

  pb::RegisterRequest reg;
  pb::RegisterResponse reg_response;
  *reg.mutable_task() = raw.task(1);
  reg.mutable_task()->set_incarnation(0);
  expect_status(raw.stub->Register(raw.context().get(), reg, &reg_response),
                grpc::StatusCode::INVALID_ARGUMENT, "field 'task.incarnation' is 0");
  reg.mutable_task()->set_incarnation(5);
  reg.mutable_task()->set_index(-1);
  expect_status(raw.stub->Register(raw.context().get(), reg, &reg_response),
                grpc::StatusCode::INVALID_ARGUMENT, "field 'task.index' is -1");
  reg.mutable_task()->set_index(0);
  reg.mutable_task()->set_job(std::string(300, 'w'));
  expect_status(raw.stub->Register(raw.context().get(), reg, &reg_response),
                grpc::StatusCode::INVALID_ARGUMENT, "field 'task.job' is 300 bytes");
  // A task the cluster lacks, its name not UTF-8 (bytes on the wire; shown escaped).
  reg.mutable_task()->set_job("ps\xff\n");
  expect_status(raw.stub->Register(raw.context().get(), reg, &reg_response),
                grpc::StatusCode::INVALID_ARGUMENT,
                "'ps\\xff\\x0a' 0 is not a task of the cluster the coordination service serves");
  // None of it touched the job.
  EXPECT_TRUE(raw.set("still", "fine").ok());
  EXPECT_EQ(job.clients[1]->try_get("still"), "fine");
}

// Waits longer than kMaxCoordinationWait used to overflow the deadline's clock arithmetic.
TEST(CoordinationServiceHostile, KeysIdsAndWaitsAreBounded) {
  Job job(2);
  job.connect_all();
  RawCaller raw(job);
  expect_status(raw.set(std::string(5000, 'k'), "v"), grpc::StatusCode::INVALID_ARGUMENT,
                "field 'key' is 5000 bytes, more than the 4096 allowed");
  pb::BarrierRequest barrier;
  *barrier.mutable_task() = raw.task(0);
  barrier.set_id("b");
  pb::BarrierResponse barrier_response;
  for (const int64_t timeout : {int64_t(-1), std::numeric_limits<int64_t>::max(),
                                kMaxCoordinationWait.count() + 1}) {
    barrier.set_timeout_ms(timeout);
    expect_status(raw.stub->Barrier(raw.context().get(), barrier, &barrier_response),
                  grpc::StatusCode::INVALID_ARGUMENT,
                  "barrier 'b': field 'timeout_ms' is " + std::to_string(timeout) + " ms");
  }
  pb::GetRequest get;
  *get.mutable_task() = raw.task(0);
  get.set_key("k");
  get.set_wait(true);
  get.set_timeout_ms(std::numeric_limits<int64_t>::max());
  pb::GetResponse get_response;
  expect_status(raw.stub->Get(raw.context().get(), get, &get_response),
                grpc::StatusCode::INVALID_ARGUMENT, "get('k'): field 'timeout_ms'");
  get.set_wait(false);  // try_get: no wait, the timeout means nothing
  EXPECT_TRUE(raw.stub->Get(raw.context().get(), get, &get_response).ok());
  // The job is unharmed.
  EXPECT_TRUE(raw.set("still", "fine").ok());
}

// The client refuses such waits itself, before any clock arithmetic.
TEST(CoordinationServiceHostile, TheClientRefusesWaitsBeyondTheLimit) {
  Job job(2);
  job.connect_all();
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->get("k", std::chrono::hours(24 * 8)); }),
                       "get('k'): the timeout is 691200000 ms; a wait takes 0 to 604800000 ms"));
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->barrier("b", -1ms); }),
                       "barrier 'b': the timeout is -1 ms"));
}

TEST(CoordinationServiceHostile, TheStoreIsBounded) {
  CoordinationOptions options = fast_options();
  options.max_keys = 3;
  options.max_store_bytes = 100;
  Job job(2, options);
  job.connect_all();
  for (const char* key : {"a", "b", "c"}) job.clients[0]->set(key, "1");
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set("d", "1"); }),
                       "set('d'): the store holds 3 keys, its limit "
                       "(CoordinationOptions::max_keys)"));
  EXPECT_TRUE(contains(error_of([&] { job.clients[1]->add("d", 1); }), "max_keys"));
  job.clients[0]->set("a", "2");  // a key it holds may change
  job.clients[0]->erase("a");
  job.clients[0]->set("d", "1");  // erasing made room
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set("b", std::string(100, 'x')); }),
                       "set('b'): the store would hold 105 bytes, more than its limit (100"));
  EXPECT_EQ(job.clients[1]->try_get("b"), "1");
  // set_many stores every entry or none: the fourth key is refused, and so is the third.
  job.clients[0]->erase("d");
  EXPECT_TRUE(contains(error_of([&] { job.clients[0]->set_many({{"e", "1"}, {"f", "1"}}); }),
                       "set_many(2 keys): the store would hold 4 keys, more than its limit"));
  EXPECT_EQ(job.clients[1]->try_get("e"), std::nullopt);
  EXPECT_TRUE(contains(
      error_of([&] { job.clients[0]->set_many({{"e", "1"}, {"b", std::string(99, 'x')}}); }),
      "more than its limit (100, CoordinationOptions::max_store_bytes)"));
  EXPECT_EQ(job.clients[1]->try_get("e"), std::nullopt);
  job.clients[0]->set_many({{"e", "1"}});
  EXPECT_EQ(job.clients[1]->get_many({"e", "b"}, 1s), (std::vector<std::string>{"1", "1"}));
}

// A get_many whose values pass the message limit is answered in parts, never refused.
TEST(CoordinationServiceHostile, GetManyRepliesStayWithinTheMessageLimit) {
  CoordinationOptions options = fast_options();
  options.max_message_bytes = 64 << 10;
  Job job(2, options);
  job.connect_all();
  std::vector<std::pair<std::string, std::string>> entries;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) {
    entries.emplace_back("big/" + std::to_string(i), std::string(8 << 10, char('a' + i % 26)));
    keys.push_back(entries.back().first);
  }
  job.clients[0]->set_many(entries);   // 320 KiB: sent in several requests
  const std::vector<std::string> values = job.clients[1]->get_many(keys, 5s);
  ASSERT_EQ(values.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(values[i], entries[i].second) << keys[i];
}

// Gloo meshes of `n` ranks over the job's clients, each on its own thread; every rank's error,
// one a line ("" when every rank connected). The communicators live until every rank is done,
// as a job's do: one closed at once would close its connections under a rank still finishing
// its own rendezvous ("Connection closed by peer").
std::string gloo_rendezvous_errors(Job& job, int n, std::chrono::milliseconds timeout) {
  using Made = std::pair<std::string, std::unique_ptr<GlooCommunicator>>;
  std::vector<std::future<Made>> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.push_back(std::async(std::launch::async, [&job, r, n, timeout] {
      GlooOptions options;
      options.timeout = timeout;
      try {
        return Made{"", std::make_unique<GlooCommunicator>(*job.clients[size_t(r)], r, n, options)};
      } catch (const std::exception& e) {
        return Made{e.what(), nullptr};
      }
    }));
  }
  std::vector<Made> made;
  for (auto& rank : ranks) made.push_back(rank.get());
  std::string all;
  for (const Made& m : made) {
    if (!m.first.empty()) all += m.first + "\n";
  }
  return all;
}

// The Gloo mesh holds N(N-1) pair addresses in the store at once: with_room_for_rendezvous adds
// that to whatever limits the job set (at 257 workers the default max_keys would not do).
TEST(CoordinationServiceHostile, TheStoreHasRoomForTheGlooRendezvousOfTheJobsTasks) {
  CoordinationOptions tight = fast_options();
  tight.max_keys = 4;  // and bytes to spare: the key count is what runs out
  {
    Job job(4, tight);
    job.connect_all();
    // The rank whose set was refused says why; the others wait for it, then time out.
    const std::string errors = gloo_rendezvous_errors(job, 4, 1000ms);
    EXPECT_TRUE(contains(errors, "CoordinationOptions::max_keys")) << errors;
  }
  Job job(4, with_room_for_rendezvous(tight, 4));
  job.connect_all();
  EXPECT_EQ(gloo_rendezvous_errors(job, 4, 20000ms), "");

  const CoordinationOptions base;
  const CoordinationOptions big = with_room_for_rendezvous(base, 1024);
  EXPECT_EQ(big.max_keys, base.max_keys + 1024u * 1023u + 1024u);
  EXPECT_GE(big.max_store_bytes, base.max_store_bytes + 1024u * 1023u * 291u);
  EXPECT_EQ(with_room_for_rendezvous(base, 1).max_keys, base.max_keys + 1);
}

// The index of the first of `calls` to finish (bounded: -1 after 30 s).
template <class T>
int first_ready(std::vector<std::future<T>>& calls) {
  const auto deadline = Clock::now() + 30s;
  while (Clock::now() < deadline) {
    for (size_t k = 0; k < calls.size(); ++k) {
      if (calls[k].wait_for(10ms) == std::future_status::ready) return int(k);
    }
  }
  return -1;
}

TEST(CoordinationServiceHostile, ParkedWaitsAreBounded) {
  CoordinationOptions options = fast_options();
  options.max_waiting_calls = 3;
  Job job(2, options);
  job.connect_all();
  // Four gets of a key nobody has set yet: three park, whichever comes last is refused.
  std::vector<std::future<std::string>> gets;
  for (int k = 0; k < 4; ++k) {
    gets.push_back(std::async(std::launch::async, [&job, k] {
      try {
        return "value " + job.clients[size_t(k % 2)]->get("later", 20s);
      } catch (const CoordinationError& e) {
        return std::string(e.what());
      }
    }));
  }
  const int refused = first_ready(gets);
  ASSERT_GE(refused, 0);
  const std::string message = gets[size_t(refused)].get();
  EXPECT_TRUE(contains(message, "get('later'): 3 calls wait on the service already, its limit "
                                "(CoordinationOptions::max_waiting_calls)"))
      << message;
  job.clients[0]->set("later", "set");
  for (size_t k = 0; k < gets.size(); ++k) {
    if (int(k) != refused) {
      EXPECT_EQ(gets[k].get(), "value set");
    }
  }
}

TEST(CoordinationServiceHostile, BarrierIdsAreBounded) {
  CoordinationOptions options = fast_options();
  options.max_barriers = 2;
  Job job(2, options);
  job.connect_all();
  // Barriers that timed out are kept, so that a late task learns at once ...
  for (const char* id : {"f1", "f2"}) {
    EXPECT_TRUE(contains(error_of([&] { job.clients[0]->barrier(id, 0ms); }), "timed out"));
  }
  EXPECT_TRUE(contains(error_of([&] { job.clients[1]->barrier("f1", 10s); }),
                       "barrier 'f1' timed out after 0 ms"));
  // ... until their room is needed: three live ids, one more than the limit, from worker 0.
  std::vector<std::future<std::string>> waits;
  for (const char* id : {"one", "two", "three"}) {
    waits.push_back(std::async(std::launch::async, [&job, id] {
      try {
        job.clients[0]->barrier(id, 20s);
        return std::string("met ") + id;
      } catch (const CoordinationError& e) {
        return std::string(e.what());
      }
    }));
  }
  const int refused = first_ready(waits);
  ASSERT_GE(refused, 0);
  const std::string message = waits[size_t(refused)].get();
  EXPECT_TRUE(contains(message, "2 barriers are waited at already, the limit "
                                "(CoordinationOptions::max_barriers)"))
      << message;
  const char* ids[] = {"one", "two", "three"};
  for (size_t k = 0; k < 3; ++k) {
    if (int(k) == refused) continue;
    job.clients[1]->barrier(ids[k], 10s);
    EXPECT_EQ(waits[k].get(), std::string("met ") + ids[k]);
  }
}

TEST(CoordinationServiceHostile, AReportedErrorIsCutAndCleaned) {
  Job job(2);
  job.connect_all();
  job.clients[1]->report_error("bad\x1b[2Jthing" + std::string(100000, 'x'));
  const std::string error = job.clients[1]->posted_error().value_or("");
  EXPECT_TRUE(contains(error, "worker 1 (localhost:20001) reported an error: bad?[2Jthing")) << error;
  EXPECT_TRUE(contains(error, "... (cut: 100012 bytes)")) << error.substr(0, 200);
  EXPECT_LT(error.size(), kMaxReportedErrorBytes + 200);
}

TEST(CoordinationService, BindFailureNamesTheAddress) {
  auto first = CoordinationService::start("127.0.0.1:0", workers(1));
  const std::string taken = "127.0.0.1:" + std::to_string(first->port());
  const std::string message = error_of([&] { CoordinationService::start(taken, workers(1)); });
  EXPECT_TRUE(contains(message, "cannot listen on '" + taken + "'")) << message;
}

TEST(CoordinationService, ShutdownBarrier) {
  Job job(2);
  job.connect_all();
  std::vector<std::future<void>> done;
  for (auto& c : job.clients) {
    done.push_back(std::async(std::launch::async, [&c] { c->shutdown(); }));
  }
  for (auto& d : done) {
    ASSERT_EQ(d.wait_for(15s), std::future_status::ready);
    d.get();
  }
  job.service.reset();  // the service may go now: nobody reports it
  std::this_thread::sleep_for(300ms);
  for (auto& c : job.clients) EXPECT_EQ(c->posted_error(), std::nullopt);
}

TEST(CoordinationService, ShutdownTimeoutNamesTheMissingTask) {
  CoordinationOptions options = fast_options();
  options.shutdown_timeout = 500ms;
  Job job(2, options);
  job.connect_all();
  const std::string message = error_of([&] { job.clients[0]->shutdown(); });
  EXPECT_TRUE(contains(message, "shutdown: worker 1 (localhost:20001) did not reach")) << message;
}

TEST(CoordinationService, ServiceGoneIsReported) {
  CoordinationOptions options = fast_options();
  options.heartbeat_timeout = 1000ms;
  Job job(2, options);
  job.connect_all();
  job.service.reset();  // the chief died
  EXPECT_TRUE(eventually(
      [&] {
        auto error = job.clients[1]->posted_error();
        return error && contains(*error, "the coordination service at 127.0.0.1:") &&
               contains(*error, "is unreachable");
      },
      10s))
      << job.clients[1]->posted_error().value_or("no error");
}

// The child half of AcrossProcesses: worker 1 in a process of its own (this test binary run
// with a filter), skipped unless that test started it.
TEST(CoordinationChildProcess, Worker) {
  const char* address = std::getenv("STRATA_TEST_COORDINATION_ADDRESS");
  if (!address) GTEST_SKIP() << "run by CoordinationService.AcrossProcesses";
  CoordinationClient client(address, workers(2)[1], workers(2), fast_options());
  client.connect();
  client.set("child/address", std::string("\0\x01\xff", 3));
  ASSERT_EQ(client.get("parent/reply", 20s), "thanks");
  client.add("arrivals", 1);
  client.barrier("done", 20s);
  client.shutdown();
}

TEST(CoordinationService, AcrossProcesses) {
  auto tasks = workers(2);
  auto service = CoordinationService::start("127.0.0.1:0", tasks, fast_options());
  const std::string address = "127.0.0.1:" + std::to_string(service->port());

  const pid_t child = testing::spawn_test_in_child(
      "CoordinationChildProcess.Worker", {"STRATA_TEST_COORDINATION_ADDRESS=" + address},
      "/dev/null");
  ASSERT_GT(child, 0);

  CoordinationClient client(address, tasks[0], tasks, fast_options());
  client.connect();
  EXPECT_EQ(client.get("child/address", 20s), std::string("\0\x01\xff", 3));
  client.set("parent/reply", "thanks");
  client.add("arrivals", 1);
  client.barrier("done", 20s);
  EXPECT_EQ(client.try_get("arrivals"), "2");
  client.shutdown();

  int status = 0;
  const auto deadline = Clock::now() + 30s;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "the child process did not exit within 30 s";
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child (worker 1) failed: see its output above";
}

}  // namespace
}  // namespace strata::distribute
