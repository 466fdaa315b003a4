// 2-D convolution (forward, backward-data, backward-filter) on the CPU through oneDNN.
//
// Activations stay in Strata's NHWC layout: oneDNN 2.6 has direct JIT kernels for channels-last
// data on AVX-512/AVX2, and reordering a whole activation tensor into a blocked layout and back
// on every call costs about as much memory traffic as the convolution itself. Filters are small,
// so they go through format_tag::any: the primitive picks its preferred blocked layout and a
// cached reorder primitive converts the HWIO tensor into (or, for the filter gradient, out of)
// it on each call, into a per-thread buffer.
#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/cpu_widen.h"
#include "framework/cpu/dnnl_context.h"

namespace strata {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct ConvKey {
  int64_t n, h, w, c;       // input
  int64_t oh, ow, o;        // output
  int64_t kh, kw, groups;
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
};

ConvKey make_conv_key(const Tensor& x, const Tensor& y, int64_t kh, int64_t kw,
                      const Conv2DParams& p) {
  return ConvKey{x.dim(0), x.dim(1), x.dim(2), x.dim(3), y.dim(1), y.dim(2), y.dim(3), kh, kw,
                 p.groups, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top,
                 p.pad_bottom, p.pad_left, p.pad_right};
}

// The layout-independent parts of every convolution descriptor.
struct ConvDescs {
  memory::desc src, dst, weights_any, weights_user;
  memory::dims strides, dilation, pad_l, pad_r;
};

ConvDescs conv_descs(const ConvKey& k) {
  ConvDescs d;
  d.src = cpu::nhwc_desc(k.n, k.h, k.w, k.c);
  d.dst = cpu::nhwc_desc(k.n, k.oh, k.ow, k.o);
  d.weights_user = cpu::hwio_weights_desc(k.kh, k.kw, k.c / k.groups, k.o, k.groups);
  const memory::dims wdims = k.groups == 1
      ? memory::dims{k.o, k.c, k.kh, k.kw}
      : memory::dims{k.groups, k.o / k.groups, k.c / k.groups, k.kh, k.kw};
  d.weights_any = memory::desc(wdims, memory::data_type::f32, tag::any);
  d.strides = {k.stride_h, k.stride_w};
  // oneDNN counts dilation as the gap between taps: Keras' dilation_rate - 1.
  d.dilation = {k.dilation_h - 1, k.dilation_w - 1};
  d.pad_l = {k.pad_top, k.pad_left};
  d.pad_r = {k.pad_bottom, k.pad_right};
  return d;
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvKey& k, const ConvDescs& d) {
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training,
                                       dnnl::algorithm::convolution_direct, d.src, d.weights_any,
                                       d.dst, d.strides, d.dilation, d.pad_l, d.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, cpu::dnnl_default_attr(),
                                                   cpu::dnnl_engine());
}

// A reorder between two layouts of the same filter, or none when they already agree.
struct OptionalReorder {
  bool needed = false;
  dnnl::reorder::primitive_desc pd;
  dnnl::reorder prim;
};

OptionalReorder make_reorder(const memory::desc& from, const memory::desc& to) {
  OptionalReorder r;
  if (from == to) return r;
  r.needed = true;
  r.pd = dnnl::reorder::primitive_desc(cpu::dnnl_engine(), from, cpu::dnnl_engine(), to,
                                       cpu::dnnl_default_attr());
  r.prim = dnnl::reorder(r.pd);
  return r;
}

// Memory for the primitive's view of the filter: the user's buffer itself when no reorder is
// needed, else a per-thread buffer the reorder fills (or, for outputs, that is reordered back).
memory filter_memory(const OptionalReorder& r, const memory::desc& user_md,
                     const memory::desc& prim_md, const void* user_data) {
  if (!r.needed) return cpu::make_memory(user_md, user_data);
  return cpu::make_memory(prim_md, cpu::thread_buffer(cpu::kBufferA, prim_md.get_size()));
}

// The HWIO filter w as a primitive that reads weights in `prim_md` sees it: w itself, or w
// reordered into the primitive's layout by `r`.
memory filter_input(const OptionalReorder& r, const ConvDescs& d, const memory::desc& prim_md,
                    const Tensor& w) {
  memory weights = filter_memory(r, d.weights_user, prim_md, w.raw_data());
  if (r.needed) {
    cpu::execute(r.prim, r.pd,
                 {{DNNL_ARG_FROM, cpu::make_memory(d.weights_user, w.raw_data())},
                  {DNNL_ARG_TO, weights}});
  }
  return weights;
}

// ---- forward ----
struct ForwardEntry {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  ConvDescs d;
  OptionalReorder weights_in;
};

cpu::PrimitiveCache<ConvKey, ForwardEntry>& forward_cache() {
  static cpu::PrimitiveCache<ConvKey, ForwardEntry> cache;
  return cache;
}

ForwardEntry make_forward(const ConvKey& k) {
  ConvDescs d = conv_descs(k);
  auto pd = forward_pd(k, d);
  return ForwardEntry{pd, dnnl::convolution_forward(pd), d,
                      make_reorder(d.weights_user, pd.weights_desc())};
}

// ---- backward data ----
struct BackwardDataEntry {
  dnnl::convolution_backward_data::primitive_desc pd;
  dnnl::convolution_backward_data prim;
  ConvDescs d;
  OptionalReorder weights_in;
};

cpu::PrimitiveCache<ConvKey, BackwardDataEntry>& backward_data_cache() {
  static cpu::PrimitiveCache<ConvKey, BackwardDataEntry> cache;
  return cache;
}

