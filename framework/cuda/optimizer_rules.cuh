// Internal to cuda_optimizer.cu: the per-element update rules, the device twins of the loops in
// cpu_optimizer.cc (Keras 3's rules in its arithmetic order). Every product, sum, quotient and
// square root is spelled with a correctly rounded intrinsic (__fmul_rn, __fadd_rn, ...): nvcc
// would otherwise fuse a * b + c into one FMA, rounding once where the CPU rounds twice, and the
// GPU's updates would drift from the CPU's. Written this way they are the same float operations
// in the same order as the CPU's, so the results agree to the last bit where the CPU build uses
// no FMA either (x86-64's baseline).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace strata::cuda::optim {

// Which loop runs: the kind with its options folded in, so no loop carries a per-element branch.
enum class Rule : uint8_t {
  kSGD, kSGDMomentum, kSGDNesterov, kAdam, kAdamAmsgrad,
  kRMSprop, kRMSpropCentered, kRMSpropMomentum, kRMSpropCenteredMomentum, kAdagrad,
};

// The step's scalars, resolved on the host as the CPU kernel resolves them.
struct Scalars {
  float scale;   // gradient multiplier (clipnorm / global_clipnorm)
  float bound;   // clip to [-bound, bound]; +inf without clipvalue
  float keep;    // 1 - lr * weight_decay: decoupled decay as one multiply
  float lr;
  float momentum;  // SGD and RMSprop
  float alpha;     // Adam: lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
  float one_minus_b1, one_minus_b2;
  float rho, one_minus_rho;  // RMSprop
  float eps;
};

// One variable's memory. The slots in the rule's order: SGD [momentum]; Adam [m, v, vhat];
// RMSprop [rms, mg, momentum] where the absent ones are null; Adagrad [accumulator].
struct VarPointers {
  float* w;
  const float* g;
  float* s[3];
};

__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ float sqrt_rn(float a) { return __fsqrt_rn(a); }
// std::max / std::min exactly: a NaN first argument is returned (fmaxf would drop it).
__device__ __forceinline__ float max_of(float a, float b) { return a < b ? b : a; }
__device__ __forceinline__ float min_of(float a, float b) { return b < a ? b : a; }

// Scale, then clip to [-bound, bound]; a NaN gradient stays NaN.
__device__ __forceinline__ float prepare(float g, const Scalars& c) {
  return min_of(max_of(mul(g, c.scale), -c.bound), c.bound);
}

// Updates element i of one variable and its slots.
template <Rule R>
__device__ __forceinline__ void update_element(const Scalars& c, const VarPointers& p, int64_t i) {
  const float g = prepare(p.g[i], c);
  const float w = mul(p.w[i], c.keep);
  if constexpr (R == Rule::kSGD) {
    p.w[i] = sub(w, mul(c.lr, g));
  } else if constexpr (R == Rule::kSGDMomentum || R == Rule::kSGDNesterov) {
    float* m = p.s[0];
    const float mi = add(mul(-g, c.lr), mul(m[i], c.momentum));
    m[i] = mi;
    if constexpr (R == Rule::kSGDMomentum) {
      p.w[i] = add(w, mi);
    } else {
      p.w[i] = add(w, add(mul(-g, c.lr), mul(mi, c.momentum)));
    }
  } else if constexpr (R == Rule::kAdam || R == Rule::kAdamAmsgrad) {
    float* m = p.s[0];
    float* v = p.s[1];
    const float mi = add(m[i], mul(sub(g, m[i]), c.one_minus_b1));
    const float vi = add(v[i], mul(sub(mul(g, g), v[i]), c.one_minus_b2));
    m[i] = mi;
    v[i] = vi;
    float denominator_v = vi;
    if constexpr (R == Rule::kAdamAmsgrad) {
      float* vhat = p.s[2];
      denominator_v = max_of(vhat[i], vi);
      vhat[i] = denominator_v;
    }
    p.w[i] = sub(w, div(mul(mi, c.alpha), add(sqrt_rn(denominator_v), c.eps)));
  } else if constexpr (R == Rule::kAdagrad) {
    float* acc = p.s[0];
    const float ai = add(acc[i], mul(g, g));
    acc[i] = ai;
    p.w[i] = sub(w, div(mul(c.lr, g), sqrt_rn(add(ai, c.eps))));
  } else {  // the four RMSprop rules
    constexpr bool kCentered = R == Rule::kRMSpropCentered || R == Rule::kRMSpropCenteredMomentum;
    constexpr bool kMomentum = R == Rule::kRMSpropMomentum || R == Rule::kRMSpropCenteredMomentum;
    float* rms = p.s[0];
    const float ri = add(mul(c.rho, rms[i]), mul(c.one_minus_rho, mul(g, g)));
    rms[i] = ri;
    float denominator = add(ri, c.eps);
    if constexpr (kCentered) {
      float* mg = p.s[1];
      const float ai = add(mul(c.rho, mg[i]), mul(c.one_minus_rho, g));
      mg[i] = ai;
      denominator = add(sub(ri, mul(ai, ai)), c.eps);
    }
    const float increment = div(mul(c.lr, g), sqrt_rn(denominator));
    if constexpr (kMomentum) {
      float* mom = p.s[2];
      const float ki = add(mul(c.momentum, mom[i]), increment);
      mom[i] = ki;
      p.w[i] = sub(w, ki);
    } else {
      p.w[i] = sub(w, increment);
    }
  }
}

}  // namespace strata::cuda::optim
