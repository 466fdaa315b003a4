#include "distribute/parameter_server/wire/parameter_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <utility>

#include "distribute/errors.h"
#include "distribute/parameter_server/wire/parameter_server.grpc.pb.h"
#include "distribute/parameter_server/wire/ps_grpc.h"
#include "distribute/parameter_server/wire/tensor_wire.h"

namespace strata::distribute {

namespace {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;
using std::chrono::milliseconds;

void fill(pb::VariablePush* push, const std::string& id, const std::vector<std::string>& slot_ids,
          const OptimizerUpdate& rule, const Gradient& grad) {
  push->set_id(id);
  for (const std::string& s : slot_ids) push->add_slot_ids(s);
  wire::to_proto(rule, push->mutable_rule());
  if (grad.is_sparse()) {
    const IndexedSlices& slices = grad.slices();
    push->set_sparse(true);
    const std::vector<int64_t> indices = slices.indices.cast(DType::kInt64).to_vector<int64_t>();
    push->mutable_indices()->Add(indices.begin(), indices.end());
    wire::to_proto(slices.values, push->mutable_rows());
  } else {
    // A shard has no dense value: to_dense() says so (variables on a ps take no shards).
    wire::to_proto(grad.to_dense(), push->mutable_dense_gradient());
  }
}

void fill(pb::AssignRequest* request, const std::string& id, const Tensor& value,
          AssignMode mode) {
  request->set_id(id);
  wire::to_proto(value, request->mutable_value());
  request->set_mode(mode == AssignMode::kAdd   ? pb::AssignRequest::ADD
                    : mode == AssignMode::kSub ? pb::AssignRequest::SUB
                                               : pb::AssignRequest::ASSIGN);
}

pb::ReadRequest read_request(const std::vector<std::string>& ids) {
  pb::ReadRequest request;
  for (const std::string& id : ids) request.add_ids(id);
  return request;
}

pb::ReadRowsRequest rows_request(const std::string& id, const std::vector<int64_t>& indices) {
  pb::ReadRowsRequest request;
  request.set_id(id);
  request.mutable_indices()->Add(indices.begin(), indices.end());
  return request;
}

// A step's writes as one ApplyUpdate request (assignments first).
pb::ApplyUpdateRequest write_request(const std::vector<PendingAssign>& assigns,
                                     const std::vector<PendingPush>& pushes) {
  pb::ApplyUpdateRequest request;
  for (const PendingAssign& a : assigns) fill(request.add_assigns(), a.id, a.value, a.mode);
  for (const PendingPush& p : pushes) fill(request.add_pushes(), p.id, p.slot_ids, p.rule, p.grad);
  return request;
}

std::string write_operation(size_t assigns, size_t pushes) {
  return "ApplyUpdate of a step's " + std::to_string(assigns) + " assignment(s) and " +
         std::to_string(pushes) + " update(s)";
}

}  // namespace

struct ParameterClient::Impl {
  Impl(std::string task_name, std::string addr, ParameterServerOptions opts)
      : task(std::move(task_name)),
        address(std::move(addr)),
        options(opts),
        stub(pb::ParameterService::NewStub(
            make_grpc_channel(address, channel_settings(opts)))) {}

  const std::string task;
  const std::string address;
  const ParameterServerOptions options;
  const std::unique_ptr<pb::ParameterService::Stub> stub;
  std::atomic<int64_t> sent{0}, received{0}, calls{0};

  std::string describe() const { return task + " (" + address + ")"; }

  [[noreturn]] void fail(const std::string& operation, const grpc::Status& status) const {
    const std::string& message = status.error_message();
    const std::string ps = "the parameter server " + describe();
    switch (status.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        throw CoordinationError(
            operation + ": " + ps + " is unreachable (" + message +
            "): check that the ps task runs and that the cluster spec's address for it is "
            "right. A ps that failed lost its variables: restart the job (from the last "
            "checkpoint)");
      case grpc::StatusCode::DEADLINE_EXCEEDED:
      case grpc::StatusCode::CANCELLED:
        throw CoordinationError(operation + ": " + ps + " did not answer within " +
                                std::to_string(options.rpc_timeout.count()) +
                                " ms (ParameterServerOptions::rpc_timeout): it hangs, is "
                                "overloaded or unreachable");
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        throw CoordinationError(
            operation + " on " + ps + ": the message was refused as too large (" + message +
            "): the ps and every task allow ParameterServerOptions::max_message_bytes per "
            "message; shard the variable (a variable_partitioner) or raise the limit on all "
            "of them alike");
      default:   // INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS: the service's message names it
        throw CoordinationError(operation + " on " + ps + ": " + message);
    }
  }

