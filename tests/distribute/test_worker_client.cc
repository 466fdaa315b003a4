// WorkerClient (the coordinator's side of a worker) against a scripted WorkerService over real
// gRPC: which status means the worker is gone (the closure is re-queued) and which is an error
// no retry fixes (raised from join, naming the worker, the function, the status and what to
// change), a result that does not decode, and a coordinator over such a worker that must not
// re-run a closure for ever (TensorFlow's _is_worker_failure: UNAVAILABLE, ABORTED, CANCELLED).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>

#include "distribute/errors.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/wire/worker_client.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;
namespace pb = distribute::parameter_server_pb;
using Kind = ClosureOutcome::Kind;

// A worker service whose answers the test sets: RunClosure with `run_status` (or, when OK,
// `run_response`), Prepare with `prepare_status`. Counts the calls.
class ScriptedWorker final : public pb::WorkerService::CallbackService {
 public:
  grpc::ServerUnaryReactor* RunClosure(grpc::CallbackServerContext* context,
                                       const pb::RunClosureRequest*,
                                       pb::RunClosureResponse* response) override {
    ++runs;
    grpc::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex);
      status = run_status;
      *response = run_response;
    }
    auto* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  grpc::ServerUnaryReactor* Prepare(grpc::CallbackServerContext* context,
                                    const pb::PrepareRequest*, pb::PrepareResponse*) override {
    ++prepares;
    grpc::Status status;
    {
      std::lock_guard<std::mutex> lock(mutex);
      status = prepare_status;
    }
    auto* reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
  }
  void answer_runs(grpc::Status status, pb::RunClosureResponse response = {}) {
    std::lock_guard<std::mutex> lock(mutex);
    run_status = std::move(status);
    run_response = std::move(response);
  }
  void answer_prepares(grpc::Status status) {
    std::lock_guard<std::mutex> lock(mutex);
    prepare_status = std::move(status);
  }
  std::atomic<int> runs{0}, prepares{0};

 private:
  std::mutex mutex;
  grpc::Status run_status, prepare_status;
  pb::RunClosureResponse run_response;
};

struct Scripted {
  Scripted() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
    address = "127.0.0.1:" + std::to_string(port);
  }
  ~Scripted() { server->Shutdown(std::chrono::system_clock::now() + 1s); }
  WorkerClient client() const {
    return WorkerClient("/job:worker/replica:0/task:3", address, options());
  }
  static ParameterServerOptions options() {
    ParameterServerOptions o;
    o.rpc_timeout = 10s;
    return o;
  }
  ScriptedWorker service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::string address;
};

Closure step() {
  Closure c;
  c.function = "train_step";
  return c;
}

void expect_mentions(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    EXPECT_NE(text.find(p), std::string::npos) << text << "\n  lacks: " << p;
  }
}

TEST(WorkerClient, OnlyAWorkersLossIsWorkerUnavailable) {
  Scripted s;
  WorkerClient client = s.client();
  for (grpc::StatusCode code : {grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::CANCELLED,
                                grpc::StatusCode::ABORTED}) {
    s.service.answer_runs(grpc::Status(code, "gone"));
    EXPECT_EQ(client.run(step()).kind, Kind::kWorkerUnavailable) << int(code);
  }
}

TEST(WorkerClient, ErrorsNoRetryFixesAreUserErrorsNamingWorkerFunctionAndStatus) {
  Scripted s;
  WorkerClient client = s.client();
  s.service.answer_runs(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                     "Sent message larger than max (300 vs. 256)"));
  ClosureOutcome out = client.run(step());
  EXPECT_EQ(out.kind, Kind::kUserError);
  EXPECT_EQ(out.error_type, "ResourceExhaustedError");
  expect_mentions(out.message, {"/job:worker/replica:0/task:3", s.address, "'train_step'",
                                "RESOURCE_EXHAUSTED", "max_message_bytes"});
  const std::vector<std::pair<grpc::StatusCode, std::string>> others = {
      {grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {grpc::StatusCode::UNIMPLEMENTED, "UNIMPLEMENTED"},
      {grpc::StatusCode::INTERNAL, "INTERNAL"},
      {grpc::StatusCode::UNKNOWN, "UNKNOWN"},
      {grpc::StatusCode::FAILED_PRECONDITION, "FAILED_PRECONDITION"}};
  for (const auto& [code, name] : others) {
    s.service.answer_runs(grpc::Status(code, "refused by the worker"));
    out = client.run(step());
    EXPECT_EQ(out.kind, Kind::kUserError) << name;
    EXPECT_EQ(out.error_type, "CoordinationError") << name;
    expect_mentions(out.message, {"/job:worker/replica:0/task:3", "'train_step'", name,
                                  "refused by the worker"});
  }
}