BackwardDataEntry make_backward_data(const ConvKey& k) {
  ConvDescs d = conv_descs(k);
  dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                             d.weights_any, d.dst, d.strides, d.dilation, d.pad_l,
                                             d.pad_r);
  dnnl::convolution_backward_data::primitive_desc pd(desc, cpu::dnnl_default_attr(),
                                                     cpu::dnnl_engine(), forward_pd(k, d));
  return BackwardDataEntry{pd, dnnl::convolution_backward_data(pd), d,
                           make_reorder(d.weights_user, pd.weights_desc())};
}

// ---- backward filter ----
struct BackwardFilterEntry {
  dnnl::convolution_backward_weights::primitive_desc pd;
  dnnl::convolution_backward_weights prim;
  ConvDescs d;
  OptionalReorder weights_out;
};

cpu::PrimitiveCache<ConvKey, BackwardFilterEntry>& backward_filter_cache() {
  static cpu::PrimitiveCache<ConvKey, BackwardFilterEntry> cache;
  return cache;
}

BackwardFilterEntry make_backward_filter(const ConvKey& k) {
  ConvDescs d = conv_descs(k);
  dnnl::convolution_backward_weights::desc desc(dnnl::algorithm::convolution_direct, d.src,
                                                d.weights_any, d.dst, d.strides, d.dilation,
                                                d.pad_l, d.pad_r);
  dnnl::convolution_backward_weights::primitive_desc pd(desc, cpu::dnnl_default_attr(),
                                                        cpu::dnnl_engine(), forward_pd(k, d));
  return BackwardFilterEntry{pd, dnnl::convolution_backward_weights(pd), d,
                             make_reorder(pd.diff_weights_desc(), d.weights_user)};
}

}  // namespace

void CpuBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Conv2DParams& p,
                                Tensor& y) {
  if (cpu::any_16bit_float({x, w})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor y32 = cpu::float32_like(y);
    conv2d_forward(cpu::widened(x), cpu::widened(w), p, y32);
    return cpu::narrow_into(y32, y);
  }
  cpu::check_float32("conv2d", {x, w});
  if (y.numel() == 0) return;
  if (x.numel() == 0 || w.numel() == 0) return fill(y, 0.0);
  const ConvKey key = make_conv_key(x, y, w.dim(0), w.dim(1), p);
  auto e = forward_cache().get(key, [&] { return make_forward(key); });
  const memory weights = filter_input(e->weights_in, e->d, e->pd.weights_desc(), w);
  cpu::execute(e->prim, e->pd,
               {{DNNL_ARG_SRC, cpu::make_memory(e->d.src, x.raw_data())},
                {DNNL_ARG_WEIGHTS, weights},
                {DNNL_ARG_DST, cpu::make_memory(e->d.dst, y.raw_data())}});
}

void CpuBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, const Conv2DParams& p,
                                      Tensor& dx) {
  if (cpu::any_16bit_float({dy, w})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor dx32 = cpu::float32_like(dx);
    conv2d_backward_data(cpu::widened(dy), cpu::widened(w), p, dx32);
    return cpu::narrow_into(dx32, dx);
  }
  cpu::check_float32("conv2d_backward_data", {dy, w});
  if (dx.numel() == 0) return;
  if (dy.numel() == 0 || w.numel() == 0) return fill(dx, 0.0);
  const ConvKey key = make_conv_key(dx, dy, w.dim(0), w.dim(1), p);
  auto e = backward_data_cache().get(key, [&] { return make_backward_data(key); });
  const memory weights = filter_input(e->weights_in, e->d, e->pd.weights_desc(), w);
  cpu::execute(e->prim, e->pd,
               {{DNNL_ARG_DIFF_DST, cpu::make_memory(e->d.dst, dy.raw_data())},
                {DNNL_ARG_WEIGHTS, weights},
                {DNNL_ARG_DIFF_SRC, cpu::make_memory(e->d.src, dx.raw_data())}});
}

void CpuBackend::conv2d_backward_filter(const Tensor& x, const Tensor& dy, const Conv2DParams& p,
                                        Tensor& dw) {
  if (cpu::any_16bit_float({x, dy})) {  // mixed precision: computed in float32 (cpu_widen.h)
    Tensor dw32 = cpu::float32_like(dw);
    conv2d_backward_filter(cpu::widened(x), cpu::widened(dy), p, dw32);
    return cpu::narrow_into(dw32, dw);
  }
  cpu::check_float32("conv2d_backward_filter", {x, dy});
  if (dw.numel() == 0) return;
  if (x.numel() == 0 || dy.numel() == 0) return fill(dw, 0.0);
  const ConvKey key = make_conv_key(x, dy, dw.dim(0), dw.dim(1), p);
  auto e = backward_filter_cache().get(key, [&] { return make_backward_filter(key); });
  memory diff_weights = filter_memory(e->weights_out, e->d.weights_user,
                                      e->pd.diff_weights_desc(), dw.raw_data());
  cpu::execute(e->prim, e->pd,
               {{DNNL_ARG_SRC, cpu::make_memory(e->d.src, x.raw_data())},
                {DNNL_ARG_DIFF_DST, cpu::make_memory(e->d.dst, dy.raw_data())},
                {DNNL_ARG_DIFF_WEIGHTS, diff_weights}});
  if (e->weights_out.needed) {
    cpu::execute(e->weights_out.prim, e->weights_out.pd,
                 {{DNNL_ARG_FROM, diff_weights},
                  {DNNL_ARG_TO, cpu::make_memory(e->d.weights_user, dw.raw_data())}});
  }
}

}  // namespace strata
