// The Keras JSON config loader: model_from_json on the input (Json::parse, then Sequential and
// functional from_config through the layer registry, building the layers).
#include <cstdint>
#include <string>

#include <strata/strata.h>

#include "fuzz/fuzz_support.h"

namespace strata::fuzz {
namespace {

std::string mlp() {
  Sequential m({std::make_shared<Dense>(16, DenseOptions().activation("relu")),
                std::make_shared<Dropout>(0.5), std::make_shared<Dense>(4, "softmax")},
               "mlp");
  m.build({-1, 8});
  return m.to_json();
}

std::string cnn() {
  Sequential m({std::make_shared<Rescaling>(1.0 / 255), std::make_shared<Conv2D>(4, 3),
                std::make_shared<BatchNormalization>(), std::make_shared<MaxPooling2D>(),
                std::make_shared<DepthwiseConv2D>(3), std::make_shared<ZeroPadding2D>(1),
                std::make_shared<AveragePooling2D>(), std::make_shared<GlobalMaxPooling2D>(),
                std::make_shared<Dense>(3)},
               "cnn");
  m.build({-1, 16, 16, 3});
  return m.to_json();
}

// Two branches merged every way Strata can, with a nested Sequential and every activation layer.
std::string functional() {
  auto in = Input({4, 6}, float32, "x");
  auto a = (*std::make_shared<Dense>(6, "tanh"))(in);
  auto b = (*std::make_shared<LayerNormalization>())(in);
  auto block = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Layer>>{std::make_shared<ReLU>(), std::make_shared<LeakyReLU>(),
                                          std::make_shared<ELU>(), std::make_shared<PReLU>()},
      "block");
  auto c = (*block)(b);
  auto sum = (*std::make_shared<Add>())(std::vector<KerasTensor>{a, c});
  auto diff = (*std::make_shared<Subtract>())(std::vector<KerasTensor>{a, c});
  auto prod = (*std::make_shared<Multiply>())(std::vector<KerasTensor>{sum, diff});
  auto cat = (*std::make_shared<Concatenate>())(std::vector<KerasTensor>{prod, a});
  auto perm = (*std::make_shared<Permute>(std::vector<int>{2, 1}))(cat);
  auto flat = (*std::make_shared<Flatten>())(perm);
  auto shaped = (*std::make_shared<Reshape>(std::vector<int64_t>{6, 8}))(flat);
  auto out = (*std::make_shared<Softmax>())((*std::make_shared<ActivationLayer>("sigmoid"))(shaped));
  Model m(in, out, "branches");
  return m.to_json();
}

std::string embedding() {
  Sequential m({std::make_shared<Embedding>(20, 4), std::make_shared<GlobalAveragePooling2D>()},
               "embedding");
  return m.to_json();
}

}  // namespace

void write_seeds(const std::string& dir) {
  write_seed(dir, "mlp.json", mlp());
  write_seed(dir, "cnn.json", cnn());
  write_seed(dir, "functional.json", functional());
  write_seed(dir, "embedding.json", embedding());
  // Every registered class once, with only a name: most fail to build for want of their
  // arguments, but the fuzzer learns every class name and reaches every from_config.
  for (const std::string& cls : registered_layers()) {
    write_seed(dir, "layer_" + cls + ".json",
               R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
               R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3]}}, )"
               R"({"class_name": ")" + cls + R"(", "config": {"name": "l"}}]}})");
  }
}

}  // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::shared_ptr<strata::Model> model =
        strata::model_from_json(std::string(strata::fuzz::as_view(data, size)));
    (void)model->to_json();  // the loaded config must serialise again
  } catch (const strata::Error&) {
  }
  return 0;
}
