#include "distribute/cluster/resolvers/cluster_roles.h"

#include <algorithm>

#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

constexpr const char* kJobs = "\"chief\", \"worker\", \"ps\", \"evaluator\" and the legacy \"master\"";

bool is_training_job(const std::string& t) { return t == "chief" || t == "master" || t == "worker"; }

bool is_known_job(const std::string& t) {
  return is_training_job(t) || t == "ps" || t == "evaluator";
}

// Chief and master tasks: both lead, and a cluster has at most one of them.
int leaders(const ClusterSpec& cluster) {
  return cluster.num_tasks("chief") + cluster.num_tasks("master");
}

std::string task_text(const std::string& task_type, int task_id) {
  return "task {\"type\": \"" + task_type + "\", \"index\": " + std::to_string(task_id) + "}";
}

// validate_task without the index check: what worker_count asks of a task type.
void validate_task_type(const ClusterSpec& cluster, const std::string& task_type,
                        const std::string& task, const std::string& source) {
  validate_cluster(cluster, source);
  if (!is_known_job(task_type)) {
    throw ValueError(source + ": " + task + " has an unknown type '" + task_type +
                     "'; the task types are " + kJobs);
  }
  if (!cluster.has_job(task_type) && task_type != "evaluator") {
    throw ValueError(source + ": " + task + " is not in the cluster: it has no job '" + task_type +
                     "' (the cluster is " + cluster.to_json().dump() +
                     "); add the task to \"cluster\" or fix its type");
  }
  if (task_type == "evaluator" && cluster.has_job("master")) {
    throw ValueError(source + ": " + task + " is an evaluator in a cluster with a legacy "
                     "'master' task, where the master evaluates (tf.estimator's rule); rename "
                     "\"master\" to \"chief\" to run a separate evaluator");
  }
}

}  // namespace

void validate_cluster(const ClusterSpec& cluster, const std::string& source) {
  for (const std::string& job : cluster.jobs()) {
    if (!is_known_job(job)) {
      throw ValueError(source + ": the cluster " + cluster.to_json().dump() + " has a job '" +
                       job + "', which is not a task type of a training job (the types are " +
                       kJobs + "); remove it or rename it");
    }
  }
  for (const char* single : {"chief", "master", "evaluator"}) {
    if (cluster.num_tasks(single) > 1) {
      throw ValueError(source + ": the cluster has " + std::to_string(cluster.num_tasks(single)) +
                       " '" + single + "' tasks; there must be at most one");
    }
  }
  if (cluster.has_job("chief") && cluster.has_job("master")) {
    throw ValueError(source + ": the cluster has both a 'chief' and a 'master' task; \"master\" "
                     "is the old name of the chief, so keep one of them");
  }
}

void validate_task(const ClusterSpec& cluster, const std::string& task_type, int task_id,
                   const std::string& source) {
  const std::string task = task_text(task_type, task_id);
  validate_task_type(cluster, task_type, task, source);
  if (!cluster.has_job(task_type)) return;  // an evaluator outside the training cluster
  bool found = false;
  std::string listed;
  for (int i : cluster.task_indices(task_type)) {
    found = found || i == task_id;
    listed += (listed.empty() ? "" : ", ") + std::to_string(i);
  }
  if (!found) {
    throw ValueError(source + ": " + task + " is not in the cluster: job '" + task_type +
                     "' has " + std::to_string(cluster.num_tasks(task_type)) +
                     " task(s), with indices [" + listed +
                     "]; use one of those indices, or list the task");
  }
}

bool is_chief(const ClusterSpec& cluster, const std::string& task_type, int task_id) {
  validate_task(cluster, task_type, task_id, "is_chief");
  if (task_type == "chief" || task_type == "master" || task_type == "evaluator") return true;
  return leaders(cluster) == 0 && task_type == "worker" && task_id == 0;
}

int worker_count(const ClusterSpec& cluster, const std::string& task_type) {
  validate_task_type(cluster, task_type, "task type '" + task_type + "'", "worker_count");
  if (task_type == "evaluator") return std::max(1, cluster.num_tasks("evaluator"));
  if (!is_training_job(task_type)) {
    throw ValueError("worker_count: task type '" + task_type +
                     "' syncs with no workers; ask for chief, master, worker or evaluator");
  }
  return leaders(cluster) + cluster.num_tasks("worker");
}

int id_in_cluster(const ClusterSpec& cluster, const std::string& task_type, int task_id) {
  validate_task(cluster, task_type, task_id, "id_in_cluster");
  if (task_type == "chief" || task_type == "master") return 0;
  if (task_type == "worker") return task_id + leaders(cluster);
  if (task_type == "evaluator") return task_id;
  throw ValueError("id_in_cluster: there is no training id for a '" + task_type + "' task");
}

TaskAddress coordinator_task(const ClusterSpec& cluster) {
  for (const char* job : {"chief", "master", "worker"}) {
    if (cluster.num_tasks(job) > 0) return {job, cluster.task_indices(job).front()};
  }
  throw ValueError("the cluster " + cluster.to_json().dump() +
                   " has no chief, master or worker task to lead training");
}

std::optional<TaskAddress> collective_leader(const ClusterSpec& cluster,
                                             const std::string& task_type, int task_id) {
  if (cluster.empty()) return std::nullopt;
  validate_task(cluster, task_type, task_id, "collective_leader");
  if (task_type == "evaluator") return std::nullopt;
  return coordinator_task(cluster);
}

}  // namespace strata::distribute
