#include "distribute/parameter_server/parameter_service.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "distribute/coordination/key_value_store.h"
#include "distribute/grpc_security.h"
#include "distribute/parameter_server/ps_grpc.h"
#include "distribute/parameter_server/parameter_server.grpc.pb.h"
#include "distribute/parameter_server/tensor_wire.h"
#include "framework/core/error.h"
#include "framework/variables/variable.h"

namespace strata::distribute {

namespace {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;

// A refusal with its gRPC status; everything the handlers throw becomes one (see answer()).
struct Refused {
  grpc::StatusCode code;
  std::string message;
};

// One hosted variable. `mutex` guards its value and counters: an update holds it for the
// variable and each of its slots (asynchronous pushes from several workers never interleave
// inside one variable's update).
struct Hosted {
  std::string id;
  std::shared_ptr<Variable> variable;
  std::mutex mutex;
  HostedVariableCounters counters;

  std::string describe() const { return "variable '" + variable->name() + "' (id '" + id + "')"; }
};

std::string shape_and_dtype(const Shape& shape, DType dtype) {
  return shape.to_string() + " " + dtype_name(dtype);
}

// How many slots Backend::optimizer_update takes for `rule`.
size_t expected_slots(const OptimizerUpdate& rule) {
  switch (rule.kind) {
    case OptimizerKind::kSGD: return rule.momentum > 0.0f ? 1 : 0;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return rule.amsgrad ? 3 : 2;
    case OptimizerKind::kRMSprop:
      return 1 + (rule.centered ? 1 : 0) + (rule.momentum > 0.0f ? 1 : 0);
    case OptimizerKind::kAdagrad: return 1;
  }
  return 0;
}

class Handler final : public pb::ParameterService::CallbackService {
 public:
  explicit Handler(const ParameterServerOptions& options) : options_(options) {}

  grpc::ServerUnaryReactor* CreateVariable(grpc::CallbackServerContext* context,
                                           const pb::CreateVariableRequest* request,
                                           pb::CreateVariableResponse* response) override {
    return answer(context, [&] { create(*request, response); });
  }
  grpc::ServerUnaryReactor* Read(grpc::CallbackServerContext* context,
                                 const pb::ReadRequest* request,
                                 pb::ReadResponse* response) override {
    return answer(context, [&] {
      for (const std::string& id : request->ids()) {
        const std::shared_ptr<Hosted> h = find(id, "Read");
        std::lock_guard<std::mutex> lock(h->mutex);
        wire::to_proto(h->variable->value(), response->add_values());
        ++h->counters.full_reads;
      }
    });
  }
  grpc::ServerUnaryReactor* ReadRows(grpc::CallbackServerContext* context,
                                     const pb::ReadRowsRequest* request,
                                     pb::ReadRowsResponse* response) override {
    return answer(context, [&] { read_rows(*request, response); });
  }
  grpc::ServerUnaryReactor* ApplyUpdate(grpc::CallbackServerContext* context,
                                        const pb::ApplyUpdateRequest* request,
                                        pb::ApplyUpdateResponse*) override {
    return answer(context, [&] {
      for (const pb::VariablePush& push : request->pushes()) apply(push);
    });
  }
  grpc::ServerUnaryReactor* Assign(grpc::CallbackServerContext* context,
                                   const pb::AssignRequest* request,
                                   pb::AssignResponse*) override {
    return answer(context, [&] { assign(*request); });
  }
  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context, const pb::PingRequest*,
                                 pb::PingResponse*) override {
    return answer(context, [] {});
  }
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* context,
                                     const pb::ShutdownRequest*,
                                     pb::ShutdownResponse*) override {
    return answer(context, [&] {
      std::lock_guard<std::mutex> lock(shutdown_mutex_);
      shutdown_requested_ = true;
      shutdown_cv_.notify_all();
    });
  }
  void wait_for_shutdown() {
    std::unique_lock<std::mutex> lock(shutdown_mutex_);
    shutdown_cv_.wait(lock, [&] { return shutdown_requested_; });
  }

