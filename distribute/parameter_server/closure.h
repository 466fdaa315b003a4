// What the ClusterCoordinator sends a worker, and what comes back. C++ closures cannot travel to
// another process, so a closure is the *name* of a step function registered in the binary every
// task runs (step_registry.h), its argument tensors, and the per-worker dataset whose iterator it
// reads (TensorFlow passes a per-worker iterator as an argument; here it is an id the worker
// resolves to its own iterator).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::distribute {

struct Closure {
  std::string function;         // a registered step function's name
  std::vector<Tensor> args;     // passed as they are
  int64_t dataset_id = -1;      // the per-worker dataset whose iterator it reads; -1: none
};

// How running a closure on a worker ended, seen by the coordinator.
struct ClosureOutcome {
  enum class Kind {
    kOk,                 // `values` holds the function's results
    kUserError,          // the step function raised: `error_type` and `message` say what
    kPsUnavailable,      // a parameter server did not answer the worker: `message` names it
    kWorkerUnavailable,  // the worker itself did not answer (killed, cut off, restarted)
  };
  Kind kind = Kind::kOk;
  std::vector<Tensor> values;
  std::string error_type;  // "ValueError", "ShapeError", ... (error_transport.h)
  std::string message;
};

}  // namespace strata::distribute
