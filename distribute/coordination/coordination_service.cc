#include "distribute/coordination/coordination_service.h"

#include <grpcpp/grpcpp.h>


#include "distribute/coordination/coordination.grpc.pb.h"
#include "distribute/coordination/coordination_state.h"
#include "distribute/grpc_setup.h"

namespace strata::distribute {

namespace {

using coordination_internal::CoordinationState;
namespace pb = coordination_pb;

// The generated callback service: each method hands its call to the state, which finishes the
// reactor at once or parks it (a get or barrier that waits).
class Handler final : public pb::Coordination::CallbackService {
 public:
  explicit Handler(CoordinationState& state) : state_(state) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* context,
                                     const pb::RegisterRequest* request,
                                     pb::RegisterResponse*) override {
    auto* reactor = context->DefaultReactor();
    state_.register_task(*request, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* context,
                                      const pb::HeartbeatRequest* request,
                                      pb::HeartbeatResponse* response) override {
    auto* reactor = context->DefaultReactor();
    state_.heartbeat(*request, response, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Barrier(grpc::CallbackServerContext* context,
                                    const pb::BarrierRequest* request,
                                    pb::BarrierResponse*) override {
    auto* reactor = context->DefaultReactor();
    state_.barrier(*request, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Set(grpc::CallbackServerContext* context,
                                const pb::SetRequest* request, pb::SetResponse*) override {
    auto* reactor = context->DefaultReactor();
    state_.set(*request, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Get(grpc::CallbackServerContext* context,
                                const pb::GetRequest* request,
                                pb::GetResponse* response) override {
    auto* reactor = context->DefaultReactor();
    state_.get(*request, response, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Add(grpc::CallbackServerContext* context,
                                const pb::AddRequest* request,
                                pb::AddResponse* response) override {
    auto* reactor = context->DefaultReactor();
    state_.add(*request, response, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* Erase(grpc::CallbackServerContext* context,
                                  const pb::EraseRequest* request, pb::EraseResponse*) override {
    auto* reactor = context->DefaultReactor();
    state_.erase(*request, reactor);
    return reactor;
  }
  grpc::ServerUnaryReactor* ReportError(grpc::CallbackServerContext* context,
                                        const pb::ReportErrorRequest* request,
                                        pb::ReportErrorResponse* response) override {
    auto* reactor = context->DefaultReactor();
    state_.report_error(*request, response, reactor);
    return reactor;
  }

 private:
  CoordinationState& state_;
};

}  // namespace

// Declared in this order so that they are destroyed server first (no new calls), then the
// handler it calls, then the state.
struct CoordinationService::Impl {
  std::unique_ptr<CoordinationState> state;
  std::unique_ptr<Handler> handler;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

std::unique_ptr<CoordinationService> CoordinationService::start(
    const std::string& bind_address, std::vector<CoordinationTask> tasks,
    CoordinationOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->state = std::make_unique<CoordinationState>(std::move(tasks), options);
  impl->handler = std::make_unique<Handler>(*impl->state);

  // Clients ping every 30 s, also between calls (coordination_client.cc).
  impl->server = start_grpc_server(bind_address, impl->handler.get(), options.max_message_bytes,
                                   std::chrono::milliseconds(10000), "coordination service",
                                   "coordinator", &impl->port);
  return std::unique_ptr<CoordinationService>(new CoordinationService(std::move(impl)));
}

CoordinationService::CoordinationService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CoordinationService::~CoordinationService() {
  // Parked calls first: Server::Shutdown waits for every call in flight to finish.
  impl_->state->stop();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  impl_->server->Wait();
}

int CoordinationService::port() const { return impl_->port; }

}  // namespace strata::distribute
