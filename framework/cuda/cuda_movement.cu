// Data movement on the GPU: transpose, concat, slice, slice_assign, pad, gather, scatter_add,
// one_hot.
//
// Pure copies move elements as unsigned integers of the element's width (dtype-agnostic), and
// first simplify their index space: size-1 axes are dropped and neighbouring axes that stay
// contiguous are merged, so a kernel divides by as few sizes as possible and a copy that turns
// out contiguous becomes one cudaMemcpyAsync. Only scatter_add and one_hot need the real dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "framework/cuda/cuda_backend.h"
#include "framework/cuda/kernel_utils.cuh"

// __half atomicAdd needs sm_70 and __nv_bfloat16 atomicAdd sm_80; the backend targets sm_90.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "the CUDA backend's scatter_add needs sm_80 or newer (bfloat16 atomicAdd)"
#endif

namespace strata {
namespace {

using cuda::kMaxDims;
using cuda::kThreadsPerBlock;

constexpr int kTile = 32;          // transpose tiles are 32 x 32 elements ...
constexpr int kTileRows = 8;       // ... moved by 32 x 8 threads
constexpr int64_t kMinTiled = 16;  // both transposed dims at least this long to use tiles

// Calls fn(U{}) with the unsigned integer type as wide as one element.
template <typename Fn>
void visit_element_size(size_t size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); return;
    case 2: fn(uint16_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
  }
  STRATA_CHECK(false);
}

// Calls fn(I{}) for the integer dtypes that may hold indices (those the CPU accepts).
template <typename Fn>
void visit_index_dtype(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kInt32: fn(int32_t{}); return;
    case DType::kInt64: fn(int64_t{}); return;
    case DType::kUInt8: fn(uint8_t{}); return;
    default:
      throw DTypeError(std::string(op) + ": indices must be int32 or int64, got " +
                       dtype_name(dtype));
  }
}

void copy_device(void* dst, const void* src, size_t nbytes, Device device) {
  if (nbytes == 0) return;
  STRATA_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, cuda::stream(device)),
      device.index);
}

// `value` stored as `dtype`, in the low bytes of a uint64 (integers saturate and NaN becomes 0,
// as cpu_movement.cc's value_as: a cast out of range would be undefined).
uint64_t value_bits(double value, DType dtype) {
  uint64_t bits = 0;
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, bool>) {
      v = value != 0.0;
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      v = T(float(value));
    } else if constexpr (std::is_integral_v<T>) {
      if (!(value == value)) v = T(0);
      else if (value <= double(std::numeric_limits<T>::lowest())) v = std::numeric_limits<T>::lowest();
      else if (value >= double(std::numeric_limits<T>::max())) v = std::numeric_limits<T>::max();
      else v = T(value);
    } else {
      v = T(value);
    }
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

template <typename U>
U bits_as(uint64_t bits) {
  U u;
  std::memcpy(&u, &bits, sizeof(U));  // the low bytes (little-endian hosts)
  return u;
}

// ---- strided copies (transpose, slice, slice_assign) ----------------------------------------

// A box of `sizes` elements at element `base` of a buffer, axis d stepping `strides[d]`.
struct StridedView {
  std::vector<int64_t> sizes, strides;
  int64_t base = 0;
};

// Drops size-1 axes and merges axis d into axis d-1 when the pair is contiguous
// (strides[d-1] == sizes[d] * strides[d]): the same elements in the same order.
StridedView simplify(const StridedView& v) {
  StridedView s;
  s.base = v.base;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] == 1) continue;
    if (!s.sizes.empty() && s.strides.back() == v.sizes[d] * v.strides[d]) {
      s.sizes.back() *= v.sizes[d];
      s.strides.back() = v.strides[d];
    } else {
      s.sizes.push_back(v.sizes[d]);
      s.strides.push_back(v.strides[d]);
    }
  }
  return s;
}

