// The worker service (a worker task's WorkerServer) called directly over gRPC with hand-made
// requests: malformed ones are INVALID_ARGUMENT naming the field (never a crash, never a large
// allocation); a call whose caller gave up while it waited behind a long step is dropped, not
// run; Ping answers while a step runs; a preempted worker answers ABORTED and lets its running
// closure finish; a result over max_message_bytes is an error saying so (the step ran once).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <regex>
#include <thread>

#include <strata/strata.h>

#include "distribute/cluster/loopback_address.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"
#include "distribute/parameter_server/wire/worker_service.h"

namespace strata::testing {
namespace {

using namespace distribute;
using namespace std::chrono_literals;
namespace pb = distribute::parameter_server_pb;

std::atomic<int> g_sleep_starts{0}, g_counted{0}, g_big_runs{0}, g_datasets_made{0};

// "ws_sleep" (sleeps args[0] ms), "ws_count", "ws_big" (a 2 MiB result), and the dataset
// function "ws_counting_data".
void register_functions() {
  register_step_function("ws_sleep", [](StepContext& ctx) {
    ++g_sleep_starts;
    std::this_thread::sleep_for(std::chrono::milliseconds(ctx.args.at(0).item<int64_t>()));
    return std::vector<Tensor>{};
  });
  register_step_function("ws_count", [](StepContext&) {
    ++g_counted;
    return std::vector<Tensor>{};
  });
  register_step_function("ws_big", [](StepContext&) {
    ++g_big_runs;
    return std::vector<Tensor>{zeros({512, 1024}, DType::kFloat32)};
  });
  register_dataset_function("ws_counting_data", [](const DatasetContext&) {
    ++g_datasets_made;
    return data::Dataset::from_tensor_slices({Tensor::from_vector(std::vector<float>{1, 2, 3})});
  });
}

ParameterServerOptions options() {
  ParameterServerOptions o;
  o.rpc_timeout = 10s;
  o.max_message_bytes = size_t(1) << 20;
  return o;
}

// One ps and one worker server in this process, and a raw stub to the worker.
struct Worker {
  Worker() {
    register_functions();
    ps = ParameterServer::start("localhost:0", options());
    ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
        {"ps", {"localhost:" + std::to_string(ps->port())}}, {"worker", {"localhost:1"}}});
    strategy = std::make_shared<ParameterServerStrategy>(spec, nullptr, options());
    server = WorkerServer::start("localhost:0", strategy, 0);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    // dialable_address, as the project's own channels: a raw channel would resolve "localhost"
    // with c-ares, which needs a DNS server (a fresh machine or a container may have none).
    stub = pb::WorkerService::NewStub(grpc::CreateCustomChannel(
        dialable_address("localhost:" + std::to_string(server->port())),
        grpc::InsecureChannelCredentials(), args));
  }
  grpc::Status run(const pb::RunClosureRequest& request, pb::RunClosureResponse* response,
                   std::chrono::milliseconds deadline = 10s) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    return stub->RunClosure(&context, request, response);
  }
  grpc::Status prepare(const pb::PrepareRequest& request, pb::PrepareResponse* response,
                       std::chrono::milliseconds deadline = 10s) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    return stub->Prepare(&context, request, response);
  }
  std::unique_ptr<ParameterServer> ps;
  std::shared_ptr<ParameterServerStrategy> strategy;
  std::unique_ptr<WorkerServer> server;
  std::unique_ptr<pb::WorkerService::Stub> stub;
};

pb::RunClosureRequest closure(const std::string& function, int64_t sleep_ms = -1) {
  pb::RunClosureRequest r;
  r.set_function(function);
  r.set_dataset_id(-1);
  if (sleep_ms >= 0) {
    pb::TensorProto* t = r.add_args();
    t->set_dtype(pb::DT_INT64);
    t->set_data(std::string(reinterpret_cast<const char*>(&sleep_ms), sizeof sleep_ms));
  }
  return r;
}

// A small real model's config, with `replace` applied (regex -> text).
std::string model_json(const std::string& pattern = "", const std::string& with = "") {
  auto model = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Layer>>{std::make_shared<Dense>(4)});
  model->build({-1, 3});
  const std::string json = model->to_json();
  return pattern.empty() ? json : std::regex_replace(json, std::regex(pattern), with);
}

void expect_invalid(const grpc::Status& status, const std::string& field) {
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << field << ": " << status.error_message();
  EXPECT_NE(status.error_message().find(field), std::string::npos) << status.error_message();
}

