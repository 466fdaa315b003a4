// What strata-launch starts: one task per role (chief, workers, ps, evaluator), each with its
// address on this machine and the TF_CONFIG that tells it the cluster and its own place in it.
#pragma once

#include <string>
#include <vector>

namespace launch {

struct TaskPlan {
  std::string type;  // "chief" (or "master"), "worker", "ps", "evaluator"
  int index = 0;
  std::string address;    // host:port
  std::string tf_config;  // the whole TF_CONFIG of this task
  // A server (ps) or side task (evaluator): it serves until the training tasks are done, and
  // the launcher then stops it.
  bool serves = false;
  std::string label() const { return type + " " + std::to_string(index); }
};

struct PlanOptions {
  int workers = 1;
  int ps = 0;
  bool chief = false;
  // The chief's task type: "chief", or "master" (TensorFlow's legacy name, which some cloud
  // platforms still set in TF_CONFIG).
  std::string chief_name = "chief";
  bool evaluator = false;
  std::string host = "localhost";
  int port_base = 0;  // 0: free ports the system picks
  std::string rpc_layer;  // "" leaves rpc_layer out of TF_CONFIG
};

// Tasks in start order: chief, workers, ps, evaluator. Ports are port_base, port_base + 1, ...
// or, with port_base 0, ports free on this machine now (bound, read and released). Throws
// strata::IOError when no free port can be had.
std::vector<TaskPlan> make_plan(const PlanOptions& options);

// A TCP port on 127.0.0.1 that nothing listens on now (the system's choice).
int free_port();

}  // namespace launch
