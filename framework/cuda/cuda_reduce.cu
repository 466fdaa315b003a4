// Reductions (sum, mean, max, min, prod, any, all) and arg-reductions on the GPU.
//
// Every reduction is brought to one of two shapes, as cpu_reduce.cc does: rows [rows, len]
// reduced along the contiguous last axis, or columns [outer, len, inner] reduced along the middle
// axis (the bias-gradient / batch-norm shape [N*H*W, C] -> [C] is columns with outer = 1).
// Interleaved reduced axes are first transposed to the end, which makes them rows.
//
// Accumulation matches the CPU: float for float32 and the 16-bit floats, double for float64,
// wrapping int64 for the integers and bool; max / min propagate NaN; an empty reduction gives the
// identity (NaN for a floating mean). Reductions too long for one block are cut into chunks whose
// partials a second pass combines. Chunk sizes depend only on the shape, and every combining tree
// is fixed, so a result is bit-identical from run to run.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/cuda/block_reduce.cuh"
#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"

namespace strata {
namespace {

using cuda::kThreadsPerBlock;
using cuda::kWarpSize;

constexpr int64_t kSmallLen = 16;        // at most this many: one thread per output element
constexpr int64_t kWarpRowLen = 1024;    // rows up to this long: one warp per row
constexpr int64_t kRowChunk = 8192;      // the shortest piece of a row one block reduces alone
constexpr int64_t kColumnChunk = 64;     // the fewest rows of a column tile one block reduces
constexpr int64_t kManyColumns = 65536;  // enough columns to fill the GPU one thread each
constexpr int64_t kTargetBlocks = 1024;  // blocks worth splitting a long reduction into
constexpr int64_t kMaxSplits = 1024;     // pieces per reduction, at most (the grid's y limit is 65535)
constexpr int kTileWidth = 32;           // column tiles: 32 columns ...
constexpr int kTileRows = 8;             // ... times 8 row lanes = 256 threads

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- accumulation ---------------------------------------------------------------------------

template <typename T> struct ReduceAccOf { using type = int64_t; };  // integers and bool
template <> struct ReduceAccOf<float> { using type = float; };
template <> struct ReduceAccOf<__half> { using type = float; };
template <> struct ReduceAccOf<__nv_bfloat16> { using type = float; };
template <> struct ReduceAccOf<double> { using type = double; };
template <typename T> using RAcc = typename ReduceAccOf<T>::type;

// Reads one element as the accumulator type. Bool is read through its byte, so a byte other
// than 0 or 1 cannot make a bool load undefined.
template <typename A, typename In>
__device__ __forceinline__ A load_acc(const In* p) {
  if constexpr (std::is_same_v<In, bool>) return A(*reinterpret_cast<const uint8_t*>(p) != 0);
  else if constexpr (std::is_same_v<In, __half>) return A(__half2float(*p));
  else if constexpr (std::is_same_v<In, __nv_bfloat16>) return A(__bfloat162float(*p));
  else return A(*p);
}

template <typename A>
__device__ __forceinline__ bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return isnan(v);
  else return false;
}

// Integer arithmetic goes through uint64 so that overflow wraps (as on the CPU) instead of being
// undefined.
struct SumCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return A(uint64_t(a) + uint64_t(b));
    else return a + b;
  }
};
struct ProdCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return A(uint64_t(a) * uint64_t(b));
    else return a * b;
  }
};
// NaN wins whichever side it is on (NumPy's max / min).
struct MaxCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return (b > a || is_nan(b)) ? b : a;
  }
};
struct MinCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return (b < a || is_nan(b)) ? b : a;
  }
};
struct AnyCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return A(a != A(0) || b != A(0));
  }
};
struct AllCombine {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return A(a != A(0) && b != A(0));
  }
};

// What happens to a finished accumulator: a mean divides by the reduced count (truncating for
// integers, 0 for an empty integer mean, NaN for an empty floating one); a partial pass stores
// the accumulator as is (mean = false, Out = the accumulator type).
struct Finish {
  bool mean = false;
  int64_t count = 1;
};

