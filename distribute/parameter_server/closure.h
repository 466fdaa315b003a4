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
    kOk,  // `values` holds the function's results
    // An error no retry would fix, raised from join(): the step function raised, or the call
    // failed for a reason other than the worker's loss (a result over max_message_bytes, a
    // malformed message, a result that does not decode). `error_type` and `message` say what.
    // Never re-run: the step may have pushed its updates already.
    kUserError,
    kPsUnavailable,      // a parameter server did not answer the worker: `message` names it
    // The worker is gone (killed, cut off, restarted, hung past keepalive, being preempted):
    // the closure goes back to the queue (at-least-once) and the worker is retried.
    kWorkerUnavailable,
    // The closure ran past CoordinatorOptions::closure_timeout_seconds on a worker that still
    // answers (it goes on with the step): an error raised from join() naming the option, not a
    // re-run; the worker takes closures again once it is idle.
    kTimedOut,
  };
  Kind kind = Kind::kOk;
  std::vector<Tensor> values;
  std::string error_type;  // "ValueError", "ShapeError", ... (error_transport.h)
  std::string message;
};

}  // namespace strata::distribute
