#include "distribute/parameter_server/wire/worker_service.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "distribute/cluster/grpc_security.h"
#include "distribute/errors.h"
#include "distribute/parameter_server/ps_trainer.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/error_transport.h"
#include "distribute/parameter_server/wire/ps_grpc.h"
#include "distribute/parameter_server/wire/remote_step.h"
#include "distribute/parameter_server/wire/tensor_wire.h"
#include "distribute/parameter_server/wire/worker_service.grpc.pb.h"
#include "framework/config/json.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/keras3_compile_config.h"
#include "layers/model_serialization.h"

namespace strata::distribute {
namespace {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;

// Bounds on what one request may ask (a malformed or hostile one is refused before it costs).
constexpr size_t kMaxNameBytes = 1024;      // a registered function's name
constexpr int kMaxDatasets = 1024;          // per-worker datasets in one Prepare
constexpr int kMaxArgs = 1024;              // a closure's argument tensors
constexpr size_t kMaxWaiting = 16;          // Prepare / RunClosure calls waiting their turn

// Runs posted work one item at a time on its own thread, in order; at most kMaxWaiting wait.
class Executor {
 public:
  Executor() : thread_([this] { loop(); }) {}
  ~Executor() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // False when too much waits already.
  bool post(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (queue_.size() >= kMaxWaiting) return false;
      queue_.push_back(std::move(work));
    }
    cv_.notify_all();
    return true;
  }
  void wait_until_idle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !running_; });
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> work;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, nothing left
        work = std::move(queue_.front());
        queue_.pop_front();
        running_ = true;
      }
      work();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        running_ = false;
      }
      idle_cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the rest is built
};

// What the coordinator asked this worker to hold; touched only on the executor's thread.
struct WorkerState {
  std::shared_ptr<Model> model;
  std::map<int64_t, std::unique_ptr<data::Iterator>> iterators;
  // What the last closure read whole from the ps tasks: the next one prefetches it.
  std::shared_ptr<RemoteReadPlan> read_plan = std::make_shared<RemoteReadPlan>();
};

// "" when `name` can name a registered function, else what is wrong with it (as `field`).
std::string check_name(const std::string& name, const std::string& field) {
  if (name.empty()) return field + " is empty: expected a registered function's name";
  if (name.size() > kMaxNameBytes) {
    return field + " is " + std::to_string(name.size()) + " bytes long, over the " +
           std::to_string(kMaxNameBytes) + " a function name may have";
  }
  return "";
}

// "" when `text` is JSON, else what is wrong (as `field`).
std::string check_json(const std::string& text, const std::string& field) {
  try {
    Json::parse(text);
    return "";
  } catch (const Error& e) {
    return field + " is not JSON: " + std::string(e.what()).substr(0, 300);
  }
}

class Handler final : public pb::WorkerService::CallbackService {
 public:
  Handler(std::shared_ptr<ParameterServerStrategy> strategy, int worker_index)
      : strategy_(std::move(strategy)), worker_index_(worker_index) {}

  grpc::ServerUnaryReactor* Prepare(grpc::CallbackServerContext* context,
                                    const pb::PrepareRequest* request,
                                    pb::PrepareResponse* response) override {
    if (auto* refused = refuse_outsider(context, "the worker server")) return refused;
    auto* reactor = context->DefaultReactor();
    if (refuse_if_stopping(reactor)) return reactor;
    const std::string bad = check(*request);
    if (!bad.empty()) {
      reactor->Finish(invalid("Prepare", bad));
      return reactor;
    }
    post(reactor, [this, context, reactor, request, response] {
      if (drop_if_stale(context, reactor)) return;
      try {
        prepare(*request);
      } catch (const std::exception&) {
        const std::exception_ptr e = std::current_exception();
        response->set_error_type(error_type_name(e));
        response->set_error_message(error_message(e));
      }
      reactor->Finish(grpc::Status::OK);
    });
    return reactor;
  }

