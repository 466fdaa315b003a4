// MultiWorkerMirroredStrategy: synchronous data parallelism across processes and machines
// (tf.distribute.MultiWorkerMirroredStrategy). The same program runs on every machine, each told
// its role by TF_CONFIG (or another ClusterResolver); every worker holds a copy of every variable
// on each of its local devices (every GPU, else the logical CPU devices), the global batch is
// split over the replicas of all workers, and gradients are summed across all of them before
// one identical update everywhere: on GPUs with NCCL, in one NCCL communicator spanning every
// worker's GPUs (NCCL itself combines a machine's GPUs first, then crosses the network); else
// first among a worker's replicas, then across workers (Gloo over TCP). Variables start from
// the chief's values (broadcast when they are made); metrics and losses are combined over every
// worker; only the chief writes the real checkpoints and summaries.
//
//   // TF_CONFIG='{"cluster": {"worker": ["host0:20000", "host1:20000"]},
//   //             "task": {"type": "worker", "index": 0}}'      (index 1 on host1)
//   distribute::MultiWorkerMirroredStrategy strategy;     // waits until every worker is up
//   { auto scope = strategy.scope(); model = build_model(); model->compile(...); }
//   model->fit(x, y, FitOptions().batch_size(64 * strategy.num_replicas_in_sync()));
//
// A cluster of one training task (or no TF_CONFIG) behaves as MirroredStrategy. Nothing waits
// forever: a collective that waits longer than CommunicationOptions::timeout_seconds, or a
// worker that dies or is cut off (heartbeat_timeout_seconds), fails every worker with an error
// naming the task and the operation. (Over NCCL only the set-up has that timeout: a GPU
// collective ends when the coordination service reports a peer dead or failed, ncclCommAbort.)
//
// Elastic (CommunicationOptions().elastic(ElasticOptions().min_workers(2))): a worker lost
// does not end the job. Each training step starts from a snapshot of this worker's state; when
// a step fails because a member left, the survivors re-form without it, agree on the furthest
// step any of them completed, take that worker's snapshot by broadcast (variables, optimizer
// slots and iterations, metric sums, BatchNormalization statistics, the generator) and go on,
// the global batch split over the workers left. A worker that joins is admitted at a step
// boundary and receives the same, with fit's place (epoch, step, input position).
// (multi_worker_mirrored_elastic.cc; docs/architecture.md "Elastic training".)
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distribute/cluster/resolvers/cluster_resolver.h"
#include "distribute/communication_options.h"
#include "distribute/local_replicas.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

class MirroredVariable;
class ReplicatedVariable;
class SyncOnReadVariable;
class WorkerCluster;

class MultiWorkerMirroredStrategy final : public Strategy {
 public:
  // cluster_resolver null: TFConfigClusterResolver (TF_CONFIG). devices: this worker's replicas
  // (as MirroredStrategy's; empty: every GPU, else every logical CPU device, as TensorFlow's).
  explicit MultiWorkerMirroredStrategy(std::shared_ptr<ClusterResolver> cluster_resolver = nullptr,
                                       CommunicationOptions options = {},
                                       const std::vector<std::string>& devices = {});
  ~MultiWorkerMirroredStrategy() override;

  std::string name() const override { return "MultiWorkerMirroredStrategy"; }
  int num_replicas_in_sync() const override { return num_workers() * replicas_->size(); }
  std::vector<Device> worker_devices() const override { return replicas_->devices(); }
  int num_workers() const override;
  int worker_index() const override;
  void run_replicas(const std::function<void(int)>& fn) override;
  Tensor gather_outputs(const PerReplica& outputs, const DistributedBatch& batch) override;
  size_t gradient_bucket_bytes() const override;
  int64_t agree_on_unsharded_batch(int64_t samples, uint64_t fingerprint, bool first,
                                   AutoShardPolicy policy) override;
  // What the last step's state all-gather carried: the first worker (in worker order) whose
  // SIGTERM / SIGINT was pending when it joined that all-gather. The same on every worker.
  TerminationRequest termination_request() const override;
  // The state every step exchanges after it (synchronize_state) rides on the step's last
  // gradient all-reduce when the step says its state is final (Model::train_step: fit) and
  // this worker has one replica: one collective per step. Otherwise (several local replicas,
  // custom loops, evaluate, predict, a state over kMaxFoldedStateBytes) one all-gather.
  std::optional<StepStateFold> fold_step_state(int local_replica) override;
  static constexpr int64_t kMaxFoldedStateBytes = int64_t(1) << 20;
  // How many steps' state exchanges went each way (tests, benchmarks).
  struct StateExchangeCounts {
    int64_t folded = 0;
    int64_t separate = 0;
  };
  StateExchangeCounts state_exchange_counts() const;

