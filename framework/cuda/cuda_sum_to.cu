// sum_to on the GPU: the gradient of broadcasting, summing x down to out's shape. As on the CPU
// (cpu_reduce.cc) the sums accumulate in float for float32 and the 16-bit floats, in double for
// float64 and in wrapping int64 for integers; an empty x gives zeros.
//
// x's dimensions are first classified as reduced or kept (out has 1 where x does not, or lacks
// the dimension), size-1 dimensions dropped and neighbours of the same class merged. The two
// shapes gradients of broadcasting take almost always then get a kernel of their own:
//   [R, K]  leading dimensions reduced (a bias gradient): column sums, coalesced across columns;
//   [K, R]  trailing dimensions reduced (a [N, 1] operand): row sums, one block per row piece.
// Both split long reductions into fixed-size pieces whose partial sums a further pass adds, so a
// few outputs still get many blocks. Anything else (and rows shorter than a block) takes the
// general kernel, one thread per output element. Every order is fixed by the shapes: results
// are deterministic.
#include <string>
#include <type_traits>
#include <vector>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata {
namespace {

// The accumulator of a sum of T, as the CPU's Acc<T>.
template <typename T>
using SumAcc = std::conditional_t<
    std::is_same_v<T, double>, double,
    std::conditional_t<std::is_floating_point_v<cuda::acc_t<T>>, float, int64_t>>;

template <typename A>
__device__ __forceinline__ A sum_step(A a, A v) {
  if constexpr (std::is_integral_v<A>) {
    return A(uint64_t(a) + uint64_t(v));  // wraps, as the CPU
  } else {
    return a + v;
  }
}

// Reads element i of a T array as the accumulator type.
template <typename A, typename T>
__device__ __forceinline__ A load_acc(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, A>) {
    return p[i];
  } else {
    return A(cuda::to_acc(p[i]));
  }
}

// Stores an accumulated sum: to the 16-bit floats by rounding, to narrower integers modularly.
template <typename Out, typename A>
__device__ __forceinline__ Out store_sum(A v) {
  if constexpr (std::is_same_v<Out, A>) {
    return v;
  } else if constexpr (std::is_same_v<Out, bool>) {
    return v != A(0);
  } else {
    return cuda::from_acc<Out>(v);
  }
}

constexpr int kRowThreads = 256;     // threads per block of the row kernel (a power of two)
constexpr int64_t kRowPiece = 4096;  // elements of a row one block sums
constexpr int kColTile = 32;         // columns per block of the column kernel (one warp wide)
constexpr int kColLanes = 8;         // rows summed side by side per column
constexpr int64_t kColPiece = 512;   // rows of a column one block sums

// x as [K, R] (contiguous rows); out[k * pieces + p] = sum of row k's piece p, where pieces =
// ceil(R / kRowPiece). Threads stride through the piece, then a shared-memory tree adds their
// sums in a fixed order.
template <typename In, typename A, typename Out>
__global__ void row_sum_kernel(const In* x, int64_t rows, int64_t len, int64_t pieces, Out* out) {
  __shared__ A partial[kRowThreads];
  for (int64_t item = blockIdx.x; item < rows * pieces; item += gridDim.x) {
    const int64_t row = item / pieces, start = (item % pieces) * kRowPiece;
    const int64_t end = start + kRowPiece < len ? start + kRowPiece : len;
    const In* base = x + row * len;
    A acc = A(0);
    for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) {
      acc = sum_step(acc, load_acc<A>(base, i));
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kRowThreads / 2; s > 0; s >>= 1) {
      if (int(threadIdx.x) < s) partial[threadIdx.x] = sum_step(partial[threadIdx.x], partial[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) out[item] = store_sum<Out>(partial[0]);
    __syncthreads();  // partial[0] is read before the next item overwrites it
  }
}

// x as [R, K] (reduce the leading R); out[p * K + k] = sum of column k over row piece p, where
// pieces = ceil(R / kColPiece). Block (kColTile, kColLanes): threadIdx.x picks the column, so
// a warp reads kColTile neighbouring elements; the kColLanes sums of a column are added in lane
// order.
template <typename In, typename A, typename Out>
__global__ void column_sum_kernel(const In* x, int64_t len, int64_t cols, int64_t pieces,
                                  Out* out) {
  __shared__ A partial[kColLanes][kColTile];
  const int64_t tiles = (cols + kColTile - 1) / kColTile;
  for (int64_t item = blockIdx.x; item < tiles * pieces; item += gridDim.x) {
    const int64_t piece = item / tiles;
    const int64_t col = (item % tiles) * kColTile + threadIdx.x;
    const int64_t start = piece * kColPiece;
    const int64_t end = start + kColPiece < len ? start + kColPiece : len;
    A acc = A(0);
    if (col < cols) {
      for (int64_t r = start + threadIdx.y; r < end; r += kColLanes) {
        acc = sum_step(acc, load_acc<A>(x, r * cols + col));
      }
    }
    partial[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
      A total = partial[0][threadIdx.x];
      for (int lane = 1; lane < kColLanes; ++lane) total = sum_step(total, partial[lane][threadIdx.x]);
      out[piece * cols + col] = store_sum<Out>(total);
    }
    __syncthreads();  // the partials are read before the next item overwrites them
  }
}

// Dimensions of a strided walk (outermost first), for the general kernel.
struct Walk {
  int rank = 0;
  int64_t sizes[cuda::kMaxDims] = {};
  int64_t strides[cuda::kMaxDims] = {};  // in x's elements

  __device__ __forceinline__ int64_t offset(int64_t linear) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (linear % sizes[d]) * strides[d];
      linear /= sizes[d];
    }
    return off;
  }
};

