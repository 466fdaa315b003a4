// `strata_bench train`: full training steps (forward, backward, optimizer update) through the
// public Keras API, model.train_on_batch, on synthetic data of the model's shape.
//
//   strata_bench train --model mnist_cnn --batch 64 --steps 50
//   strata_bench train --model resnet20 --batch 128 --steps 10 [--optimizer sgd_momentum]
//   strata_bench train --model resnet20 --batch 128 --steps 20 --strategy mirrored --replicas 2
//
// Models:
//   mnist_cnn  apps/mnist's seed_cnn: Reshape(28,28,1) -> Conv2D(32,3,relu) -> Flatten ->
//              Dense(128,relu) -> Dense(10); SparseCategoricalCrossentropy(from_logits=true);
//              default optimizer SGD(0.01)
//   resnet20   apps/resnet_cifar's ResNet-20 (resnet_model.h): softmax head,
//              sparse_categorical_crossentropy + L2; default optimizer SGD(0.1, momentum 0.9)
// --strategy mirrored|central_storage --replicas N builds and compiles the model in that
// strategy's scope over N logical CPU devices (config::set_logical_cpu_devices: each replica gets
// its share of the threads), so each step splits the global --batch over the replicas;
// one_device runs on /cpu:0 through OneDeviceStrategy, off (the default) without a strategy.
// Prints samples/s and ms/step (mean, median, best over the timed steps) and the peak resident
// memory of the process (getrusage ru_maxrss), plus the load average, since benchmark machines
// are often shared.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "apps/common/flags.h"
#include "apps/common/strategy_setup.h"
#include "apps/resnet_cifar/resnet_model.h"
#include "bench.h"

namespace strata::bench {
namespace {

struct TrainSetup {
  std::shared_ptr<Model> model;
  Tensor x, y;
};

std::shared_ptr<optimizers::Optimizer> make_optimizer(const std::string& name, double sgd_lr) {
  if (name == "sgd") return std::make_shared<optimizers::SGD>(sgd_lr);
  if (name == "sgd_momentum") {
    return std::make_shared<optimizers::SGD>(sgd_lr, optimizers::SGDOptions().momentum(0.9));
  }
  return std::make_shared<optimizers::Adam>(1e-3);
}

Tensor random_labels(const Shape& shape, int64_t seed) {
  // Uniform integers in [0, 10) as int32.
  return cast(floor(random_uniform(shape, 0.0, 10.0, float32, seed)), int32);
}

TrainSetup make_mnist_cnn(int64_t batch, const std::string& optimizer) {
  auto model = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Layer>>{
          std::make_shared<Reshape>(std::vector<int64_t>{28, 28, 1}),
          std::make_shared<Conv2D>(32, 3, "relu"),
          std::make_shared<Flatten>(),
          std::make_shared<Dense>(128, "relu"),
          std::make_shared<Dense>(10),
      },
      "seed_cnn");
  model->build({-1, 28, 28});
  model->compile(make_optimizer(optimizer.empty() ? "sgd" : optimizer, 0.01),
                 std::make_shared<losses::SparseCategoricalCrossentropy>(/*from_logits=*/true));
  return {model, random_uniform({batch, 28, 28}, 0.0, 1.0, float32, 1),
          random_labels({batch}, 2)};
}

TrainSetup make_resnet20(int64_t batch, const std::string& optimizer) {
  std::shared_ptr<Model> model = resnet_cifar::resnet(20);
  model->compile(make_optimizer(optimizer.empty() ? "sgd_momentum" : optimizer, 0.1),
                 "sparse_categorical_crossentropy");
  return {model, random_normal({batch, 32, 32, 3}, 0.0, 1.0, float32, 1),
          random_labels({batch, 1}, 2)};
}

int64_t count_params(const std::vector<VariablePtr>& vars) {
  int64_t n = 0;
  for (const auto& v : vars) n += v->shape().numel();
  return n;
}

}  // namespace