  // ---- Elastic (CommunicationOptions::elastic) ----
  bool elastic() const override { return elastic_ != nullptr; }
  void enter_training_loop(const LoopPosition* position) override;
  void leave_training_loop() override;
  std::unique_ptr<DistributedIterator> distribute_input(BatchSource source,
                                                        const InputOptions& options) override;
  PerReplica run_step(const std::function<Tensor(const data::Element&)>& fn,
                      const DistributedBatch& batch) override;
  // What the elastic machinery did on this worker (tests, benchmarks): steps completed, groups
  // re-formed, state synchronizations (each a broadcast from the furthest worker), and steps
  // this worker took over done by another rather than ran (it was one step behind).
  struct ElasticCounts {
    int64_t completed_steps = 0;
    int64_t reformations = 0;
    int64_t synchronizations = 0;
    int64_t steps_taken_over = 0;
    // The current membership's generation, and the newest one this worker has heard of.
    uint64_t generation = 0;
    uint64_t generation_seen = 0;
  };
  ElasticCounts elastic_counts() const;
  // Tests: called in each elastic synchronization once the members have agreed who holds the
  // state, before it is broadcast (a test kills its process there).
  void set_elastic_synchronization_hook(std::function<void()> hook);

  const ClusterResolver& cluster_resolver() const { return *resolver_; }
  const CommunicationOptions& communication_options() const { return options_; }
  // "worker 1 (host:port)": a worker as errors name it.
  std::string task_name(int worker) const;

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override;
  void sum_across_workers(Tensor& total, double& count) const override;

 private:
  // After every step, on every worker alike (one all-gather): each SyncOnRead variable (metric
  // state) learns the other workers' sum, the mirrored aggregations deferred to the step's end
  // (MirroredVariable::defer_aggregation_to_step_end) are done, the random generators agree,
  // and every worker learns which workers received a termination signal (termination_request).
  void synchronize_state();
  struct StepStateRow;
  // This worker's row of the exchange (and what it covers); then every worker's rows applied.
  std::shared_ptr<StepStateRow> collect_step_state();
  void apply_step_state(const StepStateRow& state, const std::vector<double>& values);

  // ---- Elastic (multi_worker_mirrored_elastic.cc) ----
  struct Elastic;
  std::unique_ptr<Elastic> elastic_;  // null: not elastic
  // Runs `step` (one attempt of a step with the current workers) until it completes, re-forming
  // and synchronizing after a member left; false when the step was taken over from another
  // worker (it had completed it) instead of run here.
  bool run_elastic_step(const std::function<void()>& step);
  // Re-forms the group (after a failure, or for a worker that joins) unless `reform` is false,
  // then brings every member to the furthest member's snapshot; true when that covered the
  // step this worker has in flight.
  bool synchronize_members(bool reform);
  // This worker's state now, with `position` (the loop's, LoopPosition::save) as its place.
  void take_snapshot(std::vector<int64_t> position);
  std::vector<int64_t> loop_position() const;
  void load_snapshot(const std::vector<int64_t>& words, size_t state_words);
  void track_for_elastic(std::shared_ptr<ReplicatedVariable> v);

  std::shared_ptr<ClusterResolver> resolver_;
  CommunicationOptions options_;
  std::unique_ptr<WorkerCluster> cluster_;  // null: a single worker
  std::unique_ptr<LocalReplicas> replicas_;
  std::mutex state_vars_mutex_;  // guards the three lists below (variables are made on any thread)
  std::vector<std::weak_ptr<SyncOnReadVariable>> sync_on_read_;
  // The deferred kMean variables, and the kOnlyFirstReplica ones (also guarded by the mutex).
  std::vector<std::weak_ptr<MirroredVariable>> step_end_means_;
  std::vector<std::weak_ptr<MirroredVariable>> step_end_first_replica_;
  mutable std::mutex termination_mutex_;  // guards termination_ (set and read on any thread)
  TerminationRequest termination_;        // as the last state all-gather carried it
  mutable std::mutex folded_mutex_;  // guards the three below
  std::shared_ptr<StepStateRow> folded_state_;  // this step's, when its last bucket carried it
  std::vector<double> folded_rows_;             // every worker's row from that bucket
  StateExchangeCounts exchange_counts_;
};

}  // namespace strata::distribute
