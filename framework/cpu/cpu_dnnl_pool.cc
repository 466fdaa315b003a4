// 2-D max / average pooling on the CPU through oneDNN, NHWC in and out. Average pooling excludes
// padding from the divisor (TensorFlow "SAME"). Max pooling's forward pass records which window
// element won in a workspace that the backward pass needs; it is handed back to the caller as an
// opaque uint8 tensor so the autograd node can keep it alive.
#include <cstring>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_widen.h"
#include "framework/cpu/dnnl_context.h"

namespace strata {
namespace {

using dnnl::memory;

struct PoolKey {
  int64_t kind;
  int64_t n, h, w, c, oh, ow;
  int64_t window_h, window_w, stride_h, stride_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
};

PoolKey make_pool_key(PoolKind kind, const Tensor& x, const Tensor& y, const Pool2DParams& p) {
  return PoolKey{int64_t(kind), x.dim(0), x.dim(1), x.dim(2), x.dim(3), y.dim(1), y.dim(2),
                 p.window_h, p.window_w, p.stride_h, p.stride_w, p.pad_top, p.pad_bottom,
                 p.pad_left, p.pad_right};
}

dnnl::algorithm pool_algorithm(int64_t kind) {
  return PoolKind(kind) == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                          : dnnl::algorithm::pooling_avg_exclude_padding;
}

dnnl::pooling_forward::primitive_desc forward_pd(const PoolKey& k) {
  dnnl::pooling_forward::desc desc(
      dnnl::prop_kind::forward_training, pool_algorithm(k.kind), cpu::nhwc_desc(k.n, k.h, k.w, k.c),
      cpu::nhwc_desc(k.n, k.oh, k.ow, k.c), {k.stride_h, k.stride_w}, {k.window_h, k.window_w},
      {k.pad_top, k.pad_left}, {k.pad_bottom, k.pad_right});
  return dnnl::pooling_forward::primitive_desc(desc, cpu::dnnl_default_attr(), cpu::dnnl_engine());
}

struct ForwardEntry {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward prim;
};

struct BackwardEntry {
  dnnl::pooling_backward::primitive_desc pd;
  dnnl::pooling_backward prim;
};

cpu::PrimitiveCache<PoolKey, ForwardEntry>& forward_cache() {
  static cpu::PrimitiveCache<PoolKey, ForwardEntry> cache;
  return cache;
}
cpu::PrimitiveCache<PoolKey, BackwardEntry>& backward_cache() {
  static cpu::PrimitiveCache<PoolKey, BackwardEntry> cache;
  return cache;
}

}  // namespace

Tensor CpuBackend::pool2d_forward(PoolKind kind, const Tensor& x, const Pool2DParams& p,
                                  Tensor& y) {
  if (cpu::any_16bit_float({x})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor y32 = cpu::float32_like(y);
    // The max-pooling workspace holds window positions, not values: the float32 one serves the
    // float32 backward pass below.
    Tensor workspace = pool2d_forward(kind, cpu::widened(x), p, y32);
    cpu::narrow_into(y32, y);
    return workspace;
  }
  cpu::check_float32("pool2d", {x});
  if (y.numel() == 0) return Tensor();
  const PoolKey key = make_pool_key(kind, x, y, p);
  auto e = forward_cache().get(key, [&] {
    auto pd = forward_pd(key);
    return ForwardEntry{pd, dnnl::pooling_forward(pd)};
  });
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, cpu::make_memory(e->pd.src_desc(), x.raw_data())},
                                       {DNNL_ARG_DST, cpu::make_memory(e->pd.dst_desc(), y.raw_data())}};
  Tensor workspace;
  const memory::desc ws_md = e->pd.workspace_desc();
  if (ws_md.get_size() > 0) {
    workspace = Tensor::empty(Shape{int64_t(ws_md.get_size())}, DType::kUInt8, x.device());
    args.emplace(DNNL_ARG_WORKSPACE, cpu::make_memory(ws_md, workspace.raw_data()));
  }
  cpu::execute(e->prim, e->pd, std::move(args));
  return workspace;
}

void CpuBackend::pool2d_backward(PoolKind kind, const Tensor& x, const Tensor& y, const Tensor& dy,
                                 const Tensor& workspace, const Pool2DParams& p, Tensor& dx) {
  if (cpu::any_16bit_float({dy})) {  // mixed precision: computed in float32 (cpu_widen.h)
    // x and y are not read here (the workspace and the shapes say everything), so only dy is
    // widened.
    Tensor dx32 = cpu::float32_like(dx);
    pool2d_backward(kind, x, y, cpu::widened(dy), workspace, p, dx32);
    return cpu::narrow_into(dx32, dx);
  }
  cpu::check_float32("pool2d_backward", {dy});
  if (dx.numel() == 0) return;
  if (dy.numel() == 0) return fill(dx, 0.0);
  const PoolKey key = make_pool_key(kind, dx, dy, p);
  auto e = backward_cache().get(key, [&] {
    auto fwd = forward_pd(key);
    dnnl::pooling_backward::desc desc(
        pool_algorithm(key.kind), cpu::nhwc_desc(key.n, key.h, key.w, key.c),
        cpu::nhwc_desc(key.n, key.oh, key.ow, key.c), {key.stride_h, key.stride_w},
        {key.window_h, key.window_w}, {key.pad_top, key.pad_left},
        {key.pad_bottom, key.pad_right});
    dnnl::pooling_backward::primitive_desc pd(desc, cpu::dnnl_default_attr(), cpu::dnnl_engine(),
                                              fwd);
    return BackwardEntry{pd, dnnl::pooling_backward(pd)};
  });
  std::unordered_map<int, memory> args{
      {DNNL_ARG_DIFF_DST, cpu::make_memory(e->pd.diff_dst_desc(), dy.raw_data())},
      {DNNL_ARG_DIFF_SRC, cpu::make_memory(e->pd.diff_src_desc(), dx.raw_data())}};
  const memory::desc ws_md = e->pd.workspace_desc();
  if (ws_md.get_size() > 0) {
    if (!workspace.defined() || size_t(workspace.nbytes()) < ws_md.get_size()) {
      throw ValueError("pool2d_backward: max pooling needs the workspace its forward pass returned");
    }
    args.emplace(DNNL_ARG_WORKSPACE, cpu::make_memory(ws_md, workspace.raw_data()));
  }
  cpu::execute(e->prim, e->pd, std::move(args));
}

}  // namespace strata
