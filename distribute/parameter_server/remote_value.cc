#include "distribute/parameter_server/remote_value.h"

namespace strata::distribute {

RemoteValue::RemoteValue() : shared_(std::make_shared<Shared>()) {}

std::vector<Tensor> RemoteValue::fetch() const {
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->cv.wait(lock, [&] { return shared_->state != State::kPending; });
  if (shared_->state == State::kAborted) std::rethrow_exception(shared_->error);
  return shared_->values;
}

Tensor RemoteValue::fetch_one() const {
  std::vector<Tensor> values = fetch();
  if (values.empty()) {
    throw ValueError("RemoteValue.fetch_one: the step function returned no tensors; use fetch()");
  }
  return values.front();
}

RemoteValue::State RemoteValue::state() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->state;
}

void RemoteValue::set_value(std::vector<Tensor> values) const {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    STRATA_CHECK(shared_->state == State::kPending);
    shared_->values = std::move(values);
    shared_->state = State::kReady;
  }
  shared_->cv.notify_all();
}

void RemoteValue::set_error(std::exception_ptr error) const {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    STRATA_CHECK(shared_->state == State::kPending);
    shared_->error = std::move(error);
    shared_->state = State::kAborted;
  }
  shared_->cv.notify_all();
}

const char* remote_value_state_name(RemoteValue::State state) {
  switch (state) {
    case RemoteValue::State::kPending: return "pending";
    case RemoteValue::State::kReady: return "ready";
    case RemoteValue::State::kAborted: return "aborted";
  }
  return "pending";
}

}  // namespace strata::distribute
