#include "distribute/cluster_resolver/cluster_roles.h"

#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

bool is_training_job(const std::string& t) { return t == "chief" || t == "master" || t == "worker"; }

// Chief and master tasks: both lead, and a cluster has at most one of them.
int leaders(const ClusterSpec& cluster) {
  return cluster.num_tasks("chief") + cluster.num_tasks("master");
}

}  // namespace

void validate_task(const ClusterSpec& cluster, const std::string& task_type, int task_id,
                   const std::string& source) {
  const std::string task = "task {\"type\": \"" + task_type + "\", \"index\": " +
                           std::to_string(task_id) + "}";
  if (!is_training_job(task_type) && task_type != "ps" && task_type != "evaluator") {
    throw ValueError(source + ": " + task + " has an unknown type '" + task_type +
                     "'; the task types are \"chief\", \"worker\", \"ps\", \"evaluator\" and the "
                     "legacy \"master\"");
  }
  if (!cluster.has_job(task_type)) {
    throw ValueError(source + ": " + task + " is not in the cluster: it has no job '" + task_type +
                     "' (the cluster is " + cluster.to_json().dump() +
                     "); add the task to \"cluster\" or fix its type");
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
  const std::vector<int> indices = cluster.task_indices(task_type);
  bool found = false;
  std::string listed;
  for (int i : indices) {
    found = found || i == task_id;
    listed += (listed.empty() ? "" : ", ") + std::to_string(i);
  }
  if (!found) {
    throw ValueError(source + ": " + task + " is not in the cluster: job '" + task_type +
                     "' has " + std::to_string(indices.size()) + " task(s), with indices [" +
                     listed + "]; use one of those indices, or list the task");
  }
}

bool is_chief(const ClusterSpec& cluster, const std::string& task_type, int task_id) {
  validate_task(cluster, task_type, task_id, "is_chief");
  if (task_type == "chief" || task_type == "master" || task_type == "evaluator") return true;
  return leaders(cluster) == 0 && task_type == "worker" && task_id == 0;
}

int worker_count(const ClusterSpec& cluster, const std::string& task_type) {
  if (task_type == "evaluator") return cluster.num_tasks("evaluator");
  if (!is_training_job(task_type)) {
    throw ValueError("worker_count: task type '" + task_type +
                     "' does not train; ask for chief, master, worker or evaluator");
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

}  // namespace strata::distribute
