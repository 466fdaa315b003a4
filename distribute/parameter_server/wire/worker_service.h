// WorkerServer: what a worker task serves over gRPC (worker_service.proto) for the coordinator's
// WorkerClient: Prepare (rebuild the coordinator's model from its Keras config inside the
// strategy's scope, so its variables are handles to the ps tasks' variables; build per-worker
// datasets from registered dataset functions), RunClosure (run a registered step function),
// Ping (busy or idle, answered at once) and Shutdown.
//
// Prepare and RunClosure run one at a time, in arrival order, on the server's own thread: a
// step may take long, and gRPC's callback threads must not wait for it. Every request is
// checked before anything is allocated or run (a malformed one is INVALID_ARGUMENT naming the
// field); at most a few wait (RESOURCE_EXHAUSTED beyond); one whose caller gave up while it
// waited (its deadline passed, the coordinator cancelled it) is dropped, not run; a step whose
// caller gives up while it runs finishes (a step cannot be interrupted halfway through its
// updates), its result is dropped.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <chrono>
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
  // The same for at most `timeout`: whether it was asked.
  bool wait_for_shutdown_for(std::chrono::milliseconds timeout);
  // Preemption: from now on every Prepare and RunClosure, waiting or new, is answered ABORTED
  // naming `reason` (the coordinator re-queues the closure elsewhere); the closure running now
  // finishes and its result goes back.
  void stop_taking_closures(const std::string& reason);
  // Blocks until no request runs or waits.
  void wait_until_idle();
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
