// Model: compile, the train / test / predict steps, the compiled loss and metrics.
#include <cmath>
#include <optional>

#include "framework/autograd/grad_mode.h"
#include "framework/losses/loss_factory.h"
#include "framework/metrics/metric_factory.h"
#include "framework/model/compiled_state.h"
#include "framework/model/functional_graph.h"
#include "framework/model/model.h"
#include "framework/mixed_precision/global_policy.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"
#include "framework/optimizers/loss_scale_optimizer.h"
#include "framework/optimizers/optimizer_factory.h"
#include "framework/strategy/gradient_reducer.h"
#include "framework/strategy/replica_context.h"
#include "framework/strategy/strategy.h"

namespace strata {
namespace {

size_t output_count(const Model& m, const std::shared_ptr<FunctionalGraph>& g) {
  return g ? g->outputs().size() : 1;
}

}  // namespace

void Model::compile(OptimizerArg optimizer, LossArg loss, std::vector<MetricArg> metrics) {
  compile(CompileOptions().optimizer(std::move(optimizer)).loss(std::move(loss)).metrics(std::move(metrics)));
}

void Model::compile(const CompileOptions& options) {
  remember_strategy();
  if (weights().empty()) device_ = default_device();  // not built yet: compile's scope places it
  // The optimizer's variables belong to the model's strategy even when compile() is called
  // outside its scope.
  std::optional<distribute::Strategy::Scope> scope;
  if (distribute::Strategy* s = distribute_strategy()) scope.emplace(s);
  auto state = std::make_shared<CompiledState>();
  state->optimizer = options.optimizer_.object ? options.optimizer_.object
                                               : optimizers::get(options.optimizer_.name);
  // float16 gradients underflow without loss scaling: Keras 3 wraps the optimizer here.
  const bool float16_policy = dtype_policy().name() == "mixed_float16" ||
                              mixed_precision::global_policy().name() == "mixed_float16";
  if (options.auto_scale_loss_ && float16_policy &&
      !std::dynamic_pointer_cast<optimizers::LossScaleOptimizer>(state->optimizer)) {
    state->optimizer = std::make_shared<optimizers::LossScaleOptimizer>(
        state->optimizer, optimizers::LossScaleOptimizerOptions().name("loss_scale_optimizer"));
  }
  const size_t outputs = output_count(*this, graph_);
  if (options.loss_.empty()) {
    throw ValueError("Model.compile: no loss given; pass one, e.g. compile(\"adam\", "
                     "\"sparse_categorical_crossentropy\")");
  }
  if (options.loss_.size() != 1 && options.loss_.size() != outputs) {
    throw ValueError("Model.compile: got " + std::to_string(options.loss_.size()) +
                     " losses for a model with " + std::to_string(outputs) +
                     " outputs; give one loss, or one per output");
  }
  for (size_t o = 0; o < outputs; ++o) {
    const LossArg& arg = options.loss_[options.loss_.size() == 1 ? 0 : o];
    state->losses.push_back(arg.object ? arg.object : losses::get(arg.name));
    state->loss_names.push_back(arg.object ? arg.object->name() : arg.name);
  }
  if (!options.loss_weights_.empty() && options.loss_weights_.size() != outputs) {
    throw ValueError("Model.compile: got " + std::to_string(options.loss_weights_.size()) +
                     " loss_weights for " + std::to_string(outputs) + " outputs");
  }
  state->loss_weights = options.loss_weights_.empty() ? std::vector<double>(outputs, 1.0)
                                                      : options.loss_weights_;
  if (options.steps_per_execution_ < 1) {
    throw ValueError("Model.compile: steps_per_execution must be >= 1, got " +
                     std::to_string(options.steps_per_execution_));
  }
  state->steps_per_execution = options.steps_per_execution_;
  if (options.pss_evaluation_shards_ < CompileOptions::kAutoEvaluationShards) {
    throw ValueError("Model.compile: pss_evaluation_shards must be \"auto\", 0 (no exact "
                     "evaluation) or a number of shards, got " +
                     (options.pss_evaluation_shards_ == -2
                          ? std::string("text other than \"auto\"")
                          : std::to_string(options.pss_evaluation_shards_)));
  }
  state->pss_evaluation_shards = options.pss_evaluation_shards_;
  state->metric_args = options.metrics_;
  compiled_ = std::move(state);
  remember_strategy();
}

void Model::require_compiled(const char* method) const {
  if (!compiled_) {
    throw StateError(std::string("Model.") + method + ": the model must be compiled first; call "
                     "model.compile(optimizer, loss, metrics)");
  }
}

const std::shared_ptr<optimizers::Optimizer>& Model::optimizer() const {
  require_compiled("optimizer");
  return compiled_->optimizer;
}

std::vector<std::shared_ptr<metrics::Metric>> Model::metrics() const {
  std::vector<std::shared_ptr<metrics::Metric>> out;
  if (!compiled_) return out;
  if (compiled_->loss_tracker) out.push_back(compiled_->loss_tracker);
  for (const auto& per_output : compiled_->metrics) out.insert(out.end(), per_output.begin(), per_output.end());
  return out;
}

Tensor Model::compute_loss(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                           const Tensor& sample_weight) {
  require_compiled("compute_loss");
  if (y_true.size() != y_pred.size()) {
    throw ValueError("Model '" + name() + "': got " + std::to_string(y_true.size()) +
                     " targets for " + std::to_string(y_pred.size()) + " outputs");
  }
  Tensor total;
  for (size_t o = 0; o < y_pred.size(); ++o) {
    Tensor l = (*compiled_->losses[o])(y_true[o], y_pred[o], sample_weight);
    if (compiled_->loss_weights[o] != 1.0) l = l * compiled_->loss_weights[o];
    total = total.defined() ? total + l : l;
  }
  for (const Tensor& reg : losses()) total = total + cast(reg, total.dtype());
  // On one of several replicas: scaled by the replica's share of the global batch, so that the
  // replicas' gradients sum to the global batch's (TensorFlow's compute_average_loss; it also
  // counts the regularization losses once in total).
  if (const auto* replica = distribute::current_replica_context();
      replica != nullptr && replica->num_replicas_in_sync() > 1) {
    total = total * replica->batch_fraction();
  }
  return total;
}

void Model::update_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                           const Tensor& sample_weight, const Tensor& loss) {
  CompiledState& c = *compiled_;
  distribute::ReplicaContext* replica = distribute::current_replica_context();
  const bool replicated = replica != nullptr && replica->num_replicas_in_sync() > 1;
  // The loops build the metrics before the first step (Trainer::build_state); a custom loop
  // calling the steps itself gets them made here, once per process.
  if (!c.metrics_built && replicated) {
    distribute::merge_call(*replica, [&] { if (!c.metrics_built) build_metrics(y_true, y_pred); });
  } else if (!c.metrics_built) {
    build_metrics(y_true, y_pred);
  }
  NoGradGuard no_grad;
  // As Keras, the loss tracker weights each batch's mean loss by its number of samples, so the
  // reported loss is the mean over samples whatever the batch sizes (a partial last batch too).
  const int64_t samples = y_pred.empty() || y_pred[0].rank() == 0 ? 1 : y_pred[0].dim(0);
  Tensor batch_loss = loss.detach();
  if (replicated) {
    // compute_loss scaled this replica's loss by its share of the global batch: undo it.
    const double share = replica->batch_fraction();
    if (share == 0.0) return;  // a stand-in for a replica without samples counts for nothing
    batch_loss = batch_loss * (1.0 / share);
  }
  c.loss_tracker->update_state_from({batch_loss}, full(Shape{}, double(samples), loss.dtype(), loss.device()));
  for (size_t o = 0; o < y_pred.size(); ++o) {
    for (const auto& m : c.metrics[o]) m->update_state(y_true[o], y_pred[o].detach(), sample_weight);
  }
}

