// ClusterResolver: where a multi-process job learns its cluster and its own place in it
// (TensorFlow's tf.distribute.cluster_resolver.ClusterResolver). Strategies that span
// processes take one: TFConfigClusterResolver (the TF_CONFIG environment variable, set by
// Kubeflow's TFJob, cloud platforms and strata-launch), SlurmClusterResolver (an srun step),
// or SimpleClusterResolver (a spec given in code, for tests and custom launchers).
//
//   distribute::TFConfigClusterResolver resolver;
//   resolver.cluster_spec().num_tasks("worker");   // 2
//   resolver.task_type();                          // "worker"
//   resolver.task_id();                            // 0
//   resolver.master();                             // "grpc://localhost:20000" with rpc_layer grpc
#pragma once

#include <map>
#include <optional>
#include <string>

#include "distribute/cluster/resolvers/cluster_spec.h"

namespace strata::distribute {

class ClusterResolver {
 public:
  virtual ~ClusterResolver() = default;

  // The cluster, read afresh on every call where the source can change (TF_CONFIG).
  virtual ClusterSpec cluster_spec() const = 0;
  // This task's job ("worker", "chief", "ps", "evaluator", "master") and index; nullopt when the
  // source does not say (a single-process run).
  virtual std::optional<std::string> task_type() const = 0;
  virtual std::optional<int> task_id() const = 0;
  // The protocol prefix of master() ("grpc"); empty for none.
  virtual std::string rpc_layer() const = 0;
  // The platform the job runs in ("cloud", "google"); empty when not said.
  virtual std::string environment() const { return ""; }
  // The address of task (task_type, task_id) (by default this task's), prefixed with
  // "<rpc_layer>://" when there is an rpc layer. Subclasses say when it is empty.
  virtual std::string master(const std::optional<std::string>& task_type = std::nullopt,
                             const std::optional<int>& task_id = std::nullopt,
                             const std::optional<std::string>& rpc_layer = std::nullopt) const = 0;
  // Accelerators of the task by type ({"GPU": 2}; types with none are left out). By default
  // this machine's GPUs, whichever task is asked about.
  virtual std::map<std::string, int> num_accelerators(
      const std::optional<std::string>& task_type = std::nullopt,
      const std::optional<int>& task_id = std::nullopt) const;
};

// "rpc_layer://address", or the address alone when rpc_layer is empty (TensorFlow's
// format_master_url).
std::string format_master_url(const std::string& address, const std::string& rpc_layer);

// A cluster given in code (TensorFlow's SimpleClusterResolver).
struct SimpleClusterResolverOptions {
  std::string master_;
  std::optional<std::string> task_type_;
  std::optional<int> task_id_;
  std::string environment_;
  std::optional<std::map<std::string, int>> num_accelerators_;  // unset: this machine's GPUs
  std::string rpc_layer_;

  SimpleClusterResolverOptions& master(std::string v) { master_ = std::move(v); return *this; }
  SimpleClusterResolverOptions& task_type(std::string v) { task_type_ = std::move(v); return *this; }
  SimpleClusterResolverOptions& task_id(int v) { task_id_ = v; return *this; }
  SimpleClusterResolverOptions& environment(std::string v) { environment_ = std::move(v); return *this; }
  SimpleClusterResolverOptions& num_accelerators(std::map<std::string, int> v) { num_accelerators_ = std::move(v); return *this; }
  SimpleClusterResolverOptions& rpc_layer(std::string v) { rpc_layer_ = std::move(v); return *this; }
};

class SimpleClusterResolver : public ClusterResolver {
 public:
  explicit SimpleClusterResolver(ClusterSpec cluster_spec,
                                 SimpleClusterResolverOptions options = {});

  ClusterSpec cluster_spec() const override { return spec_; }
  std::optional<std::string> task_type() const override { return options_.task_type_; }
  std::optional<int> task_id() const override { return options_.task_id_; }
  std::string rpc_layer() const override { return options_.rpc_layer_; }
  std::string environment() const override { return options_.environment_; }
  // The given task's address when both task_type and task_id are known, else the master given
  // at construction.
  std::string master(const std::optional<std::string>& task_type = std::nullopt,
                     const std::optional<int>& task_id = std::nullopt,
                     const std::optional<std::string>& rpc_layer = std::nullopt) const override;
  std::map<std::string, int> num_accelerators(
      const std::optional<std::string>& task_type = std::nullopt,
      const std::optional<int>& task_id = std::nullopt) const override;

  void set_task_type(std::string v) { options_.task_type_ = std::move(v); }
  void set_task_id(int v) { options_.task_id_ = v; }
  void set_rpc_layer(std::string v) { options_.rpc_layer_ = std::move(v); }

 private:
  ClusterSpec spec_;
  SimpleClusterResolverOptions options_;
};

}  // namespace strata::distribute
