#include "distribute/parameter_server/wire/parameter_service.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "distribute/cluster/grpc_security.h"
#include "distribute/errors.h"
#include "distribute/parameter_server/wire/parameter_server.grpc.pb.h"
#include "distribute/parameter_server/wire/ps_grpc.h"
#include "distribute/parameter_server/wire/tensor_wire.h"
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
    return answer(context, [&] { read(*request, response); });
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
      for (const pb::AssignRequest& a : request->assigns()) assign(a);
      for (const pb::VariablePush& push : request->pushes()) apply(push);
    });
  }
  grpc::ServerUnaryReactor* Assign(grpc::CallbackServerContext* context,
                                   const pb::AssignRequest* request,
                                   pb::AssignResponse*) override {
    return answer(context, [&] { assign(*request); });
  }
  grpc::ServerUnaryReactor* FetchAdd(grpc::CallbackServerContext* context,
                                     const pb::FetchAddRequest* request,
                                     pb::FetchAddResponse* response) override {
    return answer(context, [&] { response->set_previous(fetch_add(*request)); });
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
  void clear() {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    variables_.clear();
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

  [[noreturn]] static void refuse(grpc::StatusCode code, std::string message) {
    throw Refused{code, std::move(message)};
  }
  [[noreturn]] static void invalid(std::string message) {
    refuse(grpc::StatusCode::INVALID_ARGUMENT, std::move(message));
  }

  // The bytes of `v`'s value: bounded by max_message_bytes when it was created, so no overflow.
  static size_t nbytes(const Variable& v) {
    return size_t(v.shape().numel()) * dtype_size(v.dtype());
  }

  void create(const pb::CreateVariableRequest& request, pb::CreateVariableResponse* response) {
    if (request.id().empty()) {
      invalid("CreateVariable '" + request.name() + "': id is empty");
    }
    if (request.attach()) return attach(request, response);
    const std::string what = "CreateVariable '" + request.name() + "' initial_value";
    Tensor value = tensor(request.initial_value(), what);
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = variables_.find(request.id());
    if (it != variables_.end()) {
      // A second worker rebuilding the model creates the same variables: keep the value.
      const Variable& v = *it->second->variable;
      if (v.shape() != value.shape() || v.dtype() != value.dtype()) {
        refuse(grpc::StatusCode::ALREADY_EXISTS,
               "CreateVariable: " + it->second->describe() + " exists as " +
                   shape_and_dtype(v.shape(), v.dtype()) + "; the request has " +
                   shape_and_dtype(value.shape(), value.dtype()) +
                   ": every task must build the same model in the same order");
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

  // A worker attaching to a variable the coordinator created: the dtype and dims must be the
  // variable's (compared as numbers: no shape is built from the request's dims).
  void attach(const pb::CreateVariableRequest& request, pb::CreateVariableResponse* response) {
    const pb::TensorProto& p = request.initial_value();
    const std::string what = "CreateVariable '" + request.name().substr(0, 200) + "' (attach)";
    if (!p.data().empty()) {
      invalid(what + ": initial_value carries " + std::to_string(p.data().size()) +
              " bytes of data; an attach sends only the dtype and dims");
    }
    const DType dtype = wire::from_proto(int(p.dtype()), what + ": initial_value.dtype");
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = variables_.find(request.id());
    if (it == variables_.end()) {
      refuse(grpc::StatusCode::NOT_FOUND,
             what + ": no variable has id '" + request.id().substr(0, 200) +
                 "' on this ps: the coordinator creates every variable before a worker "
                 "attaches to it (was the ps restarted? restart the job from its checkpoint)");
    }
    const Variable& v = *it->second->variable;
    bool same = dtype == v.dtype() && p.dims_size() == int(v.shape().rank());
    for (int i = 0; same && i < p.dims_size(); ++i) same = p.dims(i) == v.shape()[i];
    if (!same) {
      std::string dims = "[";
      for (int i = 0; i < std::min(p.dims_size(), 8); ++i) {
        dims += (i ? "," : "") + std::to_string(p.dims(i));
      }
      dims += p.dims_size() > 8 ? ",...]" : "]";
      refuse(grpc::StatusCode::ALREADY_EXISTS,
             what + ": " + it->second->describe() + " exists as " +
                 shape_and_dtype(v.shape(), v.dtype()) + "; the request has dims " + dims + " " +
                 dtype_name(dtype) + ": every task must build the same model in the same order");
    }
    response->set_created(false);
  }

  void read(const pb::ReadRequest& request, pb::ReadResponse* response) {
    // The reply's size is known before anything is copied: one request naming a large variable
    // many times must not make the ps build a reply many times the bound.
    std::vector<std::shared_ptr<Hosted>> hosted;
    size_t total = 0;
    for (int i = 0; i < request.ids_size(); ++i) {
      hosted.push_back(find(request.ids(i), "Read"));
      total += nbytes(*hosted.back()->variable);
      if (total > options_.max_message_bytes) {
        refuse(grpc::StatusCode::RESOURCE_EXHAUSTED,
               "Read: the values of ids[0.." + std::to_string(i) + "] (" +
                   std::to_string(total) + " bytes so far) exceed max_message_bytes = " +
                   std::to_string(options_.max_message_bytes) +
                   ": read the variables in several requests");
      }
    }
    for (const std::shared_ptr<Hosted>& h : hosted) {
      std::lock_guard<std::mutex> lock(h->mutex);
      wire::to_proto(h->variable->value(), response->add_values());
      ++h->counters.full_reads;
    }
  }

  void read_rows(const pb::ReadRowsRequest& request, pb::ReadRowsResponse* response) {
    const std::shared_ptr<Hosted> h = find(request.id(), "ReadRows");
    const Variable& v = *h->variable;
    if (v.shape().rank() < 1) {
      invalid("ReadRows: " + h->describe() + " is a scalar: it has no rows");
    }
    const int64_t rows = v.shape()[0];
    for (int i = 0; i < request.indices_size(); ++i) {
      if (request.indices(i) < 0 || request.indices(i) >= rows) {
        invalid("ReadRows: indices[" + std::to_string(i) + "] = " +
                std::to_string(request.indices(i)) + " is outside [0, " + std::to_string(rows) +
                ") for " + h->describe());
      }
    }
    // The reply's size before it is allocated: n rows of nbytes / rows bytes each (a variable
    // without rows passed no index above).
    const size_t n = size_t(request.indices_size());
    const size_t row_bytes = rows == 0 ? 0 : nbytes(v) / size_t(rows);
    if (row_bytes != 0 && n > options_.max_message_bytes / row_bytes) {
      refuse(grpc::StatusCode::RESOURCE_EXHAUSTED,
             "ReadRows: " + std::to_string(n) + " indices of " + std::to_string(row_bytes) +
                 "-byte rows of " + h->describe() + " exceed max_message_bytes = " +
                 std::to_string(options_.max_message_bytes) +
                 ": ask for the rows in several requests");
    }
    pb::TensorProto* out = response->mutable_rows();
    out->set_dtype(wire::to_proto(v.dtype()));
    const Shape shape = IndexedSlices::rows_shape(v.shape(), int64_t(n));
    for (int64_t d : shape.dims()) out->add_dims(d);
    std::lock_guard<std::mutex> lock(h->mutex);
    const Tensor value = h->variable->value();   // CPU: hosted variables live there
    std::string* data = out->mutable_data();
    data->resize(n * row_bytes);
    const char* src = static_cast<const char*>(value.raw_data());
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(data->data() + i * row_bytes,
                  src + size_t(request.indices(int(i))) * row_bytes, row_bytes);
    }
    h->counters.rows_served += int64_t(n);
  }

  void apply(const pb::VariablePush& push) {
    const std::shared_ptr<Hosted> h = find(push.id(), "ApplyUpdate");
    const Variable& v = *h->variable;
    const std::string what = "ApplyUpdate of " + h->describe();
    const OptimizerUpdate rule = wire::from_proto(push.rule(), what + ": rule");
    // The ps's optimizer kernels (the CPU backend's) update float32 variables and slots.
    if (v.dtype() != DType::kFloat32) {
      invalid(what + ": the variable is " + shape_and_dtype(v.shape(), v.dtype()) +
              "; optimizer updates apply to float32 variables only");
    }
    // The slots: as many as the rule takes (a kernel would read past a missing one), hosted
    // here, distinct, of the variable's shape and dtype. The count first: no lookups for a list
    // that cannot be right.
    if (size_t(push.slot_ids_size()) != expected_slots(rule)) {
      invalid(what + ": slot_ids: " + std::to_string(push.slot_ids_size()) +
              " slots given, the rule takes " + std::to_string(expected_slots(rule)));
    }
    std::vector<std::shared_ptr<Hosted>> slots;
    for (int i = 0; i < push.slot_ids_size(); ++i) {
      const std::string& slot_id = push.slot_ids(i);
      std::shared_ptr<Hosted> s = find(slot_id, what + ": slot_ids[" + std::to_string(i) + "]");
      if (s == h || std::find(slots.begin(), slots.end(), s) != slots.end()) {
        invalid(what + ": slot id '" + slot_id + "' is listed twice or is the variable");
      }
      if (s->variable->shape() != v.shape() || s->variable->dtype() != v.dtype()) {
        invalid(what + ": slot " + s->describe() + " is " +
                shape_and_dtype(s->variable->shape(), s->variable->dtype()) +
                ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype()));
      }
      slots.push_back(std::move(s));
    }
    Gradient grad;
    if (push.sparse()) {
      if (push.has_dense_gradient()) {
        invalid(what + ": a sparse push (sparse = true) carries dense_gradient; it sends its "
                "rows in indices and rows");
      }
      if (v.shape().rank() < 1) {
        invalid(what + ": sparse = true, but the variable is a scalar: it has no rows; send "
                "its gradient as dense_gradient");
      }
      const int64_t rows = v.shape()[0];
      std::vector<int64_t> indices(push.indices().begin(), push.indices().end());
      for (size_t i = 0; i < indices.size(); ++i) {
        if (indices[i] < 0 || indices[i] >= rows) {
          invalid(what + ": indices[" + std::to_string(i) + "] = " + std::to_string(indices[i]) +
                  " is outside [0, " + std::to_string(rows) + ")");
        }
      }
      Tensor values = tensor(push.rows(), what + ": rows");
      const Shape expected = IndexedSlices::rows_shape(v.shape(), int64_t(indices.size()));
      if (values.shape() != expected || values.dtype() != v.dtype()) {
        invalid(what + ": rows are " + shape_and_dtype(values.shape(), values.dtype()) +
                ", expected " + shape_and_dtype(expected, v.dtype()) + " for " +
                std::to_string(indices.size()) + " indices");
      }
      // A row-wise update needs unique rows (the client sends them deduplicated already).
      grad = Gradient(IndexedSlices{Tensor::from_vector(indices), values, v.shape()}.deduplicated());
    } else {
      if (push.indices_size() != 0 || push.has_rows()) {
        invalid(what + ": a dense push (sparse = false) carries indices or rows; set sparse = "
                "true to send rows");
      }
      Tensor dense = tensor(push.dense_gradient(), what + ": dense_gradient");
      if (dense.shape() != v.shape() || dense.dtype() != v.dtype()) {
        invalid(what + ": dense_gradient is " + shape_and_dtype(dense.shape(), dense.dtype()) +
                ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype()));
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

  // INVALID_ARGUMENT naming the first element where current (+ or -) delta leaves T's range:
  // the elementwise kernels would overflow a signed integer there (undefined behaviour).
  template <class T>
  static void check_no_overflow(const Tensor& current, const Tensor& delta, bool subtract,
                                const std::string& what) {
    const T* a = static_cast<const T*>(current.raw_data());
    const T* b = static_cast<const T*>(delta.raw_data());
    for (int64_t i = 0; i < current.numel(); ++i) {
      T r;
      const bool overflow = subtract ? __builtin_sub_overflow(a[i], b[i], &r)
                                     : __builtin_add_overflow(a[i], b[i], &r);
      if (overflow) {
        invalid(what + ": element " + std::to_string(i) + ": " + std::to_string(a[i]) +
                (subtract ? " - " : " + ") + std::to_string(b[i]) + " overflows " +
                dtype_name(current.dtype()));
      }
    }
  }

  void assign(const pb::AssignRequest& request) {
    const std::shared_ptr<Hosted> h = find(request.id(), "Assign");
    const Variable& v = *h->variable;
    const std::string what = "Assign of " + h->describe();
    const pb::AssignRequest::Mode mode = request.mode();
    if (mode != pb::AssignRequest::ASSIGN && mode != pb::AssignRequest::ADD &&
        mode != pb::AssignRequest::SUB) {
      invalid(what + ": mode " + std::to_string(int(mode)) + " is not ASSIGN, ADD or SUB");
    }
    const Tensor value = tensor(request.value(), what + ": value");
    if (value.shape() != v.shape() || value.dtype() != v.dtype()) {
      invalid(what + ": value is " + shape_and_dtype(value.shape(), value.dtype()) +
              ", expected the variable's " + shape_and_dtype(v.shape(), v.dtype()));
    }
    std::lock_guard<std::mutex> lock(h->mutex);
    if (mode != pb::AssignRequest::ASSIGN) {
      const bool subtract = mode == pb::AssignRequest::SUB;
      if (v.dtype() == DType::kInt64) {
        check_no_overflow<int64_t>(v.value(), value, subtract, what);
      } else if (v.dtype() == DType::kInt32) {
        check_no_overflow<int32_t>(v.value(), value, subtract, what);
      }
    }
    switch (mode) {
      case pb::AssignRequest::ADD: h->variable->assign_add(value); break;
      case pb::AssignRequest::SUB: h->variable->assign_sub(value); break;
      default: h->variable->assign(value); break;   // ASSIGN (the mode was checked above)
    }
    ++h->counters.assigns;
  }

  int64_t fetch_add(const pb::FetchAddRequest& request) {
    const std::shared_ptr<Hosted> h = find(request.id(), "FetchAdd");
    const Variable& v = *h->variable;
    const std::string what = "FetchAdd of " + h->describe();
    if (v.shape().rank() != 0 || v.dtype() != DType::kInt64) {
      invalid(what + ": the variable is " + shape_and_dtype(v.shape(), v.dtype()) +
              ", expected an int64 scalar (a step count)");
    }
    std::lock_guard<std::mutex> lock(h->mutex);
    const int64_t previous = v.value().item<int64_t>();
    int64_t next = 0;
    if (__builtin_add_overflow(previous, request.delta(), &next)) {
      invalid(what + ": delta " + std::to_string(request.delta()) + " added to " +
              std::to_string(previous) + " overflows int64");
    }
    h->variable->assign(Tensor::scalar<int64_t>(next));
    ++h->counters.fetch_adds;
    return previous;
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

void ParameterServer::clear_variables() { impl_->handler->clear(); }

}  // namespace strata::distribute
