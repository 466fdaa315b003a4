// The worker service (what a worker task of a parameter-server job serves) in this process,
// over loopback gRPC, fed random and mutated requests: one byte choosing the method (Prepare,
// RunClosure, Ping, Shutdown), then the request's protobuf bytes. Beside it, one in-process ps
// task hosts the variables a Prepare's model makes. Every request must be answered (an error
// status or an error answer are fine); a crash, a sanitizer report, a hang or an allocation
// past the fuzzer's limit is a finding.
//
// Cheap inputs: messages are capped at 64 KiB (so is every variable a hostile model config
// asks for), the step functions are quick, and each input starts from a worker that holds
// nothing (a Prepare{rebuild} first). The ps is started afresh every few thousand inputs, so
// the variables hostile configs leave there do not pile up.
//
// The seeds are real traffic: a ClusterCoordinator preparing this worker with a real compiled
// model (config, compile config, variable placement) and a per-worker dataset, and scheduling
// fit's train step and a step with arguments, recorded on their way (worker_requests.h, the
// coordinator's own encoding).
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_trainer.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/worker_client.h"
#include "distribute/parameter_server/wire/worker_requests.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"
#include "distribute/parameter_server/wire/worker_service.h"
#include "framework/saving/keras3_compile_config.h"
#include "fuzz/fuzz_support.h"

namespace {

namespace dist = strata::distribute;
namespace pb = strata::distribute::parameter_server_pb;

enum Method : uint8_t { kPrepare = 0, kRunClosure = 1, kPing = 2, kShutdown = 3, kMethods = 4 };

dist::ParameterServerOptions fuzz_options() {
  dist::ParameterServerOptions o;
  o.max_message_bytes = 64 << 10;
  o.rpc_timeout = std::chrono::seconds(10);
  o.connect_timeout = std::chrono::seconds(10);
  return o;
}

// "fuzz_data" (8 rows of 3 features and a label, batches of 4, repeated) and "fuzz_step" (its
// arguments back, and the next batch's first component when it has a dataset).
void register_functions() {
  dist::register_dataset_function("fuzz_data", [](const dist::DatasetContext&) {
    std::vector<float> x(24), y(8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 5) / 5.0f;
    for (size_t i = 0; i < y.size(); ++i) y[i] = float(i % 2);
    return strata::data::Dataset::from_tensor_slices(
               {strata::Tensor::from_vector(x, strata::Shape{8, 3}),
                strata::Tensor::from_vector(y, strata::Shape{8, 1})})
        .batch(4)
        .repeat();
  });
  dist::register_step_function("fuzz_step", [](dist::StepContext& ctx) {
    std::vector<strata::Tensor> out = ctx.args;
    if (ctx.iterator != nullptr) out.push_back(ctx.next().at(0));
    return out;
  });
}

// One ps and one worker task, served here for the whole run (never destroyed: the process
// ends without tearing gRPC down).
struct Cluster {
  std::unique_ptr<dist::ParameterServer> ps;
  int ps_port = 0;
  std::shared_ptr<dist::ParameterServerStrategy> strategy;
  std::unique_ptr<dist::WorkerServer> worker;
  std::string worker_address;
  std::unique_ptr<pb::WorkerService::Stub> stub;
  int64_t inputs = 0;

  Cluster() {
    register_functions();
    ps = dist::ParameterServer::start("127.0.0.1:0", fuzz_options());
    ps_port = ps->port();
    const dist::ClusterSpec spec(std::map<std::string, std::vector<std::string>>{
        {"ps", {"127.0.0.1:" + std::to_string(ps_port)}}, {"worker", {"127.0.0.1:1"}}});
    strategy = std::make_shared<dist::ParameterServerStrategy>(spec, nullptr, fuzz_options());
    worker = dist::WorkerServer::start("127.0.0.1:0", strategy, 0);
    worker_address = "127.0.0.1:" + std::to_string(worker->port());
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(1 << 20);
    args.SetMaxSendMessageSize(1 << 20);
    stub = pb::WorkerService::NewStub(grpc::CreateCustomChannel(
        worker_address, grpc::InsecureChannelCredentials(), args));
  }

  // The ps again, empty, on the same port (the worker's strategy dials that address).
  void restart_ps() {
    ps.reset();
    ps = dist::ParameterServer::start("127.0.0.1:" + std::to_string(ps_port), fuzz_options());
  }

