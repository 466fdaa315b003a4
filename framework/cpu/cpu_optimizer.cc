// Fused optimizer updates on the CPU: each variable's gradient, value and slots are read once and
// the value and slots written once, in one parallel, branch-free (vectorisable) loop per rule.
// The rules are Keras 3's, written in its arithmetic order so results match it to rounding.
// sqrt() setting errno for negative inputs adds a branch per element that stops the loops below
// from vectorising; the project flags keep -fmath-errno, so switch it off for this file only.
#pragma GCC optimize("no-math-errno")

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {

// Elementwise work is a few flops per element: smaller chunks than kParallelGrain still pay off.
constexpr int64_t kGrain = 16384;

// Gradient preprocessing shared by every rule: scale (clipnorm / global_clipnorm), then clip.
// With no clip_value the bound is +inf, so min/max stay branch-free and leave g unchanged.
struct GradPrep {
  float scale;
  float bound;
  float operator()(float g) const {
    g *= scale;
    // std::max/min (not fmax/fmin) so a NaN gradient stays NaN instead of becoming the bound.
    return std::min(std::max(g, -bound), bound);
  }
};

float* slot_data(std::vector<Tensor>& slots, size_t i) {
  return static_cast<float*>(slots[i].raw_data());
}

void check_float32(const char* what, const Tensor& t) {
  if (t.dtype() != DType::kFloat32) {
    throw DTypeError(std::string("optimizer_update: the CPU kernel supports float32 only; ") +
                     what + " has dtype " + dtype_name(t.dtype()));
  }
}

size_t expected_slots(const OptimizerUpdate& u) {
  switch (u.kind) {
    case OptimizerKind::kSGD: return u.momentum > 0 ? 1 : 0;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return u.amsgrad ? 3 : 2;
    case OptimizerKind::kRMSprop: return 1 + (u.centered ? 1 : 0) + (u.momentum > 0 ? 1 : 0);
    case OptimizerKind::kAdagrad: return 1;
  }
  return 0;
}

// w <- w - lr*wd*w (Keras 3's decoupled decay), folded into the same pass as the rule.
struct Decay {
  float keep;  // 1 - lr*wd
  float operator()(float w) const { return w * keep; }
};

void sgd(const OptimizerUpdate& u, float* w, const float* grad, std::vector<Tensor>& slots,
         int64_t n, GradPrep prep, Decay decay) {
  const float lr = u.learning_rate;
  if (slots.empty()) {
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) w[i] = decay(w[i]) - lr * prep(grad[i]);
    });
    return;
  }
  float* m = slot_data(slots, 0);
  const float mu = u.momentum;
  if (u.nesterov) {
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float g = prep(grad[i]);
        const float mi = -g * lr + m[i] * mu;
        m[i] = mi;
        w[i] = decay(w[i]) + (-g * lr + mi * mu);
      }
    });
  } else {
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float mi = -prep(grad[i]) * lr + m[i] * mu;
        m[i] = mi;
        w[i] = decay(w[i]) + mi;
      }
    });
  }
}

void adam(const OptimizerUpdate& u, float* w, const float* grad, std::vector<Tensor>& slots,
          int64_t n, GradPrep prep, Decay decay) {
  // Bias corrections folded into the step size, in double: beta^t underflows gracefully.
  const double t = double(u.step);
  const double b1_power = std::pow(double(u.beta_1), t);
  const double b2_power = std::pow(double(u.beta_2), t);
  const float alpha = float(double(u.learning_rate) * std::sqrt(1.0 - b2_power) / (1.0 - b1_power));
  const float one_minus_b1 = 1.0f - u.beta_1, one_minus_b2 = 1.0f - u.beta_2;
  const float eps = u.epsilon;
  float* m = slot_data(slots, 0);
  float* v = slot_data(slots, 1);
  if (u.amsgrad) {
    float* vhat = slot_data(slots, 2);
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float g = prep(grad[i]);
        const float mi = m[i] + (g - m[i]) * one_minus_b1;
        const float vi = v[i] + (g * g - v[i]) * one_minus_b2;
        const float vh = std::max(vhat[i], vi);
        m[i] = mi;
        v[i] = vi;
        vhat[i] = vh;
        w[i] = decay(w[i]) - (mi * alpha) / (std::sqrt(vh) + eps);
      }
    });
  } else {
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float g = prep(grad[i]);
        const float mi = m[i] + (g - m[i]) * one_minus_b1;
        const float vi = v[i] + (g * g - v[i]) * one_minus_b2;
        m[i] = mi;
        v[i] = vi;
        w[i] = decay(w[i]) - (mi * alpha) / (std::sqrt(vi) + eps);
      }
    });
  }
}

