// Activations on the CPU: oneDNN eltwise primitives over the tensor viewed as one flat vector
// (elementwise ops don't care about shape, and one key per element count keeps the cache small).
// oneDNN 2.6 has no SELU, hard-sigmoid or softsign algorithm, so those are plain vectorisable
// loops. Softplus, mish and log-sigmoid are own loops too, on the formulas the CUDA backend
// shares (kernels_math/activation_rules.h): oneDNN 2.6's JIT soft_relu loses the small values
// (softplus(-20) came out as -1.9e-6, negative, where it is 2.06e-9), and mish and log_sigmoid
// are built on it.
#include <bit>
#include <cmath>
#include <cstring>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_widen.h"
#include "framework/cpu/dnnl_context.h"
#include "framework/cpu/parallel.h"
#include "framework/kernels_math/activation_rules.h"

namespace strata {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// SELU's fixed constants (Klambauer et al. 2017), as Keras.
constexpr float kSeluAlpha = 1.6732632423543772f;
constexpr float kSeluScale = 1.0507009873554805f;

struct EltwiseKey {
  int64_t numel;
  int32_t alg;
  int32_t alpha_bits, beta_bits;
  int32_t backward;
};

struct EltwiseSpec {
  algorithm alg;
  float alpha = 0, beta = 0;
};

EltwiseSpec dnnl_spec(Activation act, float alpha) {
  switch (act) {
    case Activation::kReLU: return {algorithm::eltwise_relu, 0.0f};
    case Activation::kLeakyReLU: return {algorithm::eltwise_relu, alpha};  // negative slope
    case Activation::kELU: return {algorithm::eltwise_elu, alpha};
    case Activation::kGELU: return {algorithm::eltwise_gelu_erf};
    case Activation::kGELUTanh: return {algorithm::eltwise_gelu_tanh};
    case Activation::kSigmoid: return {algorithm::eltwise_logistic};
    case Activation::kTanh: return {algorithm::eltwise_tanh};
    case Activation::kSwish: return {algorithm::eltwise_swish, 1.0f};  // x * sigmoid(1 * x)
    case Activation::kReLU6: return {algorithm::eltwise_clip_v2, 0.0f, 6.0f};
    case Activation::kHardSwish: return {algorithm::eltwise_hardswish};  // x * relu6(x + 3) / 6
    case Activation::kExponential: return {algorithm::eltwise_exp};
    case Activation::kHardTanh: return {algorithm::eltwise_clip_v2, -1.0f, 1.0f};
    default: break;
  }
  throw InternalError("activation: no oneDNN algorithm for this activation");
}

struct ForwardEntry {
  dnnl::eltwise_forward::primitive_desc pd;
  dnnl::eltwise_forward prim;
};
struct BackwardEntry {
  dnnl::eltwise_backward::primitive_desc pd;
  dnnl::eltwise_backward prim;
};

cpu::PrimitiveCache<EltwiseKey, ForwardEntry>& forward_cache() {
  static cpu::PrimitiveCache<EltwiseKey, ForwardEntry> cache;
  return cache;
}
cpu::PrimitiveCache<EltwiseKey, BackwardEntry>& backward_cache() {
  static cpu::PrimitiveCache<EltwiseKey, BackwardEntry> cache;
  return cache;
}

memory::desc flat_desc(int64_t n) {
  return memory::desc({n}, memory::data_type::f32, memory::format_tag::a);
}

EltwiseKey make_key(const EltwiseSpec& s, int64_t numel, bool backward) {
  return EltwiseKey{numel, int32_t(s.alg), std::bit_cast<int32_t>(s.alpha),
                    std::bit_cast<int32_t>(s.beta), backward ? 1 : 0};
}

dnnl::eltwise_forward::primitive_desc forward_pd(const EltwiseSpec& s, int64_t n) {
  dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, s.alg, flat_desc(n), s.alpha,
                                   s.beta);
  return dnnl::eltwise_forward::primitive_desc(desc, cpu::dnnl_default_attr(), cpu::dnnl_engine());
}

// The logistic function and softplus: the CUDA backend's own (kernels_math/activation_rules.h).
using kernels_math::logistic;
using kernels_math::softplus;

