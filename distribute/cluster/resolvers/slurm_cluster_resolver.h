// SlurmClusterResolver: the cluster of an srun job step, from Slurm's environment, as
// TensorFlow's (slurm_cluster_resolver.py):
//
//   // started by: srun --nodes 2 --ntasks-per-node 2 PROGRAM
//   distribute::SlurmClusterResolver resolver;   // 4 "worker" tasks, 2 per node, ports 8888, 8889
//
// It reads SLURM_PROCID (this task's rank), SLURM_STEP_NUM_TASKS, SLURM_STEP_NODELIST (a Slurm
// hostlist such as "node[01-04,07],gpu3") and SLURM_STEP_TASKS_PER_NODE ("2(x3),1"); outside a
// step the job-wide SLURM_NTASKS, SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE stand in.
// Hosts are taken in sorted order, each host's tasks get ports port_base, port_base + 1, ...
// and consecutive groups of gpus_per_task GPUs; jobs (sorted by name) take the tasks in that
// order, so with jobs {"ps": 1, "worker": 4} rank 0 is ps 0 and rank 1 worker 0.
// With auto_set_gpu this task's GPUs are exported as CUDA_VISIBLE_DEVICES when the resolver is
// made, so make it before anything touches a GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "distribute/cluster/resolvers/cluster_resolver.h"

namespace strata::distribute {

// "n[1-2],m5,o[3-4,6,7-9]" -> n1 n2 m5 o3 o4 o6 o7 o8 o9; zero padding is kept ("n[01-03]" ->
// n01 n02 n03). ValueError naming the hostlist when it is malformed.
std::vector<std::string> expand_hostlist(const std::string& hostlist);
// "3(x2),2,1" -> 3 3 2 1. ValueError naming the text when it is malformed.
std::vector<int> expand_tasks_per_node(const std::string& tasks_per_node);

struct SlurmClusterResolverOptions {
  // Job name -> number of tasks; empty: every task of the step is a "worker".
  std::map<std::string, int> jobs_;
  int port_base_ = 8888;
  // Unset: the count in CUDA_VISIBLE_DEVICES, else the NVIDIA GPUs the driver lists
  // (/proc/driver/nvidia/gpus), else 0.
  std::optional<int> gpus_per_node_;
  // Unset: gpus_per_node divided evenly among the most tasks a node runs.
  std::optional<int> gpus_per_task_;
  // Unset: from Slurm's environment; a number: that many on every host of the step; a map:
  // host -> tasks.
  std::optional<int> tasks_per_node_;
  std::map<std::string, int> tasks_per_host_;
  bool auto_set_gpu_ = true;
  std::string rpc_layer_ = "grpc";

  SlurmClusterResolverOptions& jobs(std::map<std::string, int> v) { jobs_ = std::move(v); return *this; }
  SlurmClusterResolverOptions& port_base(int v) { port_base_ = v; return *this; }
  SlurmClusterResolverOptions& gpus_per_node(int v) { gpus_per_node_ = v; return *this; }
  SlurmClusterResolverOptions& gpus_per_task(int v) { gpus_per_task_ = v; return *this; }
  SlurmClusterResolverOptions& tasks_per_node(int v) { tasks_per_node_ = v; return *this; }
  SlurmClusterResolverOptions& tasks_per_node(std::map<std::string, int> v) { tasks_per_host_ = std::move(v); return *this; }
  SlurmClusterResolverOptions& auto_set_gpu(bool v) { auto_set_gpu_ = v; return *this; }
  SlurmClusterResolverOptions& rpc_layer(std::string v) { rpc_layer_ = std::move(v); return *this; }
};

class SlurmClusterResolver : public ClusterResolver {
 public:
  // ValueError when a Slurm variable it needs is missing or malformed, when the jobs ask for
  // more or fewer tasks than the step has, or a node would need more GPUs than it has.
  explicit SlurmClusterResolver(SlurmClusterResolverOptions options = {});

  ClusterSpec cluster_spec() const override { return spec_; }
  std::optional<std::string> task_type() const override { return task_type_; }
  std::optional<int> task_id() const override { return task_id_; }
  std::string rpc_layer() const override { return rpc_layer_; }
  // The given (or this) task's address with the rpc layer; "" when the task is unknown.
  std::string master(const std::optional<std::string>& task_type = std::nullopt,
                     const std::optional<int>& task_id = std::nullopt,
                     const std::optional<std::string>& rpc_layer = std::nullopt) const override;
  // {"GPU": gpus_per_task} (empty when 0).
  std::map<std::string, int> num_accelerators(
      const std::optional<std::string>& task_type = std::nullopt,
      const std::optional<int>& task_id = std::nullopt) const override;

  void set_task_type(std::string v) { task_type_ = std::move(v); }
  void set_task_id(int v) { task_id_ = v; }
  void set_rpc_layer(std::string v) { rpc_layer_ = std::move(v); }
  // This task's GPUs ("2,3"; "" for none): what auto_set_gpu exports.
  const std::string& visible_devices() const { return visible_devices_; }

 private:
  ClusterSpec spec_;
  std::optional<std::string> task_type_;
  std::optional<int> task_id_;
  std::string rpc_layer_;
  int gpus_per_task_ = 0;
  std::string visible_devices_;
};

}  // namespace strata::distribute
