#include "framework/optimizers/optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "framework/autograd/grad_mode.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/strategy/replica_context.h"
#include "framework/variables/creator_stack.h"

namespace strata::optimizers {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string opt_fmt(const std::optional<double>& v) { return v ? fmt(*v) : "None"; }

}  // namespace

Optimizer::Optimizer(const std::string& class_name, LearningRate learning_rate,
                     const OptimizerConfig& config)
    : class_name_(class_name),
      name_(config.name.empty() ? class_name : config.name),
      learning_rate_(std::move(learning_rate)),
      config_(config) {
  const int clip_args = int(config.clipnorm.has_value()) + int(config.clipvalue.has_value()) +
                        int(config.global_clipnorm.has_value());
  if (clip_args > 1) {
    throw ValueError(name_ + ": only one of clipnorm, clipvalue and global_clipnorm can be set; "
                     "got clipnorm=" + opt_fmt(config.clipnorm) + ", clipvalue=" +
                     opt_fmt(config.clipvalue) + ", global_clipnorm=" +
                     opt_fmt(config.global_clipnorm));
  }
  const auto check_positive = [&](const char* arg, const std::optional<double>& v) {
    if (v && !(*v > 0.0)) {
      throw ValueError(name_ + ": " + arg + " must be > 0, got " + fmt(*v));
    }
  };
  check_positive("clipnorm", config.clipnorm);
  check_positive("clipvalue", config.clipvalue);
  check_positive("global_clipnorm", config.global_clipnorm);
  if (config.weight_decay) check_non_negative("weight_decay", *config.weight_decay);

  VariableSpec spec;
  spec.name = name_ + "/iter";
  spec.shape = Shape{};
  spec.dtype = DType::kInt64;
  spec.trainable = false;
  spec.aggregation = VariableAggregation::kOnlyFirstReplica;
  // The step count lives in host memory (unless a strategy keeps a copy per replica): it is read
  // every step (schedules, Adam's bias correction), and reading a GPU value would wait for the
  // GPU to finish the step.
  spec.device = Device::cpu();
  iterations_ = create_variable(spec);
}

Optimizer::~Optimizer() = default;

void Optimizer::check_in_range(const char* arg, double value, double lo, double hi,
                               bool hi_inclusive) const {
  const bool ok = value >= lo && (hi_inclusive ? value <= hi : value < hi);
  if (!ok) {
    throw ValueError(name_ + ": " + arg + " must be in [" + fmt(lo) + ", " + fmt(hi) +
                     (hi_inclusive ? "]" : ")") + ", got " + fmt(value));
  }
}

void Optimizer::check_non_negative(const char* arg, double value) const {
  if (!(value >= 0.0) || !std::isfinite(value)) {
    throw ValueError(name_ + ": " + arg + " must be a finite number >= 0, got " + fmt(value));
  }
}

int64_t Optimizer::iteration_count() const {
  NoGradGuard no_grad;
  return iterations_->value().item<int64_t>();
}

double Optimizer::learning_rate() const { return learning_rate_.at(iteration_count()); }

void Optimizer::set_learning_rate(LearningRate learning_rate) {
  if (learning_rate_.is_schedule() && !learning_rate.is_schedule()) {
    throw ValueError(name_ + ": set_learning_rate: this optimizer was created with a " +
                     learning_rate_.schedule()->name() +
                     " schedule as its learning_rate, so a constant learning rate cannot be set; "
                     "pass a LearningRateSchedule instead");
  }
  learning_rate_ = std::move(learning_rate);
}

void Optimizer::exclude_from_weight_decay(std::vector<std::string> var_names) {
  no_decay_names_ = std::move(var_names);
}

bool Optimizer::decays(const Variable& var) const {
  if (!config_.weight_decay || *config_.weight_decay == 0.0) return false;
  return std::none_of(no_decay_names_.begin(), no_decay_names_.end(), [&](const std::string& s) {
    return var.name().find(s) != std::string::npos;
  });
}

std::vector<VariablePtr> Optimizer::variables() const {
  std::vector<VariablePtr> out{iterations_};
  out.insert(out.end(), slot_order_.begin(), slot_order_.end());
  return out;
}

VariablePtr Optimizer::get_slot(const VariablePtr& var, const std::string& slot) const {
  const auto it = slots_.find(var.get());
  if (it == slots_.end()) return nullptr;
  const std::vector<std::string> names = slot_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == slot) return it->second.slots[i];
  }
  return nullptr;
}