template <typename Out, typename A>
__device__ __forceinline__ Out emit(A acc, Finish f) {
  if (f.mean) {
    if constexpr (std::is_integral_v<A>) acc = f.count > 0 ? A(acc / f.count) : A(0);
    else acc = acc / A(f.count);
  }
  return cuda::from_acc<Out>(acc);
}

// ---- kernels --------------------------------------------------------------------------------

// out[i] = the result of reducing nothing.
template <typename T, typename A>
__global__ void fill_identity_kernel(T* out, int64_t n, A identity, Finish fin) {
  STRATA_GRID_STRIDE_LOOP(i, n) out[i] = emit<T>(identity, fin);
}

// [outer, len, inner] -> [outer, inner], one thread per output walking the reduced axis in order.
// Used for short reductions (and rows of <= kSmallLen, as inner = 1) and for many columns, where
// consecutive threads read consecutive columns.
template <typename In, typename Out, typename A, typename C>
__global__ void reduce_simple_kernel(const In* x, Out* out, int64_t outer, int64_t len,
                                     int64_t inner, A identity, Finish fin, C combine) {
  STRATA_GRID_STRIDE_LOOP(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const In* p = x + o * len * inner + j;
    A acc = identity;
    for (int64_t r = 0; r < len; ++r) acc = combine(acc, load_acc<A>(p + r * inner));
    out[t] = emit<Out>(acc, fin);
  }
}

// [rows, len] -> [rows], one warp per row: lanes read consecutive elements, then shuffle.
template <typename In, typename Out, typename A, typename C>
__global__ void reduce_rows_warp_kernel(const In* x, Out* out, int64_t rows, int64_t len,
                                        A identity, Finish fin, C combine) {
  const int lane = int(threadIdx.x) % kWarpSize;
  const int64_t warps_per_block = blockDim.x / kWarpSize;
  const int64_t first = int64_t(blockIdx.x) * warps_per_block + threadIdx.x / kWarpSize;
  // The row is the same for the whole warp, so every lane reaches the shuffles together.
  for (int64_t row = first; row < rows; row += int64_t(gridDim.x) * warps_per_block) {
    const In* p = x + row * len;
    A acc = identity;
    for (int64_t i = lane; i < len; i += kWarpSize) acc = combine(acc, load_acc<A>(p + i));
    acc = cuda::warp_reduce(acc, combine);
    if (lane == 0) out[row] = emit<Out>(acc, fin);
  }
}

// [rows, len] in `splits` chunks of `chunk` elements per row; one block per (row, chunk) writes
// out[row * splits + chunk index] (the final result when splits == 1, else a partial).
template <typename In, typename Out, typename A, typename C>
__global__ void reduce_rows_block_kernel(const In* x, Out* out, int64_t rows, int64_t len,
                                         int64_t chunk, int64_t splits, A identity, Finish fin,
                                         C combine) {
  // The task is the same for the whole block, so every thread reaches the barriers.
  for (int64_t task = blockIdx.x; task < rows * splits; task += gridDim.x) {
    const int64_t row = task / splits, s = task - row * splits;
    const int64_t begin = s * chunk, end = begin + chunk < len ? begin + chunk : len;
    const In* p = x + row * len;
    A acc = identity;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      acc = combine(acc, load_acc<A>(p + i));
    }
    acc = cuda::block_all_reduce(acc, identity, combine);
    if (threadIdx.x == 0) out[task] = emit<Out>(acc, fin);
  }
}

