// Strategy: TensorFlow's tf.distribute.Strategy, the base of every distribution strategy
// (distribute/: MirroredStrategy, CentralStorageStrategy, OneDeviceStrategy,
// MultiWorkerMirroredStrategy, ParameterServerStrategy). It lives in framework/ because the one
// fit loop calls it; the implementations live in distribute/.
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
//
// The training loops (framework/trainer/) reach a strategy only through distribute_input(),
// run_step(), join() and termination_request(), and callbacks through is_chief() /
// should_checkpoint(): a strategy whose replicas live in other processes or machines overrides
// those, not the loops.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/backend/kernel_params.h"
#include "framework/strategy/auto_shard.h"
#include "framework/strategy/distributed_dataset.h"
#include "framework/strategy/distributed_input.h"
#include "framework/strategy/distributed_values.h"
#include "framework/variables/creator_stack.h"

namespace strata::distribute {

class RemoteTraining;  // remote_training.h

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

  // ---- Where this process stands (TensorFlow's strategy.extended) ----
  // The workers (processes) training together and this one's index among them. A single-process
  // strategy is one worker; multi-worker and parameter-server strategies override these.
  virtual int num_workers() const { return 1; }
  virtual int worker_index() const { return 0; }
  // The worker that writes checkpoints and summaries for the whole job (TensorFlow's chief).
  virtual bool is_chief() const { return worker_index() == 0; }
  // Whether this worker's checkpoints and summaries are the real ones (extended.should_checkpoint,
  // should_save_summary); the others write to a temporary place (callbacks/write_path.h).
  virtual bool should_checkpoint() const { return is_chief(); }
  virtual bool should_save_summary() const { return is_chief(); }
  // This worker's replicas: worker_devices().size(); num_replicas_in_sync() counts all workers'.
  int num_local_replicas() const { return int(worker_devices().size()); }
  // What this worker's input pipeline is (tf.distribute.InputContext): one pipeline per worker.
  InputContext input_context() const;

  // ---- What the training loops call: input, steps, sync ----
  // The distributed input of one loop: draws global batches from `source` (an epoch's batches, a
  // dataset's iterator) and yields this worker's part of each, split over its replicas. The
  // global batch size, checks and each replica's batch fraction live in the iterator and the
  // batches it yields. `source` must outlive the iterator.
  virtual std::unique_ptr<DistributedIterator> distribute_input(BatchSource source,
                                                                const InputOptions& options);
  // Runs fn once per local replica on its part of `batch`, each on its replica thread with its
  // ReplicaContext (batch_fraction() set from the batch), device scope and share of the cores;
  // returns their results (local replica order) once all are done, rethrowing the first error.
  virtual PerReplica run_step(const std::function<Tensor(const data::Element&)>& fn,
                              const DistributedBatch& batch);
  // Returns once every step run so far has finished everywhere (a strategy that runs steps
  // asynchronously, such as a parameter-server one, waits here; synchronous ones return at once).
  // The loops call it before callbacks read state at the end of an epoch or a loop.
  virtual void join() {}

  // Runs fn(replica) once per local replica, each on its replica thread with its ReplicaContext,
  // device scope and share of the cores; returns when all are done and rethrows the first error.
  virtual void run_replicas(const std::function<void(int replica)>& fn) = 0;

  // tf.distribute.Strategy.run: fn once per replica; its results, one per replica. Each replica's
  // batch_fraction() is 1 / num_replicas_in_sync() (equal shares).
  PerReplica run(const std::function<Tensor()>& fn);
  // The same with each replica's part of a distributed batch as the argument (run_step).
  PerReplica run(const std::function<Tensor(const data::Element&)>& fn, const DistributedBatch& batch) {
    return run_step(fn, batch);
  }
  // Combines per-replica values: elementwise over replicas (axis unset) or also along `axis`
  // (kSum: the sum over replicas of each value's sum along axis; kMean: the mean over all
  // elements along axis of every replica, i.e. weighted by their sizes). kSum and kMean only.
  Tensor reduce(ReduceOp op, const PerReplica& value, std::optional<int> axis = std::nullopt) const;
  // Result of a single value (the default strategy's run): returned as is.
  Tensor reduce(ReduceOp op, const Tensor& value, std::optional<int> axis = std::nullopt) const;

  // Each global batch of `dataset` split evenly over the replicas (distribute_input); with
  // several workers, divided among them by `policy` (auto_shard.h).
  DistributedDataset experimental_distribute_dataset(const data::Dataset& dataset,
                                                     AutoShardPolicy policy = AutoShardPolicy::kAuto);
  // One dataset per input pipeline (one per worker), made by `fn` with this worker's
  // input_context(); its batches are per-replica batches: local replica r takes the r-th of each
  // group of num_local_replicas() consecutive batches.
  DistributedDataset distribute_datasets_from_function(
      const std::function<data::Dataset(const InputContext&)>& fn);

