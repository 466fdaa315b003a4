#include "apps/resnet_cifar/resnet_model.h"

#include <algorithm>

// The layout of TensorFlow's official Keras CIFAR ResNet (resnet_cifar_model.py): the first block
// of every stage is a "conv block" with a 1x1 projection shortcut + BN (stage 2's too, although
// its shapes would allow an identity), the others "identity blocks"; the classifier uses
// RandomNormal(0.01) and L2 on kernel and bias.
// Parameter count of ResNet-20, by hand (kernels HWIO, no conv bias; BN: gamma, beta trainable,
// moving mean/variance non-trainable):
//   conv1 3*3*3*16 = 432                                             bn 16 ch
//   stage 2: 6 convs 3*3*16*16 = 13,824 + proj 16*16 = 256 = 14,080   bn 6*16 + 16 = 112 ch
//   stage 3: 3*3*16*32 = 4,608 + 5 * 3*3*32*32 = 46,080 + proj 16*32 = 512
//            = 51,200                                                  bn 6*32 + 32 = 224 ch
//   stage 4: 3*3*32*64 = 18,432 + 5 * 3*3*64*64 = 184,320 + proj 32*64 = 2,048
//            = 204,800                                                 bn 6*64 + 64 = 448 ch
//   dense 64*10 + 10 = 650
//   weights: 432 + 14,080 + 51,200 + 204,800 + 650 = 271,162
//   BN channels 16 + 112 + 224 + 448 = 800 -> 1,600 trainable (gamma, beta) + 1,600 moving
//   trainable 271,162 + 1,600 = 272,762; total (Keras' "Total params") 274,362.

namespace resnet_cifar {

using namespace strata;

const std::vector<int>& supported_sizes() {
  static const std::vector<int> sizes{20, 32, 44, 56, 110};
  return sizes;
}

std::string supported_sizes_text() {
  std::string s;
  for (int v : supported_sizes()) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

namespace {

struct Builder {
  const ResnetOptions& options;

  KerasTensor conv(const KerasTensor& x, int64_t filters, int kernel, int stride,
                   const std::string& name) const {
    return Conv2D(filters, IntPair{kernel, kernel},
                  Conv2DOptions()
                      .strides(IntPair{stride, stride})
                      .padding("same")
                      .use_bias(false)
                      .kernel_initializer(initializers::he_normal())
                      .kernel_regularizer(regularizers::l2(options.weight_decay)))
        .name(name)(x);
  }

  static KerasTensor bn(const KerasTensor& x, const std::string& name) {
    return BatchNormalization(
               BatchNormalizationOptions().momentum(kBatchNormDecay).epsilon(kBatchNormEpsilon))
        .name(name)(x);
  }

  static KerasTensor relu(const KerasTensor& x, const std::string& name) {
    return ActivationLayer("relu").name(name)(x);
  }

  // One basic block; `project` adds the 1x1 conv + BN shortcut (each stage's first block).
  KerasTensor block(const KerasTensor& input, int64_t filters, int stride, bool project,
                    const std::string& base) const {
    KerasTensor x = conv(input, filters, 3, stride, base + "_conv1");
    x = bn(x, base + "_bn1");
    x = relu(x, base + "_relu1");
    x = conv(x, filters, 3, 1, base + "_conv2");
    x = bn(x, base + "_bn2");
    KerasTensor shortcut = input;
    if (project) {
      shortcut = conv(input, filters, 1, stride, base + "_shortcut_conv");
      shortcut = bn(shortcut, base + "_shortcut_bn");
    }
    x = Add().name(base + "_add")({x, shortcut});
    return relu(x, base + "_out");
  }
};

}  // namespace

std::shared_ptr<Model> resnet(int resnet_size, const ResnetOptions& options) {
  const auto& sizes = supported_sizes();
  if (std::find(sizes.begin(), sizes.end(), resnet_size) == sizes.end()) {
    throw ValueError("resnet_size " + std::to_string(resnet_size) +
                     " is not supported; use one of " + supported_sizes_text());
  }
  const int blocks = (resnet_size - 2) / 6;
  const Builder b{options};

  KerasTensor inputs = Input({options.image_size, options.image_size, 3}, float32, "input_1");
  KerasTensor x = b.conv(inputs, 16, 3, 1, "conv1");
  x = Builder::bn(x, "bn_conv1");
  x = Builder::relu(x, "conv1_relu");
  const int64_t filters[] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage) {
    for (int i = 0; i < blocks; ++i) {
      const bool first = i == 0;
      x = b.block(x, filters[stage], first && stage > 0 ? 2 : 1, /*project=*/first,
                  "res" + std::to_string(stage + 2) + "_block" + std::to_string(i));
    }
  }
  x = GlobalAveragePooling2D().name("avg_pool")(x);
  KerasTensor outputs = Dense(options.num_classes,
                              DenseOptions()
                                  .activation(options.head_activation)
                                  .kernel_initializer(initializers::random_normal(0.0, 0.01))
                                  .kernel_regularizer(regularizers::l2(options.weight_decay))
                                  .bias_regularizer(regularizers::l2(options.weight_decay)))
                            .name("fc" + std::to_string(options.num_classes))(x);
  return std::make_shared<Model>(inputs, outputs, "resnet" + std::to_string(resnet_size));
}

}  // namespace resnet_cifar