  void call(uint8_t method, const std::string& bytes) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    switch (method % kMethods) {
      case kPrepare: {
        pb::PrepareRequest request;
        pb::PrepareResponse response;
        if (request.ParseFromString(bytes)) (void)stub->Prepare(&context, request, &response);
        break;
      }
      case kRunClosure: {
        pb::RunClosureRequest request;
        pb::RunClosureResponse response;
        if (request.ParseFromString(bytes)) (void)stub->RunClosure(&context, request, &response);
        break;
      }
      case kPing: {
        pb::WorkerPingRequest request;
        pb::WorkerPingResponse response;
        if (request.ParseFromString(bytes)) (void)stub->Ping(&context, request, &response);
        break;
      }
      case kShutdown: {
        pb::ShutdownRequest request;
        pb::ShutdownResponse response;
        if (request.ParseFromString(bytes)) (void)stub->Shutdown(&context, request, &response);
        break;
      }
    }
  }

  // A worker that holds nothing: each input starts from the same state.
  void reset() {
    pb::PrepareRequest request;
    request.set_rebuild(true);
    call(kPrepare, request.SerializeAsString());
  }
};

Cluster& cluster() {
  static Cluster* c = new Cluster();
  return *c;
}

std::string seed_bytes(Method method, const google::protobuf::Message& request) {
  return std::string(1, char(method)) + request.SerializeAsString();
}

// A ClosureRunner that records each request the coordinator sends, then sends it.
class Recorder final : public dist::ClosureRunner {
 public:
  Recorder(std::unique_ptr<dist::WorkerClient> client, std::vector<std::string>* seeds)
      : client_(std::move(client)), seeds_(seeds) {}
  std::string task() const override { return client_->task(); }
  dist::ClosureOutcome run(const dist::Closure& closure) override {
    record(seed_bytes(kRunClosure, dist::run_closure_request(closure)));
    return client_->run(closure);
  }
  bool prepare(const dist::WorkerSetup& setup) override {
    record(seed_bytes(kPrepare, dist::prepare_request(setup)));
    return client_->prepare(setup);
  }

 private:
  void record(std::string bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    seeds_->push_back(std::move(bytes));
  }
  std::unique_ptr<dist::WorkerClient> client_;
  std::vector<std::string>* seeds_;
  std::mutex mutex_;
};

}  // namespace

namespace strata::fuzz {

void write_seeds(const std::string& dir) {
  Cluster& c = cluster();
  std::vector<std::string> seeds;
  {
    // The coordinator's model: built and compiled in the strategy's scope (its variables on the
    // ps), described as set_model(const Model&) does.
    std::shared_ptr<Model> model;
    {
      auto scope = c.strategy->scope();
      set_random_seed(3);
      KerasTensor in = Input({3});
      KerasTensor h = Dense(4, "relu")(in);
      KerasTensor out = Dense(1, "sigmoid")(h);
      model = std::make_shared<Model>(in, out);
      model->compile(CompileOptions()
                         .optimizer(std::make_shared<optimizers::Adam>(0.01))
                         .loss(std::make_shared<losses::BinaryCrossentropy>())
                         .metrics({"accuracy"}));
      model->optimizer()->build(model->trainable_variables());
    }
    auto spec = std::make_shared<distribute::WorkerModelSpec>();
    spec->model_json = model->to_json();
    spec->compile_config_json = saving::keras3_compile_config(*model).dump();
    spec->placement_json = c.strategy->placement_json();
    std::vector<std::unique_ptr<distribute::ClosureRunner>> runners;
    runners.push_back(std::make_unique<Recorder>(
        std::make_unique<distribute::WorkerClient>("/job:worker/replica:0/task:0",
                                                   c.worker_address, fuzz_options()),
        &seeds));
    distribute::ClusterCoordinator coordinator(std::move(runners));
    coordinator.set_model(spec);
    distribute::PerWorkerIterator it = coordinator.create_per_worker_dataset("fuzz_data").iterator();
    const std::vector<Tensor> fit_args{Tensor::from_vector(std::vector<int64_t>{7, 0})};
    distribute::register_library_step_functions();
    for (int i = 0; i < 2; ++i) coordinator.schedule(distribute::kFitTrainStep, fit_args, &it);
    coordinator.schedule("fuzz_step",
                         {Tensor::from_vector(std::vector<float>{1, 2, 3}, Shape{3}),
                          Tensor::from_vector(std::vector<int64_t>{4}, Shape{})},
                         &it);
    coordinator.schedule("fuzz_step");
    coordinator.join();
  }
  int n = 0;
  for (const std::string& bytes : seeds) {
    write_seed(dir, "recorded_" + std::to_string(n++) + ".bin", bytes);
  }
  write_seed(dir, "ping.bin", seed_bytes(kPing, pb::WorkerPingRequest()));
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Cluster& c = cluster();
  if (++c.inputs % 4096 == 0) c.restart_ps();
  c.reset();
  c.call(data[0], std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
