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

namespace {
struct LayerNameCounts {
  std::mutex mutex;
  std::map<std::string, int> counts;  // names issued per base name
};
LayerNameCounts& layer_name_counts() {
  static LayerNameCounts c;
  return c;
}
std::string numbered_name(const std::string& base_name, int n) {
  return n == 0 ? base_name : base_name + "_" + std::to_string(n);
}
}  // namespace

std::string unique_layer_name(const std::string& base_name) {
  LayerNameCounts& c = layer_name_counts();
  std::lock_guard<std::mutex> lock(c.mutex);
  return numbered_name(base_name, c.counts[base_name]++);
}

void release_unique_layer_name(const std::string& base_name, const std::string& name) {
  LayerNameCounts& c = layer_name_counts();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.counts.find(base_name);
  if (it != c.counts.end() && it->second > 0 && numbered_name(base_name, it->second - 1) == name) {
    --it->second;
  }
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
      default_name_base_(name.empty() ? base_name : ""),
      dtype_policy_(mixed_precision::global_policy()) {}

Layer::Layer(Layer&& other) noexcept
    : std::enable_shared_from_this<Layer>(),
      name_(std::move(other.name_)),
      default_name_base_(std::move(other.default_name_base_)),
      dtype_policy_(std::move(other.dtype_policy_)),
      autocast_inputs_(other.autocast_inputs_),
      built_(other.built_),
      trainable_(other.trainable_),
      call_count_(other.call_count_),
      weights_(std::move(other.weights_)),
      regularized_(std::move(other.regularized_)),
      sublayers_(std::move(other.sublayers_)) {
  std::lock_guard<std::mutex> lock(other.call_state_mutex_);
  activity_losses_ = std::move(other.activity_losses_);
  output_shape_ = std::move(other.output_shape_);
}

Layer::~Layer() = default;

std::shared_ptr<Layer> Layer::move_into_shared() {
  throw ValueError(class_name() + " '" + name_ + "' was used in place (called on a KerasTensor "
                   "or passed as a std::shared_ptr<Layer>), which needs its class to declare "
                   "STRATA_LAYER(" + class_name() + "); or construct it with std::make_shared<" +
                   class_name() + ">(...)");
}

Layer::operator std::shared_ptr<Layer>() && {
  // Already shared (std::move(*ptr)): keep that owner rather than moving out of it.
  if (std::shared_ptr<Layer> self = weak_from_this().lock()) return self;
  return move_into_shared();
}

Layer& Layer::name(const std::string& name) & {
  if (name.empty()) {
    throw ValueError(class_name() + " '" + name_ + "': a layer name cannot be empty");
  }
  if (built_ || !weights_.empty()) {
    throw StateError(class_name() + " '" + name_ + "': cannot be renamed to '" + name + "' once "
                     "built (its weights are named after it); name it before its first call");
  }
  if (!default_name_base_.empty()) release_unique_layer_name(default_name_base_, name_);
  default_name_base_.clear();
  name_ = name;
  return *this;
}

Layer& Layer::dtype(const mixed_precision::DTypePolicy& policy) & {
  set_dtype_policy(policy);
  return *this;
}

Layer& Layer::trainable(bool trainable) & {
  set_trainable(trainable);
  return *this;
}

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

KerasTensor Layer::operator()(const KerasTensor& x) & {
  return (*this)(std::vector<KerasTensor>{x});
}

KerasTensor Layer::operator()(const KerasTensor& x) && {
  return std::move(*this)(std::vector<KerasTensor>{x});
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& xs) && {
  std::shared_ptr<Layer> owned = std::move(*this);  // the graph's node keeps it alive
  return (*owned)(xs);
}

KerasTensor Layer::operator()(const std::vector<KerasTensor>& xs) & {
  std::shared_ptr<Layer> self = weak_from_this().lock();
  if (!self) {
    throw ValueError("Layer '" + name_ + "': to be used in a functional model, a layer must be "
                     "owned by the graph or a std::shared_ptr: call it where it is constructed (" +
                     class_name() + "(...)(x)) or make it with std::make_shared<" + class_name() +
                     ">(...); this layer object is owned by neither");
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
