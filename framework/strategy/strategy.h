// Strategy: TensorFlow's tf.distribute.Strategy, the base of every distribution strategy
// (distribute/: MirroredStrategy, CentralStorageStrategy, OneDeviceStrategy, and later the
// multi-worker and parameter-server ones). It lives in framework/ because the one fit loop calls
// it; the implementations live in distribute/.
//
//   distribute::MirroredStrategy strategy({"/cpu:0", "/cpu:1"});
//   {
//     auto scope = strategy.scope();          // variables made here are mirrored
//     model = build_model();
//     model->compile("sgd", "sparse_categorical_crossentropy", {"accuracy"});
//   }
//   model->fit(x, y, FitOptions().batch_size(64));   // re-enters the model's strategy
//
// Custom training loops: strategy.run(fn, batch) runs fn once per replica on its slice of the
// batch; strategy.reduce() combines what they return.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/backend/kernel_params.h"
#include "framework/strategy/distributed_dataset.h"
#include "framework/strategy/distributed_values.h"
#include "framework/variables/creator_stack.h"

namespace strata::distribute {

class Strategy : public std::enable_shared_from_this<Strategy> {
 public:
  virtual ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  // "MirroredStrategy", "CentralStorageStrategy", "OneDeviceStrategy", "DefaultStrategy".
  virtual std::string name() const = 0;
  virtual int num_replicas_in_sync() const = 0;
  // The replicas' devices, replica order (TensorFlow's extended.worker_devices).
  virtual std::vector<Device> worker_devices() const = 0;

  // While the returned guard lives, variables are created by this strategy (mirrored, central,
  // placed ...) and get_strategy() returns it. Re-entrant; entering another strategy's scope
  // inside it is a StateError.
  class Scope {
   public:
    explicit Scope(Strategy* strategy);
    ~Scope();
    Scope(Scope&& other) noexcept;
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;

   private:
    Strategy* strategy_;
  };
  [[nodiscard]] Scope scope();

  // Runs fn(replica) once per replica, each on its replica thread with its ReplicaContext, device
  // scope and share of the cores; returns when all are done and rethrows the first error.
  virtual void run_replicas(const std::function<void(int replica)>& fn) = 0;

  // tf.distribute.Strategy.run: fn once per replica; its results, one per replica. Each replica's
  // batch_fraction() is 1 / num_replicas_in_sync() (equal shares).
  PerReplica run(const std::function<Tensor()>& fn);
  // The same with each replica's part of a distributed batch as the argument.
  PerReplica run(const std::function<Tensor(const data::Element&)>& fn, const DistributedBatch& batch);
  // Combines per-replica values: elementwise over replicas (axis unset) or also along `axis`
  // (kSum: the sum over replicas of each value's sum along axis; kMean: the mean over all
  // elements along axis of every replica, i.e. weighted by their sizes). kSum and kMean only.
  Tensor reduce(ReduceOp op, const PerReplica& value, std::optional<int> axis = std::nullopt) const;
  // Result of a single value (the default strategy's run): returned as is.
  Tensor reduce(ReduceOp op, const Tensor& value, std::optional<int> axis = std::nullopt) const;

  // Each global batch of `dataset` split evenly over the replicas (see batch_split.h).
  DistributedDataset experimental_distribute_dataset(const data::Dataset& dataset);
  // One dataset per input pipeline (one here: all replicas are in this process), made by `fn`;
  // its batches are per-replica batches: replica r takes the r-th of each group of
  // num_replicas_in_sync() consecutive batches.
  DistributedDataset distribute_datasets_from_function(
      const std::function<data::Dataset(const InputContext&)>& fn);

  // Splits one global batch over the replicas (fit does this each step).
  DistributedBatch split_batch(const data::Element& batch, int64_t expected_global_size,
                               const char* who) const;

  // True only for the default strategy (no scope entered).
  virtual bool is_default() const { return false; }

  // Expires when the strategy is destroyed: a model keeps it to know whether the strategy that
  // created its variables is still there when fit() wants to re-enter it.
  std::weak_ptr<const bool> liveness() const { return alive_; }

 protected:
  Strategy();
  // The variable creator this strategy pushes while its scope is active.
  virtual VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) = 0;

 private:
  std::shared_ptr<const bool> alive_ = std::make_shared<const bool>(true);
};

// The strategy of the innermost active scope on this thread, or the default strategy (one
// replica, the current device, plain variables) when none is active (tf.distribute.get_strategy).
std::shared_ptr<Strategy> get_strategy();
// Whether a non-default strategy's scope is active on this thread (tf.distribute.has_strategy).
bool has_strategy();
// The strategy whose scope is active on this thread, or null (no shared ownership needed).
Strategy* current_strategy();

}  // namespace strata::distribute
