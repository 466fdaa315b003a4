// TFConfigClusterResolver: the cluster and this task's place in it from the TF_CONFIG environment
// variable, read afresh on every call, as TensorFlow's (tfconfig_cluster_resolver.py):
//
//   TF_CONFIG='{"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
//                           "ps": ["host3:2222"]},
//               "task": {"type": "worker", "index": 1},
//               "rpc_layer": "grpc", "environment": "cloud"}'
//
// "task.type" may be any JSON value (a number is read as its text, as TensorFlow's str()),
// "task.index" a number or a string of digits. "session_master", when present, is master().
// Explicit task type/id, rpc layer and environment given to the constructor (or set later)
// override TF_CONFIG's. TF_CONFIG unset or "{}" means a single task with an empty cluster.
// Malformed JSON, a "cluster" or "task" of the wrong shape, or a bad address (cluster_spec.h: port
// 0, a port outside [1, 65535], no host, two tasks on one address) is a ValueError naming
// TF_CONFIG, the task, what is wrong and the fix; validate() also checks the cluster's jobs and
// this task's place in it (cluster_roles.h). The evaluator's "cluster" is optional, as in the
// Keras tutorial: {"task": {"type": "evaluator", "index": 0}} alone validates.
#pragma once

#include "distribute/cluster/resolvers/cluster_resolver.h"

namespace strata::distribute {

struct TFConfigClusterResolverOptions {
  std::optional<std::string> task_type_;
  std::optional<int> task_id_;
  std::optional<std::string> rpc_layer_;
  std::optional<std::string> environment_;

  TFConfigClusterResolverOptions& task_type(std::string v) { task_type_ = std::move(v); return *this; }
  TFConfigClusterResolverOptions& task_id(int v) { task_id_ = v; return *this; }
  TFConfigClusterResolverOptions& rpc_layer(std::string v) { rpc_layer_ = std::move(v); return *this; }
  TFConfigClusterResolverOptions& environment(std::string v) { environment_ = std::move(v); return *this; }
};

class TFConfigClusterResolver : public ClusterResolver {
 public:
  explicit TFConfigClusterResolver(TFConfigClusterResolverOptions overrides = {});

  ClusterSpec cluster_spec() const override;
  std::optional<std::string> task_type() const override;
  std::optional<int> task_id() const override;
  std::string rpc_layer() const override;
  std::string environment() const override;
  // "session_master" when TF_CONFIG has one; "" when the cluster is empty or a single task;
  // else the address of (task_type, task_id) (by default this task's) with the rpc layer.
  std::string master(const std::optional<std::string>& task_type = std::nullopt,
                     const std::optional<int>& task_id = std::nullopt,
                     const std::optional<std::string>& rpc_layer = std::nullopt) const override;

  void set_task_type(std::string v) { overrides_.task_type_ = std::move(v); }
  void set_task_id(int v) { overrides_.task_id_ = v; }
  void set_rpc_layer(std::string v) { overrides_.rpc_layer_ = std::move(v); }

  // ValueError unless the task type and id are known and name a task of the cluster, or the
  // evaluator (validate_task): what a multi-process strategy checks before it starts.
  void validate() const;

 private:
  TFConfigClusterResolverOptions overrides_;
};

}  // namespace strata::distribute