  // Splits one global batch over the replicas as distribute_input does (expected_global_size: 0
  // when this batch fixes it, -1 for any size).
  DistributedBatch split_batch(const data::Element& batch, int64_t expected_global_size,
                               const char* who) const;

  // predict's outputs of one distributed batch, in input order: this worker's replicas' parts
  // put together, and with several workers every worker's (each gets all of them).
  virtual Tensor gather_outputs(const PerReplica& outputs, const DistributedBatch& batch);

  // The size of the gradient buckets all-reduced during the backward pass (TensorFlow's
  // CommunicationOptions.bytes_per_pack; 25 MB, as PyTorch DDP, unless a strategy says).
  virtual size_t gradient_bucket_bytes() const;

  // What a strategy exchanges once per step after the step (MultiWorkerMirroredStrategy: metric
  // sums, BatchNormalization statistics, random offsets, termination signals), handed instead to
  // the step's last gradient all-reduce, so that a step makes one collective, not two.
  // `payload` (float32, 1-D, the same size on every replica) is summed over the replicas with
  // the gradients; `receive` gets that sum. compute_reduced_gradients asks each replica
  // (`local_replica`) for it after the backward pass when its caller says the step's state is
  // final (StepState::kFinal, as Model::train_step). Default: none (the strategy exchanges its
  // state on its own, if it has any).
  struct StepStateFold {
    Tensor payload;
    std::function<void(const Tensor& summed)> receive;
  };
  virtual std::optional<StepStateFold> fold_step_state(int /*local_replica*/) {
    return std::nullopt;
  }

  // Each worker's batches its own (AutoShardPolicy::kOff, or kFile: every worker reads its own
  // files): every worker's batch of this step, compared. Returns the global batch (the sum of
  // every worker's `samples`); ValueError naming `policy`'s remedies when the workers' first
  // batches are identical (`first`, same `fingerprint`) or only some of them have a batch
  // (samples 0 marks a worker whose dataset ended). Single-worker strategies: samples.
  virtual int64_t agree_on_unsharded_batch(int64_t samples, uint64_t /*fingerprint*/,
                                           bool /*first*/, AutoShardPolicy /*policy*/) {
    return samples;
  }
  // ---- Preemption: SIGTERM / SIGINT while fit() (or a PreemptionCheckpointHandler) runs ----
  // Whether the loop must stop after the step that just ended: the signal (SIGTERM or SIGINT;
  // 0: carry on) and, in a multi-worker job, the task that received it ("worker 1 (host:port)";
  // empty for this process). Single-process strategies answer with this process's own signal.
  // MultiWorkerMirroredStrategy answers with what the all-gather that ends every step carried:
  // each worker's flag, so every worker gets the same answer after the same step and all stop
  // together, wherever the signal landed.
  struct TerminationRequest {
    int signal = 0;
    std::string received_by;
    explicit operator bool() const { return signal != 0; }
  };
  virtual TerminationRequest termination_request() const;

  // ---- Elastic training (MultiWorkerMirroredStrategy with CommunicationOptions::elastic) ----
  // Whether workers may leave and join while the job runs. The input is then divided by data
  // (each worker's part of every global batch, split again when the workers change), never by
  // file, since a worker's files would leave with it.
  virtual bool elastic() const { return false; }
  // A training loop's place as words: what a worker that joins a running elastic job takes over
  // besides the variables (fit: the epoch, the step, the input position). `save` describes the
  // training step in flight (its batch drawn, not done) and returns nothing outside training
  // steps (validation), where nobody can join; `restore` puts the loop there before its first
  // step.
  struct LoopPosition {
    std::function<std::vector<int64_t>()> save;
    std::function<void(const std::vector<int64_t>&)> restore;
  };
  // fit calls enter_training_loop once its state is built, before its first step, and
  // leave_training_loop when it ends (`position` lives until then); evaluate, predict and fit's
  // validation enter one whose save() is always empty (loops nest). An elastic strategy then
  // brings a worker that joins a running job to the job's state, the loop's place included.
  // Others: nothing.
  virtual void enter_training_loop(const LoopPosition* /*position*/) {}
  virtual void leave_training_loop() {}

  // True only for the default strategy (no scope entered).
  virtual bool is_default() const { return false; }
  // A strategy whose training steps run in other processes (ParameterServerStrategy) returns
  // what fit / evaluate on a DatasetCreator hand them to (remote_training.h); others: null.
  virtual RemoteTraining* remote_training() { return nullptr; }

  // Expires when the strategy is destroyed: a model keeps it to know whether the strategy that
  // created its variables is still there when fit() wants to re-enter it.
  std::weak_ptr<const bool> liveness() const { return alive_; }

 protected:
  Strategy();
  // The variable creator this strategy pushes while its scope is active.
  virtual VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) = 0;
  // reduce() with several workers: `total` (this worker's reduction of its replicas' values) and
  // `count` (the values or elements it covers) become their sums over every worker, in place.
  virtual void sum_across_workers(Tensor& /*total*/, double& /*count*/) const {}

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
