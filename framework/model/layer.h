// Layer: the base of every layer and model (Keras 3's design). Builds lazily from its first
// input's shape; its state is created only through add_weight() (which goes through the
// variable-creator stack), so layers never know about devices or distribution strategies.
//
// A layer is called eagerly on Tensors (`layer(x, training)`) or symbolically on KerasTensors
// to build a functional model. Single-input layers override call(); layers taking several inputs
// (Add, Concatenate, multi-input models) override call_multi().
//
// The functional API reads like Keras: a layer constructed in place and called on a KerasTensor
// is moved into the graph, which owns it; Keras' name=, dtype= and trainable= are the same chained
// setters on every layer; a layer constructed in place also converts to std::shared_ptr<Layer>
// (Sequential's list, Sequential::add). std::make_shared stays the way to share a layer.
//
//   auto inputs = Input({784});
//   auto x = Dense(64, "relu").name("fc1")(inputs);
//   auto outputs = Dense(10).dtype("float32")(x);
//   Sequential model({Dense(64, "relu"), Dropout(0.2).name("drop"), Dense(10)});
//
// Classes that support this declare STRATA_LAYER(ClassName) (every built-in layer does; see the
// end of this file).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "framework/config/json.h"
#include "framework/core/tensor.h"
#include "framework/mixed_precision/dtype_policy.h"
#include "framework/model/keras_tensor.h"
#include "framework/variables/initializers.h"
#include "framework/variables/regularizers.h"
#include "framework/variables/variable.h"

namespace strata {

// Everything add_weight needs besides the name and shape; defaults as Keras' add_weight.
struct WeightOptions {
  Initializer initializer;     // glorot_uniform when empty
  std::optional<DType> dtype = std::nullopt;  // unset: the layer's variable dtype (its policy's)
  bool trainable = true;
  Regularizer regularizer;  // adds regularizer(weight) to losses()
  VariableAggregation aggregation = VariableAggregation::kNone;
  VariableSynchronization synchronization = VariableSynchronization::kAuto;
  // Read in the layer's compute dtype inside call() under a mixed policy; false keeps the
  // weight in its own dtype there (BatchNormalization's gamma, beta and statistics).
  bool autocast = true;
};

class Layer : public std::enable_shared_from_this<Layer> {
 public:
  // `name` empty: a unique Keras-style default from base_name ("dense", "dense_1", ...).
  explicit Layer(const std::string& base_name, const std::string& name = "");
  virtual ~Layer();
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Eager calls: build on first use from the inputs' shapes, then run call()/call_multi().
  Tensor operator()(const Tensor& x, bool training = false);
  Tensor operator()(const std::vector<Tensor>& xs, bool training = false);
  // Symbolic calls (functional API) on a layer owned by a std::shared_ptr ...
  KerasTensor operator()(const KerasTensor& x) &;
  KerasTensor operator()(const std::vector<KerasTensor>& xs) &;
  // ... or on one constructed in place (`Dense(10)(x)`), which the graph then owns.
  KerasTensor operator()(const KerasTensor& x) &&;
  KerasTensor operator()(const std::vector<KerasTensor>& xs) &&;
  // A layer constructed in place where a std::shared_ptr<Layer> is expected: moved into one.
  operator std::shared_ptr<Layer>() &&;  // NOLINT: implicit, so Sequential({Dense(10)}) reads well

  // Keras' name=, dtype= and trainable= arguments, the same for every layer; before the layer
  // is built (a built layer's weights already carry its name: StateError). A name set here
  // instead of the default takes no default number ("dense_3"), as Keras' name= does not.
  Layer& name(const std::string& name) &;
  Layer&& name(const std::string& name) && { return std::move(this->name(name)); }
  Layer& dtype(const mixed_precision::DTypePolicy& policy) &;  // "float32", "mixed_float16", ...
  Layer&& dtype(const mixed_precision::DTypePolicy& policy) && {
    return std::move(this->dtype(policy));
  }
  Layer& trainable(bool trainable) &;
  Layer&& trainable(bool trainable) && { return std::move(this->trainable(trainable)); }

  // Keras' class name ("Dense", "Conv2D", ...), the key of the layer registry.
  virtual std::string class_name() const = 0;
  // Keras' config: {"name", "trainable", "dtype", ...the layer's own arguments}; "dtype" is the
  // policy as Keras 3 serialises it (DTypePolicy::to_config).
  virtual Json get_config() const;

  // ---- dtype policy (mixed precision, framework/mixed_precision/) ----
  // Taken from the global policy when the layer is constructed (Keras' dtype=None). Floating
  // inputs are cast to compute_dtype() before call(); weights are created in variable_dtype()
  // and read in compute_dtype() inside call(). Integer and bool inputs are never cast.
  const mixed_precision::DTypePolicy& dtype_policy() const { return dtype_policy_; }
  DType compute_dtype() const { return dtype_policy_.compute_dtype(); }
  DType variable_dtype() const { return dtype_policy_.variable_dtype(); }
  // Keras' layer.dtype_policy = ... (and its dtype= argument): any policy before the layer is
  // built; afterwards only one that keeps the variable dtype of the weights it already has
  // (StateError otherwise). Sub-layers keep their own policies.
  void set_dtype_policy(const mixed_precision::DTypePolicy& policy);

  const std::string& name() const { return name_; }
  bool built() const { return built_; }
  bool trainable() const { return trainable_; }
  // Freezing a layer makes all its weights and sub-layers' weights non-trainable (Keras).
  virtual void set_trainable(bool trainable);