void rmsprop(const OptimizerUpdate& u, float* w, const float* grad, std::vector<Tensor>& slots,
             int64_t n, GradPrep prep, Decay decay) {
  const float lr = u.learning_rate, rho = u.rho, one_minus_rho = 1.0f - u.rho;
  const float eps = u.epsilon, mu = u.momentum;
  float* rms = slot_data(slots, 0);
  // Slot order follows Backend::optimizer_update: rms, [mg], [momentum].
  float* mg = u.centered ? slot_data(slots, 1) : nullptr;
  float* mom = u.momentum > 0 ? slot_data(slots, u.centered ? 2 : 1) : nullptr;
  // Four loop bodies rather than per-element branches, so each one vectorises.
  auto run = [&](auto centered_tag, auto momentum_tag) {
    constexpr bool kCentered = decltype(centered_tag)::value;
    constexpr bool kMomentum = decltype(momentum_tag)::value;
    cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float g = prep(grad[i]);
        const float r = rho * rms[i] + one_minus_rho * (g * g);
        rms[i] = r;
        float denominator;
        if constexpr (kCentered) {
          const float a = rho * mg[i] + one_minus_rho * g;
          mg[i] = a;
          denominator = r - a * a + eps;
        } else {
          denominator = r + eps;
        }
        const float increment = lr * g / std::sqrt(denominator);
        if constexpr (kMomentum) {
          const float mi = mu * mom[i] + increment;
          mom[i] = mi;
          w[i] = decay(w[i]) - mi;
        } else {
          w[i] = decay(w[i]) - increment;
        }
      }
    });
  };
  using T = std::true_type;
  using F = std::false_type;
  if (mg && mom) run(T{}, T{});
  else if (mg) run(T{}, F{});
  else if (mom) run(F{}, T{});
  else run(F{}, F{});
}

void adagrad(const OptimizerUpdate& u, float* w, const float* grad, std::vector<Tensor>& slots,
             int64_t n, GradPrep prep, Decay decay) {
  const float lr = u.learning_rate, eps = u.epsilon;
  float* acc = slot_data(slots, 0);
  cpu::parallel_for(n, kGrain, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float g = prep(grad[i]);
      const float a = acc[i] + g * g;
      acc[i] = a;
      w[i] = decay(w[i]) - lr * g / std::sqrt(a + eps);
    }
  });
}

}  // namespace

void CpuBackend::optimizer_update(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                                  std::vector<Tensor>& slots) {
  check_float32("the variable", var);
  check_float32("the gradient", grad);
  for (const Tensor& s : slots) check_float32("a slot variable", s);
  STRATA_CHECK(grad.numel() == var.numel());
  STRATA_CHECK(slots.size() == expected_slots(u));
  for (const Tensor& s : slots) STRATA_CHECK(s.numel() == var.numel());

  const int64_t n = var.numel();
  float* w = static_cast<float*>(var.raw_data());
  const float* g = static_cast<const float*>(grad.raw_data());
  const GradPrep prep{u.grad_scale,
                      u.clip_value > 0 ? u.clip_value : std::numeric_limits<float>::infinity()};
  const Decay decay{1.0f - u.learning_rate * u.weight_decay};

  switch (u.kind) {
    case OptimizerKind::kSGD: sgd(u, w, g, slots, n, prep, decay); break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: adam(u, w, g, slots, n, prep, decay); break;
    case OptimizerKind::kRMSprop: rmsprop(u, w, g, slots, n, prep, decay); break;
    case OptimizerKind::kAdagrad: adagrad(u, w, g, slots, n, prep, decay); break;
  }
}

}  // namespace strata