  // Runs `rpc` with the deadline; counts the bytes; CoordinationError when it fails.
  template <class Request, class Response, class Rpc>
  void call(const std::string& operation, const Request& request, Response* response, Rpc rpc) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options.rpc_timeout);
    sent += int64_t(request.ByteSizeLong());
    ++calls;
    const grpc::Status status = (stub.get()->*rpc)(&context, request, response);
    if (!status.ok()) fail(operation, status);
    received += int64_t(response->ByteSizeLong());
  }

  // Starts `prepare`'s call (the stub's PrepareAsync<Method>) in `group` with the deadline;
  // on its reply, wait() calls on_reply(response), after the status is checked.
  template <class Request, class Response, class Prepare, class OnReply>
  void start_in(ParallelCalls& group, std::string operation, const Request& request,
                Prepare prepare, OnReply on_reply);
  // A reply's tensor, checked like a request's (a ps of another version cannot crash us).
  Tensor tensor(const pb::TensorProto& proto, const std::string& what) const {
    try {
      return wire::from_proto(proto, what, options.max_message_bytes);
    } catch (const Error& e) {
      throw CoordinationError("the parameter server " + describe() + " sent a malformed reply: " +
                              e.what());
    }
  }
};

struct ParallelCalls::Impl {
  // One call in flight; its address is its tag on the completion queue.
  struct Call {
    virtual ~Call() = default;
    // On the reply (the status set): converts it, or keeps the failure.
    virtual void complete() = 0;
    grpc::ClientContext context;
    grpc::Status status;
    std::exception_ptr error;
  };
  template <class Response, class OnReply>
  struct TypedCall final : Call {
    explicit TypedCall(OnReply f) : on_reply(std::move(f)) {}
    void complete() override {
      try {
        on_reply(status, response);
      } catch (...) {
        error = std::current_exception();
      }
    }
    Response response;
    std::unique_ptr<grpc::ClientAsyncResponseReader<Response>> reader;
    OnReply on_reply;
  };

  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<Call>> calls;
  size_t outstanding = 0;

  // Takes replies until none is outstanding (each call ends by its deadline at the latest).
  void drain() {
    while (outstanding > 0) {
      void* tag = nullptr;
      bool ok = false;
      if (!queue.Next(&tag, &ok)) break;  // shut down: cannot happen before outstanding is 0
      --outstanding;
      static_cast<Call*>(tag)->complete();
    }
  }
};

ParallelCalls::ParallelCalls() : impl_(std::make_unique<Impl>()) {}

ParallelCalls::~ParallelCalls() {
  for (auto& call : impl_->calls) {
    if (impl_->outstanding > 0) call->context.TryCancel();
  }
  impl_->drain();
  impl_->queue.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (impl_->queue.Next(&tag, &ok)) {
  }
}

void ParallelCalls::wait() {
  impl_->drain();
  for (auto& call : impl_->calls) {
    if (call->error) std::rethrow_exception(call->error);
  }
}

template <class Request, class Response, class Prepare, class OnReply>
void ParameterClient::Impl::start_in(ParallelCalls& group, std::string operation,
                                     const Request& request, Prepare prepare, OnReply on_reply) {
  auto done = [this, operation = std::move(operation), on_reply = std::move(on_reply)](
                  const grpc::Status& status, const Response& response) {
    if (!status.ok()) fail(operation, status);
    received += int64_t(response.ByteSizeLong());
    on_reply(response);
  };
  using Call = ParallelCalls::Impl::TypedCall<Response, decltype(done)>;
  auto call = std::make_unique<Call>(std::move(done));
  call->context.set_deadline(std::chrono::system_clock::now() + options.rpc_timeout);
  sent += int64_t(request.ByteSizeLong());
  ++calls;
  ParallelCalls::Impl& g = *group.impl_;
  call->reader = prepare(stub.get(), &call->context, request, &g.queue);
  call->reader->StartCall();
  call->reader->Finish(&call->response, &call->status, static_cast<ParallelCalls::Impl::Call*>(call.get()));
  g.calls.push_back(std::move(call));
  ++g.outstanding;
}