bool is_contiguous(const StridedView& v) {
  return v.sizes.empty() || (v.sizes.size() == 1 && v.strides[0] == 1);
}

cuda::StridedIndexer indexer_for(const StridedView& v, const char* op) {
  if (v.sizes.size() > size_t(kMaxDims)) {
    throw DeviceError(std::string("CUDA backend: ") + op + " of a tensor whose copy needs " +
                      std::to_string(v.sizes.size()) + " dimensions is not supported (at most " +
                      std::to_string(kMaxDims) + " after merging contiguous axes)");
  }
  cuda::StridedIndexer ix;
  ix.rank = int(v.sizes.size());
  for (int d = 0; d < ix.rank; ++d) {
    ix.sizes[d] = v.sizes[size_t(d)];
    ix.strides[d] = v.strides[size_t(d)];
  }
  return ix;
}

// kToDense: dense[i] = strided[base + offset(i)]; else strided[base + offset(i)] = dense[i].
template <typename U, bool kToDense>
__global__ void strided_copy_kernel(const U* src, U* dst, cuda::StridedIndexer ix, int64_t base,
                                    int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    const int64_t off = base + ix.offset(i);
    if constexpr (kToDense) dst[i] = src[off];
    else dst[off] = src[i];
  }
}

// Copies between a dense tensor and a strided view of another (same dtype). to_dense: view ->
// dense (transpose, slice); otherwise dense -> view (slice_assign).
void strided_copy(const Tensor& dense, const Tensor& other, const StridedView& view,
                  bool to_dense, const char* op) {
  const int64_t n = dense.numel();
  if (n == 0) return;
  const Device device = dense.device();
  const size_t es = dtype_size(dense.dtype());
  char* pd = static_cast<char*>(dense.raw_data());
  char* po = static_cast<char*>(other.raw_data());
  const StridedView v = simplify(view);
  if (is_contiguous(v)) {
    char* p = po + size_t(v.base) * es;
    if (to_dense) copy_device(pd, p, size_t(n) * es, device);
    else copy_device(p, pd, size_t(n) * es, device);
    return;
  }
  const cuda::StridedIndexer ix = indexer_for(v, op);
  visit_element_size(es, [&](auto tag) {
    using U = decltype(tag);
    U* dense_p = reinterpret_cast<U*>(pd);
    U* other_p = reinterpret_cast<U*>(po);
    cudaStream_t stream = cuda::stream(device);
    if (to_dense) {
      strided_copy_kernel<U, true><<<cuda::blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          other_p, dense_p, ix, v.base, n);
    } else {
      strided_copy_kernel<U, false><<<cuda::blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          dense_p, other_p, ix, v.base, n);
    }
    cuda::check_launch("strided_copy_kernel", device.index);
  });
}

// [batch, m, n] -> [batch, n, m] through a shared-memory tile, so that both the reads and the
// writes are coalesced. The tile's padding column keeps the column reads free of bank conflicts.
template <typename U>
__global__ void transpose_tiled_kernel(const U* in, U* out, int64_t batch, int64_t m, int64_t n) {
  __shared__ U tile[kTile][kTile + 1];
  const int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
  const int64_t tiles = batch * tiles_m * tiles_n;
  // The tile is the same for the whole block, so every thread reaches the barriers.
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t b = t / (tiles_m * tiles_n), rest = t - b * tiles_m * tiles_n;
    const int64_t i0 = (rest / tiles_n) * kTile, j0 = (rest % tiles_n) * kTile;
    const U* src = in + b * m * n;
    U* dst = out + b * m * n;
    // Read rows i0.. of the input: consecutive threads take consecutive columns j.
    for (int k = int(threadIdx.y); k < kTile; k += kTileRows) {
      const int64_t i = i0 + k, j = j0 + threadIdx.x;
      if (i < m && j < n) tile[k][threadIdx.x] = src[i * n + j];
    }
    __syncthreads();
    // Write rows j0.. of the output: out[j][i] = in[i][j], consecutive threads take consecutive i.
    for (int k = int(threadIdx.y); k < kTile; k += kTileRows) {
      const int64_t j = j0 + k, i = i0 + threadIdx.x;
      if (j < n && i < m) dst[j * m + i] = tile[threadIdx.x][k];
    }
    __syncthreads();  // the tile is refilled for the next t
  }
}