void Model::build_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred) {
  CompiledState& c = *compiled_;
  // Built on the first batch, inside whatever variable-creator scope the loop runs in.
  c.loss_tracker = std::make_shared<metrics::Mean>("loss");
  c.metrics.assign(y_pred.size(), {});
  for (size_t o = 0; o < y_pred.size(); ++o) {
    const std::string prefix =
        y_pred.size() > 1 && graph_ ? graph_->outputs()[o].node()->layer->name() + "_" : "";
    for (const MetricArg& arg : c.metric_args) {
      std::shared_ptr<metrics::Metric> m;
      if (arg.object) {
        m = arg.object;
      } else if (arg.name == "accuracy" || arg.name == "acc") {
        m = metrics::resolve_accuracy(c.loss_names[o], y_true[o].shape(), y_pred[o].shape(),
                                      prefix + arg.name);
      } else {
        m = metrics::get(arg.name);  // shown as prefix + name (Keras' per-output naming)
      }
      c.metrics[o].push_back(m);
      c.metric_names.push_back(prefix + (arg.object ? m->name() : arg.name));
    }
  }
  c.metrics_built = true;
}

Logs Model::metrics_logs() const {
  Logs logs;
  if (!compiled_ || !compiled_->metrics_built) return logs;
  logs.set("loss", compiled_->loss_tracker->result().item<double>());
  size_t k = 0;
  for (const auto& per_output : compiled_->metrics) {
    for (const auto& m : per_output) logs.set(compiled_->metric_names[k++], m->result().item<double>());
  }
  return logs;
}

