// The coordinator's view of one worker task: something that runs closures and can say whether
// its worker answers. WorkerClient implements it over gRPC; tests implement it in-process to pin
// the coordinator's semantics down without processes.
#pragma once

#include <string>
#include <vector>

#include "distribute/parameter_server/closure.h"

namespace strata::distribute {

// A per-worker dataset the coordinator asked for: every worker builds it from the registered
// dataset function `function` (step_registry.h), again whenever the worker comes back.
struct PerWorkerDatasetSpec {
  int64_t id = 0;
  std::string function;
};

class ClosureRunner {
 public:
  virtual ~ClosureRunner() = default;
  // "/job:worker/replica:0/task:1 (host:port)": what errors and logs call it.
  virtual std::string task() const = 0;
  // Runs `closure` to its end. Never throws for what happened on the worker: the outcome says
  // (kWorkerUnavailable when the worker could not be reached or died during the call).
  virtual ClosureOutcome run(const Closure& closure) = 0;
  // Makes the worker ready for closures. With `rebuild` (before its first closure, and after it
  // came back from a failure) the worker drops every per-worker dataset it had and builds
  // `datasets`, which are then all of them, and whatever else it needs (the model); without,
  // it builds the datasets created since. False when the worker does not answer.
  virtual bool prepare(const std::vector<PerWorkerDatasetSpec>& datasets, bool rebuild) = 0;
  // Asks the worker's other work to end (the coordinator is going away). Best effort.
  virtual void cancel() {}
};

}  // namespace strata::distribute
