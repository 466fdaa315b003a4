// Which part a task plays in a parameter-server job, from its cluster resolver (TF_CONFIG):
// TensorFlow's rules, plus the two-task config ({"ps": [...], "worker": [...]}, no chief) where
// worker 0 coordinates (and, being listed as a worker, serves as one too).
#pragma once

#include <string>

#include "distribute/cluster_resolver/cluster_resolver.h"

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

// ValueError naming what is wrong when the resolver has no cluster with "ps" and "worker" jobs,
// or no task type and index.
ParameterServerRole parameter_server_role(const ClusterResolver& resolver);

}  // namespace strata::distribute