// ---- concat, pad ------------------------------------------------------------------------------

// One input of a concat: `rows` runs of `chunk` elements, run o going to dst[o * dst_row + offset].
template <typename U>
__global__ void concat_kernel(const U* src, U* dst, int64_t n, int64_t chunk, int64_t dst_row,
                              int64_t offset) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    const int64_t o = i / chunk;
    dst[o * dst_row + offset + (i - o * chunk)] = src[i];
  }
}

// Where each output element of a pad comes from.
struct PadIndexer {
  int rank = 0;
  int64_t out_sizes[kMaxDims] = {};
  int64_t before[kMaxDims] = {};
  int64_t in_sizes[kMaxDims] = {};

  // x's element offset for output element `linear`, or -1 inside the padding.
  __device__ __forceinline__ int64_t source(int64_t linear) const {
    int64_t off = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = linear % out_sizes[d] - before[d];
      linear /= out_sizes[d];
      if (c < 0 || c >= in_sizes[d]) return -1;
      off += c * stride;
      stride *= in_sizes[d];
    }
    return off;
  }
};

// Drops axes of size 1 on both sides and merges an unpadded axis into the one before it (its
// coordinate then just extends the previous axis'), as the strided copies do.
PadIndexer pad_indexer(const Shape& in, const Shape& out, const std::vector<int64_t>& before) {
  std::vector<int64_t> o, b, x;
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t od = out[d], xd = in[d], bd = before[size_t(d)];
    const bool unpadded = bd == 0 && xd == od;
    if (unpadded && od == 1) continue;
    if (unpadded && !o.empty()) {
      o.back() *= od;
      x.back() *= xd;
      b.back() *= od;
    } else {
      o.push_back(od);
      x.push_back(xd);
      b.push_back(bd);
    }
  }
  if (o.size() > size_t(kMaxDims)) {
    throw DeviceError("CUDA backend: pad of shape " + in.to_string() + " to " + out.to_string() +
                      " needs " + std::to_string(o.size()) + " dimensions after merging unpadded "
                      "axes; at most " + std::to_string(kMaxDims) + " are supported");
  }
  PadIndexer ix;
  ix.rank = int(o.size());
  for (int d = 0; d < ix.rank; ++d) {
    ix.out_sizes[d] = o[size_t(d)];
    ix.before[d] = b[size_t(d)];
    ix.in_sizes[d] = x[size_t(d)];
  }
  return ix;
}

template <typename U>
__global__ void pad_kernel(const U* x, U* out, PadIndexer ix, U value, int64_t n) {
  STRATA_GRID_STRIDE_LOOP(i, n) {
    const int64_t src = ix.source(i);
    out[i] = src < 0 ? value : x[src];
  }
}

// ---- gather, scatter_add, one_hot -------------------------------------------------------------

// Rows between a table [outer, n, inner] and its rows [outer, count, inner] at idx[0..count).
// Gather: rows = table at idx; an index outside [0, n) (the op front-ends reject them) gives
// zeros instead of a read out of bounds. Scatter (scatter_update, unique indices): table at idx
// = rows; an index outside [0, n) writes nothing.
template <bool kScatter, typename U, typename I>
__global__ void indexed_rows_kernel(const U* src, const I* idx, U* dst, int64_t total,
                                    int64_t count, int64_t n, int64_t inner) {
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t t = i / inner, r = i - t * inner;
    const int64_t o = t / count, j = t - o * count;
    const int64_t k = int64_t(idx[j]);
    const bool in_range = k >= 0 && k < n;
    const int64_t table_at = (o * n + k) * inner + r;
    if constexpr (kScatter) {
      if (in_range) dst[table_at] = src[i];
    } else {
      dst[i] = in_range ? src[table_at] : U(0);
    }
  }
}

