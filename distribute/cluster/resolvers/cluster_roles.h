// Who does what in a cluster (TensorFlow's multi_worker_util): which tasks train, which one
// leads, and the checks a task makes of its place in the cluster before it starts.
//
// The jobs are "chief", "worker", "ps" and "evaluator" (TensorFlow's), and tf.estimator's legacy
// "master" (the old name of the chief); any other job is an error. The training tasks are the
// chief (or master) and the workers; the chief counts as a worker with id 0, the workers follow
// it. With neither chief nor master, worker 0 leads. "ps" tasks hold variables
// (ParameterServerStrategy). The "evaluator" evaluates checkpoints on its own, outside the
// training cluster: its TF_CONFIG may list only itself, the whole cluster, or no cluster at all
// (the Keras tutorial's "the cluster part in the evaluator's TF_CONFIG is optional").
//
// Where Strata differs from multi_worker_util, and why:
// - "master" is a job (tf.estimator's rules: at most one, not with a "chief", and no evaluator
//   task beside it); multi_worker_util knows only "chief".
// - A task index is checked against the job's listed indices (TF_CONFIG may give an object of
//   index -> address), not only against the number of tasks.
// - worker_count of an evaluator that is not in the cluster is 1 (its own cluster of one), where
//   multi_worker_util raises a KeyError.
#pragma once

#include <optional>
#include <string>

#include "distribute/cluster/resolvers/cluster_spec.h"

namespace strata::distribute {

struct TaskAddress {
  std::string type;
  int index = 0;
};

// ValueError (naming `source`, e.g. "TF_CONFIG", and the fix) unless every job of the cluster is
// chief, master, worker, ps or evaluator (TensorFlow: "Disallowed task type"), and the cluster
// has at most one chief, one master and one evaluator, and not both a chief and a master. What
// holds whichever task reads the cluster.
void validate_cluster(const ClusterSpec& cluster, const std::string& source);

// validate_cluster, then ValueError unless task_type is one of the jobs above, the cluster has
// that job (the evaluator may be missing from it) and a task `task_id` in it, and the task is not
// an evaluator beside a "master" (tf.estimator's rule). TensorFlow's _validate_cluster_spec.
void validate_task(const ClusterSpec& cluster, const std::string& task_type, int task_id,
                   const std::string& source);

// Whether the task leads (writes checkpoints and summaries): the chief or master, worker 0
// when there is neither, and the evaluator (which runs on its own). Validates (validate_task).
bool is_chief(const ClusterSpec& cluster, const std::string& task_type, int task_id);

// The number of tasks a task of `task_type` syncs with: for chief, master and worker, those three
// jobs' tasks together; for the evaluator, the evaluators (1 when it is not in the cluster).
// ValueError when the cluster lacks the job (validate_task) or for "ps", which syncs with no one.
int worker_count(const ClusterSpec& cluster, const std::string& task_type);

// The task's index among the training tasks: chief/master 0, worker i after them; the
// evaluator's own index. Validates (validate_task); ValueError for ps, which has no such id.
int id_in_cluster(const ClusterSpec& cluster, const std::string& task_type, int task_id);

// The training task that leads and hosts the coordination service: "chief" 0, else "master" 0,
// else "worker" 0. ValueError when the cluster has none of them.
TaskAddress coordinator_task(const ClusterSpec& cluster);

// The task that leads the training tasks' collectives, as seen by (task_type, task_id)
// (multi_worker_util.collective_leader): coordinator_task, or nullopt for an empty cluster (a
// single process) and for the evaluator (it runs alone). Validates (validate_task) otherwise.
std::optional<TaskAddress> collective_leader(const ClusterSpec& cluster,
                                             const std::string& task_type, int task_id);

}  // namespace strata::distribute
