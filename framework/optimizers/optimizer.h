// Optimizer: the Keras optimizer base class. Subclasses (SGD, Adam, AdamW, RMSprop, Adagrad) only
// name their slots and fill in their hyper-parameters; this class does the rest: validation,
// gradient clipping, the step count, the learning-rate schedule, and what each variable must apply
// (a VariableUpdate); the variable applies it (Variable::apply_update: a plain one with a fused
// backend kernel that updates it and its slots in place).
//
// All state lives in Variables made by create_variable(), so a distribution strategy's variable
// creator sees (and may replace) the step counter and every slot. Variables are always reached
// through their VariablePtr, never through copies kept here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/autograd/indexed_slices.h"
#include "framework/backend/kernel_params.h"
#include "framework/config/json.h"
#include "framework/optimizers/learning_rate_schedule.h"
#include "framework/optimizers/optimizer_options.h"
#include "framework/variables/variable.h"

namespace strata::optimizers {

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One training step: updates each variable from its gradient and adds 1 to iterations().
  // Undefined gradients are skipped (their variables are left alone); it is a ValueError when
  // every gradient is undefined. Gradient shapes must equal their variables' (ShapeError).
  //
  // Under a distribution strategy (called on each replica, inside strategy.run), the gradients
  // are first summed over the replicas, unless skip_gradients_aggregation says the caller already
  // did (Keras' argument; the trainer all-reduces in buckets during the backward pass). Then
  // each variable applies its update as its kind requires (mirrored: every replica its copy;
  // central storage: replica 0 alone while the others wait). Slots not built yet (build()) are
  // made once per process by merge_call.
  // Virtual (with the accessors below) so that a wrapper such as LossScaleOptimizer can stand in
  // for the optimizer it wraps wherever an Optimizer is expected.
  //
  // Sparse gradients (IndexedSlices, from GradientTape::gradient_with_slices) are deduplicated,
  // clipped by the norm of their rows, and applied to the touched rows only where the rule
  // allows it (updates_touched_rows_only in variable_update.h: SGD and Adagrad); other rules see
  // the dense gradient. Across replicas they are reduced densely and the rows any replica
  // touched stay the touched rows.
  virtual void apply_gradients(const std::vector<Gradient>& grads,
                               const std::vector<VariablePtr>& vars,
                               bool skip_gradients_aggregation = false);
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<VariablePtr>& vars,
                       bool skip_gradients_aggregation = false);
  void apply_gradients(const std::vector<std::pair<Tensor, VariablePtr>>& grads_and_vars,
                       bool skip_gradients_aggregation = false);

  // Creates the slot variables of `vars` now rather than on their first update.
  virtual void build(const std::vector<VariablePtr>& vars);

  // Keras's exclude_from_weight_decay(var_names=...): variables whose name contains any of
  // these strings are not decayed.
  virtual void exclude_from_weight_decay(std::vector<std::string> var_names);

  const std::string& name() const { return name_; }
  // Keras' class name: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad".
  const std::string& class_name() const { return class_name_; }
  // Keras' optimizer config: {"name", "learning_rate" (a number, or a schedule as
  // {"class_name", "config"}), "weight_decay", "clipnorm", "clipvalue", "global_clipnorm",
  // ...the subclass's hyper-parameters}. optimizers::deserialize() rebuilds from it.
  virtual Json get_config() const;
  // The number of updates applied so far: an int64 scalar Variable named "<name>/iter". On a
  // parameter server, where workers update at once, each apply_gradients claims its step from it
  // first with one atomic fetch-and-add on the ps (Variable::atomic_fetch_add; TensorFlow's
  // assign_add), and its learning rate and bias correction use that step: the count then also
  // counts updates under way, and every update owns a distinct step.
  virtual const VariablePtr& iterations() const { return iterations_; }
  // iterations() read as a number.
  virtual int64_t iteration_count() const;
  // The learning rate the next update will use (the schedule evaluated at iterations()).
  virtual double learning_rate() const;
  // Replaces the learning rate. Setting a constant on an optimizer created with a schedule is a
  // ValueError, as in Keras; setting a new schedule is allowed.
  virtual void set_learning_rate(LearningRate learning_rate);
  virtual const std::shared_ptr<LearningRateSchedule>& learning_rate_schedule() const {
    return learning_rate_.schedule();
  }
  const OptimizerConfig& config() const { return config_; }

  // iterations() first, then every slot variable in creation order.
  virtual std::vector<VariablePtr> variables() const;
  // The slot named `slot` ("m", "v", "momentum", ...) of `var`; null when not created yet.
  virtual VariablePtr get_slot(const VariablePtr& var, const std::string& slot) const;

 protected:
  Optimizer(const std::string& class_name, LearningRate learning_rate,
            const OptimizerConfig& config);

  // The slots a variable needs, in the order Backend::optimizer_update documents.
  virtual std::vector<std::string> slot_names() const = 0;
  // The first value of every slot (Adagrad starts its accumulator above zero).
  virtual double slot_initial_value() const { return 0.0; }
  // The kind and rule hyper-parameters; the base fills learning rate, step, clipping and decay.
  virtual OptimizerUpdate rule() const = 0;

  // Hyper-parameter validation helpers for subclasses; messages name the optimizer.
  void check_in_range(const char* arg, double value, double lo, double hi, bool hi_inclusive) const;
  void check_non_negative(const char* arg, double value) const;

 private:
  struct Slots {
    VariablePtr var;  // kept so its address (the key) cannot be reused by another variable
    std::vector<VariablePtr> slots;
  };
  Slots& slots_for(const VariablePtr& var);
  bool decays(const Variable& var) const;
  // Each gradient's clipnorm / global_clipnorm multiplier (1 without clipping).
  std::vector<double> clip_scales(
      const std::vector<std::pair<Gradient, VariablePtr>>& work) const;

  std::string class_name_;
  std::string name_;
  LearningRate learning_rate_;
  OptimizerConfig config_;
  std::vector<std::string> no_decay_names_;
  VariablePtr iterations_;
  std::unordered_map<const Variable*, Slots> slots_;
  std::vector<VariablePtr> slot_order_;  // every slot, in creation order
};

}  // namespace strata::optimizers