// *addr += v atomically, wrapping for integers as the CPU does.
__device__ __forceinline__ void atomic_add(float* addr, float v) { atomicAdd(addr, v); }
__device__ __forceinline__ void atomic_add(double* addr, double v) { atomicAdd(addr, v); }
__device__ __forceinline__ void atomic_add(__half* addr, __half v) { atomicAdd(addr, v); }
__device__ __forceinline__ void atomic_add(__nv_bfloat16* addr, __nv_bfloat16 v) {
  atomicAdd(addr, v);
}
__device__ __forceinline__ void atomic_add(int32_t* addr, int32_t v) {
  atomicAdd(reinterpret_cast<int*>(addr), int(v));
}
__device__ __forceinline__ void atomic_add(int64_t* addr, int64_t v) {
  static_assert(sizeof(unsigned long long) == sizeof(int64_t), "64-bit atomics");
  atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
}
// Bytes have no atomic add: compare-and-swap the aligned 32-bit word that holds the byte,
// changing only that byte. Allocations are at least 4-byte aligned, so the word lies inside
// the tensor's allocation.
__device__ __forceinline__ void atomic_add(uint8_t* addr, uint8_t v) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  unsigned* word = reinterpret_cast<unsigned*>(a & ~uintptr_t(3));
  const unsigned shift = unsigned(a & 3u) * 8u;
  unsigned old = *reinterpret_cast<volatile unsigned*>(word), assumed;
  do {
    assumed = old;
    const unsigned byte = ((assumed >> shift) + unsigned(v)) & 0xffu;
    old = atomicCAS(word, assumed, (assumed & ~(0xffu << shift)) | (byte << shift));
  } while (old != assumed);
}
// bool "addition" is logical or (as the CPU): set the byte to 1 in its word.
__device__ __forceinline__ void atomic_add(bool* addr, bool v) {
  if (!v) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  unsigned* word = reinterpret_cast<unsigned*>(a & ~uintptr_t(3));
  atomicOr(word, 1u << (unsigned(a & 3u) * 8u));
}

// out [outer, n, inner] += updates [outer, count, inner] at rows idx[0..count); rows named
// several times accumulate (the order of the additions is not fixed). Indices outside [0, n)
// are skipped.
template <typename T, typename I>
__global__ void scatter_add_kernel(const T* updates, const I* idx, T* out, int64_t total,
                                   int64_t count, int64_t n, int64_t inner) {
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t t = i / inner, r = i - t * inner;
    const int64_t o = t / count, j = t - o * count;
    const int64_t k = int64_t(idx[j]);
    if (k < 0 || k >= n) continue;
    atomic_add(out + (o * n + k) * inner + r, updates[i]);
  }
}

// out [count, depth]: on where the column is the index, off elsewhere (everywhere for an index
// outside [0, depth)).
template <typename U, typename I>
__global__ void one_hot_kernel(const I* idx, U* out, int64_t total, int64_t depth, U on, U off) {
  STRATA_GRID_STRIDE_LOOP(i, total) {
    const int64_t j = i / depth, k = i - j * depth;
    out[i] = int64_t(idx[j]) == k ? on : off;
  }
}

// Splits a shape around `axis` into [outer, n, inner].
void split_axis(const Shape& s, int axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.rank(); ++i) inner *= s[i];
  n = s[axis];
}

// The box of `small`'s shape at `begin` inside the row-major `big`, as a strided view of big.
StridedView box_view(const Shape& small, const Shape& big, const std::vector<int64_t>& begin) {
  StridedView v;
  const std::vector<int64_t> strides = big.strides();
  for (int d = 0; d < small.rank(); ++d) {
    v.sizes.push_back(small[d]);
    v.strides.push_back(strides[size_t(d)]);
    v.base += begin[size_t(d)] * strides[size_t(d)];
  }
  return v;
}

}  // namespace

