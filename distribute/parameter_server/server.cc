#include "distribute/parameter_server/server.h"

#include <csignal>
#include <iostream>

#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/worker_service.h"
#include "framework/config/json.h"
#include "framework/trainer/termination_signals.h"

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

int Server::join() {
  if (ps_) {
    ps_->wait_for_shutdown();
    return 0;
  }
  TerminationSignalScope signals;  // SIGTERM / SIGINT only set a flag while it lives
  for (;;) {
    if (worker_->wait_for_shutdown_for(std::chrono::milliseconds(100))) return 0;
    if (const int signal = TerminationSignalScope::pending()) {
      const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
      std::cerr << task_ << ": " << name << ": finishing the closure running, taking no more"
                << std::endl;
      worker_->stop_taking_closures("it got " + name + " (preempted)");
      worker_->wait_until_idle();
      std::cerr << task_ << ": stopped after " << worker_->closures_run() << " closure(s)"
                << std::endl;
      return signal;
    }
  }
}

int Server::port() const { return ps_ ? ps_->port() : worker_->port(); }

int64_t Server::closures_run() const { return worker_ ? worker_->closures_run() : 0; }

}  // namespace strata::distribute
