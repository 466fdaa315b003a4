// The models `strata_bench train` times, built as apps/mnist and apps/resnet_cifar build them.
// bench/reference/pytorch_train.py builds the same models in PyTorch, and both tools print the
// parameter counts so a comparison can be checked to be of the same model.
//
//   mnist_cnn   apps/mnist's seed_cnn: Reshape(28,28,1) -> Conv2D(32,3,relu) -> Flatten ->
//               Dense(128,relu) -> Dense(10); SparseCategoricalCrossentropy(from_logits=true);
//               default optimizer SGD(0.01). 2,770,762 params.
//   resnet<N>   apps/resnet_cifar's ResNet-N (resnet_model.h, N in 20, 32, 44, 56, 110):
//               softmax head, sparse_categorical_crossentropy + L2(2e-4); default optimizer
//               SGD(0.1, momentum 0.9).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace strata::bench {

// "mnist_cnn", "resnet20", "resnet32", "resnet44", "resnet56", "resnet110".
std::vector<std::string> train_model_names();

struct BenchModel {
  std::shared_ptr<Model> model;
  Shape sample_shape;           // one input sample: {28, 28} or {32, 32, 3}
  Shape label_shape;            // one label: {} (mnist_cnn) or {1} (resnet, as apps/resnet_cifar)
  std::string optimizer;        // the optimizer's name, the default resolved
  int64_t epoch_samples = 0;    // the real data set's training samples (MNIST 60,000, CIFAR 50,000)
};

// Builds and compiles `name` in the caller's scope (a strategy's or a DeviceScope), with
// `optimizer` ("" for the model's default; "sgd", "sgd_momentum" or "adam") and Keras'
// steps_per_execution (fit reads the metrics back every that many steps).
BenchModel make_train_model(const std::string& name, const std::string& optimizer,
                            int steps_per_execution);

// `batch` synthetic samples on `device`: N(0, 1) images for the ResNets, U(0, 1) for mnist_cnn
// (as the scaled MNIST pixels), and int32 labels uniform in [0, 10). Made on the host and copied,
// so only the copy runs on a GPU.
Tensor synthetic_images(const BenchModel& m, int64_t batch, int64_t seed, Device device);
Tensor synthetic_labels(const BenchModel& m, int64_t batch, int64_t seed, Device device);

// Keras' "Total params" (moving statistics of BatchNormalization included) and the trainable
// part; PyTorch's parameters() are the trainable part, its BN running_mean/var the rest.
struct ParamCounts {
  int64_t total = 0;
  int64_t trainable = 0;
};
ParamCounts count_params(const Model& model);

}  // namespace strata::bench
