// Data movement on the CPU: transpose, concat, slice, pad, gather, scatter_add, one_hot.
// Pure copies move elements as same-sized unsigned integers (dtype-agnostic) and memcpy
// contiguous runs; only scatter_add and one_hot need the real dtype.
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {

constexpr int64_t kTile = 32;  // transpose tile edge: a 32x32 tile of floats fits in L1

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

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(work_per_item, 1));
}

// Calls fn(index_type_tag) for the integer dtypes that may hold indices.
template <typename Fn>
void visit_index_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kInt32: fn(int32_t{}); return;
    case DType::kInt64: fn(int64_t{}); return;
    case DType::kUInt8: fn(uint8_t{}); return;
    default:
      throw DTypeError(std::string("indices must be int32 or int64, got ") + dtype_name(dtype));
  }
}

// Copies between `big` and a box of `small`'s shape at `begin` inside it, by rows of the last
// axis. to_small: slice (big -> small); otherwise slice_assign (small -> big).
void copy_box(const Tensor& small_t, const Tensor& big_t, const std::vector<int64_t>& begin,
              bool to_small) {
  const int r = small_t.rank();
  const size_t es = dtype_size(small_t.dtype());
  char* small = static_cast<char*>(small_t.raw_data());
  char* big = static_cast<char*>(big_t.raw_data());
  if (small_t.numel() == 0) return;
  if (r == 0) {
    if (to_small) std::memcpy(small, big, es);
    else std::memcpy(big, small, es);
    return;
  }
  const std::vector<int64_t> big_strides = big_t.shape().strides();
  const int64_t row_len = small_t.shape()[r - 1];
  const int64_t rows = small_t.numel() / row_len;
  cpu::parallel_for(rows, grain_for(row_len), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, off = begin[size_t(r - 1)];
      for (int d = r - 2; d >= 0; --d) {
        const int64_t i = rem % small_t.shape()[d];
        rem /= small_t.shape()[d];
        off += (i + begin[size_t(d)]) * big_strides[size_t(d)];
      }
      char* s = small + size_t(row * row_len) * es;
      char* g = big + size_t(off) * es;
      if (to_small) std::memcpy(s, g, size_t(row_len) * es);
      else std::memcpy(g, s, size_t(row_len) * es);
    }
  });
}

// [batch, m, n] -> [batch, n, m] in cache-friendly tiles.
template <typename U>
void transpose_last_two(const U* in, U* out, int64_t batch, int64_t m, int64_t n) {
  const int64_t tm = (m + kTile - 1) / kTile, tn = (n + kTile - 1) / kTile;
  cpu::parallel_for(batch * tm * tn, grain_for(kTile * kTile), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t bi = t / (tm * tn), ti = (t / tn) % tm, tj = t % tn;
      const U* src = in + bi * m * n;
      U* dst = out + bi * m * n;
      const int64_t i_end = std::min(m, (ti + 1) * kTile), j_end = std::min(n, (tj + 1) * kTile);
      for (int64_t i = ti * kTile; i < i_end; ++i) {
        for (int64_t j = tj * kTile; j < j_end; ++j) dst[j * m + i] = src[i * n + j];
      }
    }
  });
}

template <typename U>
void transpose_general(const U* in, U* out, const Shape& in_shape, const std::vector<int>& perm) {
  const int r = in_shape.rank();
  const std::vector<int64_t> in_strides = in_shape.strides();
  std::vector<int64_t> out_dims(static_cast<size_t>(r)), src_strides(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) {
    out_dims[size_t(i)] = in_shape[perm[size_t(i)]];
    src_strides[size_t(i)] = in_strides[size_t(perm[size_t(i)])];
  }
  const int64_t row_len = out_dims[size_t(r - 1)], step = src_strides[size_t(r - 1)];
  const int64_t rows = in_shape.numel() / row_len;
  cpu::parallel_for(rows, grain_for(row_len), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, off = 0;
      for (int d = r - 2; d >= 0; --d) {
        const int64_t i = rem % out_dims[size_t(d)];
        rem /= out_dims[size_t(d)];
        off += i * src_strides[size_t(d)];
      }
      const U* src = in + off;
      U* dst = out + row * row_len;
      if (step == 1) {
        std::memcpy(dst, src, size_t(row_len) * sizeof(U));
      } else {
        for (int64_t j = 0; j < row_len; ++j) dst[j] = src[j * step];
      }
    }
  });
}

// Splits a shape around `axis` into [outer, n, inner].
void split_axis(const Shape& s, int axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.rank(); ++i) inner *= s[i];
  n = s[axis];
}

template <typename T>
T value_as(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(float(v));
  } else if constexpr (std::is_integral_v<T>) {  // saturate: out-of-range casts are UB
    if (!(v == v)) return T(0);
    if (v <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
  } else {
    return T(v);
  }
}

// dst += src elementwise in dst's dtype (wrapping for integers, or for bool).
template <typename T>
void add_into(T* dst, const T* src, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] || src[i];
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    for (int64_t i = 0; i < n; ++i) dst[i] = T(float(dst[i]) + float(src[i]));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    for (int64_t i = 0; i < n; ++i) dst[i] = T(U(U(dst[i]) + U(src[i])));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
}

}  // namespace

