// Fused optimizer updates on the CPU: each variable's gradient, value and slots are read once and
// the value and slots written once, in one parallel, branch-free loop per rule. The rules are
// Keras 3's, written in its arithmetic order so results match it to rounding.
//
// Each loop lives in a *_range function whose scalars and __restrict pointers are plain
// parameters: read through a lambda's closure instead, GCC must assume the stores may alias the
// closure and gives up vectorising the loops with many streams (Adam with amsgrad, RMSprop).
// The variable, its gradient and each slot are distinct buffers, so __restrict is truthful.
// (The sqrt-based loops vectorise only when the build disables -fmath-errno.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {

// A few flops per element: smaller chunks than kParallelGrain already pay for a thread.
constexpr int64_t kGrain = 16384;

// Gradient preprocessing shared by every rule: scale (clipnorm / global_clipnorm), then clip to
// [-bound, bound] (bound = +inf without clipvalue, so the clip stays branch-free). std::min/max,
// unlike fmin/fmax, keep a NaN gradient NaN instead of turning it into the bound.
inline float prepare(float g, float scale, float bound) {
  return std::min(std::max(g * scale, -bound), bound);
}

// Every loop also applies Keras 3's decoupled weight decay, w <- w - lr*wd*w, as w * keep with
// keep = 1 - lr*wd (1 without decay), so decay costs no extra pass over the variable.
struct Common {
  float scale, bound, keep;
};

void sgd_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
               Common c, float lr) {
  for (int64_t i = b; i < e; ++i) w[i] = w[i] * c.keep - lr * prepare(grad[i], c.scale, c.bound);
}

void sgd_momentum_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                        float* __restrict m, Common c, float lr, float mu) {
  for (int64_t i = b; i < e; ++i) {
    const float mi = -prepare(grad[i], c.scale, c.bound) * lr + m[i] * mu;
    m[i] = mi;
    w[i] = w[i] * c.keep + mi;
  }
}

void sgd_nesterov_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                        float* __restrict m, Common c, float lr, float mu) {
  for (int64_t i = b; i < e; ++i) {
    const float g = prepare(grad[i], c.scale, c.bound);
    const float mi = -g * lr + m[i] * mu;
    m[i] = mi;
    w[i] = w[i] * c.keep + (-g * lr + mi * mu);
  }
}

struct AdamScalars {
  float alpha;  // lr * sqrt(1 - beta_2^t) / (1 - beta_1^t): both bias corrections in one factor
  float one_minus_b1, one_minus_b2, eps;
};

void adam_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                float* __restrict m, float* __restrict v, Common c, AdamScalars a) {
  for (int64_t i = b; i < e; ++i) {
    const float g = prepare(grad[i], c.scale, c.bound);
    const float mi = m[i] + (g - m[i]) * a.one_minus_b1;
    const float vi = v[i] + (g * g - v[i]) * a.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    w[i] = w[i] * c.keep - (mi * a.alpha) / (std::sqrt(vi) + a.eps);
  }
}

void adam_amsgrad_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                        float* __restrict m, float* __restrict v, float* __restrict vhat, Common c,
                        AdamScalars a) {
  for (int64_t i = b; i < e; ++i) {
    const float g = prepare(grad[i], c.scale, c.bound);
    const float mi = m[i] + (g - m[i]) * a.one_minus_b1;
    const float vi = v[i] + (g * g - v[i]) * a.one_minus_b2;
    const float vh = std::max(vhat[i], vi);
    m[i] = mi;
    v[i] = vi;
    vhat[i] = vh;
    w[i] = w[i] * c.keep - (mi * a.alpha) / (std::sqrt(vh) + a.eps);
  }
}

struct RmspropScalars {
  float lr, rho, one_minus_rho, eps, momentum;
};