  grpc::ServerUnaryReactor* RunClosure(grpc::CallbackServerContext* context,
                                       const pb::RunClosureRequest* request,
                                       pb::RunClosureResponse* response) override {
    if (auto* refused = refuse_outsider(context, "the worker server")) return refused;
    auto* reactor = context->DefaultReactor();
    if (refuse_if_stopping(reactor)) return reactor;
    auto args = std::make_shared<std::vector<Tensor>>();
    const std::string bad = check(*request, args.get());
    if (!bad.empty()) {
      reactor->Finish(invalid("RunClosure", bad));
      return reactor;
    }
    post(reactor, [this, context, reactor, request, response, args] {
      if (drop_if_stale(context, reactor)) return;
      run(*request, std::move(*args), context, response);
      if (response->ByteSizeLong() > strategy_->options().max_message_bytes) {
        // Said here, plainly, rather than as gRPC's RESOURCE_EXHAUSTED on the way out.
        const size_t bytes = response->ByteSizeLong();
        response->Clear();
        response->set_kind(pb::RunClosureResponse::USER_ERROR);
        response->set_error_type("ResourceExhaustedError");
        response->set_message("step function '" + request->function() + "' returned " +
                              std::to_string(bytes) + " bytes of results, over "
                              "ParameterServerOptions::max_message_bytes (" +
                              std::to_string(strategy_->options().max_message_bytes) +
                              "): return smaller results, or raise max_message_bytes on every "
                              "task. The step ran (its updates are applied); it is not re-run");
      }
      reactor->Finish(grpc::Status::OK);
    });
    return reactor;
  }

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context,
                                 const pb::WorkerPingRequest*,
                                 pb::WorkerPingResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      response->set_busy(!running_.empty());
      response->set_running(running_);
      response->set_stopping(!stopping_reason_.empty());
    }
    response->set_closures_run(closures_run_);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* context,
                                     const pb::ShutdownRequest*,
                                     pb::ShutdownResponse*) override {
    if (auto* refused = refuse_outsider(context, "the worker server")) return refused;
    {
      std::lock_guard<std::mutex> lock(shutdown_mutex_);
      shutdown_ = true;
    }
    shutdown_cv_.notify_all();
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  bool wait_for_shutdown_for(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(shutdown_mutex_);
    return shutdown_cv_.wait_for(lock, timeout, [&] { return shutdown_; });
  }
  void wait_for_shutdown() {
    std::unique_lock<std::mutex> lock(shutdown_mutex_);
    shutdown_cv_.wait(lock, [&] { return shutdown_; });
  }
  void stop_taking_closures(const std::string& reason) {
    std::lock_guard<std::mutex> lock(state_mutex_);
    stopping_reason_ = reason.empty() ? std::string("it is stopping") : reason;
  }
  void wait_until_idle() { executor_.wait_until_idle(); }
  int64_t closures_run() const { return closures_run_; }

 private:
  std::string me() const { return "worker " + std::to_string(worker_index_); }

  grpc::Status invalid(const char* method, const std::string& what) const {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "WorkerService." + std::string(method) + " on " + me() + ": " + what);
  }

  // ABORTED while preempted: the coordinator takes the worker as gone and re-queues.
  bool refuse_if_stopping(grpc::ServerUnaryReactor* reactor) {
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(state_mutex_);
      reason = stopping_reason_;
    }
    if (reason.empty()) return false;
    reactor->Finish(grpc::Status(grpc::StatusCode::ABORTED,
                                 me() + " takes no more closures: " + reason));
    return true;
  }

  void post(grpc::ServerUnaryReactor* reactor, std::function<void()> work) {
    if (!executor_.post(std::move(work))) {
      reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                   me() + " has " + std::to_string(kMaxWaiting) +
                                       " requests waiting already; one coordinator sends one "
                                       "at a time"));
    }
  }

  // A call whose caller gave up while it waited is not run; nor is anything once preempted.
  bool drop_if_stale(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor) {
    if (context->IsCancelled()) {
      reactor->Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                                   "the caller gave up before " + me() + " got to the call"));
      return true;
    }
    return refuse_if_stopping(reactor);
  }

  std::string check(const pb::PrepareRequest& request) const {
    if (request.datasets_size() > kMaxDatasets) {
      return "datasets has " + std::to_string(request.datasets_size()) + " entries, over the " +
             std::to_string(kMaxDatasets) + " one Prepare may make";
    }
    std::set<int64_t> ids;
    for (int i = 0; i < request.datasets_size(); ++i) {
      const pb::PerWorkerDataset& d = request.datasets(i);
      const std::string field = "datasets[" + std::to_string(i) + "]";
      if (d.id() < 0) return field + ".id is " + std::to_string(d.id()) + ": ids are >= 0";
      if (!ids.insert(d.id()).second) {
        return field + ".id " + std::to_string(d.id()) + " appears twice in the request";
      }
      const std::string bad = check_name(d.function(), field + ".function");
      if (!bad.empty()) return bad;
    }
    if (!request.has_model()) return "";
    const pb::WorkerModel& m = request.model();
    if (m.model_json().empty()) return "model.model_json is empty: expected the model's config";
    std::string bad = check_json(m.model_json(), "model.model_json");
    if (bad.empty() && !m.compile_config_json().empty()) {
      bad = check_json(m.compile_config_json(), "model.compile_config_json");
    }
    if (bad.empty() && !m.placement_json().empty()) {
      try {
        strategy_->check_placement(m.placement_json());
      } catch (const Error& e) {
        bad = "model.placement_json: " + std::string(e.what()).substr(0, 300);
      }
    }
    return bad;
  }

  // Decodes the arguments into `args` on the way.
  std::string check(const pb::RunClosureRequest& request, std::vector<Tensor>* args) const {
    std::string bad = check_name(request.function(), "function");
    if (!bad.empty()) return bad;
    if (request.dataset_id() < -1) {
      return "dataset_id is " + std::to_string(request.dataset_id()) +
             ": expected -1 (none) or a per-worker dataset's id";
    }
    if (request.args_size() > kMaxArgs) {
      return "args has " + std::to_string(request.args_size()) + " tensors, over the " +
             std::to_string(kMaxArgs) + " a closure may take";
    }
    for (int i = 0; i < request.args_size(); ++i) {
      try {
        args->push_back(wire::from_proto(request.args(i), "args[" + std::to_string(i) + "]",
                                         strategy_->options().max_message_bytes));
      } catch (const Error& e) {
        return e.what();
      }
    }
    return "";
  }

  void prepare(const pb::PrepareRequest& request) {
    if (request.rebuild()) state_ = WorkerState{};
    if (request.has_model()) rebuild_model(request.model());
    const DatasetContext context{worker_index_, strategy_->num_worker_tasks()};
    for (const pb::PerWorkerDataset& d : request.datasets()) {
      const DatasetFunction fn = find_dataset_function(d.function());
      state_.iterators[d.id()] = fn(context).make_iterator();
    }
  }

  // The coordinator's model, its variables handles to the ps tasks' (created already: their
  // values are kept), compiled as the coordinator's, with the optimizer's slots made now.
  void rebuild_model(const pb::WorkerModel& spec) {
    state_.model.reset();
    if (!spec.placement_json().empty()) strategy_->set_placement(spec.placement_json());
    auto scope = strategy_->scope();
    std::shared_ptr<Model> model = model_from_json(spec.model_json());
    if (!spec.compile_config_json().empty()) {
      saving::compile_from_keras3_config(*model, Json::parse(spec.compile_config_json()),
                                         "the coordinator's compile config");
      if (model->optimizer()) model->optimizer()->build(model->trainable_variables());
    }
    state_.model = std::move(model);
  }

  void run(const pb::RunClosureRequest& request, std::vector<Tensor> args,
           grpc::CallbackServerContext* call, pb::RunClosureResponse* response) {
    struct Running {
      Handler& h;
      Running(Handler& handler, const std::string& function) : h(handler) {
        std::lock_guard<std::mutex> lock(h.state_mutex_);
        h.running_ = function;
      }
      ~Running() {
        std::lock_guard<std::mutex> lock(h.state_mutex_);
        h.running_.clear();
      }
    } running(*this, request.function());
    try {
      const StepFunction fn = find_step_function(request.function());
      data::Iterator* iterator = nullptr;
      if (request.dataset_id() >= 0) {
        auto it = state_.iterators.find(request.dataset_id());
        if (it == state_.iterators.end()) {
          throw StateError("per-worker dataset " + std::to_string(request.dataset_id()) +
                           " was not built on this worker: create it with the coordinator's "
                           "create_per_worker_dataset before scheduling closures that read it");
        }
        iterator = it->second.get();
      }
      // The last moment to drop a closure whose caller gave up: once it runs, it runs to its
      // end (its updates cannot be half applied).
      if (call->IsCancelled()) return;
      StepContext context{args, iterator, state_.model.get(), worker_index_};
      std::vector<Tensor> values;
      {
        // Slots and other state made during the step are the strategy's too.
        auto scope = strategy_->scope();
        // The step's reads and writes, batched: one Read and one ApplyUpdate per ps.
        RemoteStep step(state_.read_plan);
        values = fn(context);
        step.finish();
      }
      ++closures_run_;
      if (call->IsCancelled()) return;  // nobody reads the result
      for (const Tensor& v : values) wire::to_proto(v, response->add_values());
      response->set_kind(pb::RunClosureResponse::OK);
    } catch (const CoordinationError& e) {
      // A ps did not answer this worker (the message names it): fatal for the job.
      response->Clear();
      response->set_kind(pb::RunClosureResponse::PS_UNAVAILABLE);
      response->set_message(e.what());
    } catch (const std::exception&) {
      const std::exception_ptr e = std::current_exception();
      response->Clear();
      response->set_kind(pb::RunClosureResponse::USER_ERROR);
      response->set_error_type(error_type_name(e));
      response->set_message(error_message(e));
    }
  }

  std::shared_ptr<ParameterServerStrategy> strategy_;
  int worker_index_;
  WorkerState state_;
  std::atomic<int64_t> closures_run_{0};
  std::mutex state_mutex_;
  std::string running_;          // the function running now, or ""
  std::string stopping_reason_;  // preempted: why; else ""
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;
  bool shutdown_ = false;
  Executor executor_;  // last: its thread stops before the state it touches goes
};

}  // namespace