void CudaBackend::transpose(const Tensor& x, const std::vector<int>& perm, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  if (x.numel() == 0) return;
  // out's axis k walks x's axis perm[k]: out is a dense copy of a strided view of x.
  const std::vector<int64_t> in_strides = x.shape().strides();
  StridedView view;
  for (int k = 0; k < x.rank(); ++k) {
    view.sizes.push_back(x.shape()[perm[size_t(k)]]);
    view.strides.push_back(in_strides[size_t(perm[size_t(k)])]);
  }
  const StridedView v = simplify(view);
  // After merging, swapping the last two axes of [batch, m, n] reads as out sizes (batch, n, m)
  // with strides (m*n, 1, n), or without the batch axis.
  const size_t r = v.sizes.size();
  const bool swap_last_two = (r == 2 || r == 3) && v.strides[r - 2] == 1 &&
                             v.strides[r - 1] == v.sizes[r - 2] &&
                             (r == 2 || v.strides[0] == v.sizes[1] * v.sizes[2]);
  if (swap_last_two && v.sizes[r - 1] >= kMinTiled && v.sizes[r - 2] >= kMinTiled) {
    const int64_t batch = r == 3 ? v.sizes[0] : 1, m = v.sizes[r - 1], n = v.sizes[r - 2];
    const Device device = out.device();
    visit_element_size(dtype_size(x.dtype()), [&](auto tag) {
      using U = decltype(tag);
      const int64_t tiles = batch * ((m + kTile - 1) / kTile) * ((n + kTile - 1) / kTile);
      transpose_tiled_kernel<<<cuda::blocks_for(tiles, 1), dim3(kTile, kTileRows), 0,
                               cuda::stream(device)>>>(cuda::device_ptr<const U>(x),
                                                       cuda::device_ptr<U>(out), batch, m, n);
      cuda::check_launch("transpose_tiled_kernel", device.index);
    });
    return;
  }
  strided_copy(out, x, view, /*to_dense=*/true, "transpose");
}

void CudaBackend::concat(const std::vector<Tensor>& xs, int axis, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  if (out.numel() == 0) return;
  const Device device = out.device();
  int64_t outer, total, inner;
  split_axis(out.shape(), axis, outer, total, inner);
  const size_t es = dtype_size(out.dtype());
  int64_t offset = 0;  // along `axis`
  for (const Tensor& x : xs) {
    const int64_t d = x.shape()[axis], chunk = d * inner;
    if (chunk == 0) continue;
    if (outer == 1) {
      copy_device(static_cast<char*>(out.raw_data()) + size_t(offset * inner) * es, x.raw_data(),
                  size_t(chunk) * es, device);
    } else {
      visit_element_size(es, [&](auto tag) {
        using U = decltype(tag);
        concat_kernel<<<cuda::blocks_for(outer * chunk), kThreadsPerBlock, 0,
                        cuda::stream(device)>>>(cuda::device_ptr<const U>(x),
                                                cuda::device_ptr<U>(out), outer * chunk, chunk,
                                                total * inner, offset * inner);
        cuda::check_launch("concat_kernel", device.index);
      });
    }
    offset += d;
  }
}

void CudaBackend::slice(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  strided_copy(out, x, box_view(out.shape(), x.shape(), begin), /*to_dense=*/true, "slice");
}

void CudaBackend::slice_assign(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  strided_copy(x, out, box_view(x.shape(), out.shape(), begin), /*to_dense=*/false,
               "slice_assign");
}

