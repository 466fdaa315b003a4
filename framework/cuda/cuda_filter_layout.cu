// permute4d: a 4-D axis permutation, the one layout change cuDNN's convolution needs around it
// (Strata's HWIO filters to cuDNN's KRSC or KCRS and back; NHWC data to NCHW and back for
// float64, which cuDNN convolves only in NCHW). Filters are small and the data path is float64
// only, so one simple gather kernel per element is enough: each thread reads the input element
// its output element comes from.
#include <string>

#include "framework/cuda/dnn_helpers.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata::cuda {
namespace {

struct Permute4 {
  int64_t out_sizes[4];
  int64_t in_strides[4];  // input stride of the axis each output axis reads
};

// T is an unsigned integer of the element's size: a permutation only moves bits.
template <typename T>
__global__ void permute4d_kernel(const T* __restrict__ in, T* __restrict__ out, int64_t n,
                                 Permute4 p) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    int64_t rest = i, offset = 0;
    for (int d = 3; d >= 0; --d) {
      const int64_t idx = rest % p.out_sizes[d];
      rest /= p.out_sizes[d];
      offset += idx * p.in_strides[d];
    }
    out[i] = in[offset];
  }
}

template <typename T>
void launch(const Tensor& x, Tensor& out, const Permute4& p) {
  const int64_t n = out.numel();
  permute4d_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream(out.device())>>>(
      device_ptr<const T>(x), device_ptr<T>(out), n, p);
  check_launch("permute4d_kernel", out.device().index);
}

}  // namespace

void permute4d(const Tensor& x, const std::array<int, 4>& perm, Tensor& out) {
  STRATA_CHECK(x.rank() == 4 && out.rank() == 4 && x.dtype() == out.dtype());
  Permute4 p{};
  const std::vector<int64_t> strides = x.shape().strides();
  for (int d = 0; d < 4; ++d) {
    const int from = perm[size_t(d)];
    STRATA_CHECK(from >= 0 && from < 4 && out.dim(d) == x.dim(from));
    p.out_sizes[d] = out.dim(d);
    p.in_strides[d] = strides[size_t(from)];
  }
  if (out.numel() == 0) return;
  switch (dtype_size(x.dtype())) {
    case 1: return launch<uint8_t>(x, out, p);
    case 2: return launch<uint16_t>(x, out, p);
    case 4: return launch<uint32_t>(x, out, p);
    case 8: return launch<uint64_t>(x, out, p);
    default: break;
  }
  throw InternalError(std::string("permute4d: unexpected element size for ") +
                      dtype_name(x.dtype()));
}

}  // namespace strata::cuda
