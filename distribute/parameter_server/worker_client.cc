#include "distribute/parameter_server/worker_client.h"

#include "distribute/coordination/key_value_store.h"
#include "distribute/parameter_server/ps_grpc.h"
#include "distribute/parameter_server/error_transport.h"
#include "distribute/parameter_server/tensor_wire.h"
#include "distribute/parameter_server/worker_service.grpc.pb.h"

namespace strata::distribute {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;

struct WorkerClient::Impl {
  std::string task;
  std::string address;
  ParameterServerOptions options;
  std::chrono::milliseconds closure_timeout;
  std::unique_ptr<pb::WorkerService::Stub> stub;

  std::string describe() const { return task + " (" + address + ")"; }

  void deadline(grpc::ClientContext& context, std::chrono::milliseconds timeout) const {
    context.set_deadline(std::chrono::system_clock::now() + timeout);
  }
};

WorkerClient::WorkerClient(std::string task, std::string address, ParameterServerOptions options,
                           std::chrono::milliseconds closure_timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->task = std::move(task);
  impl_->address = std::move(address);
  impl_->options = options;
  impl_->closure_timeout = closure_timeout;
  impl_->stub =
      pb::WorkerService::NewStub(make_grpc_channel(impl_->address, channel_settings(options)));
}

WorkerClient::~WorkerClient() = default;

std::string WorkerClient::task() const { return impl_->describe(); }

ClosureOutcome WorkerClient::run(const Closure& closure) {
  pb::RunClosureRequest request;
  request.set_function(closure.function);
  for (const Tensor& t : closure.args) wire::to_proto(t, request.add_args());
  request.set_dataset_id(closure.dataset_id);
  pb::RunClosureResponse response;
  grpc::ClientContext context;
  impl_->deadline(context, impl_->closure_timeout);
  const grpc::Status status = impl_->stub->RunClosure(&context, request, &response);
  ClosureOutcome out;
  if (!status.ok()) {
    // The worker process died, was cut off, restarted (a new process knows nothing of this
    // call) or hung past the closure timeout: another worker runs the closure.
    out.kind = ClosureOutcome::Kind::kWorkerUnavailable;
    out.message = status.error_message();
    return out;
  }
  switch (response.kind()) {
    case pb::RunClosureResponse::OK:
      for (int i = 0; i < response.values_size(); ++i) {
        out.values.push_back(wire::from_proto(response.values(i),
                                              "result " + std::to_string(i) + " of '" +
                                                  closure.function + "'",
                                              impl_->options.max_message_bytes));
      }
      return out;
    case pb::RunClosureResponse::PS_UNAVAILABLE:
      out.kind = ClosureOutcome::Kind::kPsUnavailable;
      out.message = response.message();
      return out;
    default:
      out.kind = ClosureOutcome::Kind::kUserError;
      out.error_type = response.error_type();
      out.message = response.message() + " (raised by step function '" + closure.function +
                    "' on " + impl_->describe() + ")";
      return out;
  }
}

bool WorkerClient::prepare(const WorkerSetup& setup) {
  pb::PrepareRequest request;
  request.set_rebuild(setup.rebuild);
  for (const PerWorkerDatasetSpec& d : setup.datasets) {
    pb::PerWorkerDataset* out = request.add_datasets();
    out->set_id(d.id);
    out->set_function(d.function);
  }
  if (setup.model) {
    request.mutable_model()->set_model_json(setup.model->model_json);
    request.mutable_model()->set_compile_config_json(setup.model->compile_config_json);
    request.mutable_model()->set_placement_json(setup.model->placement_json);
  }
  pb::PrepareResponse response;
  grpc::ClientContext context;
  impl_->deadline(context, impl_->options.rpc_timeout);
  const grpc::Status status = impl_->stub->Prepare(&context, request, &response);
  if (!status.ok()) return false;
  if (!response.error_message().empty()) {
    std::rethrow_exception(make_error(response.error_type(),
                                      response.error_message() + " (on " + impl_->describe() +
                                          ")"));
  }
  return true;
}

void WorkerClient::shutdown() {
  pb::ShutdownRequest request;
  pb::ShutdownResponse response;
  grpc::ClientContext context;
  impl_->deadline(context, std::chrono::seconds(5));
  const grpc::Status status = impl_->stub->Shutdown(&context, request, &response);
  if (!status.ok()) {
    throw CoordinationError("shutdown: the worker " + impl_->describe() +
                            " did not answer: " + status.error_message());
  }
}

}  // namespace strata::distribute
