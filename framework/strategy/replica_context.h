// ReplicaContext: what code running on one replica of a distribution strategy may ask of the
// others (TensorFlow's tf.distribute.ReplicaContext). Only the trainer, the optimizer, distributed
// variables and SyncBatchNormalization use it; ordinary layers never do.
//
// Every replica must issue the same collectives in the same order (they are matched by order).
// Outside strategy.run() there is no replica context: current_replica_context() is null and code
// behaves as for a single replica (the "cross-replica context").
#pragma once

#include <functional>
#include <memory>

#include "framework/backend/kernel_params.h"
#include "framework/core/device.h"
#include "framework/core/tensor.h"
#include "framework/strategy/collective_work.h"

namespace strata::distribute {

class ReplicaContext {
 public:
  virtual ~ReplicaContext() = default;

  // The replica's id among every replica in sync, over all workers (TensorFlow's
  // replica_id_in_sync_group): worker w's local replica l is w * replicas_per_worker + l.
  virtual int replica_id_in_sync_group() const = 0;
  virtual int num_replicas_in_sync() const = 0;
  // The replica's index among this process's replicas: what indexes a distributed variable's
  // local copies. Equal to the global id while a strategy has a single worker.
  virtual int local_replica_id() const { return replica_id_in_sync_group(); }
  // The replica's device (its variables' copies and its batch slice live there).
  virtual Device device() const = 0;

  // In place: `t` becomes op (kSum, kMean, kMax, kMin) over every replica's `t`; every replica
  // gets bit-identical values.
  virtual void all_reduce(Tensor& t, ReduceOp op) = 0;
  // The same, behind the caller: `t` must stay alive and untouched until wait().
  virtual std::shared_ptr<CollectiveWork> all_reduce_async(Tensor t, ReduceOp op) = 0;
  // op over every replica's `t` (rank >= 1, the same shape everywhere, dim 0 divisible by
  // num_replicas_in_sync()), split along axis 0 into num_replicas_in_sync() equal parts: this
  // replica gets part replica_id_in_sync_group(), as a new tensor; `t` is not modified. The
  // default all-reduces a copy and keeps the part; communicators do less work.
  virtual Tensor reduce_scatter(const Tensor& t, ReduceOp op);
  // In place: every replica's `t` becomes replica `root`'s.
  virtual void broadcast(Tensor& t, int root) = 0;
  // Returns once every replica has called it.
  virtual void barrier() = 0;

  // The share of the global batch this replica holds in the current step (its samples divided by
  // the global batch's). Losses are scaled by it so that summing the replicas' gradients gives the
  // gradient of the global batch's mean loss (TensorFlow's compute_average_loss). 0 for a replica
  // that got no samples of a final partial batch: it runs on a stand-in sample so the
  // collectives still match, and its loss, gradients and metric updates count for nothing.
  double batch_fraction() const { return batch_fraction_; }
  void set_batch_fraction(double f) { batch_fraction_ = f; }

 private:
  double batch_fraction_ = 1.0;
};

// Runs fn once in this process, in the cross-replica context, while this process's replicas wait
// for it (TensorFlow's ReplicaContext.merge_call): how state that must exist once per process,
// such as the optimizer slots of a custom loop that did not build them first, is made from
// inside a step. Every local replica must call it at the same point.
void merge_call(ReplicaContext& replica, const std::function<void()>& fn);

// This thread's replica context, or null in the cross-replica context.
ReplicaContext* current_replica_context();

// Makes `context` current on this thread for the scope's lifetime (strategies' replica threads).
class ReplicaContextScope {
 public:
  explicit ReplicaContextScope(ReplicaContext* context);
  ~ReplicaContextScope();
  ReplicaContextScope(const ReplicaContextScope&) = delete;
  ReplicaContextScope& operator=(const ReplicaContextScope&) = delete;

 private:
  ReplicaContext* previous_;
};

// True when running on one of several replicas in sync (a replica context with more than one).
inline bool in_multi_replica_context() {
  const ReplicaContext* c = current_replica_context();
  return c != nullptr && c->num_replicas_in_sync() > 1;
}

}  // namespace strata::distribute