// OK, but a result that does not decode (an unknown dtype; bytes that do not match the
// shape): an error outcome, not an exception out of a function that must not throw (on the
// coordinator's worker thread that was std::terminate).
TEST(WorkerClient, ResultThatDoesNotDecodeIsAnErrorOutcome) {
  Scripted s;
  WorkerClient client = s.client();
  pb::RunClosureResponse bad_dtype;
  bad_dtype.set_kind(pb::RunClosureResponse::OK);
  bad_dtype.add_values()->set_dtype(pb::DataType(99));
  pb::RunClosureResponse bad_size;
  bad_size.set_kind(pb::RunClosureResponse::OK);
  pb::TensorProto* t = bad_size.add_values();
  t->set_dtype(pb::DT_FLOAT32);
  t->add_dims(1000000);
  t->set_data("abcd");
  for (const pb::RunClosureResponse& response : {bad_dtype, bad_size}) {
    s.service.answer_runs(grpc::Status::OK, response);
    ClosureOutcome out;
    ASSERT_NO_THROW(out = client.run(step()));
    EXPECT_EQ(out.kind, Kind::kUserError);
    expect_mentions(out.message, {"result 0 of 'train_step'", "/job:worker/replica:0/task:3"});
  }
}

TEST(WorkerClient, PrepareTellsALostWorkerFromARefusal) {
  Scripted s;
  WorkerClient client = s.client();
  s.service.answer_prepares(grpc::Status(grpc::StatusCode::UNAVAILABLE, "restarting"));
  EXPECT_FALSE(client.prepare(WorkerSetup{}));
  s.service.answer_prepares(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                         "model.model_json is not JSON"));
  try {
    client.prepare(WorkerSetup{});
    FAIL() << "an INVALID_ARGUMENT Prepare was taken as a lost worker";
  } catch (const CoordinationError& e) {
    expect_mentions(e.what(), {"INVALID_ARGUMENT", "model.model_json is not JSON",
                               "/job:worker/replica:0/task:3"});
  }
  s.service.answer_prepares(grpc::Status::OK);
  EXPECT_TRUE(client.prepare(WorkerSetup{}));
}

// A coordinator over a worker that answers every closure with an error retrying cannot fix:
// join() raises it once, and the closure ran once, not again and again (each run of a train
// step pushes its updates to the ps).
TEST(WorkerClient, CoordinatorDoesNotRerunAClosureAnErrorEnded) {
  for (grpc::StatusCode code : {grpc::StatusCode::RESOURCE_EXHAUSTED,
                                grpc::StatusCode::INVALID_ARGUMENT,
                                grpc::StatusCode::INTERNAL}) {
    Scripted s;
    s.service.answer_runs(grpc::Status(code, "no"));
    std::vector<std::unique_ptr<ClosureRunner>> workers;
    workers.push_back(std::make_unique<WorkerClient>("/job:worker/replica:0/task:3", s.address,
                                                     Scripted::options()));
    CoordinatorOptions options;
    options.worker_retry_interval_seconds = 0.02;
    ClusterCoordinator coordinator(std::move(workers), options);
    RemoteValue value = coordinator.schedule("train_step");
    auto joined = std::async(std::launch::async, [&] { coordinator.join(); });
    if (joined.wait_for(30s) != std::future_status::ready) {
      coordinator.report_fatal_error("the test: join() did not return");
    }
    EXPECT_THROW(joined.get(), Error) << int(code);
    EXPECT_EQ(value.state(), RemoteValue::State::kAborted);
    EXPECT_EQ(s.service.runs, 1) << "status " << int(code) << ": the closure was re-run";
    EXPECT_EQ(coordinator.closures_requeued(), 0);
  }
}

}  // namespace
}  // namespace strata::testing
