#include "framework/model/sequential.h"

namespace strata {

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, const std::string& name)
    : Layer("sequential", name) {
  for (auto& l : layers) add(std::move(l));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw ValueError("Sequential.add: layer is null");
  layers_.push_back(std::move(layer));
}

std::vector<VariablePtr> Sequential::weights() const {
  std::vector<VariablePtr> out = Layer::weights();
  for (const auto& l : layers_) {
    const std::vector<VariablePtr> w = l->weights();
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

void Sequential::set_trainable(bool trainable) {
  Layer::set_trainable(trainable);
  for (const auto& l : layers_) l->set_trainable(trainable);
}

Tensor Sequential::call(const Tensor& x, bool training) {
  if (layers_.empty()) throw ValueError("Sequential '" + name() + "': has no layers; add() some first");
  Tensor h = x;
  for (const auto& l : layers_) h = (*l)(h, training);
  return h;
}

}  // namespace strata
