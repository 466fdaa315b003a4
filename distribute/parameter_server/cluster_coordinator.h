// ClusterCoordinator: schedules closures on the workers of a parameter-server cluster
// (TensorFlow's tf.distribute.coordinator.ClusterCoordinator), with TensorFlow's semantics:
//
//   ClusterCoordinator coordinator(strategy);
//   PerWorkerDataset data = coordinator.create_per_worker_dataset("train_data");
//   PerWorkerIterator it = data.iterator();
//   for (int i = 0; i < steps; ++i) coordinator.schedule("train_step", {}, &it);
//   coordinator.join();
//
// - A closure goes to any free worker, from one queue (one thread per worker takes the next).
// - A worker that fails during a closure (killed, cut off, hung past keepalive, preempted) puts
//   the closure back at the queue's front (at-least-once) and is retried in the background for
//   as long as the coordinator lives; when it answers again its per-worker datasets are rebuilt
//   and it takes closures again (TensorFlow keeps trying too).
// - With no worker able to take closures for worker_recovery_timeout_seconds, the closures
//   waiting fail and schedule() / join() / done() raise a CoordinationError naming every worker
//   and the option, once; a worker that answers later takes closures again. No call waits
//   without bound.
// - A parameter server that fails is fatal: schedule(), join() and done() raise a
//   CoordinationError naming it, from then on.
// - The first error a step function raises (or a call fails with, for a reason retrying cannot
//   fix: a result over max_message_bytes, a closure past closure_timeout_seconds) cancels the
//   closures still queued (their values raise CancelledError) and is raised once, from join(),
//   done() or the next schedule(), as the same error class; then it is cleared.
// - RemoteValues keep their results on the coordinator: they can be fetched after their worker
//   died.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distribute/parameter_server/closure_runner.h"
#include "distribute/parameter_server/remote_value.h"

namespace strata {
class Model;
}

namespace strata::distribute {

struct CoordinatorOptions {
  // How often a failed worker is asked again whether it is back (for as long as the coordinator
  // lives).
  double worker_retry_interval_seconds = 0.5;
  // How long closures may wait with no worker able to take them (every worker failed, not
  // started yet, or finishing a closure that timed out) before they fail with a CoordinationError
  // naming the workers and this option (TensorFlow waits for ever; a bound names the culprit).
  // The workers are still retried: one that answers later takes closures again.
  double worker_recovery_timeout_seconds = 600;
  // The longest one closure may run on a worker. 0 (the default): no limit, as in TensorFlow,
  // which has no per-closure timeout: a worker that dies or hangs is seen by the channel's
  // keepalive pings (ParameterServerOptions::keepalive_*) and its closure runs elsewhere. When
  // set, a closure still running at the deadline on a worker that answers is an error raised
  // from join() naming this option (not re-run elsewhere: the step may be applying its updates);
  // the worker takes closures again once idle. A worker that does not answer at the deadline
  // counts as failed (its closure is re-queued).
  double closure_timeout_seconds = 0;
  // How often the parameter servers are pinged (strategy constructor only).
  double ps_ping_interval_seconds = 1;
};

class ClusterCoordinator;
class ParameterServerStrategy;

// An iterator every worker has its own copy of (TensorFlow's PerWorkerValues of iterators): a
// closure scheduled with it reads the next element of *its* worker's iterator.
class PerWorkerIterator {
 public:
  int64_t dataset_id() const { return dataset_id_; }

 private:
  friend class PerWorkerDataset;
  explicit PerWorkerIterator(int64_t id) : dataset_id_(id) {}
  int64_t dataset_id_;
};

// A dataset built on every worker from a registered dataset function (rebuilt on a worker that
// comes back, so a restarted worker starts its iterator over, as in TensorFlow).
class PerWorkerDataset {
 public:
  int64_t id() const { return id_; }
  const std::string& function() const { return function_; }
  PerWorkerIterator iterator() const { return PerWorkerIterator(id_); }

 private:
  friend class ClusterCoordinator;
  PerWorkerDataset(int64_t id, std::string function) : id_(id), function_(std::move(function)) {}
  int64_t id_;
  std::string function_;
};

class ClusterCoordinator {
 public:
  // Coordinates the workers of `strategy`'s cluster over gRPC (this task is the coordinator),
  // and pings its ps tasks every second: one that stops answering is a fatal error naming it.
  explicit ClusterCoordinator(std::shared_ptr<ParameterServerStrategy> strategy,
                              CoordinatorOptions options = {});
  // Over the given workers (one runner each).
  explicit ClusterCoordinator(std::vector<std::unique_ptr<ClosureRunner>> workers,
                              CoordinatorOptions options = {});
  // Waits for the closures running now, cancels the queued ones.
  ~ClusterCoordinator();
  ClusterCoordinator(const ClusterCoordinator&) = delete;
  ClusterCoordinator& operator=(const ClusterCoordinator&) = delete;

  // Queues the registered step function `function` with `args` (and the worker's own iterator of
  // `iterator`, when given). Raises a pending error first (see above).
  RemoteValue schedule(const std::string& function, std::vector<Tensor> args = {},
                       const PerWorkerIterator* iterator = nullptr);
  // Waits until every scheduled closure has run, then raises a pending error.
  void join();
  // join() for at most `timeout`: false when closures are still queued or running then (a
  // pending error is raised either way).
  bool join_for(std::chrono::milliseconds timeout);
  // Cancels the closures not started yet (their values raise CancelledError saying `reason`);
  // the ones running go on. No error is raised for it. Returns how many were cancelled. Used to
  // stop at a step boundary (a preempted fit: cancel_queued, then join).
  int64_t cancel_queued(const std::string& reason);
  // Whether every scheduled closure has run; raises a pending error.
  bool done();
  // Builds the registered dataset function `function` on every worker.
  PerWorkerDataset create_per_worker_dataset(const std::string& function);

  // The model every worker rebuilds (from its Keras config, with the strategy's variable
  // placement) and hands to step functions as StepContext::model. Workers already running
  // rebuild it before their next closure.
  void set_model(std::shared_ptr<const WorkerModelSpec> model);
  // The same for `model` (built in the strategy's scope): its config, compile config and the
  // strategy's variable placement.
  void set_model(const Model& model);

  // A failure outside any closure that ends the job (a parameter server found dead by a
  // watcher): every later schedule/join/done raises it.
  void report_fatal_error(const std::string& message);

  int num_workers() const;
  // Closures each worker has completed, and how many went back to the queue after a worker
  // failed: for tests and logs.
  std::vector<int64_t> closures_completed_per_worker() const;
  int64_t closures_requeued() const;
  // Closures scheduled and not yet taken by a worker.
  int64_t closures_queued() const;
  // Times worker `index` was (re)prepared: 1 after its first start, +1 per recovery.
  int64_t worker_preparations(int index) const;
  // Whether worker `index` takes closures now (prepared, not failed, not finishing a closure
  // that timed out).
  bool worker_available(int index) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<ParameterServerStrategy> strategy_;
};

}  // namespace strata::distribute