Optimizer::Slots& Optimizer::slots_for(const VariablePtr& var) {
  auto it = slots_.find(var.get());
  if (it != slots_.end()) return it->second;
  Slots entry{var, {}};
  const double init = slot_initial_value();
  for (const std::string& slot : slot_names()) {
    VariableSpec spec;
    spec.name = name_ + "/" + var->name() + "/" + slot;  // Keras 2 style: "Adam/dense/kernel/m"
    spec.shape = var->shape();
    spec.dtype = var->dtype();
    spec.device = var->device();
    spec.colocate_with = var.get();  // updated together: a strategy keeps them side by side
    spec.trainable = false;
    spec.aggregation = VariableAggregation::kMean;  // Keras 3's add_variable default
    if (init != 0.0) {
      spec.initializer = [init](const Shape& shape, DType dtype) {
        return full(shape, init, dtype);
      };
    }
    VariablePtr v = create_variable(spec);
    entry.slots.push_back(v);
    slot_order_.push_back(v);
  }
  return slots_.emplace(var.get(), std::move(entry)).first->second;
}

void Optimizer::build(const std::vector<VariablePtr>& vars) {
  for (const VariablePtr& v : vars) {
    if (!v) throw ValueError(name_ + ".build: a variable is null");
    slots_for(v);
  }
}

void Optimizer::apply_gradients(const std::vector<std::pair<Tensor, VariablePtr>>& grads_and_vars,
                                bool skip_gradients_aggregation) {
  std::vector<Gradient> grads;
  std::vector<VariablePtr> vars;
  for (const auto& [g, v] : grads_and_vars) {
    grads.emplace_back(g);
    vars.push_back(v);
  }
  apply_gradients(grads, vars, skip_gradients_aggregation);
}

void Optimizer::apply_gradients(const std::vector<Tensor>& grads,
                                const std::vector<VariablePtr>& vars,
                                bool skip_gradients_aggregation) {
  apply_gradients(std::vector<Gradient>(grads.begin(), grads.end()), vars,
                  skip_gradients_aggregation);
}

void Optimizer::apply_gradients(const std::vector<Gradient>& grads,
                                const std::vector<VariablePtr>& vars,
                                bool skip_gradients_aggregation) {
  if (grads.size() != vars.size()) {
    throw ValueError(name_ + ".apply_gradients: got " + std::to_string(grads.size()) +
                     " gradients for " + std::to_string(vars.size()) +
                     " variables; they must pair up one to one");
  }
  if (grads.empty()) return;

  // Keep the (gradient, variable) pairs that have a gradient, validated.
  std::vector<std::pair<Gradient, VariablePtr>> work;
  std::string missing;
  for (size_t i = 0; i < vars.size(); ++i) {
    const VariablePtr& var = vars[i];
    if (!var) throw ValueError(name_ + ".apply_gradients: variable " + std::to_string(i) + " is null");
    const Gradient& grad = grads[i];
    if (!grad.defined()) {
      missing += (missing.empty() ? "'" : ", '") + var->name() + "'";
      continue;
    }
    if (grad.shape() != var->shape()) {
      throw ShapeError(name_ + ".apply_gradients: the gradient of variable '" + var->name() +
                       "' has shape " + grad.shape().to_string() + ", expected the variable's " +
                       var->shape().to_string());
    }
    if (grad.dtype() != var->dtype()) {
      throw DTypeError(name_ + ".apply_gradients: the gradient of variable '" + var->name() +
                       "' has dtype " + dtype_name(grad.dtype()) + ", expected the variable's " +
                       dtype_name(var->dtype()));
    }
    // Repeated rows summed once, before clipping and the row-wise update.
    work.emplace_back(grad.is_sparse() ? Gradient(grad.slices().deduplicated()) : grad, var);
  }
  if (work.empty()) {
    throw ValueError(name_ + ".apply_gradients: no gradients provided for any variable (all " +
                     std::to_string(vars.size()) + " are undefined: " + missing + ")");
  }

  NoGradGuard no_grad;
  distribute::ReplicaContext* replica = distribute::current_replica_context();
  if (replica != nullptr && replica->num_replicas_in_sync() > 1) {
    if (!skip_gradients_aggregation) {
      // A custom loop's own gradients: summed densely (the trainer's path keeps rows sparse,
      // gradient_reducer.h).
      for (auto& w : work) {
        // (a sparse gradient's dense form is already a new tensor)
        Tensor sum = w.first.is_sparse() ? w.first.to_dense() : w.first.dense().clone();
        replica->all_reduce(sum, ReduceOp::kSum);
        w.first = Gradient(sum);
      }
    }
    // Slots are state made once per process, in the cross-replica context: fit builds them
    // before its first step; a custom loop that did not call build() gets them made here, by
    // one replica while the others wait.
    const bool missing = std::any_of(work.begin(), work.end(),
                                     [&](const auto& w) { return !slots_.count(w.second.get()); });
    if (missing) {
      distribute::merge_call(*replica, [&] {
        for (const auto& w : work) slots_for(w.second);
      });
    }
  }
  // The step this update owns. Where tasks update at once (a parameter server's count), it is
  // claimed from the count in one atomic fetch-and-add (TensorFlow's iterations.assign_add), so
  // that concurrent workers never share a step and none is lost; the schedule and Adam's bias
  // correction see the claimed step. Elsewhere one process orders the updates: the count is
  // read here and written after the update, as always.
  const std::optional<int64_t> claimed = iterations_->atomic_fetch_add(1);
  const int64_t step = claimed ? *claimed : iteration_count();
  const double lr = learning_rate_.at(step);
  const std::vector<double> scales = clip_scales(work);

  OptimizerUpdate base = rule();
  base.learning_rate = float(lr);
  base.step = step + 1;
  base.clip_value = config_.clipvalue ? float(*config_.clipvalue) : 0.0f;
  // What to apply is decided here; each variable applies it where it lives (variable_update.h).
  UpdateBatch batch;
  for (size_t i = 0; i < work.size(); ++i) {
    const VariablePtr& var = work[i].second;
    VariableUpdate update;
    update.rule = base;
    update.rule.grad_scale = float(scales[i]);
    update.rule.weight_decay = decays(*var) ? float(*config_.weight_decay) : 0.0f;
    update.grad = work[i].first;
    update.slots = slots_for(var).slots;
    var->apply_update(update, batch);
  }
  batch.finish();
  // Every replica assigns the step: the variable combines it (one write for a central copy).
  if (!claimed) iterations_->assign(Tensor::scalar<int64_t>(step + 1));
}

