// Average pooling with asymmetric padding (TensorFlow "same" with an odd padding total), where
// cuDNN cannot help: it takes only symmetric padding, and padding x explicitly would count the
// padding in the divisor. The divisor here counts the window's elements inside x, as
// oneDNN's pooling_avg_exclude_padding on the CPU. Both passes are gathers (one thread per
// output element forward, one per input element backward): no atomics, deterministic.
#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata::cuda {
namespace {

struct PoolGeometry {
  int64_t n, h, w, c, out_h, out_w;
  int64_t window_h, window_w, stride_h, stride_w, pad_top, pad_left;
};

// The part of output (oy, ox)'s window inside x: rows [h0, h1), columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
  __device__ int64_t count() const { return (h1 - h0) * (w1 - w0); }
};

__device__ __forceinline__ Window clipped_window(const PoolGeometry& g, int64_t oy, int64_t ox) {
  const int64_t top = oy * g.stride_h - g.pad_top, left = ox * g.stride_w - g.pad_left;
  Window win;
  win.h0 = top < 0 ? 0 : top;
  win.h1 = top + g.window_h < g.h ? top + g.window_h : g.h;
  win.w0 = left < 0 ? 0 : left;
  win.w1 = left + g.window_w < g.w ? left + g.window_w : g.w;
  return win;
}

template <typename T>
__global__ void avg_pool_forward_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t total,
                                        PoolGeometry g) {
  using A = acc_t<T>;
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % g.c;
    int64_t rest = i / g.c;
    const int64_t ox = rest % g.out_w;
    rest /= g.out_w;
    const int64_t oy = rest % g.out_h;
    const int64_t b = rest / g.out_h;
    const Window win = clipped_window(g, oy, ox);
    A sum = A(0);
    for (int64_t iy = win.h0; iy < win.h1; ++iy)
      for (int64_t ix = win.w0; ix < win.w1; ++ix)
        sum += to_acc(x[((b * g.h + iy) * g.w + ix) * g.c + c]);
    const int64_t count = win.count();  // >= 1 under TF's geometry; 0 would mean an empty window
    y[i] = from_acc<T>(count > 0 ? sum / A(count) : A(0));
  }
}

// First output index whose window [o*stride - pad, o*stride - pad + window) reaches position
// `pos`, and the last one that starts at or before it, clamped to [0, out).
__device__ __forceinline__ void covering_outputs(int64_t pos, int64_t window, int64_t stride,
                                                 int64_t pad, int64_t out, int64_t* first,
                                                 int64_t* last) {
  const int64_t lowest_start = pos + pad - window + 1;  // o * stride >= this
  *first = lowest_start <= 0 ? 0 : (lowest_start + stride - 1) / stride;
  const int64_t highest = (pos + pad) / stride;  // pos + pad >= 0 always
  *last = highest < out - 1 ? highest : out - 1;
}

template <typename T>
__global__ void avg_pool_backward_kernel(const T* __restrict__ dy, T* __restrict__ dx,
                                         int64_t total, PoolGeometry g) {
  using A = acc_t<T>;
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % g.c;
    int64_t rest = i / g.c;
    const int64_t ix = rest % g.w;
    rest /= g.w;
    const int64_t iy = rest % g.h;
    const int64_t b = rest / g.h;
    int64_t oy0, oy1, ox0, ox1;
    covering_outputs(iy, g.window_h, g.stride_h, g.pad_top, g.out_h, &oy0, &oy1);
    covering_outputs(ix, g.window_w, g.stride_w, g.pad_left, g.out_w, &ox0, &ox1);
    A sum = A(0);
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        const int64_t count = clipped_window(g, oy, ox).count();  // >= 1: it contains (iy, ix)
        sum += to_acc(dy[((b * g.out_h + oy) * g.out_w + ox) * g.c + c]) / A(count);
      }
    dx[i] = from_acc<T>(sum);
  }
}

PoolGeometry geometry(const Tensor& x_like, const Tensor& y_like, const Pool2DParams& p) {
  return PoolGeometry{x_like.dim(0), x_like.dim(1), x_like.dim(2), x_like.dim(3),
                      y_like.dim(1), y_like.dim(2), p.window_h,    p.window_w,
                      p.stride_h,    p.stride_w,    p.pad_top,     p.pad_left};
}

template <typename Fn>
void visit_floating(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(__half{});
    case DType::kBFloat16: return fn(__nv_bfloat16{});
    default: break;
  }
  throw InternalError("avg_pool2d: the CUDA kernels take floating dtypes only");
}

}  // namespace

void avg_pool2d_forward(const Tensor& x, const Pool2DParams& p, Tensor& y) {
  const int64_t total = y.numel();
  if (total == 0) return;
  const PoolGeometry g = geometry(x, y, p);
  visit_floating(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_forward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream(y.device())>>>(
        device_ptr<const T>(x), device_ptr<T>(y), total, g);
  });
  check_launch("avg_pool_forward_kernel", y.device().index);
}

void avg_pool2d_backward(const Tensor& dy, const Pool2DParams& p, Tensor& dx) {
  const int64_t total = dx.numel();
  if (total == 0) return;
  const PoolGeometry g = geometry(dx, dy, p);
  visit_floating(dx.dtype(), [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream(dx.device())>>>(
        device_ptr<const T>(dy), device_ptr<T>(dx), total, g);
  });
  check_launch("avg_pool_backward_kernel", dx.device().index);
}

}  // namespace strata::cuda