void CpuBackend::transpose(const Tensor& x, const std::vector<int>& perm, Tensor& out) {
  const int r = x.rank();
  if (x.numel() == 0) return;
  if (r <= 1) {
    std::memcpy(out.raw_data(), x.raw_data(), x.nbytes());
    return;
  }
  bool swaps_last_two = perm[size_t(r - 1)] == r - 2 && perm[size_t(r - 2)] == r - 1;
  for (int i = 0; i < r - 2 && swaps_last_two; ++i) swaps_last_two = perm[size_t(i)] == i;
  visit_element_size(dtype_size(x.dtype()), [&](auto tag) {
    using U = decltype(tag);
    const U* in = static_cast<const U*>(x.raw_data());
    U* o = static_cast<U*>(out.raw_data());
    if (swaps_last_two) {
      const int64_t m = x.shape()[r - 2], n = x.shape()[r - 1];
      transpose_last_two(in, o, x.numel() / (m * n), m, n);
    } else {
      transpose_general(in, o, x.shape(), perm);
    }
  });
}

void CpuBackend::concat(const std::vector<Tensor>& xs, int axis, Tensor& out) {
  if (out.numel() == 0) return;
  int64_t outer, total, inner;
  split_axis(out.shape(), axis, outer, total, inner);
  const size_t es = dtype_size(out.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  int64_t offset = 0;  // along `axis`
  for (const Tensor& x : xs) {
    const int64_t d = x.shape()[axis];
    const size_t chunk = size_t(d * inner) * es;
    const char* src = static_cast<const char*>(x.raw_data());
    if (chunk != 0) {
      cpu::parallel_for(outer, grain_for(d * inner), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          std::memcpy(dst + size_t((o * total + offset) * inner) * es, src + size_t(o) * chunk, chunk);
        }
      });
    }
    offset += d;
  }
}

void CpuBackend::slice(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) {
  copy_box(out, x, begin, /*to_small=*/true);
}

void CpuBackend::slice_assign(const Tensor& x, const std::vector<int64_t>& begin, Tensor& out) {
  copy_box(x, out, begin, /*to_small=*/false);
}

void CpuBackend::pad(const Tensor& x, const std::vector<int64_t>& pad_before, double value,
                     Tensor& out) {
  fill(out, value);
  slice_assign(x, pad_before, out);
}

namespace {

// Copies rows between a table ([outer, n, inner] around the indexed axis) and its rows ([outer,
// count, inner]): rows[o, j] = table[o, idx[j]] (gather, src the table) or the reverse
// (scatter_update, src the rows; its indices are unique, so no two tasks write one row).
enum class RowCopy { kGather, kScatter };
void copy_indexed_rows(RowCopy direction, const Shape& table_shape, DType dtype,
                       const Tensor& indices, int axis, const void* src, void* dst) {
  int64_t outer, n, inner;
  split_axis(table_shape, axis, outer, n, inner);
  const int64_t count = indices.numel();
  const size_t row_bytes = size_t(inner) * dtype_size(dtype);
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  visit_index_dtype(indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* idx = static_cast<const I*>(indices.raw_data());
    cpu::parallel_for(outer * count, grain_for(inner), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / count, j = t % count;
        const size_t table_at = size_t(o * n + int64_t(idx[j])) * row_bytes;
        const size_t rows_at = size_t(t) * row_bytes;
        if (direction == RowCopy::kGather) {
          std::memcpy(to + rows_at, from + table_at, row_bytes);
        } else {
          std::memcpy(to + table_at, from + rows_at, row_bytes);
        }
      }
    });
  });
}

}  // namespace

void CpuBackend::gather(const Tensor& params, const Tensor& indices, int axis, Tensor& out) {
  if (out.numel() == 0) return;
  copy_indexed_rows(RowCopy::kGather, params.shape(), params.dtype(), indices, axis,
                    params.raw_data(), out.raw_data());
}

void CpuBackend::scatter_add(const Tensor& updates, const Tensor& indices, int axis, Tensor& out) {
  if (updates.numel() == 0) return;
  int64_t outer, n, inner;
  split_axis(out.shape(), axis, outer, n, inner);
  const int64_t count = indices.numel();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* upd = static_cast<const T*>(updates.raw_data());
    T* dst = static_cast<T*>(out.raw_data());
    visit_index_dtype(indices.dtype(), [&](auto itag) {
      using I = decltype(itag);
      const I* idx = static_cast<const I*>(indices.raw_data());
      // Each task owns a range of destination rows and applies, in index order, the updates
      // that land there: no two threads touch one row, and each row's sum order is fixed.
      const int64_t work = outer * count * inner;
      cpu::parallel_for(n, work < cpu::kParallelGrain ? n : 1, [&](int64_t b, int64_t e) {
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t j = 0; j < count; ++j) {
            const int64_t row = int64_t(idx[j]);
            if (row < b || row >= e) continue;
            add_into(dst + (o * n + row) * inner, upd + (o * count + j) * inner, inner);
          }
        }
      });
    });
  });
}

void CpuBackend::scatter_update(const Tensor& updates, const Tensor& indices, int axis,
                                Tensor& out) {
  if (updates.numel() == 0) return;
  copy_indexed_rows(RowCopy::kScatter, out.shape(), out.dtype(), indices, axis,
                    updates.raw_data(), out.raw_data());
}

void CpuBackend::one_hot(const Tensor& indices, int64_t depth, double on, double off, Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t count = indices.numel();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T on_v = value_as<T>(on), off_v = value_as<T>(off);
    T* dst = static_cast<T*>(out.raw_data());
    visit_index_dtype(indices.dtype(), [&](auto itag) {
      using I = decltype(itag);
      const I* idx = static_cast<const I*>(indices.raw_data());
      cpu::parallel_for(count, grain_for(depth), [&](int64_t b, int64_t e) {
        for (int64_t j = b; j < e; ++j) {
          T* row = dst + j * depth;
          for (int64_t k = 0; k < depth; ++k) row[k] = off_v;
          const int64_t i = int64_t(idx[j]);
          if (i >= 0 && i < depth) row[i] = on_v;
        }
      });
    });
  });
}

}  // namespace strata
