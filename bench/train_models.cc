#include "train_models.h"

#include "apps/resnet_cifar/resnet_model.h"

namespace strata::bench {
namespace {

std::shared_ptr<optimizers::Optimizer> make_optimizer(const std::string& name, double sgd_lr) {
  if (name == "sgd") return std::make_shared<optimizers::SGD>(sgd_lr);
  if (name == "sgd_momentum") {
    return std::make_shared<optimizers::SGD>(sgd_lr, optimizers::SGDOptions().momentum(0.9));
  }
  if (name == "adam") return std::make_shared<optimizers::Adam>(1e-3);
  throw ValueError("strata_bench train: unknown optimizer '" + name +
                   "'; use sgd, sgd_momentum or adam");
}

int64_t total_elements(const std::vector<VariablePtr>& vars) {
  int64_t n = 0;
  for (const auto& v : vars) n += v->shape().numel();
  return n;
}

Shape with_batch(int64_t batch, const Shape& sample) {
  std::vector<int64_t> dims{batch};
  dims.insert(dims.end(), sample.dims().begin(), sample.dims().end());
  return Shape(std::move(dims));
}

}  // namespace

std::vector<std::string> train_model_names() {
  std::vector<std::string> names{"mnist_cnn"};
  for (int size : resnet_cifar::supported_sizes()) names.push_back("resnet" + std::to_string(size));
  return names;
}

BenchModel make_train_model(const std::string& name, const std::string& optimizer,
                            int steps_per_execution) {
  BenchModel m;
  if (name == "mnist_cnn") {
    m.optimizer = optimizer.empty() ? "sgd" : optimizer;
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
    model->compile(CompileOptions()
                       .optimizer(make_optimizer(m.optimizer, 0.01))
                       .loss(std::make_shared<losses::SparseCategoricalCrossentropy>(
                           /*from_logits=*/true))
                       .steps_per_execution(steps_per_execution));
    m.model = model;
    m.sample_shape = Shape({28, 28});
    m.label_shape = Shape();  // a scalar label per sample
    m.epoch_samples = 60000;
    return m;
  }
  // "resnet<size>": resnet() names the supported sizes for any other.
  const std::string prefix = "resnet";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
      name.find_first_not_of("0123456789", prefix.size()) != std::string::npos ||
      name.size() > prefix.size() + 4) {
    throw ValueError("strata_bench train: unknown model '" + name + "'; use mnist_cnn or resnet<N> "
                     "with N one of " + resnet_cifar::supported_sizes_text());
  }
  m.optimizer = optimizer.empty() ? "sgd_momentum" : optimizer;
  m.model = resnet_cifar::resnet(std::stoi(name.substr(prefix.size())));
  m.model->compile(CompileOptions()
                       .optimizer(make_optimizer(m.optimizer, 0.1))
                       .loss("sparse_categorical_crossentropy")
                       .steps_per_execution(steps_per_execution));
  m.sample_shape = Shape({32, 32, 3});
  m.label_shape = Shape({1});
  m.epoch_samples = 50000;
  return m;
}

Tensor synthetic_images(const BenchModel& m, int64_t batch, int64_t seed, Device device) {
  const Shape shape = with_batch(batch, m.sample_shape);
  const Tensor host = m.sample_shape.rank() == 2
                          ? random_uniform(shape, 0.0, 1.0, float32, seed, Device::cpu())
                          : random_normal(shape, 0.0, 1.0, float32, seed, Device::cpu());
  return host.to(device);
}

Tensor synthetic_labels(const BenchModel& m, int64_t batch, int64_t seed, Device device) {
  // floor(U[0, 10)) as int32: uniform class ids.
  const Tensor u = random_uniform(with_batch(batch, m.label_shape), 0.0, 10.0, float32, seed,
                                  Device::cpu());
  return cast(floor(u), int32).to(device);
}

ParamCounts count_params(const Model& model) {
  return {total_elements(model.weights()), total_elements(model.trainable_weights())};
}

}  // namespace strata::bench
