// Layer: the base of every layer and model. Builds lazily from its first input's shape; its
// state is created only through add_weight() (which goes through the variable-creator stack), so
// layers never know about devices or distribution strategies.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "framework/variables/initializers.h"
#include "framework/variables/variable.h"

namespace strata {

// Everything add_weight needs besides the name and shape; defaults as Keras' add_weight.
struct WeightOptions {
  InitializerFn initializer;  // glorot_uniform when empty
  DType dtype = DType::kFloat32;
  bool trainable = true;
  VariableAggregation aggregation = VariableAggregation::kNone;
  VariableSynchronization synchronization = VariableSynchronization::kAuto;
};

class Layer {
 public:
  // `name` empty: a unique Keras-style default from base_name ("dense", "dense_1", ...).
  explicit Layer(const std::string& base_name, const std::string& name = "");
  virtual ~Layer();
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Builds on first use from x's shape, then runs call().
  Tensor operator()(const Tensor& x, bool training = false);

  const std::string& name() const { return name_; }
  bool built() const { return built_; }
  bool trainable() const { return trainable_; }
  // Freezing a layer makes all its weights non-trainable (Keras semantics).
  virtual void set_trainable(bool trainable);

  // Own weights and those of nested layers, in creation order.
  virtual std::vector<VariablePtr> weights() const;
  std::vector<VariablePtr> trainable_weights() const;
  std::vector<VariablePtr> non_trainable_weights() const;
  // Keras' alias of trainable_weights, for tape.gradient(loss, model.trainable_variables()).
  std::vector<VariablePtr> trainable_variables() const { return trainable_weights(); }

 protected:
  // Creates the layer's state for inputs of `input_shape` (batch dim included).
  virtual void build(const Shape& input_shape) {}
  virtual Tensor call(const Tensor& x, bool training) = 0;

  // The only way a layer creates state: names it "<layer name>/<name>" and runs the
  // variable-creator stack.
  VariablePtr add_weight(const std::string& name, const Shape& shape,
                         const WeightOptions& options = {});

 private:
  std::string name_;
  bool built_ = false;
  bool trainable_ = true;
  std::vector<VariablePtr> weights_;
};

// "dense" -> "dense", then "dense_1", "dense_2", ... per base name, process-wide (as Keras).
std::string unique_layer_name(const std::string& base_name);

}  // namespace strata
