// Batch normalisation over all axes but the last, on the CPU through oneDNN. x of any rank is
// viewed as channels-last data: [N, H, W, C] as it is, anything else as [rows, C, 1, 1] in nhwc
// order (the same bytes as a row-major [rows, C] matrix), which oneDNN's channels-last JIT
// kernels handle directly.
//
// Training with a fused ReLU uses oneDNN's fuse_norm_relu: the forward pass applies the ReLU as
// it writes y and keeps a bit mask (the workspace) that the backward pass applies to dy, which
// saves two full passes over the activations per BatchNormalization -> ReLU pair.
#include <bit>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_widen.h"
#include "framework/cpu/dnnl_context.h"

namespace strata {
namespace {

using dnnl::memory;
using dnnl::normalization_flags;

struct BatchNormKey {
  int64_t n, c, h, w;
  int64_t prop;  // 0 training forward, 1 inference forward, 2 backward
  int32_t epsilon_bits;  // the float's bits: keys are hashed bytewise, integers only
  int32_t fuse_relu;     // 0 or 1 (an int32 keeps the key free of padding bytes)
  float epsilon() const { return std::bit_cast<float>(epsilon_bits); }
};

BatchNormKey make_key(const Tensor& x, int64_t prop, float epsilon, bool fuse_relu) {
  const int64_t c = x.dim(-1);
  const int32_t eps = std::bit_cast<int32_t>(epsilon);
  const int32_t relu = fuse_relu ? 1 : 0;
  if (x.rank() == 4) return BatchNormKey{x.dim(0), c, x.dim(1), x.dim(2), prop, eps, relu};
  return BatchNormKey{c == 0 ? 0 : x.numel() / c, c, 1, 1, prop, eps, relu};
}

normalization_flags training_flags(const BatchNormKey& k) {
  const normalization_flags flags = normalization_flags::use_scale | normalization_flags::use_shift;
  return k.fuse_relu ? flags | normalization_flags::fuse_norm_relu : flags;
}

memory::desc data_desc(const BatchNormKey& k) { return cpu::nhwc_desc(k.n, k.h, k.w, k.c); }
memory::desc channel_desc(const BatchNormKey& k) {
  return memory::desc({k.c}, memory::data_type::f32, memory::format_tag::a);
}

dnnl::batch_normalization_forward::primitive_desc forward_pd(const BatchNormKey& k,
                                                             bool training) {
  const normalization_flags flags =
      training ? training_flags(k)
               : normalization_flags::use_scale | normalization_flags::use_shift |
                     normalization_flags::use_global_stats;
  dnnl::batch_normalization_forward::desc desc(
      training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
      data_desc(k), k.epsilon(), flags);
  return dnnl::batch_normalization_forward::primitive_desc(desc, cpu::dnnl_default_attr(),
                                                           cpu::dnnl_engine());
}

struct ForwardEntry {
  dnnl::batch_normalization_forward::primitive_desc pd;
  dnnl::batch_normalization_forward prim;
};
struct BackwardEntry {
  dnnl::batch_normalization_backward::primitive_desc pd;
  dnnl::batch_normalization_backward prim;
};

cpu::PrimitiveCache<BatchNormKey, ForwardEntry>& forward_cache() {
  static cpu::PrimitiveCache<BatchNormKey, ForwardEntry> cache;
  return cache;
}
cpu::PrimitiveCache<BatchNormKey, BackwardEntry>& backward_cache() {
  static cpu::PrimitiveCache<BatchNormKey, BackwardEntry> cache;
  return cache;
}

std::shared_ptr<const ForwardEntry> forward_entry(const BatchNormKey& key, bool training) {
  return forward_cache().get(key, [&] {
    auto pd = forward_pd(key, training);
    return ForwardEntry{pd, dnnl::batch_normalization_forward(pd)};
  });
}

memory channel_memory(const BatchNormKey& k, const Tensor& t) {
  return cpu::make_memory(channel_desc(k), t.raw_data());
}

// y = gamma * (x - mean) / sqrt(variance + epsilon) + beta (then the ReLU when fused). Training
// computes mean and variance from x and writes them; inference reads them. Returns the fused
// ReLU's workspace, else an undefined tensor.
Tensor run_forward(const BatchNormKey& key, bool training, const Tensor& x, const Tensor& gamma,
                   const Tensor& beta, const Tensor& mean, const Tensor& variance, Tensor& y) {
  auto e = forward_entry(key, training);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, cpu::make_memory(data_desc(key), x.raw_data())},
      {DNNL_ARG_DST, cpu::make_memory(data_desc(key), y.raw_data())},
      {DNNL_ARG_SCALE, channel_memory(key, gamma)},
      {DNNL_ARG_SHIFT, channel_memory(key, beta)},
      {DNNL_ARG_MEAN, channel_memory(key, mean)},
      {DNNL_ARG_VARIANCE, channel_memory(key, variance)}};
  Tensor workspace;
  if (key.fuse_relu) {
    const memory::desc ws_desc = e->pd.workspace_desc();
    workspace = Tensor::empty(Shape{int64_t(ws_desc.get_size())}, DType::kUInt8, x.device());
    args.emplace(DNNL_ARG_WORKSPACE, cpu::make_memory(ws_desc, workspace.raw_data()));
  }
  cpu::execute(e->prim, e->pd, args);
  return workspace;
}

}  // namespace