struct WorkerServer::Impl {
  std::unique_ptr<Handler> handler;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

std::unique_ptr<WorkerServer> WorkerServer::start(
    const std::string& bind_address, std::shared_ptr<ParameterServerStrategy> strategy,
    int worker_index) {
  register_library_step_functions();  // fit's train step (ps_trainer.h)
  auto impl = std::make_unique<Impl>();
  const size_t max_message_bytes = strategy->options().max_message_bytes;
  impl->handler = std::make_unique<Handler>(std::move(strategy), worker_index);
  impl->server = start_grpc_server(bind_address, impl->handler.get(), max_message_bytes,
                                   kPsMinPingInterval, "worker server", "worker", &impl->port);
  return std::unique_ptr<WorkerServer>(new WorkerServer(std::move(impl)));
}

WorkerServer::WorkerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkerServer::~WorkerServer() {
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
}

int WorkerServer::port() const { return impl_->port; }
void WorkerServer::wait_for_shutdown() { impl_->handler->wait_for_shutdown(); }
bool WorkerServer::wait_for_shutdown_for(std::chrono::milliseconds timeout) {
  return impl_->handler->wait_for_shutdown_for(timeout);
}
void WorkerServer::stop_taking_closures(const std::string& reason) {
  impl_->handler->stop_taking_closures(reason);
}
void WorkerServer::wait_until_idle() { impl_->handler->wait_until_idle(); }
int64_t WorkerServer::closures_run() const { return impl_->handler->closures_run(); }

}  // namespace strata::distribute
