// Server (TensorFlow's tf.distribute.Server): what a ps or worker task of a parameter-server
// cluster runs. Every task runs the same binary and branches on its role (TF_CONFIG's task):
//
//   TFConfigClusterResolver resolver;
//   if (*resolver.task_type() == "ps" || *resolver.task_type() == "worker") {
//     Server server(resolver.cluster_spec(), *resolver.task_type(), *resolver.task_id());
//     const int signal = server.join();  // serves until the coordinator ends the job
//     return signal ? 128 + signal : 0;  // or until preempted (SIGTERM / SIGINT)
//   }
//   // chief: build the model in a ParameterServerStrategy's scope, ClusterCoordinator, train.
//
// A "ps" task hosts variables (parameter_service.h); a "worker" task runs closures
// (worker_service.h) with the step and dataset functions registered in the binary, so register
// them before starting the server.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "distribute/cluster/resolvers/cluster_spec.h"
#include "distribute/parameter_server/parameter_server_options.h"

namespace strata::distribute {

class ParameterServer;
class WorkerServer;

class Server {
 public:
  // Starts serving at the task's address in `cluster`. ValueError for a job that serves nothing
  // here (chief / master coordinate; an evaluator runs SidecarEvaluator) or a task not in the
  // cluster; CoordinationError when the address cannot be bound.
  Server(const ClusterSpec& cluster, const std::string& job_name, int task_index,
         ParameterServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Blocks until the coordinator ends the job (ParameterServerStrategy::shutdown_cluster):
  // returns 0. A worker task also ends on SIGTERM / SIGINT (preemption): it takes no more
  // closures (those sent to it are answered ABORTED, so the coordinator re-queues them), lets
  // the one running finish and send its result, and returns the signal's number; exit with
  // 128 + that, as a signalled process does. A second signal ends it at once. (A ps task keeps
  // the default action: its variables are gone either way, and the coordinator names it.)
  int join();
  // The port it serves on.
  int port() const;
  // A worker task's closures run to their end so far (0 for a ps): for logs and tests.
  int64_t closures_run() const;
  // "/job:ps/replica:0/task:0".
  const std::string& task() const { return task_; }

 private:
  std::string task_;
  std::unique_ptr<ParameterServer> ps_;
  std::unique_ptr<WorkerServer> worker_;
};

}  // namespace strata::distribute