// One thread per output element: `kept` maps the output index to x's offset, `reduced` walks the
// `count` elements summed into it.
template <typename T, typename A>
__global__ void general_sum_kernel(const T* x, Walk kept, Walk reduced, int64_t count, T* out,
                                   int64_t n) {
  STRATA_GRID_STRIDE_LOOP(o, n) {
    const T* base = x + kept.offset(o);
    A acc = A(0);
    for (int64_t r = 0; r < count; ++r) acc = sum_step(acc, load_acc<A>(base, reduced.offset(r)));
    out[o] = store_sum<T>(acc);
  }
}

// A merged run of x's dimensions: all reduced or all kept.
struct Group {
  int64_t size;
  int64_t stride;  // of the run's innermost dimension, in x's elements
  bool reduced;
};

std::vector<Group> plan_groups(const Shape& x, const Shape& out) {
  const int r = x.rank(), lead = x.rank() - out.rank();
  std::vector<Group> inner_first;
  int64_t stride = 1;
  for (int i = r - 1; i >= 0; --i) {
    const int64_t d = x.dim(i);
    const int j = i - lead;
    const bool reduced = j < 0 || (out.dim(j) == 1 && d != 1);
    if (d != 1) {
      if (!inner_first.empty() && inner_first.back().reduced == reduced) {
        inner_first.back().size *= d;  // contiguous with its inner neighbour: one run
      } else {
        inner_first.push_back({d, stride, reduced});
      }
    }
    stride *= d;
  }
  return {inner_first.rbegin(), inner_first.rend()};
}

Walk walk_of(const std::vector<Group>& groups, bool reduced) {
  Walk w;
  for (const Group& g : groups) {
    if (g.reduced != reduced) continue;
    if (w.rank == cuda::kMaxDims) {
      throw DeviceError("sum_to: the CUDA kernel supports at most " +
                        std::to_string(cuda::kMaxDims) +
                        " alternating runs of reduced and kept dimensions");
    }
    w.sizes[w.rank] = g.size;
    w.strides[w.rank] = g.stride;
    ++w.rank;
  }
  return w;
}

unsigned item_blocks(int64_t items) { return cuda::blocks_for(items, 1); }

// Two scratch arrays of accumulators that the passes of a long reduction write in turn; the
// tensors stay alive until every pass is queued (the allocator is stream-ordered).
template <typename A>
struct PingPong {
  Tensor buffers[2];
  int next = 0;
  A* take(int64_t count, Device device) {
    Tensor& b = buffers[next];
    next ^= 1;
    if (!b.defined() || b.numel() < count * int64_t(sizeof(A))) {
      b = Tensor::empty({count * int64_t(sizeof(A))}, DType::kUInt8, device);
    }
    return static_cast<A*>(b.raw_data());
  }
};

// Sums x as [rows, len] along len into out: passes of row_sum_kernel, each cutting the rows
// kRowPiece times shorter, until one piece is left per row.
template <typename T, typename A>
void sum_rows(const T* x, int64_t rows, int64_t len, T* out, Device device) {
  cudaStream_t stream = cuda::stream(device);
  const dim3 block(kRowThreads);
  int64_t pieces = (len + kRowPiece - 1) / kRowPiece;
  if (pieces == 1) {
    row_sum_kernel<T, A, T><<<item_blocks(rows), block, 0, stream>>>(x, rows, len, 1, out);
    cuda::check_launch("sum_to", device.index);
    return;
  }
  PingPong<A> scratch;
  A* in = scratch.take(rows * pieces, device);
  row_sum_kernel<T, A, A><<<item_blocks(rows * pieces), block, 0, stream>>>(x, rows, len, pieces,
                                                                             in);
  cuda::check_launch("sum_to", device.index);
  for (;;) {  // each pass reads [rows, len] partial sums and writes [rows, pieces]
    len = pieces;
    pieces = (len + kRowPiece - 1) / kRowPiece;
    if (pieces == 1) {
      row_sum_kernel<A, A, T><<<item_blocks(rows), block, 0, stream>>>(in, rows, len, 1, out);
      cuda::check_launch("sum_to", device.index);
      return;
    }
    A* next = scratch.take(rows * pieces, device);
    row_sum_kernel<A, A, A><<<item_blocks(rows * pieces), block, 0, stream>>>(in, rows, len,
                                                                               pieces, next);
    cuda::check_launch("sum_to", device.index);
    in = next;
  }
}

