#include "distribute/parameter_server/ps_roles.h"

#include "framework/config/json.h"
#include "framework/core/error.h"

namespace strata::distribute {

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

ParameterServerRole parameter_server_role(const ClusterResolver& resolver) {
  const ClusterSpec cluster = resolver.cluster_spec();
  for (const char* job : {"ps", "worker"}) {
    if (!cluster.has_job(job)) {
      throw ValueError(std::string("parameter_server: the cluster (") + cluster.to_json().dump() +
                       ") has no '" + job + "' job; set TF_CONFIG with \"ps\" and \"worker\" "
                       "tasks (and optionally a \"chief\") on every task of the job");
    }
  }
  if (!resolver.task_type() || !resolver.task_id()) {
    throw ValueError("parameter_server: TF_CONFIG names no task (\"task\": {\"type\": ..., "
                     "\"index\": ...}); every task of the job needs its own");
  }
  ParameterServerRole role;
  role.task_type = *resolver.task_type();
  role.task_index = *resolver.task_id();
  const std::string& type = role.task_type;
  if (type == "chief" || type == "master") {
    role.kind = ParameterServerRole::Kind::kCoordinator;
  } else if (type == "ps") {
    role.kind = ParameterServerRole::Kind::kPs;
  } else if (type == "evaluator") {
    role.kind = ParameterServerRole::Kind::kEvaluator;
  } else if (type == "worker") {
    const bool has_coordinator = cluster.has_job("chief") || cluster.has_job("master");
    role.kind = !has_coordinator && role.task_index == 0 ? ParameterServerRole::Kind::kCoordinator
                                                         : ParameterServerRole::Kind::kWorker;
    role.also_worker = role.kind == ParameterServerRole::Kind::kCoordinator;
  } else {
    throw ValueError("parameter_server: task type '" + type + "' has no part in a "
                     "parameter-server job (expected chief, master, worker, ps or evaluator)");
  }
  return role;
}

}  // namespace strata::distribute
