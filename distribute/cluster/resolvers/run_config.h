// RunConfig: a task's distributed settings as tf.estimator.RunConfig reads them from TF_CONFIG
// (its cluster_spec, task_type, task_id, master, is_chief, num_worker_replicas, num_ps_replicas
// and global_id_in_cluster), for code that wants them in one place:
//
//   const auto config = distribute::RunConfig::from(distribute::TFConfigClusterResolver());
//   if (config.is_chief) ...;                      // the chief (worker 0 without one)
//   config.num_worker_replicas;                    // chief + workers
//   config.num_ps_replicas;                        // ps tasks
//
// The rules (tf.estimator's run_config.py):
// - No cluster (one process): the task is worker 0 unless TF_CONFIG says otherwise, and only
//   worker 0 may be named (or an evaluator, below). It is the chief, with 1 worker replica and no
//   ps; master is TF_CONFIG's "session_master", else "".
// - A cluster: TF_CONFIG must give the task's type and index, which validate_task checks
//   (cluster_roles.h). master is "session_master", else "" for a cluster of one task, else the
//   task's address as "grpc://host:port" (TF_CONFIG's rpc_layer, when given, for "grpc").
//   num_worker_replicas counts the chief (or master) and the workers. global_id_in_cluster numbers
//   every task: the chief (or master) first, then the other jobs but ps in alphabetical order,
//   then ps.
// - The evaluator is outside the training cluster: its cluster_spec is empty, master "",
//   is_chief false, no worker or ps replicas and no global id.
//
// Where Strata differs from tf.estimator, and why:
// - A cluster without a chief or master is allowed: worker 0 is the chief, as in
//   multi_worker_util and Keras (tf.estimator: "it must have one chief node").
// - A job other than chief, master, worker, ps or evaluator is an error, as in multi_worker_util
//   ("Disallowed task type"); tf.estimator numbers such jobs too.
// - The evaluator's TF_CONFIG may have no cluster (the Keras tutorial's "the cluster part in the
//   evaluator's TF_CONFIG is optional"); tf.estimator allows only worker 0 without a cluster.
// - Addresses are checked (cluster_spec.h): port 0 and a host "host:6" are errors.
// - No evaluation_master, session_config or device filters: Strata has no sessions.
// - "environment" ("cloud") is read (environment) but does not decide the chief, as in
//   tf.estimator; contrib.learn's RunConfig (gone since TensorFlow 2) made worker 0 the chief
//   outside "cloud".
#pragma once

#include <optional>
#include <string>

#include "distribute/cluster/resolvers/cluster_resolver.h"

namespace strata::distribute {

struct RunConfig {
  ClusterSpec cluster_spec;  // the training cluster; empty for one process and for the evaluator
  std::string task_type = "worker";
  int task_id = 0;
  std::string master;  // where a client of this task connects; "" for in-process
  bool is_chief = true;
  int num_worker_replicas = 1;
  int num_ps_replicas = 0;
  std::optional<int> global_id_in_cluster = 0;  // none for the evaluator
  std::string environment;                      // TF_CONFIG's "environment" ("cloud"), or ""

  // The settings of the task `resolver` describes (a TFConfigClusterResolver for TF_CONFIG).
  // ValueError naming what is wrong and the fix when the cluster or the task is invalid.
  static RunConfig from(const ClusterResolver& resolver);
};

}  // namespace strata::distribute