// [outer, len, inner] with the reduced axis in `splits` chunks (blockIdx.y) of `chunk` rows. A
// block of 32 x 8 threads owns 32 consecutive columns of one outer index: each of its 8 row lanes
// walks every 8th row of the chunk (coalesced along the columns), then the 8 lanes combine in
// order. Writes out[(o * splits + s) * inner + j]: the result when splits == 1, else a partial.
template <typename In, typename Out, typename A, typename C>
__global__ void reduce_columns_tiled_kernel(const In* x, Out* out, int64_t outer, int64_t len,
                                            int64_t inner, int64_t chunk, int64_t splits,
                                            A identity, Finish fin, C combine) {
  __shared__ A tile[kTileRows][kTileWidth + 1];
  const int64_t col_tiles = (inner + kTileWidth - 1) / kTileWidth;
  const int64_t s = blockIdx.y;
  const int64_t begin = s * chunk, end = begin + chunk < len ? begin + chunk : len;
  for (int64_t t = blockIdx.x; t < outer * col_tiles; t += gridDim.x) {
    const int64_t o = t / col_tiles;
    const int64_t j = (t - o * col_tiles) * kTileWidth + threadIdx.x;
    A acc = identity;
    if (j < inner) {
      const In* p = x + o * len * inner + j;
      for (int64_t r = begin + threadIdx.y; r < end; r += kTileRows) {
        acc = combine(acc, load_acc<A>(p + r * inner));
      }
    }
    tile[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < inner) {
      A v = tile[0][threadIdx.x];
      for (int k = 1; k < kTileRows; ++k) v = combine(v, tile[k][threadIdx.x]);
      out[(o * splits + s) * inner + j] = emit<Out>(v, fin);
    }
    __syncthreads();  // the tile is refilled for the next t
  }
}

// ---- launching ------------------------------------------------------------------------------

// Pieces to cut each of `tasks` reductions of length `len` into: enough for about kTargetBlocks
// blocks in all, none shorter than `min_chunk`. Depends only on the shape.
int64_t split_count(int64_t tasks, int64_t len, int64_t min_chunk) {
  const int64_t wanted = ceil_div(kTargetBlocks, std::max<int64_t>(tasks, 1));
  return std::clamp<int64_t>(std::min(wanted, len / min_chunk), 1, kMaxSplits);
}

// Scratch memory for n partials, freed (stream-ordered) once the caller's kernels are queued.
template <typename A>
Tensor partial_buffer(int64_t n, Device device) {
  return Tensor::empty(Shape{n * int64_t(sizeof(A))}, DType::kUInt8, device);
}

template <typename In, typename Out, typename A, typename C>
void launch_simple(const In* x, Out* out, int64_t outer, int64_t len, int64_t inner, A identity,
                   Finish fin, C combine, Device device) {
  reduce_simple_kernel<<<cuda::blocks_for(outer * inner), kThreadsPerBlock, 0,
                         cuda::stream(device)>>>(x, out, outer, len, inner, identity, fin, combine);
  cuda::check_launch("reduce_simple_kernel", device.index);
}

// Reduces x viewed as [rows, len] along its last axis into out[rows].
template <typename In, typename Out, typename A, typename C>
void reduce_rows(const In* x, Out* out, int64_t rows, int64_t len, A identity, Finish fin,
                 C combine, Device device) {
  cudaStream_t stream = cuda::stream(device);
  if (len <= kSmallLen) {
    launch_simple(x, out, rows, len, 1, identity, fin, combine, device);
    return;
  }
  int64_t splits = split_count(rows, len, kRowChunk);
  if (splits > 1) {
    // Few long rows: blocks reduce chunks into partials [rows, splits], then a second pass.
    const int64_t chunk = ceil_div(len, splits);
    splits = ceil_div(len, chunk);
    Tensor scratch = partial_buffer<A>(rows * splits, device);
    A* partial = cuda::device_ptr<A>(scratch);
    reduce_rows_block_kernel<<<cuda::blocks_for(rows * splits, 1), kThreadsPerBlock, 0, stream>>>(
        x, partial, rows, len, chunk, splits, identity, Finish{}, combine);
    cuda::check_launch("reduce_rows_block_kernel", device.index);
    reduce_rows(static_cast<const A*>(partial), out, rows, splits, identity, fin, combine,
                device);
    return;
  }
  if (len <= kWarpRowLen) {
    constexpr int kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
    reduce_rows_warp_kernel<<<cuda::blocks_for(rows, kWarpsPerBlock), kThreadsPerBlock, 0,
                              stream>>>(x, out, rows, len, identity, fin, combine);
    cuda::check_launch("reduce_rows_warp_kernel", device.index);
    return;
  }
  reduce_rows_block_kernel<<<cuda::blocks_for(rows, 1), kThreadsPerBlock, 0, stream>>>(
      x, out, rows, len, len, 1, identity, fin, combine);
  cuda::check_launch("reduce_rows_block_kernel", device.index);
}

