#include "distribute/parameter_server/ps_roles.h"

#include "distribute/cluster/resolvers/cluster_roles.h"
#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {

namespace {
constexpr const char* kSource = "parameter_server";
}  // namespace

std::string ParameterServerRole::describe() const {
  const std::string me = task_type + " " + std::to_string(task_index);
  switch (kind) {
    case Kind::kCoordinator:
      return also_worker ? me + ": coordinates the training (the cluster has no chief or master, "
                                "so worker 0 does) and serves as a worker too"
                         : me + ": coordinates the training";
    case Kind::kPs: return me + ": hosts variables until the coordinator ends the job";
    case Kind::kWorker: return me + ": runs training steps until the coordinator ends the job";
    case Kind::kEvaluator: return me + ": evaluates checkpoints as they appear";
  }
  return me;
}

void validate_parameter_server_cluster(const ClusterResolver& resolver) {
  const ClusterSpec cluster = resolver.cluster_spec();
  if (cluster.empty()) {
    throw ValueError("parameter_server: the cluster is empty; set TF_CONFIG's \"cluster\" with "
                     "\"ps\" and \"worker\" tasks (and optionally a \"chief\") on every task of "
                     "the job");
  }
  const std::optional<std::string> type = resolver.task_type();
  const std::optional<int> id = resolver.task_id();
  if (type && id) {
    validate_task(cluster, *type, *id, kSource);
  } else {
    validate_cluster(cluster, kSource);
  }
  for (const char* job : {"ps", "worker"}) {
    if (cluster.num_tasks(job) == 0) {
      throw ValueError(std::string("parameter_server: the cluster (") + cluster.to_json().dump() +
                       ") has no '" + job + "' task; there must be at least one. Set TF_CONFIG "
                       "with \"ps\" and \"worker\" tasks (and optionally a \"chief\") on every "
                       "task of the job");
    }
  }
}

ParameterServerRole parameter_server_role(const ClusterResolver& resolver) {
  if (!resolver.task_type() || !resolver.task_id()) {
    throw ValueError("parameter_server: TF_CONFIG names no task (\"task\": {\"type\": ..., "
                     "\"index\": ...}); every task of the job needs its own");
  }
  ParameterServerRole role;
  role.task_type = *resolver.task_type();
  role.task_index = *resolver.task_id();
  const std::string& type = role.task_type;
  const ClusterSpec cluster = resolver.cluster_spec();
  if (type == "evaluator") {
    // Outside the training cluster: it reads the chief's checkpoints, and talks to no task.
    validate_task(cluster, type, role.task_index, kSource);
    role.kind = ParameterServerRole::Kind::kEvaluator;
    return role;
  }
  validate_parameter_server_cluster(resolver);
  if (type == "chief" || type == "master") {
    role.kind = ParameterServerRole::Kind::kCoordinator;
  } else if (type == "ps") {
    role.kind = ParameterServerRole::Kind::kPs;
  } else {  // "worker": validate_task allows no other type here
    const bool has_coordinator = cluster.has_job("chief") || cluster.has_job("master");
    role.kind = !has_coordinator && role.task_index == 0 ? ParameterServerRole::Kind::kCoordinator
                                                         : ParameterServerRole::Kind::kWorker;
    role.also_worker = role.kind == ParameterServerRole::Kind::kCoordinator;
  }
  return role;
}

}  // namespace strata::distribute
