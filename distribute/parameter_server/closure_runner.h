// The coordinator's view of one worker task: something that runs closures and can say whether
// its worker answers. WorkerClient implements it over gRPC; tests implement it in-process to pin
// the coordinator's semantics down without processes.
#pragma once

#include <memory>
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

// The coordinator's model, as workers rebuild it: its Keras JSON config, its Keras 3
// compile_config (JSON; empty when not compiled) and where its variables live
// (ParameterServerStrategy::placement_json).
struct WorkerModelSpec {
  std::string model_json;
  std::string compile_config_json;
  std::string placement_json;
};

// What a worker must have before it takes closures.
struct WorkerSetup {
  // Drop every per-worker dataset and the model first (the worker is new, or came back after
  // failing); `datasets` is then all of them, else only those created since.
  bool rebuild = false;
  std::vector<PerWorkerDatasetSpec> datasets;
  // The model to rebuild; null: keep the one it has (or none).
  std::shared_ptr<const WorkerModelSpec> model;
};

class ClosureRunner {
 public:
  virtual ~ClosureRunner() = default;
  // "/job:worker/replica:0/task:1 (host:port)": what errors and logs call it.
  virtual std::string task() const = 0;
  // Runs `closure` to its end. Never throws: the outcome says what happened (kWorkerUnavailable
  // when the worker could not be reached or died during the call, kUserError for what no retry
  // fixes, kTimedOut past the closure timeout).
  virtual ClosureOutcome run(const Closure& closure) = 0;
  // Makes the worker ready for closures (see WorkerSetup). False when the worker does not
  // answer; a strata::Error for what the worker refused (an unknown dataset function, a model
  // it cannot rebuild), which no retry would change.
  virtual bool prepare(const WorkerSetup& setup) = 0;
  // Why the last prepare() returned false ("connection refused", ...), for error messages.
  virtual std::string unavailable_reason() const { return ""; }
  // Whether the worker is idle, still busy with a closure (one that ran past the closure
  // timeout), or does not answer. Asked before a worker whose closure timed out takes another.
  enum class Probe { kIdle, kBusy, kUnreachable };
  virtual Probe probe() { return Probe::kIdle; }
  // Ends the calls in flight and makes later ones return at once (the coordinator is going
  // away). Best effort.
  virtual void cancel() {}
};

}  // namespace strata::distribute
