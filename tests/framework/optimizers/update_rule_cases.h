// Backend-level optimizer update cases shared by the CPU and GPU tests: every update rule, every
// option that changes the loop (momentum, nesterov, amsgrad, centered), and the gradient
// preprocessing (grad_scale, clip_value, weight_decay), each with variables and slots filled
// with values for which every rule stays finite.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <strata/strata.h>

#include "framework/backend/kernel_params.h"
#include "framework/kernels_math/optimizer_rules.h"

namespace strata::testing {

struct UpdateCase {
  std::string name;
  OptimizerUpdate u;
};

// Slot count of Backend::optimizer_update's layout: the backends' own (one copy for CPU and CUDA).
inline size_t slot_count(const OptimizerUpdate& u) { return kernels_math::optimizer_slot_count(u); }

inline std::vector<UpdateCase> update_cases() {
  std::vector<UpdateCase> cases;
  const auto add = [&](const std::string& name, OptimizerKind kind, auto&& tweak) {
    OptimizerUpdate u;
    u.kind = kind;
    u.learning_rate = 0.05f;
    u.step = 3;
    tweak(u);
    cases.push_back({name, u});
  };
  using K = OptimizerKind;
  add("sgd", K::kSGD, [](OptimizerUpdate&) {});
  add("sgd momentum", K::kSGD, [](OptimizerUpdate& u) { u.momentum = 0.9f; });
  add("sgd nesterov", K::kSGD, [](OptimizerUpdate& u) { u.momentum = 0.9f; u.nesterov = true; });
  add("adam", K::kAdam, [](OptimizerUpdate&) {});
  add("adam amsgrad", K::kAdam, [](OptimizerUpdate& u) { u.amsgrad = true; });
  add("adam late step", K::kAdam, [](OptimizerUpdate& u) { u.step = 1000000; });
  add("adamw", K::kAdamW, [](OptimizerUpdate& u) { u.weight_decay = 0.01f; });
  add("adamw amsgrad", K::kAdamW, [](OptimizerUpdate& u) { u.weight_decay = 0.01f; u.amsgrad = true; });
  add("rmsprop", K::kRMSprop, [](OptimizerUpdate&) {});
  add("rmsprop centered", K::kRMSprop, [](OptimizerUpdate& u) { u.centered = true; });
  add("rmsprop momentum", K::kRMSprop, [](OptimizerUpdate& u) { u.momentum = 0.5f; });
  add("rmsprop centered momentum", K::kRMSprop, [](OptimizerUpdate& u) {
    u.centered = true;
    u.momentum = 0.5f;
  });
  add("adagrad", K::kAdagrad, [](OptimizerUpdate&) {});
  add("sgd scaled, clipped, decayed", K::kSGD, [](OptimizerUpdate& u) {
    u.grad_scale = 0.7f;
    u.clip_value = 0.3f;
    u.weight_decay = 0.1f;
  });
  add("adam scaled and clipped", K::kAdam, [](OptimizerUpdate& u) {
    u.grad_scale = 1.5f;
    u.clip_value = 0.5f;
  });
  add("rmsprop centered momentum clipped", K::kRMSprop, [](OptimizerUpdate& u) {
    u.centered = true;
    u.momentum = 0.9f;
    u.clip_value = 0.2f;
    u.weight_decay = 0.05f;
  });
  return cases;
}

// One variable's state for an update case, on the CPU: the value and gradient in [-1, 1], the
// slots in [0.5, 1.5] (second moments, accumulators) except RMSprop's centered mean gradient,
// kept small so that rms - mg^2 stays positive.
struct UpdateState {
  Tensor var, grad;
  std::vector<Tensor> slots;

  UpdateState clone() const {
    UpdateState c{var.clone(), grad.clone(), {}};
    for (const Tensor& s : slots) c.slots.push_back(s.clone());
    return c;
  }
  UpdateState to(Device device) const {
    UpdateState c{var.to(device), grad.to(device), {}};
    for (const Tensor& s : slots) c.slots.push_back(s.to(device));
    return c;
  }
};

inline UpdateState make_update_state(const OptimizerUpdate& u, int64_t n, int64_t seed) {
  const Device cpu = Device::cpu();
  UpdateState s;
  s.var = random_uniform({n}, -1, 1, float32, seed, cpu);
  s.grad = random_uniform({n}, -1, 1, float32, seed + 1, cpu);
  for (size_t k = 0; k < slot_count(u); ++k) {
    const bool centered_mean = u.kind == OptimizerKind::kRMSprop && u.centered && k == 1;
    s.slots.push_back(centered_mean
                          ? random_uniform({n}, -0.3, 0.3, float32, seed + 2 + int64_t(k), cpu)
                          : random_uniform({n}, 0.5, 1.5, float32, seed + 2 + int64_t(k), cpu));
  }
  return s;
}

}  // namespace strata::testing
