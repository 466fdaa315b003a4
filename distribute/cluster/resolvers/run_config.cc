#include "distribute/cluster/resolvers/run_config.h"

#include <algorithm>
#include <vector>

#include "distribute/cluster/resolvers/cluster_roles.h"
#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {
namespace {

constexpr const char* kSource = "RunConfig";

// The evaluator: outside the training cluster.
RunConfig evaluator(int task_id, std::string environment) {
  RunConfig c;
  c.task_type = "evaluator";
  c.task_id = task_id;
  c.is_chief = false;
  c.num_worker_replicas = 0;
  c.global_id_in_cluster = std::nullopt;
  c.environment = std::move(environment);
  return c;
}

// tf.estimator's numbering: the chief (or master) first, then the other jobs but ps in
// alphabetical order, then ps.
int global_id(const ClusterSpec& cluster, const std::string& task_type, int task_id) {
  std::vector<std::string> order;
  for (const char* leader : {"chief", "master"}) {
    if (cluster.has_job(leader)) order.push_back(leader);
  }
  for (const std::string& job : cluster.jobs()) {  // sorted
    if (job != "chief" && job != "master" && job != "ps") order.push_back(job);
  }
  if (cluster.has_job("ps")) order.push_back("ps");
  int next = 0;
  for (const std::string& job : order) {
    if (job == task_type) {
      const std::vector<int> indices = cluster.task_indices(job);
      return next + int(std::find(indices.begin(), indices.end(), task_id) - indices.begin());
    }
    next += cluster.num_tasks(job);
  }
  throw ValueError(std::string(kSource) + ": task type '" + task_type + "' is not in the cluster " +
                   cluster.to_json().dump());  // validate_task rules this out
}

}  // namespace

RunConfig RunConfig::from(const ClusterResolver& resolver) {
  const ClusterSpec cluster = resolver.cluster_spec();
  const std::optional<std::string> type = resolver.task_type();
  const std::optional<int> id = resolver.task_id();
  if (cluster.empty()) {
    if (type == "evaluator") return evaluator(id.value_or(0), resolver.environment());
    RunConfig c;
    c.task_type = type.value_or("worker");
    c.task_id = id.value_or(0);
    if (c.task_type != "worker" || c.task_id != 0) {
      throw ValueError(std::string(kSource) + ": TF_CONFIG has no \"cluster\", so this task runs "
                       "alone and must be worker 0 (or the evaluator), but it is " + c.task_type +
                       " " + std::to_string(c.task_id) + "; list the job's tasks in \"cluster\", "
                       "or leave \"task\" out");
    }
    c.master = resolver.master();
    c.environment = resolver.environment();
    return c;
  }
  validate_cluster(cluster, kSource);
  if (!type || type->empty()) {
    throw ValueError(std::string(kSource) + ": TF_CONFIG has a \"cluster\", so \"task\" must give "
                     "this task's \"type\", e.g. {\"type\": \"worker\", \"index\": 0}");
  }
  if (!id) {
    throw ValueError(std::string(kSource) + ": TF_CONFIG has a \"cluster\", so \"task\" must give "
                     "this task's \"index\", e.g. {\"type\": \"" + *type + "\", \"index\": 0}");
  }
  validate_task(cluster, *type, *id, kSource);
  if (*type == "evaluator") return evaluator(*id, resolver.environment());
  RunConfig c;
  c.cluster_spec = cluster;
  c.task_type = *type;
  c.task_id = *id;
  const std::string rpc_layer = resolver.rpc_layer();
  c.master = resolver.master(*type, *id, rpc_layer.empty() ? "grpc" : rpc_layer);
  c.is_chief = distribute::is_chief(cluster, *type, *id);  // chief, master or worker 0
  c.num_worker_replicas =
      cluster.num_tasks("chief") + cluster.num_tasks("master") + cluster.num_tasks("worker");
  c.num_ps_replicas = cluster.num_tasks("ps");
  c.global_id_in_cluster = global_id(cluster, *type, *id);
  c.environment = resolver.environment();
  return c;
}

}  // namespace strata::distribute
