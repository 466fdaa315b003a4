// LossScaleOptimizer: dynamic loss scaling for float16 training (Keras 3's
// keras.optimizers.LossScaleOptimizer, also keras.mixed_precision.LossScaleOptimizer).
//
// float16 gradients smaller than about 6e-8 underflow to zero. The loss is therefore multiplied
// by a large scale before the backward pass, which scales every gradient by it too, and the
// gradients are divided by it again before the update. The scale adapts (Keras' rule):
//   - a step whose gradients hold an inf or NaN is skipped (no variable changes, the wrapped
//     optimizer's iterations do not advance), the scale is halved and the count of good steps
//     restarts;
//   - after dynamic_growth_steps finite steps in a row the scale doubles.
// Under a distribution strategy every replica takes the same decision: the "all finite" flag is
// all-reduced (minimum) over the replicas before anyone updates.
//
// Model::compile wraps the optimizer in one automatically when the model's (or the global)
// policy is "mixed_float16", and train_step scales the loss. A custom loop does it by hand:
//
//   auto opt = std::make_shared<optimizers::LossScaleOptimizer>(
//       std::make_shared<optimizers::Adam>(1e-3));
//   GradientTape tape;
//   Tensor loss = loss_fn(y, model(x, /*training=*/true));
//   auto grads = tape.gradient(opt->scale_loss(loss), vars);
//   opt->apply_gradients(grads, vars);   // unscales, checks, maybe skips, adapts the scale
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "framework/optimizers/optimizer.h"

namespace strata::optimizers {

struct LossScaleOptimizerOptions {
  double initial_scale_ = 32768.0;     // 2**15, Keras' default
  int64_t dynamic_growth_steps_ = 2000;
  std::string name_;                   // empty: "LossScaleOptimizer"

  LossScaleOptimizerOptions& initial_scale(double s) { initial_scale_ = s; return *this; }
  LossScaleOptimizerOptions& dynamic_growth_steps(int64_t n) { dynamic_growth_steps_ = n; return *this; }
  LossScaleOptimizerOptions& name(std::string n) { name_ = std::move(n); return *this; }
};

class LossScaleOptimizer : public Optimizer {
 public:
  // ValueError for a null inner optimizer, one that is itself a LossScaleOptimizer, an
  // initial_scale that is not a finite number > 0, or dynamic_growth_steps < 1.
  explicit LossScaleOptimizer(std::shared_ptr<Optimizer> inner_optimizer,
                              const LossScaleOptimizerOptions& options = {});

  const std::shared_ptr<Optimizer>& inner_optimizer() const { return inner_; }
  double initial_scale() const { return initial_scale_; }
  int64_t dynamic_growth_steps() const { return dynamic_growth_steps_; }
  // The current loss scale: a float32 scalar variable "<name>/dynamic_scale".
  const VariablePtr& dynamic_scale() const { return dynamic_scale_; }
  // Finite steps since the scale last changed: an int64 scalar variable "<name>/step_counter".
  const VariablePtr& step_counter() const { return step_counter_; }
  // dynamic_scale() read as a number.
  double loss_scale() const;

  // loss * the current scale, differentiable; take the gradients of this.
  Tensor scale_loss(const Tensor& loss) const;

  // Divides the gradients by the scale and hands them to the inner optimizer, or skips the step
  // when any is not finite; then adapts the scale (see the top of this file).
  using Optimizer::apply_gradients;
  void apply_gradients(const std::vector<Gradient>& grads, const std::vector<VariablePtr>& vars,
                       bool skip_gradients_aggregation = false) override;

  // Everything else is the inner optimizer's (Keras: iterations and learning_rate are the inner
  // optimizer's too).
  void build(const std::vector<VariablePtr>& vars) override;
  void exclude_from_weight_decay(std::vector<std::string> var_names) override;
  const VariablePtr& iterations() const override;
  int64_t iteration_count() const override;
  double learning_rate() const override;
  void set_learning_rate(LearningRate learning_rate) override;
  const std::shared_ptr<LearningRateSchedule>& learning_rate_schedule() const override;
  // step_counter, dynamic_scale, then the inner optimizer's variables (saved and restored with
  // the optimizer).
  std::vector<VariablePtr> variables() const override;
  VariablePtr get_slot(const VariablePtr& var, const std::string& slot) const override;

  // Keras 3's config: {"name", "inner_optimizer": the inner optimizer serialised,
  // "initial_scale", "dynamic_growth_steps"}; optimizers::deserialize() reads it back.
  Json get_config() const override;

 protected:
  // Never used: every update is the inner optimizer's, through apply_gradients above.
  std::vector<std::string> slot_names() const override { return {}; }
  OptimizerUpdate rule() const override { return {}; }

 private:
  std::shared_ptr<Optimizer> inner_;
  double initial_scale_;
  int64_t dynamic_growth_steps_;
  VariablePtr step_counter_;
  VariablePtr dynamic_scale_;
};

}  // namespace strata::optimizers