// Sums x as [len, cols] along len into out, in passes as sum_rows.
template <typename T, typename A>
void sum_columns(const T* x, int64_t len, int64_t cols, T* out, Device device) {
  cudaStream_t stream = cuda::stream(device);
  const dim3 block(kColTile, kColLanes);
  const int64_t tiles = (cols + kColTile - 1) / kColTile;
  int64_t pieces = (len + kColPiece - 1) / kColPiece;
  if (pieces == 1) {
    column_sum_kernel<T, A, T><<<item_blocks(tiles), block, 0, stream>>>(x, len, cols, 1, out);
    cuda::check_launch("sum_to", device.index);
    return;
  }
  PingPong<A> scratch;
  A* in = scratch.take(pieces * cols, device);
  column_sum_kernel<T, A, A><<<item_blocks(tiles * pieces), block, 0, stream>>>(x, len, cols,
                                                                                 pieces, in);
  cuda::check_launch("sum_to", device.index);
  for (;;) {  // each pass reads [len, cols] partial sums and writes [pieces, cols]
    len = pieces;
    pieces = (len + kColPiece - 1) / kColPiece;
    if (pieces == 1) {
      column_sum_kernel<A, A, T><<<item_blocks(tiles), block, 0, stream>>>(in, len, cols, 1, out);
      cuda::check_launch("sum_to", device.index);
      return;
    }
    A* next = scratch.take(pieces * cols, device);
    column_sum_kernel<A, A, A><<<item_blocks(tiles * pieces), block, 0, stream>>>(in, len, cols,
                                                                                   pieces, next);
    cuda::check_launch("sum_to", device.index);
    in = next;
  }
}

template <typename T>
void sum_to_typed(const Tensor& x, Tensor& out) {
  using A = SumAcc<T>;
  const Device device = out.device();
  const T* px = cuda::device_ptr<const T>(x);
  T* po = cuda::device_ptr<T>(out);
  const std::vector<Group> groups = plan_groups(x.shape(), out.shape());
  const bool leading = groups.size() == 2 && groups[0].reduced;    // [R, K]
  const bool trailing = groups.size() == 2 && !groups[0].reduced;  // [K, R]
  if (groups.size() == 1) {  // everything (the one group is reduced): one row
    sum_rows<T, A>(px, 1, groups[0].size, po, device);
  } else if (trailing && groups[1].size >= kRowThreads) {
    sum_rows<T, A>(px, groups[0].size, groups[1].size, po, device);
  } else if (leading) {
    sum_columns<T, A>(px, groups[0].size, groups[1].size, po, device);
  } else {  // interleaved runs, or rows too short to give a block each: a thread per output
    const Walk kept = walk_of(groups, false), reduced = walk_of(groups, true);
    const int64_t n = out.numel(), count = x.numel() / n;
    general_sum_kernel<T, A><<<cuda::blocks_for(n), cuda::kThreadsPerBlock, 0,
                               cuda::stream(device)>>>(px, kept, reduced, count, po, n);
    cuda::check_launch("sum_to", device.index);
  }
}

}  // namespace

void CudaBackend::sum_to(const Tensor& x, Tensor& out) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(out.device());
  cudaStream_t stream = cuda::stream(out.device());
  if (x.numel() == 0) {  // an empty sum: zeros (all-zero bytes in every dtype)
    STRATA_CUDA_CHECK(cudaMemsetAsync(out.raw_data(), 0, out.nbytes(), stream), out.device().index);
    return;
  }
  if (x.numel() == out.numel()) {  // only size-1 dimensions differ: the same elements
    if (x.raw_data() != out.raw_data()) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(out.raw_data(), x.raw_data(), x.nbytes(),
                                        cudaMemcpyDeviceToDevice, stream),
                        out.device().index);
    }
    return;
  }
  cuda::visit_cuda_dtype(x.dtype(), [&](auto tag) { sum_to_typed<decltype(tag)>(x, out); });
}

}  // namespace strata