// Reduces x viewed as [outer, len, inner] along its middle axis into out[outer, inner].
template <typename In, typename Out, typename A, typename C>
void reduce_columns(const In* x, Out* out, int64_t outer, int64_t len, int64_t inner,
                    A identity, Finish fin, C combine, Device device, bool allow_split = true) {
  if (len <= kSmallLen || outer * inner >= kManyColumns) {
    launch_simple(x, out, outer, len, inner, identity, fin, combine, device);
    return;
  }
  const int64_t tiles = outer * ceil_div(inner, kTileWidth);
  int64_t splits = allow_split ? split_count(tiles, len, kColumnChunk) : 1;
  const int64_t chunk = ceil_div(len, splits);
  splits = ceil_div(len, chunk);
  const dim3 block(kTileWidth, kTileRows);
  const dim3 grid(cuda::blocks_for(tiles, 1), unsigned(splits));
  cudaStream_t stream = cuda::stream(device);
  if (splits == 1) {
    reduce_columns_tiled_kernel<<<grid, block, 0, stream>>>(x, out, outer, len, inner, chunk, 1,
                                                            identity, fin, combine);
    cuda::check_launch("reduce_columns_tiled_kernel", device.index);
    return;
  }
  // Few columns, long reduction: partials [outer, splits, inner], then one more column pass.
  Tensor scratch = partial_buffer<A>(outer * splits * inner, device);
  A* partial = cuda::device_ptr<A>(scratch);
  reduce_columns_tiled_kernel<<<grid, block, 0, stream>>>(x, partial, outer, len, inner, chunk,
                                                          splits, identity, Finish{}, combine);
  cuda::check_launch("reduce_columns_tiled_kernel", device.index);
  reduce_columns(static_cast<const A*>(partial), out, outer, splits, inner, identity, fin,
                 combine, device, /*allow_split=*/false);
}

// How x's reduction is laid out after merging neighbouring axes of the same kind (size-1 axes
// ignored): rows [outer, len] when everything reduced is trailing, columns [outer, len, inner]
// when one reduced group sits in the middle; `interleaved` when several groups alternate.
struct ReduceLayout {
  bool interleaved = false;
  bool columns = false;
  int64_t outer = 1, len = 1, inner = 1;
};

ReduceLayout plan_reduce(const Shape& shape, const std::vector<int>& axes, int64_t out_numel) {
  std::vector<bool> reduced(size_t(shape.rank()), false);
  for (int a : axes) reduced[size_t(a)] = true;
  std::vector<std::pair<int64_t, bool>> groups;  // (size, reduced)
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape[i];
    if (d == 1) continue;
    if (!groups.empty() && groups.back().second == reduced[size_t(i)]) {
      groups.back().first *= d;
    } else {
      groups.push_back({d, reduced[size_t(i)]});
    }
  }
  int reduced_groups = 0;
  for (const auto& g : groups) reduced_groups += g.second ? 1 : 0;
  ReduceLayout layout;
  layout.len = shape.numel() / out_numel;
  if (reduced_groups == 0 || (reduced_groups == 1 && groups.back().second)) {
    layout.outer = out_numel;
  } else if (reduced_groups == 1) {
    layout.columns = true;
    bool seen = false;
    for (const auto& g : groups) {
      if (g.second) seen = true;
      else if (seen) layout.inner *= g.first;
      else layout.outer *= g.first;
    }
  } else {
    layout.interleaved = true;
    layout.outer = out_numel;  // rows once the reduced axes are moved last
  }
  return layout;
}

// The value an empty reduction starts from, in the accumulator type.
template <typename T, typename A>
A identity_for(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
    case ReduceOp::kAny: return A(0);
    case ReduceOp::kProd:
    case ReduceOp::kAll: return A(1);
    case ReduceOp::kMax:
      if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
      else return A(std::numeric_limits<T>::lowest());  // bool: false
    case ReduceOp::kMin:
      if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
      else return A(std::numeric_limits<T>::max());  // bool: true
  }
  return A(0);
}

