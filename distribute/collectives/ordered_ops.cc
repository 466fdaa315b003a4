#include "distribute/collectives/ordered_ops.h"

#include <exception>
#include <utility>

#include "distribute/collectives/pending_work.h"
#include "framework/core/device_scope.h"

namespace strata::distribute {

class OrderedOps::Task final : public PendingWork {
 public:
  Task(std::function<void()> op, Device device) : op_(std::move(op)), device_(device) {}

  void execute() {
    std::exception_ptr error;
    try {
      DeviceScope on(device_);
      op_();
    } catch (...) {
      error = std::current_exception();
    }
    op_ = nullptr;  // releases the tensors the op captured before anyone is told
    complete(std::move(error));
  }

 private:
  std::function<void()> op_;
  const Device device_;
};

OrderedOps::~OrderedOps() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OrderedOps::run(const std::function<void()>& op) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return queue_.empty() && !running_; });
  }
  op();
}

std::shared_ptr<CollectiveWork> OrderedOps::submit(std::function<void()> op, Device device) {
  auto task = std::make_shared<Task>(std::move(op), device);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(task);
    if (!thread_.joinable()) thread_ = std::thread([this] { work(); });
  }
  cv_.notify_all();
  return task;
}

void OrderedOps::work() {
  for (;;) {
    std::shared_ptr<Task> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
    }
    task->execute();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = false;
    }
    cv_.notify_all();  // run() may be waiting for the queue to drain
  }
}

}  // namespace strata::distribute
