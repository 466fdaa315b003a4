// strata_ps_bench: parameter-server training figures (issue 16).
//
//   strata-launch --workers 2 --ps 2 --chief -- strata_ps_bench train --model resnet20
//       every task runs it; the coordinator prints "steps/s N": train steps per second over the
//       cluster (asynchronous: each worker takes the next step when it is free), after warm-up.
//       --model tutorial is apps/ps_embedding's model (its variables sharded over the ps tasks
//       by FixedShardsPartitioner; --partitioner min_size: TensorFlow's tutorial's
//       MinSizePartitioner(256 KiB), which leaves its small variables whole; none: whole).
//   strata_ps_bench bytes --rows 100000 --dim 64 --batch 128
//       bytes on the wire per training step of an Embedding(rows, dim) table sharded over two
//       ps tasks (in this process), read and updated by rows (what Embedding does: ReadRows and
//       sparse pushes) against read and updated whole (a Read and a dense push per shard).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <strata/strata.h>

#include "apps/ps_embedding/ps_embedding_task.h"
#include "distribute/parameter_server/cluster_coordinator.h"
#include "distribute/parameter_server/parameter_server_strategy.h"
#include "distribute/parameter_server/ps_roles.h"
#include "distribute/parameter_server/server.h"
#include "distribute/parameter_server/step_registry.h"
#include "distribute/parameter_server/wire/parameter_client.h"
#include "distribute/parameter_server/wire/parameter_service.h"
#include "train_models.h"

namespace {

using namespace strata;
using namespace strata::distribute;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string mode, model = "tutorial", partitioner = "fixed";
  int64_t batch = 64, steps = 40, warmup = 5, rows = 100000, dim = 64;
};

Args parse(int argc, char** argv) {
  Args a;
  if (argc < 2) throw ValueError("usage: strata_ps_bench train|bytes [--model tutorial|resnet20] "
                                 "[--partitioner fixed|min_size|none] [--batch B] [--steps N] "
                                 "[--warmup W] [--rows R] [--dim D]");
  a.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") a.model = value;
    else if (flag == "--batch") a.batch = std::stoll(value);
    else if (flag == "--steps") a.steps = std::stoll(value);
    else if (flag == "--warmup") a.warmup = std::stoll(value);
    else if (flag == "--rows") a.rows = std::stoll(value);
    else if (flag == "--partitioner") a.partitioner = value;
    else if (flag == "--dim") a.dim = std::stoll(value);
    else throw ValueError("strata_ps_bench: unknown flag " + flag);
  }
  return a;
}

void register_bench_functions(const Args& a) {
  ps_embedding::register_functions(1000);
  if (a.model == "tutorial") return;
  register_dataset_function("bench_resnet_data", [a](const DatasetContext& ctx) {
    const bench::BenchModel m = bench::make_train_model(a.model, "", 1);
    return data::Dataset::from_tensor_slices(
               {bench::synthetic_images(m, a.batch * 2, ctx.worker_index, Device::cpu()),
                bench::synthetic_labels(m, a.batch * 2, ctx.worker_index, Device::cpu())})
        .batch(a.batch)
        .repeat();
  });
  register_step_function("bench_resnet_step", [](StepContext& ctx) {
    const data::Element b = ctx.next();
    ctx.model->train_on_batch(b[0], b[1]);
    return std::vector<Tensor>{};
  });
}

int coordinate(const Args& a, const ClusterSpec& cluster) {
  const bool tutorial = a.model == "tutorial";
  const int num_ps = cluster.num_tasks("ps");
  // The tutorial app shards every variable over the ps tasks (FixedShardsPartitioner);
  // TensorFlow's tutorial shards only variables of 256 KiB and more (MinSizePartitioner).
  if (a.partitioner != "fixed" && a.partitioner != "min_size" && a.partitioner != "none") {
    throw ValueError("strata_ps_bench: --partitioner is fixed, min_size or none, not " +
                     a.partitioner);
  }
  std::shared_ptr<Partitioner> partitioner;
  if (tutorial && num_ps > 1 && a.partitioner == "fixed") {
    partitioner = std::make_shared<FixedShardsPartitioner>(num_ps);
  } else if (tutorial && num_ps > 1 && a.partitioner == "min_size") {
    partitioner = std::make_shared<MinSizePartitioner>(int64_t(256) << 10, num_ps);
  }
  auto strategy = std::make_shared<ParameterServerStrategy>(cluster, partitioner);
  std::shared_ptr<Model> model;
  {
    auto scope = strategy->scope();
    model = tutorial ? ps_embedding::build_model(20) : bench::make_train_model(a.model, "", 1).model;
  }
  ClusterCoordinator coordinator(strategy);
  coordinator.set_model(*model);
  PerWorkerIterator it =
      coordinator.create_per_worker_dataset(tutorial ? "ps_embedding_train_data" : "bench_resnet_data")
          .iterator();
  const std::string step = tutorial ? "ps_embedding_step" : "bench_resnet_step";
  for (int64_t i = 0; i < a.warmup; ++i) coordinator.schedule(step, {}, &it);
  coordinator.join();
  const Clock::time_point start = Clock::now();
  for (int64_t i = 0; i < a.steps; ++i) coordinator.schedule(step, {}, &it);
  coordinator.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("model %s  workers %d  ps %d  batch %lld\nsteps/s %.2f  samples/s %.1f\n",
              a.model.c_str(), strategy->num_worker_tasks(), num_ps,
              (long long)(tutorial ? 32 : a.batch), double(a.steps) / seconds,
              double(a.steps) * double(tutorial ? 32 : a.batch) / seconds);
  strategy->shutdown_cluster();
  return 0;
}