ParameterClient::ParameterClient(std::string task, std::string address,
                                 ParameterServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(task), std::move(address), options)) {}

ParameterClient::~ParameterClient() = default;

bool ParameterClient::create_variable(const std::string& id, const std::string& name,
                                      const Tensor& initial_value, bool trainable) {
  pb::CreateVariableRequest request;
  request.set_id(id);
  request.set_name(name);
  request.set_trainable(trainable);
  wire::to_proto(initial_value, request.mutable_initial_value());
  pb::CreateVariableResponse response;
  impl_->call("CreateVariable '" + name + "'", request, &response,
              &pb::ParameterService::Stub::CreateVariable);
  return response.created();
}

void ParameterClient::attach_variable(const std::string& id, const std::string& name,
                                      const Shape& shape, DType dtype) {
  pb::CreateVariableRequest request;
  request.set_id(id);
  request.set_name(name);
  request.set_attach(true);
  request.mutable_initial_value()->set_dtype(wire::to_proto(dtype));
  for (int64_t d : shape.dims()) request.mutable_initial_value()->add_dims(d);
  pb::CreateVariableResponse response;
  impl_->call("CreateVariable '" + name + "' (attach)", request, &response,
              &pb::ParameterService::Stub::CreateVariable);
}

// A Read reply's values, one per id, each checked.
std::vector<Tensor> ParameterClient::values_of(const Impl& impl,
                                              const std::vector<std::string>& ids,
                                              const parameter_server_pb::ReadResponse& response) {
  if (size_t(response.values_size()) != ids.size()) {
    throw CoordinationError("Read: the parameter server " + impl.describe() + " returned " +
                            std::to_string(response.values_size()) + " values for " +
                            std::to_string(ids.size()) + " ids");
  }
  std::vector<Tensor> out;
  out.reserve(ids.size());
  for (int i = 0; i < response.values_size(); ++i) {
    out.push_back(impl.tensor(response.values(i), "Read value of '" + ids[size_t(i)] + "'"));
  }
  return out;
}

std::shared_ptr<std::vector<Tensor>> ParameterClient::read_in(
    ParallelCalls& calls, const std::vector<std::string>& ids) {
  auto out = std::make_shared<std::vector<Tensor>>();
  const Impl* impl = impl_.get();
  impl_->start_in<pb::ReadRequest, pb::ReadResponse>(
      calls, "Read", read_request(ids),
      [](pb::ParameterService::Stub* stub, grpc::ClientContext* context,
         const pb::ReadRequest& request, grpc::CompletionQueue* queue) {
        return stub->PrepareAsyncRead(context, request, queue);
      },
      [impl, ids, out](const pb::ReadResponse& response) {
        *out = values_of(*impl, ids, response);
      });
  return out;
}

std::vector<Tensor> ParameterClient::read(const std::vector<std::string>& ids) {
  pb::ReadResponse response;
  impl_->call("Read", read_request(ids), &response, &pb::ParameterService::Stub::Read);
  return values_of(*impl_, ids, response);
}

std::shared_ptr<Tensor> ParameterClient::read_rows_in(ParallelCalls& calls, const std::string& id,
                                                     const std::vector<int64_t>& indices) {
  auto out = std::make_shared<Tensor>();
  const Impl* impl = impl_.get();
  impl_->start_in<pb::ReadRowsRequest, pb::ReadRowsResponse>(
      calls, "ReadRows of '" + id + "'", rows_request(id, indices),
      [](pb::ParameterService::Stub* stub, grpc::ClientContext* context,
         const pb::ReadRowsRequest& request, grpc::CompletionQueue* queue) {
        return stub->PrepareAsyncReadRows(context, request, queue);
      },
      [impl, id, out](const pb::ReadRowsResponse& response) {
        *out = impl->tensor(response.rows(), "ReadRows of '" + id + "'");
      });
  return out;
}

