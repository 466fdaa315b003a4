// PendingWork: a CollectiveWork that another thread completes (an op queued for a background
// thread): wait() blocks until complete() is called and rethrows the error it was given.
#pragma once

#include <condition_variable>
#include <exception>
#include <mutex>

#include "framework/strategy/collective_work.h"

namespace strata::distribute {

class PendingWork : public CollectiveWork {
 public:
  void wait() override {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return finished_; });
    if (error_) std::rethrow_exception(error_);
  }
  bool done() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return finished_;
  }

 protected:
  // Marks the work done (with `error`, or none) and wakes every waiter.
  void complete(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace strata::distribute
