// WorkerServer: what a worker task serves over gRPC (worker_service.proto) for the coordinator's
// WorkerClient: Prepare (rebuild the coordinator's model from its Keras config inside the
// strategy's scope, so its variables are handles to the ps tasks' variables; build per-worker
// datasets from registered dataset functions) and RunClosure (run a registered step function).
// Requests run one at a time, in arrival order, on the server's own thread: a step may take
// long, and gRPC's callback threads must not wait for it.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "distribute/parameter_server/parameter_server_strategy.h"

namespace strata::distribute {

class WorkerServer {
 public:
  // Serves on bind_address ("host:port"; port 0 = a free port) as worker `worker_index` of
  // `strategy`'s cluster. CoordinationError naming the address when it cannot bind.
  static std::unique_ptr<WorkerServer> start(const std::string& bind_address,
                                             std::shared_ptr<ParameterServerStrategy> strategy,
                                             int worker_index);
  int port() const;
  // Blocks until the coordinator asks it to shut down (the job is over).
  void wait_for_shutdown();
  // Closures run to their end so far (for tests and logs).
  int64_t closures_run() const;
  ~WorkerServer();

  WorkerServer(const WorkerServer&) = delete;
  WorkerServer& operator=(const WorkerServer&) = delete;

 private:
  struct Impl;
  explicit WorkerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
