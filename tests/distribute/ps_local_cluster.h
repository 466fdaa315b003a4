// An in-process parameter-server cluster for tests: 2 ParameterServers and 2 WorkerServers
// served over real gRPC in this process, and the coordinator's strategy over them. Register the
// step and dataset functions a test uses before scheduling them.
#pragma once

#include <chrono>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/worker_service.h"

namespace strata::testing {

// 2 ps + 2 workers served here, and the coordinator's strategy over them.
struct PsLocalCluster {
  explicit PsLocalCluster(distribute::ParameterServerOptions options = fast_options())
      : options(options) {
    std::map<std::string, std::vector<std::string>> jobs;
    for (int i = 0; i < 2; ++i) {
      ps.push_back(distribute::ParameterServer::start("localhost:0", options));
      jobs["ps"].push_back("localhost:" + std::to_string(ps.back()->port()));
    }
    // Workers need only the ps addresses; their own come from binding port 0.
    jobs["worker"] = {"localhost:1", "localhost:2"};
    for (int i = 0; i < 2; ++i) {
      worker_strategies.push_back(std::make_shared<distribute::ParameterServerStrategy>(
          distribute::ClusterSpec(jobs), nullptr, options));
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
    return std::make_shared<distribute::ParameterServerStrategy>(spec, std::move(p), options);
  }
  static distribute::CoordinatorOptions coordinator_options() {
    distribute::CoordinatorOptions o;
    o.worker_retry_interval_seconds = 0.05;
    o.worker_recovery_timeout_seconds = 30;
    o.ps_ping_interval_seconds = 0.2;
    return o;
  }

  distribute::ParameterServerOptions options;
  std::vector<std::unique_ptr<distribute::ParameterServer>> ps;
  std::vector<std::shared_ptr<distribute::ParameterServerStrategy>> worker_strategies;
  std::vector<std::unique_ptr<distribute::WorkerServer>> workers;
  std::vector<int> worker_ports;
  distribute::ClusterSpec spec;
};

// coordinator.join(), bounded: one still waiting after `limit` is ended with a fatal error, so
// that a test fails instead of hanging. Returns what join() raised, or null.
inline std::exception_ptr bounded_join(distribute::ClusterCoordinator& coordinator,
                                       std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto joined = std::async(std::launch::async, [&coordinator] { coordinator.join(); });
  if (joined.wait_for(limit) != std::future_status::ready) {
    coordinator.report_fatal_error("the test: join() waited past the test's limit");
  }
  try {
    joined.get();
    return nullptr;
  } catch (...) {
    return std::current_exception();
  }
}

// Polls `condition` every few milliseconds until it holds or `limit` passes; whether it held.
template <typename Condition>
bool eventually(Condition condition, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace strata::testing
