// ParameterServerStrategy (TensorFlow's tf.distribute.ParameterServerStrategy): variables live on
// the cluster's ps tasks, workers compute steps asynchronously, and the coordinator task (the
// chief) schedules them through a ClusterCoordinator.
//
//   auto resolver = TFConfigClusterResolver();
//   auto strategy = std::make_shared<ParameterServerStrategy>(resolver);
//   { auto scope = strategy->scope(); model = build_model(); model->compile(...); }
//   ClusterCoordinator coordinator(strategy);
//
// In scope, each variable is placed on a ps task round-robin, in creation order (TensorFlow's),
// as a RemoteVariable handle; an optimizer slot goes beside its variable
// (VariableSpec::colocate_with); per-replica state read on sync (metrics) stays local. Every task
// of the job (the coordinator and each worker rebuilding the model) makes the same handles:
// the coordinator sends its placement to the workers (placement_json), and creating a variable
// that exists keeps its value. Variable ids on a ps are the variables' names, so one job trains
// one model (or models whose variable names differ).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distribute/cluster/resolvers/cluster_resolver.h"
#include "distribute/parameter_server/parameter_server_options.h"
#include "distribute/parameter_server/partitioners.h"
#include "framework/strategy/strategy.h"

namespace strata::distribute {

// The connection to one ps task (wire/parameter_client.h): internal, so only named here.
class ParameterClient;

class ClusterCoordinator;
class ParameterServerTraining;

class ParameterServerStrategy : public Strategy {
 public:
  // The cluster must have a "ps" and a "worker" job. ValueError naming what is missing; from a
  // resolver, also TensorFlow's other checks (validate_parameter_server_cluster, ps_roles.h).
  // With a `variable_partitioner` (FixedShards / MinSize / MaxSize, partitioners.h), a variable
  // of two or more rows that it splits becomes a ShardedVariable whose shards are placed
  // round-robin like variables.
  explicit ParameterServerStrategy(const ClusterResolver& cluster_resolver,
                                   std::shared_ptr<const Partitioner> variable_partitioner = nullptr,
                                   ParameterServerOptions options = {});
  explicit ParameterServerStrategy(const ClusterSpec& cluster,
                                   std::shared_ptr<const Partitioner> variable_partitioner = nullptr,
                                   ParameterServerOptions options = {});

  std::string name() const override { return "ParameterServerStrategy"; }
  // Each worker computes a step by itself (TensorFlow's num_replicas_in_sync for PS with one
  // device a worker is 1 as well).
  int num_replicas_in_sync() const override { return 1; }
  std::vector<Device> worker_devices() const override { return {Device::cpu()}; }
  void run_replicas(const std::function<void(int)>& fn) override { fn(0); }
  const ClusterSpec& cluster_spec() const { return cluster_; }
  int num_ps() const { return int(ps_.size()); }
  // The cluster's worker tasks. (Strategy::num_workers() stays 1: it counts the processes that
  // train in lockstep, splitting each batch and reducing across each other, and a loop on one
  // task of this strategy (a step on a worker, evaluate inline on the coordinator) runs alone,
  // on every batch whole.)
  int num_worker_tasks() const;
  // "/job:ps/replica:0/task:i" clients, in task order.
  const std::vector<std::shared_ptr<ParameterClient>>& ps_clients() const { return ps_; }
  // "/job:worker/replica:0/task:i" and its address, in task order.
  std::vector<std::pair<std::string, std::string>> worker_tasks() const;
  const ParameterServerOptions& options() const { return options_; }

  // Where every variable created so far lives: {"ps": {"name": ps index} for each variable and
  // shard, "shards": {"name": shard count} for each sharded variable}. A worker's strategy takes the
  // coordinator's (set_placement) before rebuilding the model, so the two agree whatever else
  // either created first.
  std::string placement_json() const;
  // ValueError naming what is wrong when `json` is not a placement for this cluster (not an
  // object of those two objects, a ps index out of range, a shard count below 1 or over 16384).
  void set_placement(const std::string& json);
  // The same checks without applying it.
  void check_placement(const std::string& json) const;

  // Ends every ps and worker task's Server::join() (the job is over). Best effort: a task that
  // does not answer is skipped.
  void shutdown_cluster();

  // fit / evaluate on a DatasetCreator (ps_trainer.h).
  RemoteTraining* remote_training() override;
  // The ClusterCoordinator living for this strategy (the last one made for it), or null: fit
  // schedules its steps there (TensorFlow's strategy._cluster_coordinator). A coordinator
  // attaches itself when made and detaches when destroyed.
  ClusterCoordinator* coordinator() const;
  void attach_coordinator(ClusterCoordinator* coordinator);
  void detach_coordinator(ClusterCoordinator* coordinator);
  ~ParameterServerStrategy() override;

 protected:
  VariablePtr create_variable(const VariableSpec& spec, const NextCreator& next) override;

 private:
  // A RemoteVariable beside spec.colocate_with's, else where the placement says, else on the
  // next ps round-robin.
  VariablePtr create_remote(const VariableSpec& spec);
  // ValueError, before anything is allocated, when a variable split in `shards` would have a
  // shard over max_message_bytes (it could not travel to its ps).
  void check_variable_size(const VariableSpec& spec, int64_t shards) const;
  // How many shards `spec` will be made of (its primary's, the placement's, the partitioner's).
  int64_t planned_shards(const VariableSpec& spec) const;

  ClusterSpec cluster_;
  std::shared_ptr<const Partitioner> partitioner_;
  ParameterServerOptions options_;
  std::vector<std::shared_ptr<ParameterClient>> ps_;
  mutable std::mutex mutex_;
  std::map<std::string, int> placement_;      // variable or shard name -> ps index
  std::map<std::string, int64_t> sharded_;   // sharded variable name -> number of shards
  int next_ps_ = 0;
  std::vector<bool> ps_ready_;  // per ps: answered once (tasks start in any order)
  ClusterCoordinator* coordinator_ = nullptr;
  std::unique_ptr<ParameterServerTraining> training_;
};

// "/job:<job>/replica:0/task:<index>": a task's name in TensorFlow's device spelling.
std::string job_task_name(const std::string& job, int index);

}  // namespace strata::distribute