// One instantiation per (centered, momentum) pair, so no loop carries a per-element branch.
template <bool kCentered, bool kMomentum>
void rmsprop_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                   float* __restrict rms, float* __restrict mg, float* __restrict mom, Common c,
                   RmspropScalars r) {
  for (int64_t i = b; i < e; ++i) {
    const float g = prepare(grad[i], c.scale, c.bound);
    const float ri = r.rho * rms[i] + r.one_minus_rho * (g * g);
    rms[i] = ri;
    float denominator = ri + r.eps;
    if constexpr (kCentered) {
      const float ai = r.rho * mg[i] + r.one_minus_rho * g;
      mg[i] = ai;
      denominator = ri - ai * ai + r.eps;
    }
    const float increment = r.lr * g / std::sqrt(denominator);
    if constexpr (kMomentum) {
      const float ki = r.momentum * mom[i] + increment;
      mom[i] = ki;
      w[i] = w[i] * c.keep - ki;
    } else {
      w[i] = w[i] * c.keep - increment;
    }
  }
}

void adagrad_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                   float* __restrict acc, Common c, float lr, float eps) {
  for (int64_t i = b; i < e; ++i) {
    const float g = prepare(grad[i], c.scale, c.bound);
    const float ai = acc[i] + g * g;
    acc[i] = ai;
    w[i] = w[i] * c.keep - lr * g / std::sqrt(ai + eps);
  }
}

void check_float32(const char* what, const Tensor& t) {
  if (t.dtype() != DType::kFloat32) {
    throw DTypeError(std::string("optimizer_update: the CPU kernel supports float32 only; ") +
                     what + " has dtype " + dtype_name(t.dtype()));
  }
}

// Slot layout documented at Backend::optimizer_update.
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
  std::vector<float*> s;
  for (Tensor& t : slots) s.push_back(static_cast<float*>(t.raw_data()));
  const Common c{u.grad_scale,
                 u.clip_value > 0 ? u.clip_value : std::numeric_limits<float>::infinity(),
                 1.0f - u.learning_rate * u.weight_decay};
  // Runs range_fn over [0, n) in parallel chunks.
  auto run = [n](auto&& range_fn) { cpu::parallel_for(n, kGrain, range_fn); };

  switch (u.kind) {
    case OptimizerKind::kSGD: {
      const float lr = u.learning_rate, mu = u.momentum;
      if (s.empty()) {
        run([=](int64_t b, int64_t e) { sgd_range(b, e, w, g, c, lr); });
      } else if (u.nesterov) {
        run([=, m = s[0]](int64_t b, int64_t e) { sgd_nesterov_range(b, e, w, g, m, c, lr, mu); });
      } else {
        run([=, m = s[0]](int64_t b, int64_t e) { sgd_momentum_range(b, e, w, g, m, c, lr, mu); });
      }
      break;
    }
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: {
      // Bias corrections in double: beta^t for large t underflows gracefully to 0.
      const double t = double(u.step);
      const double correction =
          std::sqrt(1.0 - std::pow(double(u.beta_2), t)) / (1.0 - std::pow(double(u.beta_1), t));
      const AdamScalars a{float(double(u.learning_rate) * correction), 1.0f - u.beta_1,
                          1.0f - u.beta_2, u.epsilon};
      if (u.amsgrad) {
        run([=, m = s[0], v = s[1], vhat = s[2]](int64_t b, int64_t e) {
          adam_amsgrad_range(b, e, w, g, m, v, vhat, c, a);
        });
      } else {
        run([=, m = s[0], v = s[1]](int64_t b, int64_t e) { adam_range(b, e, w, g, m, v, c, a); });
      }
      break;
    }
    case OptimizerKind::kRMSprop: {
      const RmspropScalars r{u.learning_rate, u.rho, 1.0f - u.rho, u.epsilon, u.momentum};
      float* rms = s[0];
      float* mg = u.centered ? s[1] : nullptr;
      float* mom = u.momentum > 0 ? s.back() : nullptr;
      auto go = [&](auto range_fn) {
        run([=](int64_t b, int64_t e) { range_fn(b, e, w, g, rms, mg, mom, c, r); });
      };
      if (mg && mom) go(rmsprop_range<true, true>);
      else if (mg) go(rmsprop_range<true, false>);
      else if (mom) go(rmsprop_range<false, true>);
      else go(rmsprop_range<false, false>);
      break;
    }
    case OptimizerKind::kAdagrad: {
      const float lr = u.learning_rate, eps = u.epsilon;
      run([=, acc = s[0]](int64_t b, int64_t e) { adagrad_range(b, e, w, g, acc, c, lr, eps); });
      break;
    }
  }
}

}  // namespace strata