// Runs fn(i) over [0, n) in parallel: the loops for the activations oneDNN 2.6 lacks.
template <typename Fn>
void map_elements(int64_t n, Fn fn) {
  cpu::parallel_for(n, cpu::kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

}  // namespace

void CpuBackend::activation_forward(Activation act, const Tensor& x, float alpha, Tensor& y) {
  if (cpu::any_16bit_float({x})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor y32 = cpu::float32_like(y);
    activation_forward(act, cpu::widened(x), alpha, y32);
    return cpu::narrow_into(y32, y);
  }
  cpu::check_float32("activation", {x});
  const int64_t n = x.numel();
  if (n == 0) return;
  const float* px = x.data<float>();
  float* py = y.data<float>();
  switch (act) {
    case Activation::kLinear:
      if (px != py) std::memcpy(py, px, size_t(n) * sizeof(float));
      return;
    case Activation::kSELU:
      map_elements(n, [=](int64_t i) {
        const float v = px[i];
        py[i] = kSeluScale * (v > 0 ? v : kSeluAlpha * std::expm1(v));
      });
      return;
    case Activation::kHardSigmoid:  // Keras 3: relu6(x + 3) / 6
      map_elements(n, [=](int64_t i) {
        py[i] = std::fmin(1.0f, std::fmax(0.0f, px[i] * (1.0f / 6.0f) + 0.5f));
      });
      return;
    case Activation::kSoftsign:
      map_elements(n, [=](int64_t i) { py[i] = px[i] / (1.0f + std::fabs(px[i])); });
      return;
    case Activation::kSoftplus:
      map_elements(n, [=](int64_t i) { py[i] = softplus(px[i]); });
      return;
    case Activation::kMish:
      map_elements(n, [=](int64_t i) { py[i] = px[i] * std::tanh(softplus(px[i])); });
      return;
    case Activation::kLogSigmoid:
      map_elements(n, [=](int64_t i) { py[i] = -softplus(-px[i]); });
      return;
    default: break;
  }
  const EltwiseSpec spec = dnnl_spec(act, alpha);
  auto e = forward_cache().get(make_key(spec, n, false), [&] {
    auto pd = forward_pd(spec, n);
    return ForwardEntry{pd, dnnl::eltwise_forward(pd)};
  });
  cpu::execute(e->prim, e->pd,
               {{DNNL_ARG_SRC, cpu::make_memory(flat_desc(n), px)},
                {DNNL_ARG_DST, cpu::make_memory(flat_desc(n), py)}});
}

void CpuBackend::activation_backward(Activation act, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, float alpha, Tensor& dx) {
  if (cpu::any_16bit_float({x, dy})) {  // mixed precision: computed in float32 (cpu_widen.h)
    // y is not read on the CPU (every derivative here is taken from x), so it is not widened.
    Tensor dx32 = cpu::float32_like(dx);
    activation_backward(act, cpu::widened(x), y, cpu::widened(dy), alpha, dx32);
    return cpu::narrow_into(dx32, dx);
  }
  cpu::check_float32("activation_backward", {x});
  const int64_t n = x.numel();
  if (n == 0) return;
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx.data<float>();
  switch (act) {
    case Activation::kLinear:
      if (pdy != pdx) std::memcpy(pdx, pdy, size_t(n) * sizeof(float));
      return;
    case Activation::kSELU:
      map_elements(n, [=](int64_t i) {
        const float v = px[i];
        pdx[i] = pdy[i] * kSeluScale * (v > 0 ? 1.0f : kSeluAlpha * std::exp(v));
      });
      return;
    case Activation::kHardSigmoid:
      map_elements(n, [=](int64_t i) {
        const float v = px[i];
        pdx[i] = (v > -3.0f && v < 3.0f) ? pdy[i] * (1.0f / 6.0f) : 0.0f;
      });
      return;
    case Activation::kSoftsign:  // d/dx x / (1 + |x|) = 1 / (1 + |x|)^2
      map_elements(n, [=](int64_t i) {
        const float d = 1.0f + std::fabs(px[i]);
        pdx[i] = pdy[i] / (d * d);
      });
      return;
    case Activation::kSoftplus:
      map_elements(n, [=](int64_t i) { pdx[i] = pdy[i] * logistic(px[i]); });
      return;
    case Activation::kMish:  // tanh(sp) + x * (1 - tanh(sp)^2) * sigmoid(x)
      map_elements(n, [=](int64_t i) {
        const float v = px[i], t = std::tanh(softplus(v));
        pdx[i] = pdy[i] * (t + v * (1.0f - t * t) * logistic(v));
      });
      return;
    case Activation::kLogSigmoid:
      map_elements(n, [=](int64_t i) { pdx[i] = pdy[i] * logistic(-px[i]); });
      return;
    default: break;
  }
  const EltwiseSpec spec = dnnl_spec(act, alpha);
  auto e = backward_cache().get(make_key(spec, n, true), [&] {
    dnnl::eltwise_backward::desc desc(spec.alg, flat_desc(n), flat_desc(n), spec.alpha, spec.beta);
    dnnl::eltwise_backward::primitive_desc pd(desc, cpu::dnnl_default_attr(), cpu::dnnl_engine(),
                                              forward_pd(spec, n));
    return BackwardEntry{pd, dnnl::eltwise_backward(pd)};
  });
  cpu::execute(e->prim, e->pd,
               {{DNNL_ARG_SRC, cpu::make_memory(flat_desc(n), px)},
                {DNNL_ARG_DIFF_DST, cpu::make_memory(flat_desc(n), pdy)},
                {DNNL_ARG_DIFF_SRC, cpu::make_memory(flat_desc(n), pdx)}});
}

}  // namespace strata
