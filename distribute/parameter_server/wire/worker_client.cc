#include "distribute/parameter_server/wire/worker_client.h"

#include <mutex>
#include <set>
#include <sstream>

#include "distribute/errors.h"
#include "distribute/parameter_server/wire/error_transport.h"
#include "distribute/parameter_server/wire/ps_grpc.h"
#include "distribute/parameter_server/wire/tensor_wire.h"
#include "distribute/parameter_server/wire/worker_requests.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"

namespace strata::distribute {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;

namespace {

const char* status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    default: return "an unknown status";
  }
}

// The worker is gone (or going): another worker runs the closure.
bool worker_lost(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED ||
         code == grpc::StatusCode::ABORTED;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  std::ostringstream out;
  out << double(ms.count()) / 1000.0 << " s";
  return out.str();
}

}  // namespace

pb::RunClosureRequest run_closure_request(const Closure& closure) {
  pb::RunClosureRequest request;
  request.set_function(closure.function);
  for (const Tensor& t : closure.args) wire::to_proto(t, request.add_args());
  request.set_dataset_id(closure.dataset_id);
  return request;
}

pb::PrepareRequest prepare_request(const WorkerSetup& setup) {
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
  return request;
}

struct WorkerClient::Impl {
  std::string task;
  std::string address;
  ParameterServerOptions options;
  std::chrono::milliseconds closure_timeout;
  std::unique_ptr<pb::WorkerService::Stub> stub;

  std::mutex mutex;
  bool cancelled = false;
  std::set<grpc::ClientContext*> active;  // calls in flight, for cancel()
  std::string unavailable_reason;

  std::string describe() const { return task + " (" + address + ")"; }

  void deadline(grpc::ClientContext& context, std::chrono::milliseconds timeout) const {
    context.set_deadline(std::chrono::system_clock::now() + timeout);
  }

  // Registers `context` for cancel(); false when the client was cancelled already.
  bool begin(grpc::ClientContext* context) {
    std::lock_guard<std::mutex> lock(mutex);
    if (cancelled) return false;
    active.insert(context);
    return true;
  }
  void end(grpc::ClientContext* context) {
    std::lock_guard<std::mutex> lock(mutex);
    active.erase(context);
  }

  // A gRPC status that no retry fixes, as a user error naming what to change.
  ClosureOutcome call_error(const grpc::Status& status, const std::string& function) const {
    ClosureOutcome out;
    out.kind = ClosureOutcome::Kind::kUserError;
    const std::string what = "ClusterCoordinator: closure '" + function + "' on " + describe() +
                             " failed with gRPC status " + status_name(status.error_code()) +
                             ": " + status.error_message();
    if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      out.error_type = "ResourceExhaustedError";
      out.message = what + ". A request or result is over ParameterServerOptions::" +
                    "max_message_bytes (" + std::to_string(options.max_message_bytes) +
                    " bytes here): raise it on every task, or return smaller results. The "
                    "closure is not re-run (its step may have pushed its updates already)";
    } else {
      out.error_type = "CoordinationError";
      out.message = what + ". Not re-run: retrying cannot fix this, and the step may have "
                    "pushed its updates already (do every task run the same binary?)";
    }
    return out;
  }

  ClosureOutcome run(const Closure& closure, ClosureRunner& self) {
    const pb::RunClosureRequest request = run_closure_request(closure);
    pb::RunClosureResponse response;
    grpc::ClientContext context;
    if (closure_timeout.count() > 0) deadline(context, closure_timeout);
    ClosureOutcome out;
    if (!begin(&context)) {
      out.kind = ClosureOutcome::Kind::kWorkerUnavailable;
      out.message = "the coordinator is stopping";
      return out;
    }
    const grpc::Status status = stub->RunClosure(&context, request, &response);
    end(&context);
    if (!status.ok()) {
      const grpc::StatusCode code = status.error_code();
      if (worker_lost(code)) {
        out.kind = ClosureOutcome::Kind::kWorkerUnavailable;
        out.message = std::string(status_name(code)) + ": " + status.error_message();
        return out;
      }
      if (code == grpc::StatusCode::DEADLINE_EXCEEDED && closure_timeout.count() > 0) {
        // Too slow, or hung? A worker that still answers is running it (or just finished).
        if (self.probe() == Probe::kUnreachable) {
          out.kind = ClosureOutcome::Kind::kWorkerUnavailable;
          out.message = "it did not answer when closure '" + closure.function + "' reached "
                        "its deadline (CoordinatorOptions::closure_timeout_seconds = " +
                        seconds_text(closure_timeout) + ")";
          return out;
        }
        out.kind = ClosureOutcome::Kind::kTimedOut;
        out.message = "ClusterCoordinator: closure '" + closure.function + "' ran longer than " +
                      "CoordinatorOptions::closure_timeout_seconds (" +
                      seconds_text(closure_timeout) + ") on " + describe() +
                      ", which still answers and goes on with it. It is not re-run elsewhere "
                      "(its step may be applying updates); raise closure_timeout_seconds, or set "
                      "it to 0 for no limit (TensorFlow's behaviour: a dead or hung worker is "
                      "seen by keepalive)";
        return out;
      }
      return call_error(status, closure.function);
    }
    switch (response.kind()) {
      case pb::RunClosureResponse::OK:
        for (int i = 0; i < response.values_size(); ++i) {
          out.values.push_back(wire::from_proto(response.values(i),
                                                "result " + std::to_string(i) + " of '" +
                                                    closure.function + "' from " + describe(),
                                                options.max_message_bytes));
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
                      "' on " + describe() + ")";
        return out;
    }
  }
};

