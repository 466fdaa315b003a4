// NcclCommGuard (nccl_comm_guard.h): in every build, since it needs no NCCL header.
#include "distribute/collectives/nccl_comm_guard.h"

#include <thread>

#include "distribute/collectives/communicator.h"

namespace strata::distribute {
namespace {

// How often a wait for a nonblocking call's outcome polls: short next to a collective's set-up,
// and the mutex is free in between for abort().
constexpr auto kPollInterval = std::chrono::microseconds(100);

bool failed(int status) { return status != kNcclSuccess && status != kNcclInProgress; }

// For an error message: NCCL's text, or a fallback should that be out of reach (the library
// failed to load, or returned null), so that describing one error never raises another.
std::string text_or(const char* (*fn)(int), int status) {
  try {
    if (const char* text = fn(status)) return text;
  } catch (const Error&) {
  }
  return "NCCL status " + std::to_string(status);
}

std::string last_error_or_empty(const char* (*fn)(ncclComm*), ncclComm* comm) {
  try {
    if (const char* text = fn(comm)) return text;
  } catch (const Error&) {
  }
  return "";
}

}  // namespace

NcclCommGuard::NcclCommGuard(const NcclCommCalls& calls, std::string label)
    : calls_(calls), label_(std::move(label)) {}

bool NcclCommGuard::publish(ncclComm* comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_) {
    // abort() came while the set-up was connecting: this communicator was never handed to
    // anyone, so ending it here is the only use it gets.
    if (comm != nullptr) calls_.abort(comm);
    return false;
  }
  comm_ = comm;
  return true;
}

void NcclCommGuard::run(const std::string& what, const std::function<int(ncclComm*)>& call,
                        const std::string& fix) {
  int status = kNcclSuccess;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || comm_ == nullptr) throw_closed(what);
    status = call(comm_);
    if (failed(status)) throw_failed(what, status, fix);
  }
  // The outcome of a call NCCL completes in the background: the mutex is held for one poll at a
  // time, so abort() can come in between (and ends the wait, through the flag).
  while (status == kNcclInProgress) {
    std::this_thread::sleep_for(kPollInterval);
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_ || comm_ == nullptr) throw_closed(what);
    int state = kNcclSuccess;
    const int queried = calls_.get_async_error(comm_, &state);
    status = queried != kNcclSuccess ? queried : state;
    if (failed(status)) throw_failed(what, status, fix);
  }
}

bool NcclCommGuard::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_ && comm_ == nullptr) return false;  // aborted, shut down, or marked already
  if (!closed_) {
    closed_ = true;
    reason_ = reason;
  }
  // A shutdown in progress (closed, communicator still held) is cut short: abort is what ends a
  // communicator that may be waiting for a peer.
  abort_locked();
  return true;
}

bool NcclCommGuard::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::string NcclCommGuard::reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

bool NcclCommGuard::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return comm_ != nullptr && !closed_;
}

bool NcclCommGuard::begin_shutdown(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool was_live = comm_ != nullptr && !closed_;
  if (!closed_) {
    closed_ = true;
    reason_ = reason;
  }
  if (!was_live) return false;
  shutting_down_ = true;
  if (failed(calls_.finalize(comm_))) {
    abort_locked();
    return false;
  }
  return true;
}

void NcclCommGuard::end_shutdown(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (comm_ == nullptr || !shutting_down_) return;  // aborted meanwhile, or nothing to end
      int state = kNcclSuccess;
      const int queried = calls_.get_async_error(comm_, &state);
      const int status = queried != kNcclSuccess ? queried : state;
      if (status == kNcclSuccess) {
        calls_.destroy(comm_);  // quiescent: frees the rest locally, without blocking
        comm_ = nullptr;
        return;
      }
      if (status != kNcclInProgress || std::chrono::steady_clock::now() > deadline) {
        abort_locked();
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void NcclCommGuard::throw_closed(const std::string& what) const {
  throw CollectiveError("NCCL " + what + " on " + label_ + ": the communicator was aborted (" +
                        (reason_.empty() ? std::string("it was never connected") : reason_) + ")");
}

void NcclCommGuard::throw_failed(const std::string& what, int status,
                                 const std::string& fix) const {
  // The last error is read while the communicator is certainly alive (mutex_ held).
  const std::string detail = last_error_or_empty(calls_.last_error, comm_);
  throw CollectiveError("NCCL error in " + what + " on " + label_ + ": " +
                        text_or(calls_.error_string, status) +
                        (detail.empty() ? "" : " (" + detail + ")") +
                        (fix.empty() ? "" : "; " + fix));
}

void NcclCommGuard::abort_locked() {
  if (comm_ == nullptr) return;
  calls_.abort(comm_);  // ends the kernels still waiting for peers, then frees the communicator
  comm_ = nullptr;
  shutting_down_ = false;
}

}  // namespace strata::distribute
