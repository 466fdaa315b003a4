// WorkerClient: the coordinator's connection to one worker task's WorkerService
// (worker_service.h), as a ClosureRunner. A worker that cannot be reached, dies during a call or
// stops answering keepalive pings is reported as unavailable (its closure is re-queued); what
// the worker's step function raised comes back as a user error.
//
// gRPC stays behind the pointer: this header includes neither gRPC nor protobuf.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "distribute/parameter_server/closure_runner.h"
#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

class WorkerClient final : public ClosureRunner {
 public:
  // `task`: "/job:worker/replica:0/task:1"; `address`: "host:port". Connects lazily.
  // `closure_timeout`: the longest one closure may run before the worker counts as hung.
  WorkerClient(std::string task, std::string address, ParameterServerOptions options = {},
               std::chrono::milliseconds closure_timeout = std::chrono::minutes(10));
  ~WorkerClient() override;

  std::string task() const override;
  ClosureOutcome run(const Closure& closure) override;
  bool prepare(const WorkerSetup& setup) override;
  // Ends the worker task's Server::join(); CoordinationError when it does not answer.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
