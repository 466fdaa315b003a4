// WorkerCluster: this process's place in a multi-worker job and its links to the other workers:
// the coordination service (hosted here when this task leads: the chief, else the master, else
// worker 0), this task's client of it (rendezvous store, heartbeats, errors posted for all), and
// the Gloo communicator with one rank per worker (the chief is worker 0, the workers follow).
//
// Made by MultiWorkerMirroredStrategy; null for a cluster of a single training task.
//
// Elastic (CommunicationOptions::elastic): the tasks are slots and the workers are the current
// membership of the coordination service (CoordinationOptions::elastic_min_tasks), a Gloo
// communicator per generation (ElasticGroup). num_workers(), worker_index() and communicator()
// are the current generation's; reform() moves to the next one. A member that leaves the
// membership aborts the current communicator at once (a watcher reads the heartbeats), so no
// collective waits for a dead worker.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distribute/cluster/coordination/key_value_store.h"
#include "distribute/cluster/resolvers/cluster_resolver.h"
#include "distribute/collectives/communicator.h"
#include "distribute/communication_options.h"

namespace strata::distribute {

class CoordinationService;
class CoordinationClient;
class GlooCommunicator;
class ElasticGroup;

class WorkerCluster {
 public:
  // Reads the cluster and this task from `resolver`, checks them (ValueError naming the source
  // and the fix), and when there are several training tasks joins them: waits until every one
  // is up (register_timeout), then connects the Gloo mesh. Null when the cluster is empty or
  // has a single training task. `who` names the strategy in errors.
  static std::unique_ptr<WorkerCluster> join(const ClusterResolver& resolver,
                                             const CommunicationOptions& options, const char* who);
  ~WorkerCluster();
  WorkerCluster(const WorkerCluster&) = delete;
  WorkerCluster& operator=(const WorkerCluster&) = delete;

  int num_workers() const;
  int worker_index() const;
  bool is_chief() const { return worker_index() == 0; }
  // "chief 0 (host:2222)", "worker 1 (host:2223)".
  const std::string& task_name(int worker) const;

  // ---- Elastic jobs ----
  bool elastic() const { return group_ != nullptr; }
  // The slots (TF_CONFIG's chief and worker tasks): the most workers the job may have.
  int num_slots() const { return int(task_names_.size()); }
  // The current membership's generation (0 when not elastic), and the newest one this worker's
  // heartbeats brought back: past generation(), the members changed.
  uint64_t generation() const;
  uint64_t generation_seen() const;
  // The group of the next membership holding this worker, formed within `timeout`
  // (CoordinationError naming the last failure after it, or at once when the job failed).
  // After a failed collective it first tells the coordination service of the broken
  // connection, which then drops a silent member within seconds.
  void reform(std::chrono::milliseconds timeout);

  // One rank per worker, this worker's rank worker_index().
  std::shared_ptr<Communicator> communicator() const;
  // The coordination service's store, shared by every worker (the client this task talks to it
  // with): where cross-process groups rendezvous (the NCCL unique id).
  KeyValueStore& store() const;
  // Fails the pending collective and every later one with `reason` (another task died).
  void abort(const std::string& reason);
  // Also called, with the error, when the coordination service reports a task dead or another
  // task's error (as the Gloo communicator is aborted): how a group of GPU collectives that a
  // worker waits in learns that a peer is gone. The id for remove_error_hook, which returns
  // only once no call of the hook is running.
  int add_error_hook(std::function<void(const std::string&)> hook);
  void remove_error_hook(int id);
  // Posts this worker's fatal error for the whole job (others stop with it), unless an error
  // is already known; never throws.
  void report_error(const std::string& message);
  // The job's error as this worker knows it ("" when none).
  std::string known_error() const;

 private:
  WorkerCluster() = default;

  int worker_index_ = 0;
  std::vector<std::string> task_names_;
  bool failed_ = false;
  std::chrono::milliseconds linger_{0};  // how long a failed coordinator keeps its service up
  std::unique_ptr<CoordinationService> service_;
  std::unique_ptr<CoordinationClient> client_;
  std::shared_ptr<GlooCommunicator> gloo_;
  // Elastic: the group, its current view (guarded by view_mutex_: the watcher reads it) and
  // the watcher that aborts a view's communicator once one of its members has left.
  struct View;
  std::unique_ptr<ElasticGroup> group_;
  mutable std::mutex view_mutex_;
  std::shared_ptr<const View> view_;
  std::thread watcher_;
  std::condition_variable watcher_wake_;
  bool watcher_stop_ = false;
  void watch_membership();
  std::shared_ptr<const View> view() const;
  std::mutex hooks_mutex_;
  int next_hook_ = 0;
  std::map<int, std::function<void(const std::string&)>> error_hooks_;
};

}  // namespace strata::distribute
