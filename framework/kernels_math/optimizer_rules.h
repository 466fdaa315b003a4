// Internal: the optimizers' per-element update rules, one copy for the CPU and CUDA backends.
//
// An optimizer step must give the same bits on the CPU (cpu_optimizer.cc) and the GPU
// (cuda_optimizer.cu), so the rules (Keras 3's, in its arithmetic order) and the step's scalars
// are written once, here; each backend only loops over the elements. Every product, sum,
// quotient and square root goes through mul_rn, add_rn, ... (rounded_ops.h), so nvcc cannot
// fuse a * b + c into one FMA that rounds once where the CPU rounds twice. The results agree to
// the last bit wherever the CPU build uses no FMA either (x86-64's baseline). The rules take
// and return values, not pointers, so the CPU's loops keep their __restrict pointers and still
// vectorise.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "framework/backend/kernel_params.h"
#include "framework/kernels_math/host_device.h"
#include "framework/kernels_math/rounded_ops.h"

namespace strata::kernels_math {

// std::max / std::min exactly: a NaN first argument is returned (fmaxf would drop it).
STRATA_HOST_DEVICE STRATA_INLINE float max_of(float a, float b) { return a < b ? b : a; }
STRATA_HOST_DEVICE STRATA_INLINE float min_of(float a, float b) { return b < a ? b : a; }

// ---- the step's scalars, resolved once on the host -----------------------------------------

struct OptimizerScalars {
  float scale;     // gradient multiplier (clipnorm / global_clipnorm)
  float bound;     // clip to [-bound, bound]; +inf without clipvalue, so the clip is branch-free
  float keep;      // 1 - lr * weight_decay: Keras 3's decoupled decay as one multiply
  float lr;
  float momentum;  // SGD and RMSprop
  float alpha;     // Adam: lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), both bias corrections
  float one_minus_b1, one_minus_b2;
  float rho, one_minus_rho;  // RMSprop
  float eps;
};

inline OptimizerScalars optimizer_scalars(const OptimizerUpdate& u) {
  OptimizerScalars c{};
  c.scale = u.grad_scale;
  c.bound = u.clip_value > 0 ? u.clip_value : std::numeric_limits<float>::infinity();
  c.keep = 1.0f - u.learning_rate * u.weight_decay;
  c.lr = u.learning_rate;
  c.momentum = u.momentum;
  // Bias corrections in double: beta^t for large t underflows gracefully to 0.
  const double t = double(u.step);
  const double correction =
      std::sqrt(1.0 - std::pow(double(u.beta_2), t)) / (1.0 - std::pow(double(u.beta_1), t));
  c.alpha = float(double(u.learning_rate) * correction);
  c.one_minus_b1 = 1.0f - u.beta_1;
  c.one_minus_b2 = 1.0f - u.beta_2;
  c.rho = u.rho;
  c.one_minus_rho = 1.0f - u.rho;
  c.eps = u.epsilon;
  return c;
}

// How many slot tensors the update's rule keeps (layout documented at Backend::optimizer_update).
inline size_t optimizer_slot_count(const OptimizerUpdate& u) {
  switch (u.kind) {
    case OptimizerKind::kSGD: return u.momentum > 0 ? 1 : 0;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return u.amsgrad ? 3 : 2;
    case OptimizerKind::kRMSprop: return 1 + (u.centered ? 1 : 0) + (u.momentum > 0 ? 1 : 0);
    case OptimizerKind::kAdagrad: return 1;
  }
  return 0;
}

// ---- the rules: each takes one element's weight w and raw gradient g, updates the element's
// slots in place and returns the new weight ------------------------------------------------

// Scale, then clip to [-bound, bound]; a NaN gradient stays NaN.
STRATA_HOST_DEVICE STRATA_INLINE float prepare_gradient(float g, const OptimizerScalars& c) {
  return min_of(max_of(mul_rn(g, c.scale), -c.bound), c.bound);
}

STRATA_HOST_DEVICE STRATA_INLINE float sgd_rule(float w, float g, const OptimizerScalars& c) {
  return sub_rn(mul_rn(w, c.keep), mul_rn(c.lr, prepare_gradient(g, c)));
}

// SGD with momentum m; Nesterov's variant steps along the updated momentum once more.
template <bool kNesterov>
STRATA_HOST_DEVICE STRATA_INLINE float sgd_momentum_rule(float w, float g, float& m,
                                                         const OptimizerScalars& c) {
  const float gp = prepare_gradient(g, c);
  const float mi = add_rn(mul_rn(-gp, c.lr), mul_rn(m, c.momentum));
  m = mi;
  if constexpr (kNesterov) {
    return add_rn(mul_rn(w, c.keep), add_rn(mul_rn(-gp, c.lr), mul_rn(mi, c.momentum)));
  } else {
    return add_rn(mul_rn(w, c.keep), mi);
  }
}

// Adam (and AdamW: the decay is c.keep): first and second moments m, v; with amsgrad the
// running maximum vhat of v takes v's place in the denominator (vhat is untouched otherwise).
template <bool kAmsgrad>
STRATA_HOST_DEVICE STRATA_INLINE float adam_rule(float w, float g, float& m, float& v,
                                                 float& vhat, const OptimizerScalars& c) {
  const float gp = prepare_gradient(g, c);
  const float mi = add_rn(m, mul_rn(sub_rn(gp, m), c.one_minus_b1));
  const float vi = add_rn(v, mul_rn(sub_rn(mul_rn(gp, gp), v), c.one_minus_b2));
  m = mi;
  v = vi;
  float denominator_v = vi;
  if constexpr (kAmsgrad) {
    denominator_v = max_of(vhat, vi);
    vhat = denominator_v;
  }
  return sub_rn(mul_rn(w, c.keep),
                div_rn(mul_rn(mi, c.alpha), add_rn(sqrt_rn(denominator_v), c.eps)));
}

// RMSprop: mean square rms; centered also keeps the mean gradient mg; with momentum the step
// accumulates in mom. Slots a variant does not use are untouched.
template <bool kCentered, bool kMomentum>
STRATA_HOST_DEVICE STRATA_INLINE float rmsprop_rule(float w, float g, float& rms, float& mg,
                                                    float& mom, const OptimizerScalars& c) {
  const float gp = prepare_gradient(g, c);
  const float ri = add_rn(mul_rn(c.rho, rms), mul_rn(c.one_minus_rho, mul_rn(gp, gp)));
  rms = ri;
  float denominator = add_rn(ri, c.eps);
  if constexpr (kCentered) {
    const float ai = add_rn(mul_rn(c.rho, mg), mul_rn(c.one_minus_rho, gp));
    mg = ai;
    denominator = add_rn(sub_rn(ri, mul_rn(ai, ai)), c.eps);
  }
  const float increment = div_rn(mul_rn(c.lr, gp), sqrt_rn(denominator));
  if constexpr (kMomentum) {
    const float ki = add_rn(mul_rn(c.momentum, mom), increment);
    mom = ki;
    return sub_rn(mul_rn(w, c.keep), ki);
  } else {
    return sub_rn(mul_rn(w, c.keep), increment);
  }
}

// Adagrad: the accumulated squared gradient acc.
STRATA_HOST_DEVICE STRATA_INLINE float adagrad_rule(float w, float g, float& acc,
                                                    const OptimizerScalars& c) {
  const float gp = prepare_gradient(g, c);
  const float ai = add_rn(acc, mul_rn(gp, gp));
  acc = ai;
  return sub_rn(mul_rn(w, c.keep), div_rn(mul_rn(c.lr, gp), sqrt_rn(add_rn(ai, c.eps))));
}

}  // namespace strata::kernels_math
