// TensorFlow's parameter-server training tutorial ("Parameter server training with
// ParameterServerStrategy", its custom training loop), in Strata: StringLookup in the input
// pipeline, an Embedding sharded over two ps tasks by FixedShardsPartitioner(2), Dense sigmoid,
// RMSprop, steps scheduled with ClusterCoordinator::schedule and joined per epoch, then an
// inline evaluation on the coordinator.
//
//   build/apps/ps_embedding/ps_embedding                 # the whole cluster in this process
//   strata-launch --workers 2 --ps 2 --chief -- build/apps/ps_embedding/ps_embedding
//
// With TF_CONFIG every task runs this same program and branches on its role.
#include <absl/flags/flag.h>

#include <iomanip>
#include <iostream>
#include <sstream>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "apps/common/main_guard.h"
#include "apps/ps_embedding/ps_embedding_task.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/server.h"
#include "distribute/parameter_server/sharded_variable.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "distribute/parameter_server/wire/remote_variable.h"
#include "distribute/parameter_server/wire/worker_service.h"

// Aliases: ABSL_FLAG's type takes no commas.
using Count = apps::Ranged<int, 1, 1000000>;
using Width = apps::Ranged<int64_t, 1, 1000000>;
using Examples = apps::Ranged<int64_t, 8, 10000000>;
ABSL_FLAG(Count, num_epochs, Count{4}, "Epochs of the custom loop.");
ABSL_FLAG(Count, steps_per_epoch, Count{5}, "Steps scheduled per epoch.");
ABSL_FLAG(Width, embedding_dim, Width{20}, "Embedding width.");
ABSL_FLAG(Examples, examples, Examples{1000}, "Examples in the data set.");

namespace {

using namespace strata;
using namespace strata::distribute;

std::string shape_text(const Shape& s) {  // TensorFlow's TensorShape printing: (5, 20)
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < s.dims().size(); ++i) out << (i ? ", " : "") << s.dims()[i];
  out << ")";
  return out.str();
}

void print_embedding_shards(const Model& model) {
  for (const VariablePtr& v : model.trainable_variables()) {
    auto* sharded = dynamic_cast<ShardedVariable*>(v.get());
    if (v->name().find("embedding") == std::string::npos || sharded == nullptr) continue;
    for (const VariablePtr& shard : sharded->shards()) {
      std::cout << shard->name() << " " << shape_text(shard->shape()) << " on "
                << dynamic_cast<RemoteVariable&>(*shard).task() << "/device:CPU:0\n";
    }
  }
}

// The coordinator's part: the tutorial's custom loop and inline evaluation.
int coordinate(const ClusterSpec& cluster) {
  auto strategy = std::make_shared<ParameterServerStrategy>(
      cluster, std::make_shared<FixedShardsPartitioner>(2));
  std::shared_ptr<Model> model;
  {
    auto scope = strategy->scope();
    model = ps_embedding::build_model(absl::GetFlag(FLAGS_embedding_dim).value);
  }
  print_embedding_shards(*model);
  ClusterCoordinator coordinator(strategy);
  coordinator.set_model(*model);
  PerWorkerIterator it = coordinator.create_per_worker_dataset("ps_embedding_train_data").iterator();
  const int epochs = absl::GetFlag(FLAGS_num_epochs).value;
  const int steps = absl::GetFlag(FLAGS_steps_per_epoch).value;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::vector<RemoteValue> results;
    for (int s = 0; s < steps; ++s) {
      results.push_back(coordinator.schedule("ps_embedding_step", {}, &it));
    }
    coordinator.join();
    double correct = 0, count = 0;
    for (const RemoteValue& r : results) {
      const std::vector<Tensor> v = r.fetch();
      correct += v[1].item<float>();
      count += v[2].item<float>();
    }
    std::cout << "Finished epoch " << epoch << ", accuracy is " << std::fixed
              << std::setprecision(6) << correct / count << ".\n";
  }
  const RemoteValue last = coordinator.schedule("ps_embedding_step", {}, &it);
  std::cout << "Final loss is " << last.fetch_one().item<float>() << "\n";

  // Inline evaluation: the coordinator's model reads the variables from the ps tasks.
  double correct = 0, count = 0;
  auto eval = ps_embedding::examples(absl::GetFlag(FLAGS_examples).value, 42).batch(8).make_iterator();
  while (std::optional<data::Element> b = eval->next()) {
    const Tensor pred = (*model)((*b)[0], /*training=*/false);
    const std::vector<float> p = pred.to_vector<float>(), y = (*b)[1].to_vector<float>();
    for (size_t i = 0; i < p.size(); ++i) correct += float(p[i] > 0.5f) == y[i];
    count += double(p.size());
  }
  std::cout << "Evaluation accuracy: " << correct / count << "\n";
  strategy->shutdown_cluster();
  return 0;
}

// No TF_CONFIG: two ps and two workers served from this process on loopback, then the loop.
int run_local_cluster() {
  std::cout << "No TF_CONFIG: running the whole cluster in this process (2 ps, 2 workers on "
               "loopback)\n";
  std::vector<std::unique_ptr<ParameterServer>> ps;
  std::vector<std::string> ps_addresses;
  for (int i = 0; i < 2; ++i) {
    ps.push_back(ParameterServer::start("localhost:0"));
    ps_addresses.push_back("localhost:" + std::to_string(ps.back()->port()));
  }
  std::vector<std::unique_ptr<WorkerServer>> workers;
  std::vector<std::string> worker_addresses;
  for (int i = 0; i < 2; ++i) {
    // A worker needs the ps addresses only; its own port is chosen here.
    const ClusterSpec for_worker(std::map<std::string, std::vector<std::string>>{
        {"ps", ps_addresses}, {"worker", {"localhost:1", "localhost:2"}}});
    workers.push_back(WorkerServer::start(
        "localhost:0", std::make_shared<ParameterServerStrategy>(for_worker), i));
    worker_addresses.push_back("localhost:" + std::to_string(workers.back()->port()));
  }
  return coordinate(ClusterSpec(std::map<std::string, std::vector<std::string>>{
      {"ps", ps_addresses}, {"worker", worker_addresses}}));
}

}  // namespace

int main(int argc, char** argv) {
  return apps::guarded_main([&] {
    apps::parse_command_line(argc, argv,
                             "TensorFlow's parameter-server tutorial (custom loop) in Strata.");
    ps_embedding::register_functions(absl::GetFlag(FLAGS_examples).value);
    if (std::getenv("TF_CONFIG") == nullptr) return run_local_cluster();
    TFConfigClusterResolver resolver;
    const ParameterServerRole role = parameter_server_role(resolver);
    std::cout << role.describe() << "\n" << std::flush;
    const ClusterSpec cluster = resolver.cluster_spec();
    switch (role.kind) {
      case ParameterServerRole::Kind::kPs:
      case ParameterServerRole::Kind::kWorker: {
        // Until the coordinator ends the job (0), or a worker is preempted (128 + signal).
        const int signal = Server(cluster, role.task_type, role.task_index).join();
        return signal ? 128 + signal : 0;
      }
      case ParameterServerRole::Kind::kEvaluator:
        std::cout << "This tutorial evaluates inline on the coordinator; nothing to do here\n";
        return 0;
      case ParameterServerRole::Kind::kCoordinator:
        break;
    }
    // Worker 0 coordinating also serves as worker 0.
    std::unique_ptr<Server> own_worker;
    if (role.also_worker) own_worker = std::make_unique<Server>(cluster, "worker", 0);
    return coordinate(cluster);
  });
}
