#include "distribute/cluster/coordination/coordination_service.h"

#include <grpcpp/grpcpp.h>

#include "distribute/cluster/coordination/coordination_handler.h"
#include "distribute/cluster/coordination/coordination_state.h"
#include "distribute/cluster/grpc_setup.h"

namespace strata::distribute {

using coordination_internal::CoordinationHandler;
using coordination_internal::CoordinationState;

// Declared in this order so that they are destroyed server first (no new calls), then the
// handler it calls, then the state.
struct CoordinationService::Impl {
  std::unique_ptr<CoordinationState> state;
  std::unique_ptr<CoordinationHandler> handler;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

std::unique_ptr<CoordinationService> CoordinationService::start(
    const std::string& bind_address, std::vector<CoordinationTask> tasks,
    CoordinationOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->state = std::make_unique<CoordinationState>(std::move(tasks), options);
  impl->handler = std::make_unique<CoordinationHandler>(*impl->state);

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
