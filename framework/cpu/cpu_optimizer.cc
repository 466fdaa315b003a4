// Fused optimizer updates on the CPU: each variable's gradient, value and slots are read once and
// the value and slots written once, in one parallel, branch-free loop per rule. The rules
// (Keras 3's, in its arithmetic order) are framework/kernels_math/optimizer_rules.h, shared with
// the CUDA backend so both give the same bits; this file only runs them over the elements.
//
// Each loop lives in a *_range function whose scalars and __restrict pointers are plain
// parameters: read through a lambda's closure instead, GCC must assume the stores may alias the
// closure and gives up vectorising the loops with many streams (Adam with amsgrad, RMSprop).
// The variable, its gradient and each slot are distinct buffers, so __restrict is truthful.
// (The sqrt-based loops vectorise only when the build disables -fmath-errno.)
#include <string>
#include <vector>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"
#include "framework/kernels_math/optimizer_rules.h"

namespace strata {
namespace {

// A few flops per element: smaller chunks than kParallelGrain already pay for a thread.
constexpr int64_t kGrain = 16384;

// Each loop loads an element's weight and slots, lets the shared rule update them and stores
// them back: the rule sees values, not pointers, so the loop keeps its __restrict pointers.
using kernels_math::OptimizerScalars;

void sgd_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
               OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) w[i] = kernels_math::sgd_rule(w[i], grad[i], c);
}

template <bool kNesterov>
void sgd_momentum_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                        float* __restrict m, OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) {
    float mi = m[i];
    w[i] = kernels_math::sgd_momentum_rule<kNesterov>(w[i], grad[i], mi, c);
    m[i] = mi;
  }
}

void adam_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                float* __restrict m, float* __restrict v, OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) {
    float mi = m[i], vi = v[i], unused = 0.0f;
    w[i] = kernels_math::adam_rule<false>(w[i], grad[i], mi, vi, unused, c);
    m[i] = mi;
    v[i] = vi;
  }
}

void adam_amsgrad_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                        float* __restrict m, float* __restrict v, float* __restrict vhat,
                        OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) {
    float mi = m[i], vi = v[i], vh = vhat[i];
    w[i] = kernels_math::adam_rule<true>(w[i], grad[i], mi, vi, vh, c);
    m[i] = mi;
    v[i] = vi;
    vhat[i] = vh;
  }
}

// One instantiation per (centered, momentum) pair, so no loop carries a per-element branch.
template <bool kCentered, bool kMomentum>
void rmsprop_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                   float* __restrict rms, float* __restrict mg, float* __restrict mom,
                   OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) {
    float ri = rms[i], ai = 0.0f, ki = 0.0f;
    if constexpr (kCentered) ai = mg[i];
    if constexpr (kMomentum) ki = mom[i];
    w[i] = kernels_math::rmsprop_rule<kCentered, kMomentum>(w[i], grad[i], ri, ai, ki, c);
    rms[i] = ri;
    if constexpr (kCentered) mg[i] = ai;
    if constexpr (kMomentum) mom[i] = ki;
  }
}

void adagrad_range(int64_t b, int64_t e, float* __restrict w, const float* __restrict grad,
                   float* __restrict acc, OptimizerScalars c) {
  for (int64_t i = b; i < e; ++i) {
    float ai = acc[i];
    w[i] = kernels_math::adagrad_rule(w[i], grad[i], ai, c);
    acc[i] = ai;
  }
}

void check_float32(const char* what, const Tensor& t) {
  if (t.dtype() != DType::kFloat32) {
    throw DTypeError(std::string("optimizer_update: the CPU kernel supports float32 only; ") +
                     what + " has dtype " + dtype_name(t.dtype()));
  }
}

}  // namespace

void CpuBackend::optimizer_update(const OptimizerUpdate& u, Tensor& var, const Tensor& grad,
                                  std::vector<Tensor>& slots) {
  check_float32("the variable", var);
  check_float32("the gradient", grad);
  for (const Tensor& s : slots) check_float32("a slot variable", s);
  STRATA_CHECK(grad.numel() == var.numel());
  STRATA_CHECK(slots.size() == kernels_math::optimizer_slot_count(u));
  for (const Tensor& s : slots) STRATA_CHECK(s.numel() == var.numel());

  const int64_t n = var.numel();
  float* w = static_cast<float*>(var.raw_data());
  const float* g = static_cast<const float*>(grad.raw_data());
  std::vector<float*> s;
  for (Tensor& t : slots) s.push_back(static_cast<float*>(t.raw_data()));
  const OptimizerScalars c = kernels_math::optimizer_scalars(u);
  // Runs range_fn over [0, n) in parallel chunks.
  auto run = [n](auto&& range_fn) { cpu::parallel_for(n, kGrain, range_fn); };

  switch (u.kind) {
    case OptimizerKind::kSGD:
      if (s.empty()) {
        run([=](int64_t b, int64_t e) { sgd_range(b, e, w, g, c); });
      } else if (u.nesterov) {
        run([=, m = s[0]](int64_t b, int64_t e) { sgd_momentum_range<true>(b, e, w, g, m, c); });
      } else {
        run([=, m = s[0]](int64_t b, int64_t e) { sgd_momentum_range<false>(b, e, w, g, m, c); });
      }
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      if (u.amsgrad) {
        run([=, m = s[0], v = s[1], vhat = s[2]](int64_t b, int64_t e) {
          adam_amsgrad_range(b, e, w, g, m, v, vhat, c);
        });
      } else {
        run([=, m = s[0], v = s[1]](int64_t b, int64_t e) { adam_range(b, e, w, g, m, v, c); });
      }
      break;
    case OptimizerKind::kRMSprop: {
      float* rms = s[0];
      float* mg = u.centered ? s[1] : nullptr;
      float* mom = u.momentum > 0 ? s.back() : nullptr;
      auto go = [&](auto range_fn) {
        run([=](int64_t b, int64_t e) { range_fn(b, e, w, g, rms, mg, mom, c); });
      };
      if (mg && mom) go(rmsprop_range<true, true>);
      else if (mg) go(rmsprop_range<true, false>);
      else if (mom) go(rmsprop_range<false, true>);
      else go(rmsprop_range<false, false>);
      break;
    }
    case OptimizerKind::kAdagrad:
      run([=, acc = s[0]](int64_t b, int64_t e) { adagrad_range(b, e, w, g, acc, c); });
      break;
  }
}

}  // namespace strata