TEST(WorkerService, MalformedRunClosureIsInvalidArgumentNamingTheField) {
  Worker w;
  pb::RunClosureResponse response;
  expect_invalid(w.run(closure(""), &response), "function");
  expect_invalid(w.run(closure(std::string(5000, 'f')), &response), "function");
  pb::RunClosureRequest bad_dataset = closure("ws_count");
  bad_dataset.set_dataset_id(-7);
  expect_invalid(w.run(bad_dataset, &response), "dataset_id");
  // A tensor that claims 2^40 elements but carries 8 bytes: refused before any allocation.
  pb::RunClosureRequest huge = closure("ws_count");
  pb::TensorProto* t = huge.add_args();
  t->set_dtype(pb::DT_FLOAT32);
  t->add_dims(int64_t(1) << 40);
  t->set_data("12345678");
  expect_invalid(w.run(huge, &response), "args[0]");
  pb::RunClosureRequest bad_dtype = closure("ws_count");
  bad_dtype.add_args()->set_dtype(pb::DataType(77));
  expect_invalid(w.run(bad_dtype, &response), "args[0].dtype");
  EXPECT_EQ(g_counted, 0);
  // An unknown function is the caller's error, answered as such (ValueError naming it).
  ASSERT_TRUE(w.run(closure("no_such_step"), &response).ok());
  EXPECT_EQ(response.kind(), pb::RunClosureResponse::USER_ERROR);
  EXPECT_EQ(response.error_type(), "ValueError");
}

TEST(WorkerService, MalformedPrepareIsInvalidArgumentNamingTheField) {
  Worker w;
  pb::PrepareResponse response;
  pb::PrepareRequest request;
  request.add_datasets()->set_id(-1);
  expect_invalid(w.prepare(request, &response), "datasets[0].id");
  request.Clear();
  for (int i = 0; i < 2; ++i) {
    pb::PerWorkerDataset* d = request.add_datasets();
    d->set_id(5);
    d->set_function("ws_counting_data");
  }
  expect_invalid(w.prepare(request, &response), "datasets[1].id");
  request.Clear();
  request.add_datasets()->set_id(1);
  expect_invalid(w.prepare(request, &response), "datasets[0].function");
  const auto with_model = [](const std::string& json, const std::string& placement) {
    pb::PrepareRequest r;
    r.mutable_model()->set_model_json(json);
    r.mutable_model()->set_placement_json(placement);
    return r;
  };
  expect_invalid(w.prepare(with_model("", ""), &response), "model.model_json");
  expect_invalid(w.prepare(with_model("{\"class_name\": ", ""), &response), "model.model_json");
  expect_invalid(w.prepare(with_model(std::string(100000, '['), ""), &response),
                 "model.model_json");
  for (const std::string placement :
       {"[1, 2]", "{\"ps\": [], \"shards\": {}}", "{\"ps\": {\"dense/kernel\": 3}, \"shards\": {}}",
        "{\"ps\": {\"dense/kernel\": \"zero\"}, \"shards\": {}}",
        "{\"ps\": {}, \"shards\": {\"dense/kernel\": 0}}",
        "{\"ps\": {}, \"shards\": {\"dense/kernel\": 1e300}}", "{\"ps\": {}}"}) {
    expect_invalid(w.prepare(with_model(model_json(), placement), &response),
                   "model.placement_json");
  }
  EXPECT_EQ(g_datasets_made, 0);
}

// Valid JSON that is no model, or a model whose variable could never travel to its ps (a
// Dense of 4e9 parameters, 16 GB): an error answer, before anything that size is allocated.
TEST(WorkerService, ModelThatCannotBeBuiltIsAnErrorAnswerNotACrash) {
  Worker w;
  pb::PrepareResponse response;
  pb::PrepareRequest request;
  request.mutable_model()->set_model_json("{\"class_name\": \"NoSuchModel\", \"config\": {}}");
  ASSERT_TRUE(w.prepare(request, &response).ok());
  EXPECT_FALSE(response.error_message().empty());
  request.mutable_model()->set_model_json(
      model_json("\"units\": *4", "\"units\": 1000000000"));
  response.Clear();
  ASSERT_TRUE(w.prepare(request, &response).ok());
  EXPECT_EQ(response.error_type(), "ValueError") << response.error_message();
  EXPECT_NE(response.error_message().find("max_message_bytes"), std::string::npos)
      << response.error_message();
  // A real model still builds after that.
  request.mutable_model()->set_model_json(model_json());
  response.Clear();
  ASSERT_TRUE(w.prepare(request, &response).ok());
  EXPECT_EQ(response.error_message(), "");
}

