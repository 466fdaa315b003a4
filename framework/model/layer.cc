#include "framework/model/layer.h"

#include <cctype>
#include <map>
#include <mutex>

#include "framework/autograd/grad_mode.h"
#include "framework/mixed_precision/autocast.h"
#include "framework/mixed_precision/global_policy.h"
#include "framework/ops/creation.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/variables/creator_stack.h"

namespace strata {

std::string unique_layer_name(const std::string& base_name) {
  static std::mutex mutex;
  static std::map<std::string, int> counts;
  std::lock_guard<std::mutex> lock(mutex);
  const int n = counts[base_name]++;
  return n == 0 ? base_name : base_name + "_" + std::to_string(n);
}

std::string to_snake_case(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      // A new word starts at an upper-case letter after a lower-case one or a digit, or before a
      // lower-case one in an acronym run ("Conv2D" -> conv2d, "ReLU" -> re_lu as Keras does).
      const bool prev_lower = i > 0 && std::islower(static_cast<unsigned char>(s[i - 1]));
      const bool next_lower = i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]));
      const bool prev_upper = i > 0 && std::isupper(static_cast<unsigned char>(s[i - 1]));
      if (i > 0 && (prev_lower || (prev_upper && next_lower))) out += '_';
      out += char(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}

Layer::Layer(const std::string& base_name, const std::string& name)
    : name_(name.empty() ? unique_layer_name(base_name) : name),
      dtype_policy_(mixed_precision::global_policy()) {}

Layer::~Layer() = default;

void Layer::wrong_input_count(size_t expected, size_t got) const {
  throw ValueError("Layer '" + name_ + "' (" + class_name() + ") expects " +
                   std::to_string(expected) + " input(s) but received " + std::to_string(got));
}

void Layer::build_multi(const std::vector<Shape>& shapes) {
  if (shapes.size() != 1) wrong_input_count(1, shapes.size());
  build(shapes[0]);
}

Tensor Layer::call(const Tensor& x, bool training) {
  return call_multi(std::vector<Tensor>{x}, training);
}

Tensor Layer::call_multi(const std::vector<Tensor>& xs, bool training) {
  if (xs.size() != 1) wrong_input_count(1, xs.size());
  return call(xs[0], training);
}

void Layer::maybe_build(const std::vector<Shape>& shapes) {
  if (built_) return;
  build_multi(shapes);
  built_ = true;
}

namespace {
Shape with_unknown_batch(Shape s) {
  if (s.rank() > 0) s[0] = -1;
  return s;
}
}  // namespace

Tensor Layer::operator()(const Tensor& x, bool training) {
  return (*this)(std::vector<Tensor>{x}, training);
}

Tensor Layer::operator()(const std::vector<Tensor>& xs, bool training) {
  return invoke(xs, training, /*then_relu=*/false);
}

Tensor Layer::call_then_relu(const std::vector<Tensor>& xs, bool training) {
  return invoke(xs, training, /*then_relu=*/true);
}

Tensor Layer::call_fused_relu(const std::vector<Tensor>& xs, bool training) {
  return relu(xs.size() == 1 ? call(xs[0], training) : call_multi(xs, training));
}

std::optional<DType> Layer::call_autocast_dtype() const {
  // As Keras 3's Layer.__call__: a mixed layer opens a scope in its compute dtype; inside
  // another layer's scope every floating layer replaces it with its own (so a float32 layer in a
  // mixed model reads float32 variables), and a non-floating one turns casting off.
  const DType compute = compute_dtype();
  if (!is_floating(compute)) return std::nullopt;
  if (mixed_precision::autocast_dtype() || dtype_policy_.is_mixed()) return compute;
  return std::nullopt;
}

Tensor Layer::invoke(const std::vector<Tensor>& inputs, bool training, bool then_relu) {
  // Floating inputs in the compute dtype (Keras' autocast); labels, token ids and masks keep
  // theirs.
  const DType compute = compute_dtype();
  const bool cast_inputs = autocast_inputs_ && is_floating(compute);
  std::vector<Tensor> xs = inputs;
  std::vector<Shape> shapes;
  for (Tensor& x : xs) {
    if (!x.defined()) throw ValueError("Layer '" + name_ + "': called on an undefined tensor");
    if (cast_inputs && is_floating(x.dtype()) && x.dtype() != compute) x = cast(x, compute);
    shapes.push_back(x.shape());
  }
  maybe_build(shapes);
  mixed_precision::AutocastScope autocast(call_autocast_dtype());
  {
    std::lock_guard<std::mutex> lock(call_state_mutex_);
    activity_losses_.erase(std::this_thread::get_id());
  }
  Tensor y = then_relu ? call_fused_relu(xs, training)
                       : xs.size() == 1 ? call(xs[0], training) : call_multi(xs, training);
  Shape out_shape = with_unknown_batch(y.shape());
  std::lock_guard<std::mutex> lock(call_state_mutex_);
  if (out_shape != output_shape_) output_shape_ = std::move(out_shape);
  return y;
}

