// RemoteValue: the result of a closure scheduled on a ClusterCoordinator (TensorFlow's
// tf.distribute.experimental.coordinator.RemoteValue). The values live on the coordinator once
// the closure has run, so they can be fetched after the worker that computed them died.
#pragma once

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "distribute/errors.h"
#include "framework/core/tensor.h"

namespace strata::distribute {

class RemoteValue {
 public:
  enum class State { kPending, kReady, kAborted };

  RemoteValue();
  // Waits for the closure and returns its results; rethrows its error (or CancelledError).
  std::vector<Tensor> fetch() const;
  // The first result alone (for step functions returning one tensor).
  Tensor fetch_one() const;
  State state() const;

  // The coordinator's side.
  void set_value(std::vector<Tensor> values) const;
  void set_error(std::exception_ptr error) const;

 private:
  struct Shared {
    mutable std::mutex mutex;
    std::condition_variable cv;
    State state = State::kPending;
    std::vector<Tensor> values;
    std::exception_ptr error;
  };
  std::shared_ptr<Shared> shared_;
};

const char* remote_value_state_name(RemoteValue::State state);

}  // namespace strata::distribute