void Model::reset_metrics() {
  for (const auto& m : metrics()) m->reset_state();
}

namespace {
// Splits a batch (x..., y..., [sample_weight]) by the model's input and output counts.
struct Unpacked {
  std::vector<Tensor> x, y;
  Tensor sample_weight;
};
Unpacked unpack(const data::Element& batch, size_t n_in, size_t n_out, const std::string& model) {
  Unpacked u;
  if (batch.size() != n_in && batch.size() != n_in + n_out && batch.size() != n_in + n_out + 1) {
    throw ValueError("Model '" + model + "': a batch must hold " + std::to_string(n_in) +
                     " input(s), then optionally " + std::to_string(n_out) +
                     " target(s) and a sample weight; got " + std::to_string(batch.size()) +
                     " tensors");
  }
  u.x.assign(batch.begin(), batch.begin() + std::ptrdiff_t(n_in));
  if (batch.size() > n_in) u.y.assign(batch.begin() + std::ptrdiff_t(n_in), batch.begin() + std::ptrdiff_t(n_in + n_out));
  if (batch.size() == n_in + n_out + 1) u.sample_weight = batch.back();
  return u;
}
}  // namespace

void Model::build_metrics_from(const data::Element& batch) {
  if (compiled_->metrics_built) return;
  const size_t n_in = graph_ ? graph_->inputs().size() : 1;
  Unpacked u = unpack(batch, n_in, output_count(*this, graph_), name());
  if (u.y.empty()) return;  // no targets: the step will say so
  NoGradGuard no_grad;
  // One sample is enough to know the output shapes.
  for (Tensor& x : u.x) x = x.defined() && x.rank() > 0 && x.dim(0) > 1 ? x.slice(0, 1) : x;
  for (Tensor& y : u.y) y = y.defined() && y.rank() > 0 && y.dim(0) > 1 ? y.slice(0, 1) : y;
  build_metrics(u.y, call_outputs(u.x, /*training=*/false));
}

void Model::train_step(const data::Element& batch) {
  require_compiled("train_step");
  const size_t n_in = graph_ ? graph_->inputs().size() : 1;
  Unpacked u = unpack(batch, n_in, output_count(*this, graph_), name());
  if (u.y.empty()) throw ValueError("Model '" + name() + "': fit needs targets (x, y)");
  GradientTape tape;
  std::vector<Tensor> y_pred = call_outputs(u.x, /*training=*/true);
  Tensor loss = compute_loss(u.y, y_pred, u.sample_weight);
  // The metrics before the backward pass (Keras updates them after the optimizer's step; they
  // read only y and y_pred, so the values are the same): the step's state is then final when
  // its gradients are, and a multi-worker strategy sends it with the last of them.
  update_metrics(u.y, y_pred, u.sample_weight, loss);
  const std::vector<VariablePtr> vars = trainable_variables();
  // Mixed float16: the gradients of the scaled loss, which its LossScaleOptimizer unscales.
  const auto* scaler = dynamic_cast<optimizers::LossScaleOptimizer*>(compiled_->optimizer.get());
  const Tensor target = scaler ? scaler->scale_loss(loss) : loss;
  // Summed over the replicas under a strategy; where the variables allow, each replica gets and
  // applies only its range of the sum (gradient_reducer.h).
  std::vector<Gradient> grads = distribute::compute_reduced_gradients(
      tape, target, vars, distribute::get_strategy()->gradient_bucket_bytes(),
      distribute::GradientReduction::kShardWhereAccepted, distribute::StepState::kFinal);
  compiled_->optimizer->apply_gradients(grads, vars, /*skip_gradients_aggregation=*/true);
}

void Model::test_step(const data::Element& batch) {
  require_compiled("test_step");
  const size_t n_in = graph_ ? graph_->inputs().size() : 1;
  Unpacked u = unpack(batch, n_in, output_count(*this, graph_), name());
  if (u.y.empty()) throw ValueError("Model '" + name() + "': evaluate needs targets (x, y)");
  NoGradGuard no_grad;
  std::vector<Tensor> y_pred = call_outputs(u.x, /*training=*/false);
  Tensor loss = compute_loss(u.y, y_pred, u.sample_weight);
  update_metrics(u.y, y_pred, u.sample_weight, loss);
}

Tensor Model::predict_step(const data::Element& batch) {
  const size_t n_in = graph_ ? graph_->inputs().size() : 1;
  Unpacked u = unpack(batch, n_in, output_count(*this, graph_), name());
  NoGradGuard no_grad;
  return call_outputs(u.x, /*training=*/false)[0];
}

}  // namespace strata
