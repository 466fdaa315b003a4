// pad_spatial / crop_spatial: explicit padding around cuDNN's convolution and max pooling, which
// only take symmetric padding. TensorFlow's "same" puts the odd padding element after, so the
// kernels pad x by the asymmetric excess into a temporary (zeros for convolution, -inf for max
// pooling) and crop gradients computed on the padded shape back to x's.
#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata::cuda {
namespace {

// NHWC geometry shared by both kernels: `out` is indexed linearly, `in` at (y + dy, x + dx).
struct SpatialMap {
  int64_t n, c;
  int64_t out_h, out_w;
  int64_t in_h, in_w;
  int64_t shift_h, shift_w;  // in row = out row + shift_h, in column = out column + shift_w
};

// out[n, oy, ox, c] = in[n, oy + shift_h, ox + shift_w, c] where that lies inside `in`, else
// `fill`. Padding uses negative shifts; cropping positive ones (and never reads outside).
template <typename T>
__global__ void shift_copy_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t total,
                                  SpatialMap m, T fill) {
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = i % m.c;
    int64_t rest = i / m.c;
    const int64_t ox = rest % m.out_w;
    rest /= m.out_w;
    const int64_t oy = rest % m.out_h;
    const int64_t b = rest / m.out_h;
    const int64_t iy = oy + m.shift_h, ix = ox + m.shift_w;
    out[i] = (iy >= 0 && iy < m.in_h && ix >= 0 && ix < m.in_w)
                 ? in[((b * m.in_h + iy) * m.in_w + ix) * m.c + c]
                 : fill;
  }
}

void shift_copy(const Tensor& in, int64_t shift_h, int64_t shift_w, double fill, Tensor& out) {
  STRATA_CHECK(in.rank() == 4 && out.rank() == 4 && in.dtype() == out.dtype() &&
               in.dim(0) == out.dim(0) && in.dim(3) == out.dim(3));
  const int64_t total = out.numel();
  if (total == 0) return;
  const SpatialMap m{out.dim(0), out.dim(3), out.dim(1), out.dim(2),
                     in.dim(1),  in.dim(2),  shift_h,   shift_w};
  visit_cuda_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    shift_copy_kernel<T><<<blocks_for(total), kThreadsPerBlock, 0, stream(out.device())>>>(
        device_ptr<const T>(in), device_ptr<T>(out), total, m, from_acc<T>(fill));
  });
  check_launch("shift_copy_kernel", out.device().index);
}

}  // namespace

void pad_spatial(const Tensor& x, int top, int left, double value, Tensor& out) {
  STRATA_CHECK(top >= 0 && left >= 0 && out.dim(1) >= x.dim(1) + top &&
               out.dim(2) >= x.dim(2) + left);
  shift_copy(x, -int64_t(top), -int64_t(left), value, out);
}

void crop_spatial(const Tensor& x, int top, int left, Tensor& out) {
  STRATA_CHECK(top >= 0 && left >= 0 && x.dim(1) >= out.dim(1) + top &&
               x.dim(2) >= out.dim(2) + left);
  shift_copy(x, top, left, 0.0, out);
}

}  // namespace strata::cuda
