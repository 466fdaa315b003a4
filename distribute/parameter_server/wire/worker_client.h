// WorkerClient: the coordinator's connection to one worker task's WorkerService
// (worker_service.h), as a ClosureRunner. Which gRPC status means what (TensorFlow's
// _is_worker_failure):
//
//   UNAVAILABLE (unreachable, died, cut off, keepalive saw it hang), CANCELLED (the call was
//   cut by the worker's loss or by cancel()), ABORTED (the worker is stopping: preempted)
//       -> the worker is gone: kWorkerUnavailable, the closure is re-queued;
//   DEADLINE_EXCEEDED (closure_timeout) -> the worker is asked whether it answers: if it does,
//       the closure ran too long (kTimedOut, an error naming the option, not re-run); if not, it
//       hung (kWorkerUnavailable);
//   anything else (RESOURCE_EXHAUSTED: a message over max_message_bytes; INVALID_ARGUMENT,
//       UNIMPLEMENTED, INTERNAL, UNKNOWN, ...) -> kUserError naming the worker, the function and
//       the status: retrying would only re-apply the step's updates.
//
// What the worker's step function raised comes back as a user error of its class. run() never
// throws: a result that does not decode is a user error too.
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
  // `closure_timeout`: the longest one closure may run (CoordinatorOptions::closure_timeout_
  // seconds); zero: no limit.
  WorkerClient(std::string task, std::string address, ParameterServerOptions options = {},
               std::chrono::milliseconds closure_timeout = std::chrono::milliseconds(0));
  ~WorkerClient() override;

  std::string task() const override;
  ClosureOutcome run(const Closure& closure) override;
  // False when the worker is gone (as for run); a strata::Error naming the status for what no
  // retry fixes (a model over max_message_bytes, a request the worker refuses).
  bool prepare(const WorkerSetup& setup) override;
  std::string unavailable_reason() const override;
  Probe probe() override;
  void cancel() override;
  // Ends the worker task's Server::join(); CoordinationError when it does not answer.
  void shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::distribute
