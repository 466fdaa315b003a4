// Layer: the base of every layer and model (Keras 3's design). Builds lazily from its first
// input's shape; its state is created only through add_weight() (which goes through the
// variable-creator stack), so layers never know about devices or distribution strategies.
//
// A layer is called eagerly on Tensors (`layer(x, training)`) or symbolically on KerasTensors
// to build a functional model (`layer(Input({784}))`). Single-input layers override call();
// layers taking several inputs (Add, Concatenate, multi-input models) override call_multi().
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
  // Symbolic calls (functional API). The layer must be owned by a std::shared_ptr.
  KerasTensor operator()(const KerasTensor& x);
  KerasTensor operator()(const std::vector<KerasTensor>& xs);

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
// "BatchNormalization" -> "batch_normalization", as Keras derives default names.
std::string to_snake_case(const std::string& class_name);

}  // namespace strata