Tensor CpuBackend::batch_norm_training(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                       float epsilon, bool fuse_relu, Tensor& y, Tensor& mean,
                                       Tensor& variance) {
  if (cpu::any_16bit_float({x})) {
    // Mixed precision: 16-bit x with float32 parameters and statistics, normalised in float32
    // (cpu_widen.h). The fused ReLU's workspace is a mask over positions, valid for the float32
    // backward pass that batch_norm_backward runs the same way.
    Tensor y32 = cpu::float32_like(y);
    Tensor workspace =
        batch_norm_training(cpu::widened(x), gamma, beta, epsilon, fuse_relu, y32, mean, variance);
    cpu::narrow_into(y32, y);
    return workspace;
  }
  cpu::check_float32("batch_norm", {x, gamma});
  const BatchNormKey key = make_key(x, 0, epsilon, fuse_relu);
  if (key.c == 0) return {};
  if (key.n * key.h * key.w == 0) {  // no rows: statistics of nothing
    fill(mean, 0.0);
    fill(variance, 0.0);
    return {};
  }
  return run_forward(key, /*training=*/true, x, gamma, beta, mean, variance, y);
}

void CpuBackend::batch_norm_inference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                      const Tensor& mean, const Tensor& variance, float epsilon,
                                      Tensor& y) {
  if (cpu::any_16bit_float({x})) {  // mixed precision: normalised in float32 (cpu_widen.h)
    Tensor y32 = cpu::float32_like(y);
    batch_norm_inference(cpu::widened(x), gamma, beta, mean, variance, epsilon, y32);
    return cpu::narrow_into(y32, y);
  }
  cpu::check_float32("batch_norm_inference", {x, gamma});
  const BatchNormKey key = make_key(x, 1, epsilon, /*fuse_relu=*/false);
  if (x.numel() == 0) return;
  run_forward(key, /*training=*/false, x, gamma, beta, mean, variance, y);
}

void CpuBackend::batch_norm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     const Tensor& relu_workspace, Tensor& dx, Tensor& dgamma,
                                     Tensor& dbeta) {
  if (cpu::any_16bit_float({x, dy})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor dx32 = cpu::float32_like(dx);
    batch_norm_backward(cpu::widened(x), cpu::widened(dy), gamma, mean, variance, epsilon,
                        relu_workspace, dx32, dgamma, dbeta);
    return cpu::narrow_into(dx32, dx);
  }
  cpu::check_float32("batch_norm_backward", {x, gamma});
  const BatchNormKey key = make_key(x, 2, epsilon, relu_workspace.defined());
  if (key.c == 0) return;
  if (key.n * key.h * key.w == 0) {
    fill(dgamma, 0.0);
    fill(dbeta, 0.0);
    return;
  }
  auto e = backward_cache().get(key, [&] {
    BatchNormKey fwd_key = key;
    fwd_key.prop = 0;
    dnnl::batch_normalization_backward::desc desc(
        dnnl::prop_kind::backward, data_desc(key), data_desc(key), key.epsilon(),
        training_flags(key));
    dnnl::batch_normalization_backward::primitive_desc pd(
        desc, cpu::dnnl_default_attr(), cpu::dnnl_engine(), forward_pd(fwd_key, true));
    return BackwardEntry{pd, dnnl::batch_normalization_backward(pd)};
  });
  std::unordered_map<int, memory> args{
               {DNNL_ARG_SRC, cpu::make_memory(data_desc(key), x.raw_data())},
                {DNNL_ARG_DIFF_DST, cpu::make_memory(data_desc(key), dy.raw_data())},
                {DNNL_ARG_SCALE, channel_memory(key, gamma)},
                // oneDNN 2.6 insists on a bound shift when use_shift is set, though the backward
                // pass never reads it: any [C] buffer will do (not dbeta, to avoid aliasing).
                {DNNL_ARG_SHIFT, cpu::make_memory(channel_desc(key),
                                                  cpu::thread_buffer(cpu::kBufferA,
                                                                     size_t(key.c) * 4))},
                {DNNL_ARG_MEAN, channel_memory(key, mean)},
                {DNNL_ARG_VARIANCE, channel_memory(key, variance)},
                {DNNL_ARG_DIFF_SRC, cpu::make_memory(data_desc(key), dx.raw_data())},
                {DNNL_ARG_DIFF_SCALE, channel_memory(key, dgamma)},
                {DNNL_ARG_DIFF_SHIFT, channel_memory(key, dbeta)}};
  if (key.fuse_relu) {
    args.emplace(DNNL_ARG_WORKSPACE,
                 cpu::make_memory(e->pd.workspace_desc(), relu_workspace.raw_data()));
  }
  cpu::execute(e->prim, e->pd, args);
}

}  // namespace strata