Tensor ParameterClient::read_rows(const std::string& id, const std::vector<int64_t>& indices) {
  pb::ReadRowsResponse response;
  impl_->call("ReadRows of '" + id + "'", rows_request(id, indices), &response,
              &pb::ParameterService::Stub::ReadRows);
  return impl_->tensor(response.rows(), "ReadRows of '" + id + "'");
}

void ParameterClient::apply_update(const std::string& id, const std::vector<std::string>& slot_ids,
                                   const OptimizerUpdate& rule, const Gradient& grad) {
  pb::ApplyUpdateRequest request;
  fill(request.add_pushes(), id, slot_ids, rule, grad);
  pb::ApplyUpdateResponse response;
  impl_->call("ApplyUpdate of '" + id + "'", request, &response,
              &pb::ParameterService::Stub::ApplyUpdate);
}

void ParameterClient::assign(const std::string& id, const Tensor& value, AssignMode mode) {
  pb::AssignRequest request;
  fill(&request, id, value, mode);
  pb::AssignResponse response;
  impl_->call("Assign of '" + id + "'", request, &response, &pb::ParameterService::Stub::Assign);
}

void ParameterClient::write_in(ParallelCalls& calls, const std::vector<PendingAssign>& assigns,
                               const std::vector<PendingPush>& pushes) {
  if (assigns.empty() && pushes.empty()) return;
  impl_->start_in<pb::ApplyUpdateRequest, pb::ApplyUpdateResponse>(
      calls, write_operation(assigns.size(), pushes.size()), write_request(assigns, pushes),
      [](pb::ParameterService::Stub* stub, grpc::ClientContext* context,
         const pb::ApplyUpdateRequest& request, grpc::CompletionQueue* queue) {
        return stub->PrepareAsyncApplyUpdate(context, request, queue);
      },
      [](const pb::ApplyUpdateResponse&) {});
}

void ParameterClient::write(const std::vector<PendingAssign>& assigns,
                            const std::vector<PendingPush>& pushes) {
  if (assigns.empty() && pushes.empty()) return;
  pb::ApplyUpdateResponse response;
  impl_->call(write_operation(assigns.size(), pushes.size()), write_request(assigns, pushes),
              &response, &pb::ParameterService::Stub::ApplyUpdate);
}

int64_t ParameterClient::fetch_add(const std::string& id, int64_t delta) {
  pb::FetchAddRequest request;
  request.set_id(id);
  request.set_delta(delta);
  pb::FetchAddResponse response;
  impl_->call("FetchAdd of '" + id + "'", request, &response,
              &pb::ParameterService::Stub::FetchAdd);
  return response.previous();
}

void ParameterClient::shutdown() {
  pb::ShutdownRequest request;
  pb::ShutdownResponse response;
  impl_->call("Shutdown", request, &response, &pb::ParameterService::Stub::Shutdown);
}

void ParameterClient::wait_until_ready(std::chrono::milliseconds timeout) {
  // wait_for_ready: the call waits (to its deadline) for a ps that is not listening yet, instead
  // of failing at the first refused connection.
  pb::PingRequest request;
  pb::PingResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  context.set_wait_for_ready(true);
  const grpc::Status status = impl_->stub->Ping(&context, request, &response);
  if (status.ok()) return;
  throw CoordinationError(
      "the parameter server " + impl_->describe() + " did not come up within " +
      std::to_string(timeout.count()) + " ms (ParameterServerOptions::connect_timeout; " +
      status.error_message() + "): start the ps task (it runs Server(...).join()), or fix its "
      "address in the cluster spec");
}

void ParameterClient::ping() {
  pb::PingRequest request;
  pb::PingResponse response;
  impl_->call("Ping", request, &response, &pb::ParameterService::Stub::Ping);
}

const std::string& ParameterClient::task() const { return impl_->task; }
const std::string& ParameterClient::address() const { return impl_->address; }
std::string ParameterClient::describe() const { return impl_->describe(); }
int64_t ParameterClient::bytes_sent() const { return impl_->sent.load(); }
int64_t ParameterClient::bytes_received() const { return impl_->received.load(); }
int64_t ParameterClient::calls() const { return impl_->calls.load(); }

}  // namespace strata::distribute
