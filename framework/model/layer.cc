#include "framework/model/layer.h"

#include <map>
#include <mutex>

#include "framework/variables/creator_stack.h"

namespace strata {

std::string unique_layer_name(const std::string& base_name) {
  static std::mutex mutex;
  static std::map<std::string, int> counts;
  std::lock_guard<std::mutex> lock(mutex);
  const int n = counts[base_name]++;
  return n == 0 ? base_name : base_name + "_" + std::to_string(n);
}

Layer::Layer(const std::string& base_name, const std::string& name)
    : name_(name.empty() ? unique_layer_name(base_name) : name) {}

Layer::~Layer() = default;

Tensor Layer::operator()(const Tensor& x, bool training) {
  if (!built_) {
    build(x.shape());
    built_ = true;
  }
  return call(x, training);
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  for (const VariablePtr& w : weights_) w->set_trainable(trainable);
}

std::vector<VariablePtr> Layer::weights() const { return weights_; }

std::vector<VariablePtr> Layer::trainable_weights() const {
  std::vector<VariablePtr> out;
  for (const VariablePtr& w : weights()) {
    if (w->trainable()) out.push_back(w);
  }
  return out;
}

std::vector<VariablePtr> Layer::non_trainable_weights() const {
  std::vector<VariablePtr> out;
  for (const VariablePtr& w : weights()) {
    if (!w->trainable()) out.push_back(w);
  }
  return out;
}

VariablePtr Layer::add_weight(const std::string& name, const Shape& shape,
                              const WeightOptions& options) {
  VariableSpec spec;
  spec.name = name_ + "/" + name;
  spec.shape = shape;
  spec.dtype = options.dtype;
  spec.initializer = options.initializer ? options.initializer : initializers::glorot_uniform();
  spec.trainable = options.trainable && trainable_;
  spec.aggregation = options.aggregation;
  spec.synchronization = options.synchronization;
  VariablePtr v = create_variable(spec);
  weights_.push_back(v);
  return v;
}

}  // namespace strata
