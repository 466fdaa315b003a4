// An in-process parameter-server cluster for tests: 2 ParameterServers and 2 WorkerServers
// served over real gRPC in this process, and the coordinator's strategy over them. Register the
// step and dataset functions a test uses before scheduling them.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/parameter_service.h"
#include "distribute/parameter_server/worker_service.h"

namespace strata::testing {

// 2 ps + 2 workers served here, and the coordinator's strategy over them.
struct PsLocalCluster {
  PsLocalCluster() {
    std::map<std::string, std::vector<std::string>> jobs;
    for (int i = 0; i < 2; ++i) {
      ps.push_back(distribute::ParameterServer::start("localhost:0", fast_options()));
      jobs["ps"].push_back("localhost:" + std::to_string(ps.back()->port()));
    }
    // Workers need only the ps addresses; their own come from binding port 0.
    jobs["worker"] = {"localhost:1", "localhost:2"};
    for (int i = 0; i < 2; ++i) {
      worker_strategies.push_back(std::make_shared<distribute::ParameterServerStrategy>(
          distribute::ClusterSpec(jobs), nullptr, fast_options()));
      workers.push_back(
          distribute::WorkerServer::start("localhost:0", worker_strategies.back(), i));
      worker_ports.push_back(workers.back()->port());
    }
    jobs["worker"] = {"localhost:" + std::to_string(worker_ports[0]),
                      "localhost:" + std::to_string(worker_ports[1])};
    spec = distribute::ClusterSpec(jobs);
  }
  static distribute::ParameterServerOptions fast_options() {
    distribute::ParameterServerOptions o;
    o.rpc_timeout = std::chrono::seconds(10);
    return o;
  }
  std::shared_ptr<distribute::ParameterServerStrategy> strategy(
      std::shared_ptr<const distribute::Partitioner> p) {
    return std::make_shared<distribute::ParameterServerStrategy>(spec, std::move(p),
                                                                 fast_options());
  }
  static distribute::CoordinatorOptions coordinator_options() {
    distribute::CoordinatorOptions o;
    o.worker_retry_interval_seconds = 0.05;
    o.worker_recovery_timeout_seconds = 30;
    o.closure_timeout_seconds = 20;
    o.ps_ping_interval_seconds = 0.2;
    return o;
  }

  std::vector<std::unique_ptr<distribute::ParameterServer>> ps;
  std::vector<std::shared_ptr<distribute::ParameterServerStrategy>> worker_strategies;
  std::vector<std::unique_ptr<distribute::WorkerServer>> workers;
  std::vector<int> worker_ports;
  distribute::ClusterSpec spec;
};

}  // namespace strata::testing