// Calls queued behind a long step whose callers gave up meanwhile (their deadline passed) are
// dropped when their turn comes, not run: a closure the coordinator counted as failed must not
// run late, and stale Prepare calls must not pile up work.
TEST(WorkerService, CallsWhoseCallerGaveUpWhileTheyWaitedAreNotRun) {
  Worker w;
  g_sleep_starts = 0;
  g_counted = 0;
  g_datasets_made = 0;
  std::thread long_step([&] {
    pb::RunClosureResponse response;
    EXPECT_TRUE(w.run(closure("ws_sleep", 1500), &response).ok());
  });
  // The long step holds the worker before the others arrive.
  const auto start = std::chrono::steady_clock::now();
  while (g_sleep_starts == 0 && std::chrono::steady_clock::now() - start < 30s) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_GT(g_sleep_starts, 0);
  pb::RunClosureResponse run_response;
  EXPECT_EQ(w.run(closure("ws_count"), &run_response, 200ms).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  pb::PrepareRequest prepare;
  pb::PerWorkerDataset* d = prepare.add_datasets();
  d->set_id(1);
  d->set_function("ws_counting_data");
  pb::PrepareResponse prepare_response;
  EXPECT_EQ(w.prepare(prepare, &prepare_response, 200ms).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  long_step.join();
  // A call after them runs once they have had their turn.
  pb::RunClosureResponse after;
  ASSERT_TRUE(w.run(closure("ws_sleep", 0), &after).ok());
  EXPECT_EQ(g_counted, 0) << "the abandoned closure ran";
  EXPECT_EQ(g_datasets_made, 0) << "the abandoned Prepare ran";
}

TEST(WorkerService, PingAnswersWhileAClosureRuns) {
  Worker w;
  g_sleep_starts = 0;
  std::thread long_step([&] {
    pb::RunClosureResponse response;
    EXPECT_TRUE(w.run(closure("ws_sleep", 1000), &response).ok());
  });
  const auto start = std::chrono::steady_clock::now();
  while (g_sleep_starts == 0 && std::chrono::steady_clock::now() - start < 30s) {
    std::this_thread::sleep_for(2ms);
  }
  grpc::ClientContext context;
  pb::WorkerPingResponse ping;
  ASSERT_TRUE(w.stub->Ping(&context, pb::WorkerPingRequest(), &ping).ok());
  EXPECT_TRUE(ping.busy());
  EXPECT_EQ(ping.running(), "ws_sleep");
  long_step.join();
  grpc::ClientContext again;
  ASSERT_TRUE(w.stub->Ping(&again, pb::WorkerPingRequest(), &ping).ok());
  EXPECT_FALSE(ping.busy());
  EXPECT_EQ(ping.closures_run(), 1);
}

// Preempted: the closure running finishes and its result goes back; every other call is
// answered ABORTED (the coordinator re-queues the closure elsewhere), none runs.
TEST(WorkerService, PreemptedWorkerFinishesItsClosureAndAbortsTheRest) {
  Worker w;
  g_sleep_starts = 0;
  g_counted = 0;
  grpc::Status running_status;
  std::thread long_step([&] {
    pb::RunClosureResponse response;
    running_status = w.run(closure("ws_sleep", 500), &response);
  });
  const auto start = std::chrono::steady_clock::now();
  while (g_sleep_starts == 0 && std::chrono::steady_clock::now() - start < 30s) {
    std::this_thread::sleep_for(2ms);
  }
  grpc::Status waiting_status;
  std::thread waiting([&] {
    pb::RunClosureResponse response;
    waiting_status = w.run(closure("ws_count"), &response);
  });
  std::this_thread::sleep_for(50ms);  // usually queued behind the step; refused either way
  w.server->stop_taking_closures("the test preempted it");
  w.server->wait_until_idle();
  long_step.join();
  waiting.join();
  EXPECT_TRUE(running_status.ok()) << running_status.error_message();
  EXPECT_EQ(waiting_status.error_code(), grpc::StatusCode::ABORTED);
  pb::RunClosureResponse response;
  const grpc::Status later = w.run(closure("ws_count"), &response);
  EXPECT_EQ(later.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_NE(later.error_message().find("the test preempted it"), std::string::npos);
  EXPECT_EQ(g_counted, 0);
  EXPECT_EQ(w.server->closures_run(), 1);
}

// A result over max_message_bytes: an error answer naming the option (the step ran, once),
// not a failed call the coordinator would take for a lost worker and re-run.
TEST(WorkerService, ResultOverMaxMessageBytesIsAnErrorAnswer) {
  Worker w;
  g_big_runs = 0;
  pb::RunClosureResponse response;
  const grpc::Status status = w.run(closure("ws_big"), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.kind(), pb::RunClosureResponse::USER_ERROR);
  EXPECT_EQ(response.error_type(), "ResourceExhaustedError");
  EXPECT_NE(response.message().find("max_message_bytes"), std::string::npos) << response.message();
  EXPECT_EQ(g_big_runs, 1);
}

}  // namespace
}  // namespace strata::testing