void CudaBackend::pad(const Tensor& x, const std::vector<int64_t>& pad_before, double value,
                      Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int64_t n = out.numel();
  if (n == 0) return;
  const Device device = out.device();
  const PadIndexer ix = pad_indexer(x.shape(), out.shape(), pad_before);
  const uint64_t bits = value_bits(value, out.dtype());
  visit_element_size(dtype_size(out.dtype()), [&](auto tag) {
    using U = decltype(tag);
    pad_kernel<<<cuda::blocks_for(n), kThreadsPerBlock, 0, cuda::stream(device)>>>(
        cuda::device_ptr<const U>(x), cuda::device_ptr<U>(out), ix, bits_as<U>(bits), n);
    cuda::check_launch("pad_kernel", device.index);
  });
}

namespace {

// Launches indexed_rows_kernel over the rows [outer, count, inner] of a table of `table_shape`.
template <bool kScatter>
void copy_indexed_rows(const Tensor& src, const Tensor& indices, int axis, Tensor& dst,
                       const Shape& table_shape, int64_t total, const char* op) {
  const Device device = dst.device();
  int64_t outer, n, inner;
  split_axis(table_shape, axis, outer, n, inner);
  const int64_t count = indices.numel();
  visit_index_dtype(indices.dtype(), op, [&](auto itag) {
    using I = decltype(itag);
    visit_element_size(dtype_size(dst.dtype()), [&](auto tag) {
      using U = decltype(tag);
      indexed_rows_kernel<kScatter>
          <<<cuda::blocks_for(total), kThreadsPerBlock, 0, cuda::stream(device)>>>(
              cuda::device_ptr<const U>(src), cuda::device_ptr<const I>(indices),
              cuda::device_ptr<U>(dst), total, count, n, inner);
      cuda::check_launch(op, device.index);
    });
  });
}

}  // namespace

void CudaBackend::gather(const Tensor& params, const Tensor& indices, int axis, Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int64_t total = out.numel();
  if (total == 0) return;
  copy_indexed_rows<false>(params, indices, axis, out, params.shape(), total, "gather");
}

void CudaBackend::scatter_add(const Tensor& updates, const Tensor& indices, int axis,
                              Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int64_t total = updates.numel();
  if (total == 0) return;
  const Device device = out.device();
  int64_t outer, n, inner;
  split_axis(out.shape(), axis, outer, n, inner);
  const int64_t count = indices.numel();
  visit_index_dtype(indices.dtype(), "scatter_add", [&](auto itag) {
    using I = decltype(itag);
    cuda::visit_cuda_dtype(out.dtype(), [&](auto tag) {
      using T = decltype(tag);
      scatter_add_kernel<<<cuda::blocks_for(total), kThreadsPerBlock, 0, cuda::stream(device)>>>(
          cuda::device_ptr<const T>(updates), cuda::device_ptr<const I>(indices),
          cuda::device_ptr<T>(out), total, count, n, inner);
      cuda::check_launch("scatter_add_kernel", device.index);
    });
  });
}

void CudaBackend::scatter_update(const Tensor& updates, const Tensor& indices, int axis,
                                 Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int64_t total = updates.numel();
  if (total == 0) return;
  copy_indexed_rows<true>(updates, indices, axis, out, out.shape(), total, "scatter_update");
}

void CudaBackend::one_hot(const Tensor& indices, int64_t depth, double on, double off,
                          Tensor& out) {
  cuda::DeviceGuard guard(out.device());
  const int64_t total = out.numel();
  if (total == 0) return;
  const Device device = out.device();
  const uint64_t on_bits = value_bits(on, out.dtype()), off_bits = value_bits(off, out.dtype());
  visit_index_dtype(indices.dtype(), "one_hot", [&](auto itag) {
    using I = decltype(itag);
    visit_element_size(dtype_size(out.dtype()), [&](auto tag) {
      using U = decltype(tag);
      one_hot_kernel<<<cuda::blocks_for(total), kThreadsPerBlock, 0, cuda::stream(device)>>>(
          cuda::device_ptr<const I>(indices), cuda::device_ptr<U>(out), total, depth,
          bits_as<U>(on_bits), bits_as<U>(off_bits));
      cuda::check_launch("one_hot_kernel", device.index);
    });
  });
}

}  // namespace strata