int run_train(int argc, char** argv) {
  apps::Flags flags("strata_bench train",
                    "Times full training steps (model.train_on_batch) on synthetic data.");
  std::string& model_name = flags.add_string("model", "resnet20", "Model.", {"mnist_cnn", "resnet20"});
  int64_t& batch = flags.add_int("batch", 128, "Batch size.");
  int64_t& steps = flags.add_int("steps", 10, "Timed training steps.");
  int64_t& warmup = flags.add_int("warmup", 3, "Untimed training steps first.");
  std::string& optimizer = flags.add_string(
      "optimizer", "", "Optimizer (default: sgd for mnist_cnn, sgd_momentum for resnet20).",
      {"sgd", "sgd_momentum", "adam"});
  std::string& strategy_name = flags.add_string(
      "strategy", "off", "Distribution strategy (the model is built and compiled in its scope).",
      {"off", "one_device", "mirrored", "central_storage"});
  int64_t& replicas = flags.add_int(
      "replicas", 1, "Logical CPU devices (one replica each) for mirrored / central_storage; "
      "--batch is the global batch and must be a multiple of it.");
  // Flags::parse skips argv[0] (the program name): put the subcommand there.
  std::vector<char*> args{const_cast<char*>("strata_bench train")};
  args.insert(args.end(), argv, argv + argc);
  try {
    flags.parse(int(args.size()), args.data());
  } catch (const apps::FlagError& e) {
    std::fprintf(stderr, "strata_bench train: %s\n", e.what());
    return 2;
  }
  if (batch < 1 || steps < 1 || warmup < 0) {
    std::fprintf(stderr, "strata_bench train: --batch and --steps must be >= 1, --warmup >= 0\n");
    return 2;
  }
  if (replicas < 1 || (replicas > 1 && strategy_name != "mirrored" && strategy_name != "central_storage")) {
    std::fprintf(stderr, "strata_bench train: --replicas must be >= 1, and > 1 only with --strategy "
                         "mirrored or central_storage\n");
    return 2;
  }

  set_random_seed(42);
  const auto build_start = std::chrono::steady_clock::now();
  // Declared before the model: it must outlive every step the model runs through it.
  const std::shared_ptr<distribute::Strategy> strategy = apps::make_cpu_strategy(strategy_name, int(replicas));
  const int n_replicas = strategy ? strategy->num_replicas_in_sync() : 1;
  apps::describe_strategy(strategy.get(), batch);  // the library's ValueError when --batch does not split
  std::optional<distribute::Strategy::Scope> scope;
  if (strategy) scope.emplace(strategy->scope());
  TrainSetup s = model_name == "mnist_cnn" ? make_mnist_cnn(batch, optimizer)
                                           : make_resnet20(batch, optimizer);
  scope.reset();
  const std::string opt_name =
      optimizer.empty() ? (model_name == "mnist_cnn" ? "sgd" : "sgd_momentum") : optimizer;
  // "strategy mirrored, 2 replicas": named in the header and the samples/s line.
  const std::string strategy_text = "strategy " + strategy_name + ", " + std::to_string(n_replicas) +
                                    (n_replicas == 1 ? " replica" : " replicas");
  std::printf("strata_bench train: model %s (%lld params), batch %lld, optimizer %s, %d threads, "
              "%lld warm-up + %lld timed steps, %s\n",
              model_name.c_str(),
              static_cast<long long>(count_params(s.model->weights())),
              static_cast<long long>(batch), opt_name.c_str(), get_num_threads(),
              static_cast<long long>(warmup), static_cast<long long>(steps), strategy_text.c_str());
  if (strategy) std::printf("strategy          %s\n", apps::describe_strategy(strategy.get(), batch).c_str());

  double first_loss = 0;
  for (int64_t i = 0; i < warmup; ++i) {
    const Logs logs = s.model->train_on_batch(s.x, s.y);
    if (i == 0) first_loss = logs.at("loss");
  }
  const double setup_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();

  std::vector<double> ms;
  double last_loss = 0;
  for (int64_t i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Logs logs = s.model->train_on_batch(s.x, s.y);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    last_loss = logs.at("loss");
    if (warmup == 0 && i == 0) first_loss = last_loss;
  }
  const double total_ms = std::accumulate(ms.begin(), ms.end(), 0.0);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double mean = total_ms / double(ms.size()), median = sorted[sorted.size() / 2];

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  double load[3] = {0, 0, 0};
  const bool have_load = getloadavg(load, 3) == 3;

  std::printf("build + warm-up   %.2f s\n", setup_s);
  std::printf("samples/s         %.1f (%s)\n", double(batch * steps) / (total_ms / 1e3),
              strategy_text.c_str());
  std::printf("ms/step           mean %.2f  median %.2f  best %.2f\n", mean, median, sorted.front());
  std::printf("loss              %.4f (first step) -> %.4f (last step)\n", first_loss, last_loss);
  std::printf("peak RSS          %.1f MB\n", double(usage.ru_maxrss) / 1024.0);
  if (have_load) std::printf("load average      %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  return 0;
}

}  // namespace strata::bench
