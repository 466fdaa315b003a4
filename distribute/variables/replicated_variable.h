// Variables with one copy per replica device (TensorFlow's DistributedVariable family):
//
//   MirroredVariable   (MirroredStrategy's weights, optimizer slots): the copies are kept
//                      identical. In a replica, reads return the local copy and updates combine
//                      over the replicas by the variable's aggregation (kSum / kMean: all-reduce,
//                      kOnlyFirstReplica: replica 0's value, kNone: the local copy alone, for
//                      callers that already combined, like the optimizer with reduced gradients).
//                      Outside replicas (cross-replica), reads return copy 0 and writes go to
//                      every copy (load_weights, set_weights).
//   SyncOnReadVariable (metric state): each replica updates its own copy without communicating;
//                      a cross-replica read combines the copies by the aggregation (kSum: their
//                      sum), so metric results are global.
//
// Checkpoints see one logical value: value() outside replicas.
#pragma once

#include <vector>

#include "framework/variables/variable.h"

namespace strata::distribute {

class ReplicatedVariable : public Variable {
 public:
  const std::vector<VariablePtr>& components() const { return copies_; }
  int num_copies() const { return int(copies_.size()); }
  bool has_replica_copies() const override { return true; }
  Device device() const override { return local().device(); }
  Tensor gradient_handle() const override { return local().gradient_handle(); }
  // Each replica updates its own copy (the gradient was already reduced over the replicas).
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override {
    local().apply_update(update, batch);
  }

 protected:
  // The local replica's copy: what apply_update of this variable's slots reaches.
  Tensor& storage() override { return storage_of(local()); }

  // Copy r on devices[r], all starting from the spec's initial value.
  ReplicatedVariable(const VariableSpec& spec, const std::vector<Device>& devices);
  // The copy of the replica running on this thread; copy 0 outside replicas.
  Variable& local() const;
  // Whether this thread is one of several replicas (then local() is its copy).
  bool in_replica() const;
  // A read of copy `c` recorded as this variable's (its trainable/watched flags decide).
  Tensor read(const Variable& c) const;

 private:
  std::vector<VariablePtr> copies_;
};

class MirroredVariable final : public ReplicatedVariable {
 public:
  MirroredVariable(const VariableSpec& spec, const std::vector<Device>& devices)
      : ReplicatedVariable(spec, devices) {}
  Tensor value() const override { return read(local()); }
  void assign(const Tensor& value) override;
  void assign_add(const Tensor& delta) override;
  void assign_sub(const Tensor& delta) override;
  // A whole gradient: the local copy's update (as ReplicatedVariable). A shard: the local copy's
  // range and its slots' are updated, then written into every other copy (an all-gather
  // through shared memory), and no replica goes on before all ranges are written.
  void apply_update(const VariableUpdate& update, UpdateBatch& batch) override;
  // In a replica of a strategy whose replicas all live in this process, each with its copy in
  // host memory (MirroredStrategy on logical CPU devices): then every copy can be written by
  // every replica. GPU copies keep whole all-reduced gradients (NCCL).
  bool accepts_gradient_shards() const override;

  // MultiWorkerMirroredStrategy, where a collective per update would be a cross-process round
  // trip: updates in a replica change only the local copy, and the strategy combines the copies
  // by the aggregation once per step (MultiWorkerMirroredStrategy::synchronize_state), so the
  // copies may differ inside a step, never after one. For kMean variables that are not trained
  // (BatchNormalization's moving statistics, which Keras makes sync-on-read means): every copy
  // becomes the mean over all replicas of all workers; a moving average is linear, so the mean
  // of the replicas' averages is the average of their means, the values of a collective per
  // update. For kOnlyFirstReplica (the optimizer's iteration count): every copy becomes this
  // worker's first replica's value, as TensorFlow takes each worker's first local replica.
  void defer_aggregation_to_step_end() { aggregate_at_step_end_ = true; }

 private:
  // In a replica: `t` combined over the replicas by the aggregation.
  Tensor aggregate(const Tensor& t, const char* op) const;

  bool aggregate_at_step_end_ = false;
};

class SyncOnReadVariable final : public ReplicatedVariable {
 public:
  SyncOnReadVariable(const VariableSpec& spec, const std::vector<Device>& devices)
      : ReplicatedVariable(spec, devices) {}
  Tensor value() const override;
  void assign(const Tensor& value) override;
  void assign_add(const Tensor& delta) override;
  void assign_sub(const Tensor& delta) override;

  // Several workers (MultiWorkerMirroredStrategy): the sum of this process's copies, and the
  // sum of every other worker's copies (`copies` of them) as of the strategy's last
  // synchronization, which cross-replica reads add in. A cross-replica assign drops it.
  Tensor local_sum() const;
  void set_other_workers(const Tensor& sum, int copies);

 private:
  Tensor other_workers_sum_;
  int other_workers_copies_ = 0;
};

}  // namespace strata::distribute