  size_t size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return variables_.size();
  }
  HostedVariableCounters counters(const std::string& id) const {
    std::shared_ptr<Hosted> h;
    {
      std::shared_lock<std::shared_mutex> lock(mutex_);
      auto it = variables_.find(id);
      if (it == variables_.end()) {
        throw CoordinationError("ParameterServer::counters: no variable with id '" + id +
                                "' is hosted here");
      }
      h = it->second;
    }
    std::lock_guard<std::mutex> lock(h->mutex);
    return h->counters;
  }

 private:
  // Runs `work` and finishes the call: OK, or the refusal. A malformed request never takes
  // the server down: every exception becomes a status.
  template <class Work>
  grpc::ServerUnaryReactor* answer(grpc::CallbackServerContext* context, Work&& work) {
    if (auto* refused = refuse_outsider(context, "the ps server")) return refused;
    auto* reactor = context->DefaultReactor();
    grpc::Status status = grpc::Status::OK;
    try {
      work();
    } catch (const Refused& r) {
      status = grpc::Status(r.code, r.message);
    } catch (const Error& e) {   // ValueError from the wire, ShapeError from a kernel ...
      status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
    } catch (const std::exception& e) {
      status = grpc::Status(grpc::StatusCode::INTERNAL, e.what());
    }
    reactor->Finish(status);
    return reactor;
  }

  Tensor tensor(const pb::TensorProto& proto, const std::string& what) const {
    return wire::from_proto(proto, what, options_.max_message_bytes);
  }

  std::shared_ptr<Hosted> find(const std::string& id, const std::string& rpc) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = variables_.find(id);
    if (it == variables_.end()) {
      throw Refused{grpc::StatusCode::NOT_FOUND,
                    rpc + ": no variable with id '" + id +
                        "' on this parameter server: it was never created here (a worker that "
                        "places variables differently from the chief, or a restarted ps that "
                        "lost its variables)"};
    }
    return it->second;
  }

  void create(const pb::CreateVariableRequest& request, pb::CreateVariableResponse* response) {
    if (request.id().empty()) {
      throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                    "CreateVariable '" + request.name() + "': id is empty"};
    }
    const std::string what = "CreateVariable '" + request.name() + "' initial_value";
    Tensor value = tensor(request.initial_value(), what);
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = variables_.find(request.id());
    if (it != variables_.end()) {
      // A second worker rebuilding the model creates the same variables: keep the value.
      const Variable& v = *it->second->variable;
      if (v.shape() != value.shape() || v.dtype() != value.dtype()) {
        throw Refused{grpc::StatusCode::ALREADY_EXISTS,
                      "CreateVariable: " + it->second->describe() + " exists as " +
                          shape_and_dtype(v.shape(), v.dtype()) + "; the request has " +
                          shape_and_dtype(value.shape(), value.dtype()) +
                          ": every task must build the same model in the same order"};
      }
      response->set_created(false);
      return;
    }
    VariableSpec spec;
    spec.name = request.name();
    spec.shape = value.shape();
    spec.dtype = value.dtype();
    spec.initial_value = value;
    spec.trainable = request.trainable();
    spec.device = Device::cpu();
    auto hosted = std::make_shared<Hosted>();
    hosted->id = request.id();
    hosted->variable = std::make_shared<Variable>(spec);
    variables_.emplace(request.id(), std::move(hosted));
    response->set_created(true);
  }

  void read_rows(const pb::ReadRowsRequest& request, pb::ReadRowsResponse* response) {
    const std::shared_ptr<Hosted> h = find(request.id(), "ReadRows");
    const Variable& v = *h->variable;
    if (v.shape().rank() < 1) {
      throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                    "ReadRows: " + h->describe() + " is a scalar: it has no rows"};
    }
    const int64_t rows = v.shape()[0];
    for (int i = 0; i < request.indices_size(); ++i) {
      if (request.indices(i) < 0 || request.indices(i) >= rows) {
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      "ReadRows: indices[" + std::to_string(i) + "] = " +
                          std::to_string(request.indices(i)) + " is outside [0, " +
                          std::to_string(rows) + ") for " + h->describe()};
      }
    }
    const int64_t n = request.indices_size();
    pb::TensorProto* out = response->mutable_rows();
    out->set_dtype(wire::to_proto(v.dtype()));
    const Shape shape = IndexedSlices::rows_shape(v.shape(), n);
    for (int64_t d : shape.dims()) out->add_dims(d);
    std::lock_guard<std::mutex> lock(h->mutex);
    const Tensor value = h->variable->value();   // CPU: hosted variables live there
    const size_t row_bytes = rows == 0 ? 0 : value.nbytes() / size_t(rows);
    std::string* data = out->mutable_data();
    data->resize(size_t(n) * row_bytes);
    const char* src = static_cast<const char*>(value.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&(*data)[size_t(i) * row_bytes], src + size_t(request.indices(int(i))) * row_bytes,
                  row_bytes);
    }
    h->counters.rows_served += n;
  }

  void apply(const pb::VariablePush& push) {
    const std::shared_ptr<Hosted> h = find(push.id(), "ApplyUpdate");
    const Variable& v = *h->variable;
    const std::string what = "ApplyUpdate of " + h->describe();
    const OptimizerUpdate rule = wire::from_proto(push.rule(), what + ": rule");
    // The slots: hosted here, distinct, of the variable's shape and dtype, as many as the rule
    // takes (a kernel would read past a missing one).
    std::vector<std::shared_ptr<Hosted>> slots;
    for (const std::string& slot_id : push.slot_ids()) {
      std::shared_ptr<Hosted> s = find(slot_id, what + ": slot");
      if (s == h || std::find(slots.begin(), slots.end(), s) != slots.end()) {
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      what + ": slot id '" + slot_id + "' is listed twice or is the variable"};
      }
      if (s->variable->shape() != v.shape() || s->variable->dtype() != v.dtype()) {
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      what + ": slot " + s->describe() + " is " +
                          shape_and_dtype(s->variable->shape(), s->variable->dtype()) +
                          ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype())};
      }
      slots.push_back(std::move(s));
    }
    if (slots.size() != expected_slots(rule)) {
      throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                    what + ": " + std::to_string(slots.size()) + " slots given, the rule takes " +
                        std::to_string(expected_slots(rule))};
    }
    Gradient grad;
    if (push.sparse()) {
      const int64_t rows = v.shape().rank() >= 1 ? v.shape()[0] : 0;
      std::vector<int64_t> indices(push.indices().begin(), push.indices().end());
      for (size_t i = 0; i < indices.size(); ++i) {
        if (indices[i] < 0 || indices[i] >= rows) {
          throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                        what + ": indices[" + std::to_string(i) + "] = " +
                            std::to_string(indices[i]) + " is outside [0, " +
                            std::to_string(rows) + ")"};
        }
      }
      Tensor values = tensor(push.rows(), what + ": rows");
      const Shape expected = IndexedSlices::rows_shape(v.shape(), int64_t(indices.size()));
      if (values.shape() != expected || values.dtype() != v.dtype()) {
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      what + ": rows are " + shape_and_dtype(values.shape(), values.dtype()) +
                          ", expected " + shape_and_dtype(expected, v.dtype()) + " for " +
                          std::to_string(indices.size()) + " indices"};
      }
      // A row-wise update needs unique rows (the client sends them deduplicated already).
      grad = Gradient(IndexedSlices{Tensor::from_vector(indices), values, v.shape()}.deduplicated());
    } else {
      Tensor dense = tensor(push.dense_gradient(), what + ": dense_gradient");
      if (dense.shape() != v.shape() || dense.dtype() != v.dtype()) {
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      what + ": dense_gradient is " + shape_and_dtype(dense.shape(), dense.dtype()) +
                          ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype())};
      }
      grad = Gradient(dense);
    }
    // Locks in one global order (addresses), so that concurrent pushes cannot deadlock.
    std::vector<Hosted*> order{h.get()};
    for (const auto& s : slots) order.push_back(s.get());
    std::sort(order.begin(), order.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    for (Hosted* x : order) locks.emplace_back(x->mutex);

    VariableUpdate update;
    update.rule = rule;
    update.grad = grad;
    for (const auto& s : slots) update.slots.push_back(s->variable);
    UpdateBatch batch;
    h->variable->apply_update(update, batch);
    batch.finish();
    if (push.sparse()) {
      ++h->counters.sparse_updates;
      h->counters.rows_updated += grad.slices().indices.numel();
    } else {
      ++h->counters.dense_updates;
    }
  }

  void assign(const pb::AssignRequest& request) {
    const std::shared_ptr<Hosted> h = find(request.id(), "Assign");
    const Variable& v = *h->variable;
    const std::string what = "Assign of " + h->describe();
    const Tensor value = tensor(request.value(), what + ": value");
    if (value.shape() != v.shape() || value.dtype() != v.dtype()) {
      throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                    what + ": value is " + shape_and_dtype(value.shape(), value.dtype()) +
                        ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype())};
    }
    std::lock_guard<std::mutex> lock(h->mutex);
    switch (request.mode()) {
      case pb::AssignRequest::ASSIGN: h->variable->assign(value); break;
      case pb::AssignRequest::ADD: h->variable->assign_add(value); break;
      case pb::AssignRequest::SUB: h->variable->assign_sub(value); break;
      default:
        throw Refused{grpc::StatusCode::INVALID_ARGUMENT,
                      what + ": mode " + std::to_string(int(request.mode())) +
                          " is not ASSIGN, ADD or SUB"};
    }
    ++h->counters.assigns;
  }

  const ParameterServerOptions options_;
  mutable std::shared_mutex mutex_;   // guards the map only; each variable has its own lock
  std::unordered_map<std::string, std::shared_ptr<Hosted>> variables_;
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;
  bool shutdown_requested_ = false;
};

}  // namespace

// Declared in this order so that the server (no new calls) goes before the handler it calls.
struct ParameterServer::Impl {
  std::unique_ptr<Handler> handler;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

std::unique_ptr<ParameterServer> ParameterServer::start(const std::string& bind_address,
                                                        ParameterServerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::make_unique<Handler>(options);
  impl->server = start_grpc_server(bind_address, impl->handler.get(), options.max_message_bytes,
                                   kPsMinPingInterval, "ps server", "ps", &impl->port);
  return std::unique_ptr<ParameterServer>(new ParameterServer(std::move(impl)));
}

ParameterServer::ParameterServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ParameterServer::~ParameterServer() {
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
}

int ParameterServer::port() const { return impl_->port; }

void ParameterServer::wait_for_shutdown() { impl_->handler->wait_for_shutdown(); }

size_t ParameterServer::num_variables() const { return impl_->handler->size(); }

HostedVariableCounters ParameterServer::counters(const std::string& id) const {
  return impl_->handler->counters(id);
}

}  // namespace strata::distribute