int run_train(const Args& a) {
  register_bench_functions(a);
  if (std::getenv("TF_CONFIG") == nullptr) {
    throw ValueError("strata_ps_bench train runs as every task of a cluster: start it with "
                     "strata-launch --workers W --ps P --chief -- strata_ps_bench train ...");
  }
  TFConfigClusterResolver resolver;
  const ParameterServerRole role = parameter_server_role(resolver);
  if (role.kind == ParameterServerRole::Kind::kPs || role.kind == ParameterServerRole::Kind::kWorker) {
    Server(resolver.cluster_spec(), role.task_type, role.task_index).join();
    return 0;
  }
  return coordinate(a, resolver.cluster_spec());
}

// One training step of an Embedding table through the ps: by rows, or whole.
int run_bytes(const Args& a) {
  std::vector<std::unique_ptr<ParameterServer>> ps;
  std::vector<std::string> addresses;
  for (int i = 0; i < 2; ++i) {
    ps.push_back(ParameterServer::start("localhost:0"));
    addresses.push_back("localhost:" + std::to_string(ps.back()->port()));
  }
  const ClusterSpec cluster(std::map<std::string, std::vector<std::string>>{
      {"ps", addresses}, {"worker", {"localhost:1"}}});
  std::printf("Embedding(%lld, %lld) sharded over 2 ps, batch %lld ids, SGD, %lld steps\n",
              (long long)a.rows, (long long)a.dim, (long long)a.batch, (long long)a.steps);
  for (const bool sparse : {true, false}) {
    auto strategy =
        std::make_shared<ParameterServerStrategy>(cluster, std::make_shared<FixedShardsPartitioner>(2));
    VariablePtr table;
    std::shared_ptr<optimizers::SGD> sgd;
    {
      auto scope = strategy->scope();
      VariableSpec spec;
      spec.name = sparse ? "bytes/sparse_table" : "bytes/dense_table";
      spec.shape = Shape{a.rows, a.dim};
      spec.initializer = [](const Shape& s, DType d) { return full(s, 0.01, d); };
      table = create_variable(spec);
      sgd = std::make_shared<optimizers::SGD>(0.1);
      sgd->build({table});
    }
    auto bytes = [&] {
      int64_t total = 0;
      for (const auto& c : strategy->ps_clients()) total += c->bytes_sent() + c->bytes_received();
      return total;
    };
    const int64_t before = bytes();
    for (int64_t s = 0; s < a.steps; ++s) {
      std::vector<int64_t> ids;
      for (int64_t i = 0; i < a.batch; ++i) ids.push_back((s * 7919 + i * 104729) % a.rows);
      const Tensor id_tensor = Tensor::from_vector(ids, Shape{a.batch});
      auto scope = strategy->scope();
      GradientTape tape;
      Tensor rows = sparse ? table->gather(id_tensor) : embedding_lookup(table->value(), id_tensor);
      const Tensor loss = reduce_sum(multiply(rows, rows));
      if (sparse) {
        sgd->apply_gradients(tape.gradient_with_slices(loss, {table}), {table});
      } else {
        sgd->apply_gradients(tape.gradient(loss, {table}), {table});
      }
    }
    const double per_step = double(bytes() - before) / double(a.steps);
    std::printf("%-28s %12.0f bytes/step  (%.2f MB)\n",
                sparse ? "by rows (ReadRows + sparse)" : "whole (Read + dense push)", per_step,
                per_step / 1e6);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (a.mode == "train") return run_train(a);
    if (a.mode == "bytes") return run_bytes(a);
    throw ValueError("strata_ps_bench: mode '" + a.mode + "' is not train or bytes");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata_ps_bench: %s\n", e.what());
    return 1;
  }
}