namespace {

bool any_shard(const std::vector<std::pair<Gradient, VariablePtr>>& work) {
  return std::any_of(work.begin(), work.end(), [](const auto& w) { return w.first.is_shard(); });
}

// Each gradient's norm (a deduplicated sparse gradient's rows hold all of it). A shard holds
// only this replica's part: the parts' squared norms are summed over the replicas first, so
// every replica clips by the whole gradients' norms, alike.
std::vector<double> gradient_norms(const std::vector<std::pair<Gradient, VariablePtr>>& work) {
  std::vector<double> norms;
  for (const auto& w : work) {
    const Tensor& g = w.first.numbers();
    norms.push_back(g.numel() == 0 ? 0.0 : norm(g).item<double>());
  }
  if (!any_shard(work)) return norms;
  for (double& n : norms) n *= n;
  distribute::ReplicaContext* replica = distribute::current_replica_context();
  STRATA_CHECK(replica != nullptr);
  Tensor t = Tensor::from_vector(norms, Shape{int64_t(norms.size())}).to(replica->device());
  replica->all_reduce(t, ReduceOp::kSum);
  norms = t.to_vector<double>();
  for (double& n : norms) n = std::sqrt(n);
  return norms;
}

}  // namespace

std::vector<double> Optimizer::clip_scales(
    const std::vector<std::pair<Gradient, VariablePtr>>& work) const {
  // Clipping becomes a per-variable gradient multiplier and an elementwise bound, both applied
  // inside the fused kernel, so the update stays a single pass over each variable.
  std::vector<double> scales(work.size(), 1.0);
  if (config_.clipnorm) {
    const double clip = *config_.clipnorm;
    const std::vector<double> norms = gradient_norms(work);
    for (size_t i = 0; i < work.size(); ++i) {
      scales[i] = clip / std::max(norms[i], clip);  // NaN norm stays NaN, as Keras
    }
  } else if (config_.global_clipnorm) {
    const double clip = *config_.global_clipnorm;
    double n = 0.0;
    if (any_shard(work)) {
      for (double g : gradient_norms(work)) n += g * g;
      n = std::sqrt(n);
    } else {
      std::vector<Tensor> gs;
      for (const auto& w : work) gs.push_back(w.first.numbers());
      n = global_norm(gs).item<double>();
    }
    // Keras: a non-finite global norm makes every update NaN rather than silently huge.
    const double s = std::isfinite(n) ? clip * std::min(1.0 / n, 1.0 / clip)
                                      : std::numeric_limits<double>::quiet_NaN();
    std::fill(scales.begin(), scales.end(), s);
  }
  return scales;
}

}  // namespace strata::optimizers
