// Server (TensorFlow's tf.distribute.Server): what a ps or worker task of a parameter-server
// cluster runs. Every task runs the same binary and branches on its role (TF_CONFIG's task):
//
//   TFConfigClusterResolver resolver;
//   if (*resolver.task_type() == "ps" || *resolver.task_type() == "worker") {
//     Server server(resolver.cluster_spec(), *resolver.task_type(), *resolver.task_id());
//     server.join();  // serves until the coordinator ends the job
//     return 0;
//   }
//   // chief: build the model in a ParameterServerStrategy's scope, ClusterCoordinator, train.
//
// A "ps" task hosts variables (parameter_service.h); a "worker" task runs closures
// (worker_service.h) with the step and dataset functions registered in the binary, so register
// them before starting the server.
#pragma once

#include <memory>
#include <string>

#include "distribute/cluster_resolver/cluster_spec.h"
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

  // Blocks until the coordinator ends the job (ParameterServerStrategy::shutdown_cluster).
  void join();
  // The port it serves on.
  int port() const;
  // "/job:ps/replica:0/task:0".
  const std::string& task() const { return task_; }

 private:
  std::string task_;
  std::unique_ptr<ParameterServer> ps_;
  std::unique_ptr<WorkerServer> worker_;
};

}  // namespace strata::distribute
