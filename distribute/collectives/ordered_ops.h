// OrderedOps: a communicator's collectives in the order they were issued, the asynchronous ones
// on a thread of its own. Collectives are matched across ranks by their order, so an op issued
// after an asynchronous one may not overtake it: run() waits until every op issued before it has
// finished, then runs on the caller's thread (no hand-off when nothing is pending); submit()
// queues an op behind the others and returns at once. The thread starts with the first submit().
//
// HierarchicalCommunicator (hierarchical_group.cc) uses it for all_reduce_async, whose steps
// (among the local replicas, across workers, back to the local replicas) wait on each other:
// on the caller's thread the backward pass would stop for the whole exchange.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "framework/core/device.h"
#include "framework/strategy/collective_work.h"

namespace strata::distribute {

class OrderedOps {
 public:
  OrderedOps() = default;
  // Waits for the queued ops (each ends: collectives have timeouts and abort()).
  ~OrderedOps();
  OrderedOps(const OrderedOps&) = delete;
  OrderedOps& operator=(const OrderedOps&) = delete;

  // `op` after every op issued before it, on this thread.
  void run(const std::function<void()>& op);
  // `op` after every op issued before it, on the ops' thread, under `device` as the default
  // device (the issuing replica's). The handle's wait() rethrows what `op` threw.
  std::shared_ptr<CollectiveWork> submit(std::function<void()> op, Device device);

 private:
  class Task;
  void work();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  bool running_ = false;  // an op is running on the ops' thread
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::distribute