template <typename T, typename C>
void reduce_typed(ReduceOp op, const ReduceLayout& layout, const Tensor& src, Tensor& out,
                  C combine) {
  using A = RAcc<T>;
  const Device device = out.device();
  const A identity = identity_for<T, A>(op);
  const Finish fin{op == ReduceOp::kMean, layout.len};
  T* po = cuda::device_ptr<T>(out);
  if (src.numel() == 0) {  // reducing over an empty axis
    fill_identity_kernel<<<cuda::blocks_for(out.numel()), kThreadsPerBlock, 0,
                           cuda::stream(device)>>>(po, out.numel(), identity, fin);
    cuda::check_launch("fill_identity_kernel", device.index);
    return;
  }
  const T* px = cuda::device_ptr<const T>(src);
  if (layout.columns) {
    reduce_columns(px, po, layout.outer, layout.len, layout.inner, identity, fin, combine, device);
  } else {
    reduce_rows(px, po, layout.outer, layout.len, identity, fin, combine, device);
  }
}

// ---- arg-reductions -------------------------------------------------------------------------

// A candidate (value, index); index < 0 marks "no element yet" and loses to everything.
template <typename V>
struct ArgPair {
  V value;
  int64_t index;
};

template <typename V>
__device__ __forceinline__ ArgPair<V> shfl_down(ArgPair<V> p, int offset) {
  ArgPair<V> q;
  q.value = __shfl_down_sync(cuda::kFullWarpMask, p.value, offset);
  q.index = __shfl_down_sync(cuda::kFullWarpMask, p.index, offset);
  return q;
}

// The CPU's rule as an order-free combine: the first NaN wins (numpy.argmax); otherwise the
// larger (smaller) value, ties going to the lower index.
template <bool kArgMax>
struct ArgCombine {
  template <typename V>
  __device__ __forceinline__ ArgPair<V> operator()(ArgPair<V> a, ArgPair<V> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    const bool b_better = kArgMax ? b.value > a.value : b.value < a.value;
    return b_better ? b : a;
  }
};

// Last axis, one warp per row.
template <typename T, typename C>
__global__ void arg_rows_warp_kernel(const T* x, int64_t* out, int64_t rows, int64_t n,
                                     C combine) {
  using V = RAcc<T>;
  const int lane = int(threadIdx.x) % kWarpSize;
  const int64_t warps_per_block = blockDim.x / kWarpSize;
  const int64_t first = int64_t(blockIdx.x) * warps_per_block + threadIdx.x / kWarpSize;
  for (int64_t row = first; row < rows; row += int64_t(gridDim.x) * warps_per_block) {
    const T* p = x + row * n;
    ArgPair<V> best{V(0), -1};
    for (int64_t i = lane; i < n; i += kWarpSize) {
      best = combine(best, ArgPair<V>{load_acc<V>(p + i), i});
    }
    best = cuda::warp_reduce(best, combine);
    if (lane == 0) out[row] = best.index;
  }
}

// Last axis, one block per row (long rows).
template <typename T, typename C>
__global__ void arg_rows_block_kernel(const T* x, int64_t* out, int64_t rows, int64_t n,
                                      C combine) {
  using V = RAcc<T>;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* p = x + row * n;
    ArgPair<V> best{V(0), -1};
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      best = combine(best, ArgPair<V>{load_acc<V>(p + i), i});
    }
    best = cuda::block_all_reduce(best, ArgPair<V>{V(0), -1}, combine);
    if (threadIdx.x == 0) out[row] = best.index;
  }
}

// A middle axis of [outer, n, inner]: one thread per output, walking the axis in order.
template <typename T, typename C>
__global__ void arg_columns_kernel(const T* x, int64_t* out, int64_t outer, int64_t n,
                                   int64_t inner, C combine) {
  using V = RAcc<T>;
  STRATA_GRID_STRIDE_LOOP(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const T* p = x + o * n * inner + j;
    ArgPair<V> best{V(0), -1};
    for (int64_t k = 0; k < n; ++k) best = combine(best, ArgPair<V>{load_acc<V>(p + k * inner), k});
    out[t] = best.index;
  }
}

template <typename T, typename C>
void arg_reduce_typed(const T* x, int64_t* out, int64_t outer, int64_t n, int64_t inner,
                      C combine, Device device) {
  cudaStream_t stream = cuda::stream(device);
  if (inner > 1) {
    arg_columns_kernel<<<cuda::blocks_for(outer * inner), kThreadsPerBlock, 0, stream>>>(
        x, out, outer, n, inner, combine);
    cuda::check_launch("arg_columns_kernel", device.index);
  } else if (n <= kWarpRowLen) {
    constexpr int kWarpsPerBlock = kThreadsPerBlock / kWarpSize;
    arg_rows_warp_kernel<<<cuda::blocks_for(outer, kWarpsPerBlock), kThreadsPerBlock, 0,
                           stream>>>(x, out, outer, n, combine);
    cuda::check_launch("arg_rows_warp_kernel", device.index);
  } else {
    arg_rows_block_kernel<<<cuda::blocks_for(outer, 1), kThreadsPerBlock, 0, stream>>>(
        x, out, outer, n, combine);
    cuda::check_launch("arg_rows_block_kernel", device.index);
  }
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  if (out.numel() == 0) return;
  ReduceLayout layout = plan_reduce(x.shape(), axes, out.numel());
  Tensor src = x;
  if (layout.interleaved) {
    // Kept axes first, reduced axes last (a copy), then the rows case. `src` keeps the copy
    // alive until the reduction is queued.
    std::vector<int> perm;
    std::vector<bool> reduced(size_t(x.rank()), false);
    for (int a : axes) reduced[size_t(a)] = true;
    for (int i = 0; i < x.rank(); ++i) {
      if (!reduced[size_t(i)]) perm.push_back(i);
    }
    for (int a : axes) perm.push_back(a);
    std::vector<int64_t> dims;
    for (int p : perm) dims.push_back(x.shape()[p]);
    src = Tensor::empty(Shape(std::move(dims)), x.dtype(), x.device());
    transpose(x, perm, src);
  }
  cuda::visit_cuda_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean: return reduce_typed<T>(op, layout, src, out, SumCombine{});
      case ReduceOp::kProd: return reduce_typed<T>(op, layout, src, out, ProdCombine{});
      case ReduceOp::kMax: return reduce_typed<T>(op, layout, src, out, MaxCombine{});
      case ReduceOp::kMin: return reduce_typed<T>(op, layout, src, out, MinCombine{});
      case ReduceOp::kAny: return reduce_typed<T>(op, layout, src, out, AnyCombine{});
      case ReduceOp::kAll: return reduce_typed<T>(op, layout, src, out, AllCombine{});
    }
  });
}

void CudaBackend::arg_reduce(ArgReduceOp op, const Tensor& x, int axis, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  if (out.numel() == 0) return;
  int64_t outer = 1, n = x.shape()[axis], inner = 1;
  for (int i = 0; i < axis; ++i) outer *= x.shape()[i];
  for (int i = axis + 1; i < x.rank(); ++i) inner *= x.shape()[i];
  int64_t* po = cuda::device_ptr<int64_t>(out);
  if (n == 0) {  // the op front-end rejects this; index 0 rather than reading nothing
    STRATA_CUDA_CHECK(cudaMemsetAsync(po, 0, out.nbytes(), cuda::stream(out.device())),
                      out.device().index);
    return;
  }
  cuda::visit_cuda_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = cuda::device_ptr<const T>(x);
    if (op == ArgReduceOp::kArgMax) {
      arg_reduce_typed(px, po, outer, n, inner, ArgCombine<true>{}, out.device());
    } else {
      arg_reduce_typed(px, po, outer, n, inner, ArgCombine<false>{}, out.device());
    }
  });
}

}  // namespace strata
