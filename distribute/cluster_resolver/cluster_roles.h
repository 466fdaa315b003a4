// Who does what in a cluster (TensorFlow's multi_worker_util): which tasks train, which one
// leads, and the checks a task makes of its place in the cluster before it starts.
//
// The training tasks are the chief (or, in older configurations, the "master") and the
// workers; the chief counts as a worker with id 0, the workers follow it. With neither chief nor
// master, worker 0 leads. "ps" tasks hold variables (ParameterServerStrategy) and an
// "evaluator" evaluates checkpoints on its own, outside the training cluster.
#pragma once

#include <string>

#include "distribute/cluster_resolver/cluster_spec.h"

namespace strata::distribute {

struct TaskAddress {
  std::string type;
  int index = 0;
};

// ValueError (naming `source`, e.g. "TF_CONFIG", the task and the fix) unless: task_type is one
// of chief, master, worker, ps, evaluator; the cluster has that job and a task `task_id` in it;
// there is at most one chief, one master and one evaluator, and not both a chief and a master.
void validate_task(const ClusterSpec& cluster, const std::string& task_type, int task_id,
                   const std::string& source);

// Whether the task leads (writes checkpoints and summaries): the chief or master, worker 0
// when there is neither, and the evaluator (which runs on its own).
bool is_chief(const ClusterSpec& cluster, const std::string& task_type, int task_id);

// The number of training tasks a training task (chief, master, worker) syncs with: chiefs,
// masters and workers together; for the evaluator, the evaluators.
int worker_count(const ClusterSpec& cluster, const std::string& task_type);

// The task's index among the training tasks: chief/master 0, worker i after them; the
// evaluator's own index. ValueError for ps.
int id_in_cluster(const ClusterSpec& cluster, const std::string& task_type, int task_id);

// The training task that leads and hosts the coordination service: "chief" 0, else "master" 0,
// else "worker" 0. ValueError when the cluster has none of them.
TaskAddress coordinator_task(const ClusterSpec& cluster);

}  // namespace strata::distribute
