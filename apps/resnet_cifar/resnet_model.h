// ResNet for CIFAR-10 (He et al. 2016, section 4.2), as in TensorFlow's official
// resnet_cifar_model.py: ResNet-(6n+2) built with Strata's functional API. Shared by
// apps/resnet_cifar and `strata_bench train --model resnet20` (static library `resnet_model`).
//
//   std::shared_ptr<strata::Model> model = resnet_cifar::resnet(20);   // 274,042 params
//
// Layout (n = (size - 2) / 6 residual blocks per stage):
//   conv3x3(16) -> BN -> relu
//   stage 2: n blocks, 16 filters, 32x32 (identity shortcuts)
//   stage 3: n blocks, 32 filters, 16x16 (first block: stride 2, 1x1 conv + BN projection)
//   stage 4: n blocks, 64 filters,  8x8  (first block: stride 2, 1x1 conv + BN projection)
//   GlobalAveragePooling2D -> Dense(num_classes, softmax)
// block: conv3x3 -> BN -> relu -> conv3x3 -> BN, + shortcut, relu.
// Convolutions have no bias; conv and dense kernels are he_normal with an L2(2e-4) regularizer;
// BN uses momentum 0.997 and epsilon 1e-5 (the official BATCH_NORM_DECAY / EPSILON).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <strata/strata.h>

namespace resnet_cifar {

inline constexpr double kL2WeightDecay = 2e-4;
inline constexpr double kBatchNormDecay = 0.997;
inline constexpr double kBatchNormEpsilon = 1e-5;

// The depths the official model defines: 20, 32, 44, 56, 110.
const std::vector<int>& supported_sizes();
// "20, 32, 44, 56, 110".
std::string supported_sizes_text();

struct ResnetOptions {
  int num_classes = 10;
  int64_t image_size = 32;      // input is [batch, image_size, image_size, 3] float32
  double weight_decay = kL2WeightDecay;
  // "softmax" (the official head, for sparse_categorical_crossentropy on probabilities) or
  // "linear" (logits, for a from_logits loss).
  std::string head_activation = "softmax";
};

// ResNet-`resnet_size` as a functional Model named "resnet<size>". ValueError listing the
// supported sizes for any other depth.
std::shared_ptr<strata::Model> resnet(int resnet_size, const ResnetOptions& options = {});

}  // namespace resnet_cifar
