// Internal to the CUDA backend's reduction and softmax kernels: warp- and block-wide reductions
// with a fixed combining tree (shuffles inside a warp, then one value per warp through shared
// memory), so a kernel gives the same bits on every run.
//
// A combiner is a functor `A operator()(A a, A b)`; it must be associative and commutative up to
// rounding, and the `identity` passed in must leave any value unchanged.
#pragma once

#include <cuda_runtime.h>

namespace strata::cuda {

constexpr int kWarpSize = 32;
constexpr unsigned kFullWarpMask = 0xffffffffu;

// One lane's value `offset` lanes up. Overloaded (found by argument-dependent lookup) for
// structures the hardware cannot shuffle in one piece.
template <typename A>
__device__ __forceinline__ A shfl_down(A v, int offset) {
  return __shfl_down_sync(kFullWarpMask, v, offset);
}
template <typename A>
__device__ __forceinline__ A shfl_xor(A v, int mask) {
  return __shfl_xor_sync(kFullWarpMask, v, mask);
}

// Combines the 32 lanes' values; the result is in lane 0. All 32 lanes must call it.
template <typename A, typename C>
__device__ __forceinline__ A warp_reduce(A v, C combine) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    v = combine(v, shfl_down(v, offset));
  }
  return v;
}

// Combines the 32 lanes' values and returns the result in every lane (a butterfly: lanes i and
// i^k combine the same two values, so with a commutative combiner every lane ends with the same
// bits). All 32 lanes must call it.
template <typename A, typename C>
__device__ __forceinline__ A warp_all_reduce(A v, C combine) {
  for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v = combine(v, shfl_xor(v, mask));
  return v;
}

// Combines one value per thread over the block and returns the result in every thread. Needs a
// one-dimensional block whose size is a multiple of 32 (at most 1024), and every thread of the
// block must call it, since it synchronises. It may be called again at once: the next call's
// first barrier orders its writes after this call's reads.
template <typename A, typename C>
__device__ A block_all_reduce(A v, A identity, C combine) {
  __shared__ A warp_results[kWarpSize];
  __shared__ A result;
  const int lane = int(threadIdx.x) % kWarpSize, warp = int(threadIdx.x) / kWarpSize;
  v = warp_reduce(v, combine);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = int(blockDim.x) / kWarpSize;
    A w = lane < warps ? warp_results[lane] : identity;
    w = warp_reduce(w, combine);
    if (lane == 0) result = w;
  }
  __syncthreads();
  return result;
}

}  // namespace strata::cuda