KerasTensor Layer::operator()(const KerasTensor& x) {
  return (*this)(std::vector<KerasTensor>{x});
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& xs) {
  std::shared_ptr<Layer> self = weak_from_this().lock();
  if (!self) {
    throw ValueError("Layer '" + name_ + "': to be used in a functional model, a layer must be "
                     "owned by a std::shared_ptr (use std::make_shared<" + class_name() + ">(...))");
  }
  // Infer the output by running the layer once on zeros with a batch of one (unknown dims as
  // 1): this also builds it, exactly as its first real call would.
  std::vector<Tensor> placeholders;
  for (const KerasTensor& k : xs) {
    if (!k.defined()) throw ValueError("Layer '" + name_ + "': called on an undefined KerasTensor");
    std::vector<int64_t> dims = k.shape().dims();
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    placeholders.push_back(zeros(Shape(dims), k.dtype()));
  }
  Tensor y;
  {
    NoGradGuard no_grad;
    y = (*this)(placeholders, /*training=*/false);
  }
  auto node = std::make_shared<FunctionalNode>();
  node->layer = self;
  node->inputs = xs;
  node->output_shapes = {with_unknown_batch(y.shape())};
  node->output_dtypes = {y.dtype()};
  node->call_index = call_count_++;
  return KerasTensor(node, 0);
}

Json Layer::get_config() const {
  return Json::object(
      {{"name", name_}, {"trainable", trainable_}, {"dtype", dtype_policy_.to_config()}});
}

void Layer::set_dtype_policy(const mixed_precision::DTypePolicy& policy) {
  if (!weights_.empty() && policy.variable_dtype() != dtype_policy_.variable_dtype()) {
    throw StateError("Layer '" + name_ + "': cannot change its dtype policy from '" +
                     dtype_policy_.name() + "' to '" + policy.name() + "': its weights already "
                     "exist in " + dtype_name(dtype_policy_.variable_dtype()) + "; set the policy "
                     "before the layer is first called or built");
  }
  dtype_policy_ = policy;
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  for (const VariablePtr& w : weights_) w->set_trainable(trainable);
  for (const auto& l : sublayers_) l->set_trainable(trainable);
}

std::vector<VariablePtr> Layer::weights() const {
  std::vector<VariablePtr> out = weights_;
  for (const auto& l : sublayers_) {
    for (const VariablePtr& w : l->weights()) {
      bool seen = false;  // a layer shared by two parents reports its weights once
      for (const VariablePtr& o : out) seen = seen || o == w;
      if (!seen) out.push_back(w);
    }
  }
  return out;
}

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

int64_t Layer::count_params() const {
  int64_t n = 0;
  for (const VariablePtr& w : weights()) n += w->shape().numel();
  return n;
}

std::vector<Tensor> Layer::losses() const {
  std::vector<Tensor> out;
  {
    std::lock_guard<std::mutex> lock(call_state_mutex_);
    auto mine = activity_losses_.find(std::this_thread::get_id());
    if (mine != activity_losses_.end()) out = mine->second;
  }
  for (const auto& [var, reg] : regularized_) out.push_back(reg(var->value()));
  for (const auto& l : sublayers_) {
    const std::vector<Tensor> sub = l->losses();
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

void Layer::track_layer(const std::shared_ptr<Layer>& layer) {
  if (!layer) throw ValueError("Layer '" + name_ + "': cannot track a null layer");
  for (const auto& l : sublayers_) {
    if (l == layer) return;
  }
  sublayers_.push_back(layer);
}

void Layer::add_loss(const Tensor& loss) {
  std::lock_guard<std::mutex> lock(call_state_mutex_);
  activity_losses_[std::this_thread::get_id()].push_back(loss);
}

VariablePtr Layer::add_weight(const std::string& name, const Shape& shape,
                              const WeightOptions& options) {
  VariableSpec spec;
  spec.name = name_ + "/" + name;
  spec.shape = shape;
  spec.dtype = options.dtype.value_or(variable_dtype());
  spec.initializer = options.initializer ? options.initializer : initializers::glorot_uniform();
  spec.trainable = options.trainable && trainable_;
  spec.aggregation = options.aggregation;
  spec.synchronization = options.synchronization;
  spec.autocast = options.autocast;
  VariablePtr v = create_variable(spec);
  weights_.push_back(v);
  if (options.regularizer) regularized_.push_back({v, options.regularizer});
  return v;
}

}  // namespace strata
