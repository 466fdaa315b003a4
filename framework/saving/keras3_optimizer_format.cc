#include "framework/saving/keras3_optimizer_format.h"

#include <map>

#include "framework/autograd/grad_mode.h"
#include "framework/core/error.h"
#include "framework/ops/creation.h"
#include "framework/optimizers/loss_scale_optimizer.h"
#include "framework/optimizers/optimizer.h"
#include "framework/saving/keras_attributes.h"

namespace strata::saving {
namespace {

using optimizers::Optimizer;

// Keras 3's slot variables per optimizer class: groups of (Strata slot, Keras 3 name), each
// group one add_optimizer_variables call (interleaved per model variable), in build() order.
using SlotGroup = std::vector<std::pair<const char*, const char*>>;
const std::map<std::string, std::vector<SlotGroup>>& keras3_slot_groups() {
  static const std::map<std::string, std::vector<SlotGroup>> groups = {
      {"SGD", {{{"momentum", "momentum"}}}},
      {"Adam", {{{"m", "momentum"}, {"v", "velocity"}}, {{"vhat", "velocity_hat"}}}},
      {"AdamW", {{{"m", "momentum"}, {"v", "velocity"}}, {{"vhat", "velocity_hat"}}}},
      {"RMSprop", {{{"rms", "velocity"}}, {{"momentum", "momentum"}}, {{"mg", "average_gradient"}}}},
      {"Adagrad", {{{"accumulator", "accumulator"}}}},
  };
  return groups;
}

// add_variable_from_reference's name: "<variable path with / as _>_<slot>".
std::string slot_path(const Optimizer& opt, const Variable& var, const std::string& slot) {
  std::string path = var.name();
  for (char& c : path) c = c == '/' ? '_' : c;
  return opt.name() + "/" + path + "_" + slot;
}

Keras3OptimizerVariable from_variable(const std::string& path, const std::string& kind,
                                      const VariablePtr& v) {
  return {path, kind, v->shape(), v->dtype(), [v] { return v->read_value(); },
          [v](const Tensor& t) { v->assign(t); }};
}

// A value Keras 3 has and Strata keeps nowhere (a LossScaleOptimizer's own unused counter and
// learning rate): saved as zero, ignored on load.
Keras3OptimizerVariable constant_zero(const std::string& path, const std::string& kind, DType dtype) {
  return {path, kind, Shape{}, dtype, [dtype] { return full(Shape{}, 0.0, dtype); },
          [](const Tensor&) {}};
}

Keras3OptimizerVariable learning_rate_variable(Optimizer& opt) {
  Optimizer* o = &opt;
  return {opt.name() + "/learning_rate", "learning_rate", Shape{}, DType::kFloat32,
          [o] { return full(Shape{}, o->learning_rate(), DType::kFloat32); },
          [o](const Tensor& t) {
            // Keras keeps the rate in float32: an unchanged rate keeps Strata's exact double.
            const float saved = t.item<float>();
            if (saved != float(o->learning_rate())) o->set_learning_rate(double(saved));
          }};
}

void append_slots(Optimizer& opt, const std::vector<VariablePtr>& trainable,
                  std::vector<Keras3OptimizerVariable>& out) {
  const auto known = keras3_slot_groups().find(opt.class_name());
  if (known == keras3_slot_groups().end()) {
    // Another Optimizer subclass: its slots in creation order, named by Strata's slot name.
    const std::vector<VariablePtr> vars = opt.variables();
    for (size_t i = 1; i < vars.size(); ++i) {
      const std::string& name = vars[i]->name();
      out.push_back(from_variable(name, name.substr(name.rfind('/') + 1), vars[i]));
    }
    return;
  }
  for (const SlotGroup& group : known->second) {
    if (trainable.empty() || !opt.get_slot(trainable[0], group[0].first)) continue;  // unused
    for (const VariablePtr& var : trainable) {
      for (const auto& [strata_slot, keras_slot] : group) {
        const VariablePtr slot = opt.get_slot(var, strata_slot);
        if (!slot) {
          throw InternalError("keras3_optimizer_variables: no '" + std::string(strata_slot) +
                              "' slot for '" + var->name() + "' after build()");
        }
        out.push_back(from_variable(slot_path(opt, *var, keras_slot), keras_slot, slot));
      }
    }
  }
}

void append_variables(Optimizer& opt, const std::vector<VariablePtr>& trainable,
                      std::vector<Keras3OptimizerVariable>& out) {
  if (auto* lso = dynamic_cast<optimizers::LossScaleOptimizer*>(&opt)) {
    out.push_back(constant_zero(opt.name() + "/iteration", "iteration", DType::kInt64));
    out.push_back(constant_zero(opt.name() + "/learning_rate", "learning_rate", DType::kFloat32));
    out.push_back(from_variable(opt.name() + "/step_counter", "step_counter", lso->step_counter()));
    out.push_back(from_variable(opt.name() + "/dynamic_scale", "dynamic_scale", lso->dynamic_scale()));
    append_variables(*lso->inner_optimizer(), trainable, out);
    return;
  }
  out.push_back(from_variable(opt.name() + "/iteration", "iteration", opt.iterations()));
  if (!opt.learning_rate_schedule()) out.push_back(learning_rate_variable(opt));
  append_slots(opt, trainable, out);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_vars(hdf5::Group& root, const std::string& path, const std::string& name,
                const std::vector<Keras3OptimizerVariable>& variables) {
  hdf5::Group vars = root.create_group(path);
  vars.write_string("name", name);
  NoGradGuard no_grad;
  for (size_t i = 0; i < variables.size(); ++i) {
    vars.write_dataset(std::to_string(i), variables[i].value());
  }
}

}  // namespace

std::vector<Keras3OptimizerVariable> keras3_optimizer_variables(
    Optimizer& optimizer, const std::vector<VariablePtr>& trainable) {
  optimizer.build(trainable);
  std::vector<Keras3OptimizerVariable> out;
  append_variables(optimizer, trainable, out);
  return out;
}

void write_keras3_optimizer(hdf5::Group& root, Optimizer& optimizer,
                            const std::vector<VariablePtr>& trainable) {
  write_vars(root, "optimizer/vars", optimizer.name(),
             keras3_optimizer_variables(optimizer, trainable));
  // The inner optimizer is also an attribute of the LossScaleOptimizer, which Keras' saving
  // walk visits on its own.
  if (auto* lso = dynamic_cast<optimizers::LossScaleOptimizer*>(&optimizer)) {
    write_vars(root, "optimizer/inner_optimizer/vars", lso->inner_optimizer()->name(),
               keras3_optimizer_variables(*lso->inner_optimizer(), trainable));
  }
}

std::string restore_keras3_optimizer(Optimizer& optimizer, const std::vector<VariablePtr>& trainable,
                                     const std::vector<SavedOptimizerValue>& saved,
                                     const std::string& file) {
  const std::vector<Keras3OptimizerVariable> variables =
      keras3_optimizer_variables(optimizer, trainable);
  if (saved.size() != variables.size()) {
    return "optimizer '" + optimizer.name() + "' has " + std::to_string(variables.size()) +
           " variables, whereas '" + file + "' holds " + std::to_string(saved.size()) +
           " for it";
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    const Keras3OptimizerVariable& v = variables[i];
    if (!saved[i].name.empty() && !ends_with(saved[i].name, v.kind)) {
      return "optimizer variable #" + std::to_string(i) + " is '" + v.path + "', '" + file +
             "' holds '" + saved[i].name + "' there";
    }
    if (saved[i].shape != v.shape) {
      return "'" + file + "', optimizer variable '" + v.path + "': expected shape " +
             v.shape.to_string() + ", the file holds shape " + saved[i].shape.to_string() +
             " ('" + saved[i].label + "')";
    }
  }
  std::vector<Tensor> values;
  for (size_t i = 0; i < variables.size(); ++i) values.push_back(saved[i].read(variables[i].dtype));
  NoGradGuard no_grad;
  for (size_t i = 0; i < variables.size(); ++i) variables[i].restore(values[i]);
  return "";
}

bool read_keras3_optimizer(const hdf5::Group& root, Optimizer& optimizer,
                           const std::vector<VariablePtr>& trainable) {
  if (!root.has_group("optimizer/vars")) return false;
  const hdf5::Group vars = root.open_group("optimizer/vars");
  std::vector<SavedOptimizerValue> saved;
  const size_t count = vars.child_names().size();
  for (size_t i = 0; i < count; ++i) {
    const std::string key = std::to_string(i);
    if (!vars.has_dataset(key)) {
      throw ValueError("Loading optimizer state: '" + root.file_path() + "' has no dataset "
                       "'/optimizer/vars/" + key + "' though the group holds " +
                       std::to_string(count) + " entries: not a valid Keras weights file");
    }
    saved.push_back({"/optimizer/vars/" + key, "", vars.dataset_shape(key),
                     [vars, key](DType dtype) { return vars.read_dataset(key, dtype); }});
  }
  const std::string problem = restore_keras3_optimizer(optimizer, trainable, saved, root.file_path());
  if (!problem.empty()) {
    warn("Skipping variable loading for optimizer '" + optimizer.name() + "': " + problem +
         ". As a result, your model is starting with a freshly initialized optimizer.");
    return false;
  }
  return true;
}

}  // namespace strata::saving