  // Own weights, then those of tracked sub-layers, in creation order.
  std::vector<VariablePtr> weights() const;
  std::vector<VariablePtr> trainable_weights() const;
  std::vector<VariablePtr> non_trainable_weights() const;
  // Keras' aliases, for tape.gradient(loss, model.trainable_variables()).
  std::vector<VariablePtr> trainable_variables() const { return trainable_weights(); }
  std::vector<VariablePtr> non_trainable_variables() const { return non_trainable_weights(); }
  int64_t count_params() const;

  // Regularization penalties of this layer's and its sub-layers' weights (recomputed on each
  // access, so they are differentiable in the current tape), plus losses added with add_loss()
  // during the last call.
  std::vector<Tensor> losses() const;

  // Layers tracked with track(), in order.
  const std::vector<std::shared_ptr<Layer>>& sublayers() const { return sublayers_; }
  // The output shape of the last call (batch dim -1), for summary(); empty before any call.
  const Shape& output_shape() const { return output_shape_; }

  // ---- ReLU fusion (what TensorFlow's grappler remapper does for FusedBatchNorm + Relu) ----
  // A functional model folds a ReLU layer into the layer before it when that layer applies the
  // ReLU inside its own kernel and nothing else reads its pre-activation output: one pass over
  // the activations instead of three per training step.
  // True when this layer computes exactly max(x, 0) (no cap, slope or threshold).
  virtual bool is_plain_relu() const { return false; }
  // True when this layer overrides call_fused_relu().
  virtual bool can_fuse_relu() const { return false; }
  // relu(layer(xs, training)); builds and checks like operator().
  Tensor call_then_relu(const std::vector<Tensor>& xs, bool training);

 protected:
  // Moves the object into shared ownership; STRATA_LAYER(Class) implements it. The default
  // throws a ValueError that says to use std::make_shared or to add STRATA_LAYER.
  virtual std::shared_ptr<Layer> move_into_shared();
  // For STRATA_LAYER's move: the moved-to layer takes everything (name, weights, sub-layers).
  Layer(Layer&& other) noexcept;

  // Creates the layer's state for inputs of `input_shape` (batch dim included).
  virtual void build(const Shape& input_shape) {}
  virtual void build_multi(const std::vector<Shape>& input_shapes);  // default: one input
  virtual Tensor call(const Tensor& x, bool training);                // default: error
  virtual Tensor call_multi(const std::vector<Tensor>& xs, bool training);  // default: one input
  // relu(call_multi(xs)) in fewer passes; only called when can_fuse_relu(). Default: unfused.
  virtual Tensor call_fused_relu(const std::vector<Tensor>& xs, bool training);

  // The only way a layer creates state: names it "<layer name>/<name>" and runs the
  // variable-creator stack.
  VariablePtr add_weight(const std::string& name, const Shape& shape,
                         const WeightOptions& options = {});
  // Registers a sub-layer (composite layers and subclassed models), so its weights, losses and
  // trainable flag follow this layer's.
  template <typename L>
  std::shared_ptr<L> track(std::shared_ptr<L> layer) {
    track_layer(layer);
    return layer;
  }
  void track_layer(const std::shared_ptr<Layer>& layer);
  // An activity loss of the current call (cleared at the start of each call).
  void add_loss(const Tensor& loss);
  // Marks the layer built without calling build() (layers built by hand).
  void set_built() { built_ = true; }
  // Whether operator() casts floating inputs to compute_dtype() (default true). Containers whose
  // layers cast for themselves (functional and Sequential models, as Keras' Functional) turn it
  // off, so that a float32 layer inside a mixed model still sees float32 inputs.
  void set_autocast_inputs(bool autocast) { autocast_inputs_ = autocast; }

  // Keras' error for a call with the wrong number of inputs.
  [[noreturn]] void wrong_input_count(size_t expected, size_t got) const;

 private:
  void maybe_build(const std::vector<Shape>& shapes);
  Tensor invoke(const std::vector<Tensor>& xs, bool training, bool then_relu);
  // The autocast dtype this layer's call runs under (see mixed_precision/autocast.h).
  std::optional<DType> call_autocast_dtype() const;

  std::string name_;
  std::string default_name_base_;  // "dense" when name_ is a default name, else empty
  mixed_precision::DTypePolicy dtype_policy_;
  bool autocast_inputs_ = true;
  bool built_ = false;
  bool trainable_ = true;
  int call_count_ = 0;
  std::vector<VariablePtr> weights_;
  std::vector<std::pair<VariablePtr, Regularizer>> regularized_;
  std::vector<std::shared_ptr<Layer>> sublayers_;
  // Per calling thread: the replicas of a distribution strategy call one layer concurrently.
  std::unordered_map<std::thread::id, std::vector<Tensor>> activity_losses_;
  Shape output_shape_;
  mutable std::mutex call_state_mutex_;  // guards activity_losses_ and output_shape_
};

// "dense" -> "dense", then "dense_1", "dense_2", ... per base name, process-wide (as Keras).
std::string unique_layer_name(const std::string& base_name);
// Gives `name` back when it is the last one unique_layer_name(base_name) returned, so that a layer
// renamed right after construction leaves the default numbering as Keras' name= would.
void release_unique_layer_name(const std::string& base_name, const std::string& name);
// "BatchNormalization" -> "batch_normalization", as Keras derives default names.
std::string to_snake_case(const std::string& class_name);

}  // namespace strata

// In the public part of a layer class: lets it be constructed in place and called on
// KerasTensors (`MyLayer(...)(inputs)`) or passed as a std::shared_ptr<Layer>, by moving it into
// shared ownership. The class must be move-constructible (its members movable, no user-declared
// copy operations or destructor; a std::mutex member needs a move constructor of its own).
#define STRATA_LAYER(Class)                                        \
 protected:                                                        \
  std::shared_ptr<::strata::Layer> move_into_shared() override {   \
    return std::make_shared<Class>(std::move(*this));              \
  }                                                                \
                                                                   \
 public:
