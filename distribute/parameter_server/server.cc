#include "distribute/parameter_server/server.h"

#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/parameter_service.h"
#include "distribute/parameter_server/worker_service.h"
#include "framework/config/json.h"

namespace strata::distribute {

Server::Server(const ClusterSpec& cluster, const std::string& job_name, int task_index,
               ParameterServerOptions options)
    : task_(job_task_name(job_name, task_index)) {
  if (job_name != "ps" && job_name != "worker") {
    throw ValueError("Server: job '" + job_name + "' serves nothing in a parameter-server "
                     "cluster; only 'ps' and 'worker' tasks run a Server (the 'chief' or "
                     "'master' runs the ClusterCoordinator, an 'evaluator' a SidecarEvaluator)");
  }
  if (!cluster.has_job(job_name) || cluster.task_address(job_name, task_index).empty()) {
    throw ValueError("Server: " + task_ + " is not in the cluster spec (" +
                     cluster.to_json().dump() + "): check TF_CONFIG's task index");
  }
  const std::string address = cluster.task_address(job_name, task_index);
  if (job_name == "ps") {
    ps_ = ParameterServer::start(address, options);
  } else {
    auto strategy = std::make_shared<ParameterServerStrategy>(cluster, nullptr, options);
    worker_ = WorkerServer::start(address, std::move(strategy), task_index);
  }
}

Server::~Server() = default;

void Server::join() {
  if (ps_) ps_->wait_for_shutdown();
  if (worker_) worker_->wait_for_shutdown();
}

int Server::port() const { return ps_ ? ps_->port() : worker_->port(); }

}  // namespace strata::distribute
