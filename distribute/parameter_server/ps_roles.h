// Which part a task plays in a parameter-server job, from its cluster resolver (TF_CONFIG):
// TensorFlow's rules (the Keras tutorial's "branch on the task type"), plus the two-job config
// ({"ps": [...], "worker": [...]}, no chief) where worker 0 coordinates (and, being listed as a
// worker, serves as one too).
#pragma once

#include <string>

#include "distribute/cluster/resolvers/cluster_resolver.h"

namespace strata::distribute {

struct ParameterServerRole {
  enum class Kind { kCoordinator, kPs, kWorker, kEvaluator };
  Kind kind = Kind::kCoordinator;
  std::string task_type;  // as TF_CONFIG says: "chief", "master", "worker", "ps", "evaluator"
  int task_index = 0;
  // The coordinator is worker 0 (the cluster has no chief or master): it also serves as a
  // worker, so that the cluster's every worker answers.
  bool also_worker = false;
  // One line saying what this task does, for the log.
  std::string describe() const;
};

// The checks TensorFlow's ParameterServerStrategy makes of its cluster
// (ParameterServerStrategyV2._verify_args_and_config): ValueError naming what is wrong unless the
// cluster is not empty, passes validate_cluster (only chief, master, worker, ps and evaluator
// jobs; at most one chief), names this task correctly when the resolver names one
// (validate_task), and has at least one "ps" and one "worker" task.
void validate_parameter_server_cluster(const ClusterResolver& resolver);

// This task's part. An evaluator needs no training cluster: its TF_CONFIG may list the whole
// cluster, only the evaluator, or no cluster at all (validate_task). Any other task needs a
// cluster that passes validate_parameter_server_cluster. ValueError naming what is wrong, also
// when the resolver names no task type and index.
ParameterServerRole parameter_server_role(const ClusterResolver& resolver);

}  // namespace strata::distribute
