#include "distribute/parameter_server/worker_service.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "distribute/coordination/key_value_store.h"
#include "distribute/grpc_security.h"
#include "distribute/parameter_server/ps_grpc.h"
#include "distribute/parameter_server/error_transport.h"
#include "distribute/parameter_server/ps_trainer.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/tensor_wire.h"
#include "distribute/parameter_server/worker_service.grpc.pb.h"
#include "framework/config/json.h"
#include "framework/model/model.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/keras3_compile_config.h"
#include "layers/model_serialization.h"

namespace strata::distribute {
namespace {

namespace pb = parameter_server_pb;
namespace wire = ps_wire;

// Runs posted work one item at a time on its own thread, in order.
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
  void post(std::function<void()> work) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(work));
    }
    cv_.notify_one();
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
      }
      work();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the rest is built
};

// What the coordinator asked this worker to hold; touched only on the executor's thread.
struct WorkerState {
  std::shared_ptr<Model> model;
  std::map<int64_t, std::unique_ptr<data::Iterator>> iterators;
};

class Handler final : public pb::WorkerService::CallbackService {
 public:
  Handler(std::shared_ptr<ParameterServerStrategy> strategy, int worker_index)
      : strategy_(std::move(strategy)), worker_index_(worker_index) {}

  grpc::ServerUnaryReactor* Prepare(grpc::CallbackServerContext* context,
                                    const pb::PrepareRequest* request,
                                    pb::PrepareResponse* response) override {
    if (auto* refused = refuse_outsider(context, "the worker server")) return refused;
    auto* reactor = context->DefaultReactor();
    executor_.post([this, reactor, request, response] {
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
    executor_.post([this, reactor, request, response] {
      run(*request, response);
      reactor->Finish(grpc::Status::OK);
    });
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

  void wait_for_shutdown() {
    std::unique_lock<std::mutex> lock(shutdown_mutex_);
    shutdown_cv_.wait(lock, [&] { return shutdown_; });
  }
  int64_t closures_run() const { return closures_run_; }

 private:
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

  void run(const pb::RunClosureRequest& request, pb::RunClosureResponse* response) {
    try {
      const StepFunction fn = find_step_function(request.function());
      std::vector<Tensor> args;
      for (int i = 0; i < request.args_size(); ++i) {
        args.push_back(wire::from_proto(request.args(i), "argument " + std::to_string(i),
                                        strategy_->options().max_message_bytes));
      }
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
      StepContext context{args, iterator, state_.model.get(), worker_index_};
      std::vector<Tensor> values;
      {
        // Slots and other state made during the step are the strategy's too.
        auto scope = strategy_->scope();
        values = fn(context);
      }
      for (const Tensor& v : values) wire::to_proto(v, response->add_values());
      response->set_kind(pb::RunClosureResponse::OK);
      ++closures_run_;
    } catch (const CoordinationError& e) {
      // A ps did not answer this worker (the message names it): fatal for the job.
      response->set_kind(pb::RunClosureResponse::PS_UNAVAILABLE);
      response->set_message(e.what());
    } catch (const std::exception&) {
      const std::exception_ptr e = std::current_exception();
      response->set_kind(pb::RunClosureResponse::USER_ERROR);
      response->set_error_type(error_type_name(e));
      response->set_message(error_message(e));
    }
  }

  std::shared_ptr<ParameterServerStrategy> strategy_;
  int worker_index_;
  WorkerState state_;
  std::atomic<int64_t> closures_run_{0};
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
int64_t WorkerServer::closures_run() const { return impl_->handler->closures_run(); }

}  // namespace strata::distribute