WorkerClient::WorkerClient(std::string task, std::string address, ParameterServerOptions options,
                           std::chrono::milliseconds closure_timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->task = std::move(task);
  impl_->address = std::move(address);
  impl_->options = options;
  impl_->closure_timeout = std::max(closure_timeout, std::chrono::milliseconds(0));
  impl_->stub =
      pb::WorkerService::NewStub(make_grpc_channel(impl_->address, channel_settings(options)));
}

WorkerClient::~WorkerClient() = default;

std::string WorkerClient::task() const { return impl_->describe(); }

ClosureOutcome WorkerClient::run(const Closure& closure) {
  try {
    return impl_->run(closure, *this);
  } catch (const std::exception&) {
    // A result that does not decode (or an argument that does not encode): the step ran, or
    // cannot run; either way no retry helps.
    const std::exception_ptr e = std::current_exception();
    ClosureOutcome out;
    out.kind = ClosureOutcome::Kind::kUserError;
    out.error_type = error_type_name(e);
    out.message = "ClusterCoordinator: closure '" + closure.function + "' on " +
                  impl_->describe() + ": " + error_message(e);
    return out;
  }
}

bool WorkerClient::prepare(const WorkerSetup& setup) {
  const pb::PrepareRequest request = prepare_request(setup);
  pb::PrepareResponse response;
  grpc::ClientContext context;
  impl_->deadline(context, impl_->options.rpc_timeout);
  if (!impl_->begin(&context)) return false;
  const grpc::Status status = impl_->stub->Prepare(&context, request, &response);
  impl_->end(&context);
  if (!status.ok()) {
    const grpc::StatusCode code = status.error_code();
    if (worker_lost(code) || code == grpc::StatusCode::DEADLINE_EXCEEDED) {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      impl_->unavailable_reason = std::string(status_name(code)) + ": " + status.error_message();
      return false;
    }
    const std::string what = impl_->describe() + " refused to get ready for closures with gRPC "
                             "status " + status_name(code) + ": " + status.error_message();
    if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      throw ResourceExhaustedError(what + ". The model's config is over ParameterServerOptions::"
                                   "max_message_bytes (" +
                                   std::to_string(impl_->options.max_message_bytes) +
                                   " bytes): raise it on every task");
    }
    throw CoordinationError(what + " (do every task run the same binary?)");
  }
  if (!response.error_message().empty()) {
    std::rethrow_exception(make_error(response.error_type(),
                                      response.error_message() + " (on " + impl_->describe() +
                                          ")"));
  }
  return true;
}

std::string WorkerClient::unavailable_reason() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->unavailable_reason;
}

ClosureRunner::Probe WorkerClient::probe() {
  pb::WorkerPingRequest request;
  pb::WorkerPingResponse response;
  grpc::ClientContext context;
  impl_->deadline(context, std::min(impl_->options.rpc_timeout, std::chrono::milliseconds(5000)));
  if (!impl_->begin(&context)) return Probe::kUnreachable;
  const grpc::Status status = impl_->stub->Ping(&context, request, &response);
  impl_->end(&context);
  if (!status.ok() || response.stopping()) return Probe::kUnreachable;
  return response.busy() ? Probe::kBusy : Probe::kIdle;
}

void WorkerClient::cancel() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->cancelled = true;
  for (grpc::ClientContext* context : impl_->active) context->TryCancel();
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
