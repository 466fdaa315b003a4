#include <string>

#include "framework/cuda/kernel_utils.cuh"

namespace strata::cuda {

StridedIndexer broadcast_indexer(const Shape& in, const Shape& out_shape) {
  const int rank = out_shape.rank();
  if (rank > kMaxDims) {
    throw DeviceError("CUDA backend: tensors of rank " + std::to_string(rank) +
                      " are not supported by broadcasting kernels (at most " +
                      std::to_string(kMaxDims) + " dimensions)");
  }
  StridedIndexer ix;
  ix.rank = rank;
  int64_t stride = 1;
  for (int d = rank - 1, k = in.rank() - 1; d >= 0; --d, --k) {
    ix.sizes[d] = out_shape.dim(d);
    const int64_t in_dim = k >= 0 ? in.dim(k) : 1;
    ix.strides[d] = in_dim == 1 ? 0 : stride;
    stride *= in_dim;
  }
  return ix;
}

}  // namespace strata::cuda
