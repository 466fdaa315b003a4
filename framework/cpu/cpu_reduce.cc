// Reductions, arg-reductions and softmax on the CPU.
//
// Determinism: every output element is computed by one thread, from its inputs in a fixed order.
// Long rows are cut into fixed-size blocks (kBlock elements, independent of the thread count);
// block partials are computed in parallel and then combined sequentially, so the result is
// bit-identical for any number of threads.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "framework/cpu/cpu_backend.h"
#include "framework/cpu/parallel.h"

namespace strata {
namespace {

constexpr int64_t kBlock = 16384;  // elements per partial sum of a long row
constexpr int kLanes = 16;         // independent accumulators: lets the compiler vectorise
constexpr int64_t kColumnChunk = 512;

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Accumulator type: float for float32 and the 16-bit floats, double for float64, int64 (with
// wrapping arithmetic) for integers and bool.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_floating_point_v<T> || kIsHalfLike<T>,
                                                  float, int64_t>>;

template <typename T>
T store(Acc<T> v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (kIsHalfLike<T>) {
    return T(float(v));
  } else {
    return static_cast<T>(v);  // int64 -> narrower integer is modular
  }
}

template <typename T>
struct SumOp {
  using A = Acc<T>;
  static A identity() { return A(0); }
  static A step(A a, A v) {
    if constexpr (std::is_integral_v<A>) {
      return A(uint64_t(a) + uint64_t(v));
    } else {
      return a + v;
    }
  }
};
template <typename T>
struct ProdOp {
  using A = Acc<T>;
  static A identity() { return A(1); }
  static A step(A a, A v) {
    if constexpr (std::is_integral_v<A>) {
      return A(uint64_t(a) * uint64_t(v));
    } else {
      return a * v;
    }
  }
};
// max / min propagate NaN (numpy semantics); the identity is -inf / +inf (lowest / max for
// integers), which is what an empty reduction returns, as in TensorFlow.
template <typename T>
struct MaxOp {
  using A = Acc<T>;
  static A identity() {
    if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
    else if constexpr (std::is_same_v<T, bool>) return 0;
    else return A(std::numeric_limits<T>::lowest());
  }
  // Bitwise | (not ||) keeps the select branch-free, so the lane loop vectorises.
  static A step(A a, A v) { return ((v > a) | (v != v)) ? v : a; }
};
template <typename T>
struct MinOp {
  using A = Acc<T>;
  static A identity() {
    if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
    else if constexpr (std::is_same_v<T, bool>) return 1;
    else return A(std::numeric_limits<T>::max());
  }
  static A step(A a, A v) { return ((v < a) | (v != v)) ? v : a; }
};
template <typename T>
struct AnyOp {
  using A = Acc<T>;
  static A identity() { return A(0); }
  static A step(A a, A v) { return A(a != A(0) || v != A(0)); }
};
template <typename T>
struct AllOp {
  using A = Acc<T>;
  static A identity() { return A(1); }
  static A step(A a, A v) { return A(a != A(0) && v != A(0)); }
};

// Reduces n contiguous elements in a fixed order (lane j takes elements j, j+16, ...; then the
// lanes and the tail are combined in order).
template <typename Op, typename T>
Acc<T> reduce_contiguous(const T* p, int64_t n) {
  using A = Acc<T>;
  A lanes[kLanes];
  for (int j = 0; j < kLanes; ++j) lanes[j] = Op::identity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] = Op::step(lanes[j], A(p[i + j]));
  }
  A acc = Op::identity();
  for (int j = 0; j < kLanes; ++j) acc = Op::step(acc, lanes[j]);
  for (; i < n; ++i) acc = Op::step(acc, A(p[i]));
  return acc;
}

template <typename T>
T finish(ReduceOp op, Acc<T> acc, int64_t count) {
  using A = Acc<T>;
  if (op == ReduceOp::kMean) {
    if constexpr (std::is_integral_v<A>) {
      return store<T>(count > 0 ? A(acc / count) : A(0));
    } else {
      return store<T>(acc / A(count));  // 0/0 = NaN for an empty mean, as numpy
    }
  }
  return store<T>(acc);
}

// x viewed as [rows, len], each row reduced to out[row].
template <typename Op, typename T>
void reduce_rows(ReduceOp op, const T* x, int64_t rows, int64_t len, T* out) {
  using A = Acc<T>;
  const int64_t blocks = (len + kBlock - 1) / kBlock;
  if (blocks <= 1) {
    const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(len, 1));
    cpu::parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        out[r] = finish<T>(op, reduce_contiguous<Op>(x + r * len, len), len);
      }
    });
    return;
  }
  std::vector<A> partial(size_t(rows * blocks));
  cpu::parallel_for(rows * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t r = t / blocks, blk = t % blocks;
      const int64_t start = blk * kBlock, n = std::min(kBlock, len - start);
      partial[size_t(t)] = reduce_contiguous<Op>(x + r * len + start, n);
    }
  });
  for (int64_t r = 0; r < rows; ++r) {
    A acc = Op::identity();
    for (int64_t blk = 0; blk < blocks; ++blk) acc = Op::step(acc, partial[size_t(r * blocks + blk)]);
    out[r] = finish<T>(op, acc, len);
  }
}

// x viewed as [outer, len, inner]; reduces the middle axis. Each task owns a chunk of columns
// of one outer index and walks the reduced axis in order, accumulating a vector of columns.
template <typename Op, typename T>
void reduce_columns(ReduceOp op, const T* x, int64_t outer, int64_t len, int64_t inner, T* out) {
  using A = Acc<T>;
  const int64_t chunks = (inner + kColumnChunk - 1) / kColumnChunk;
  const int64_t work_per_task = len * std::min(inner, kColumnChunk);
  const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(work_per_task, 1));
  cpu::parallel_for(outer * chunks, grain, [&](int64_t begin, int64_t end) {
    A acc[kColumnChunk];
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / chunks, c0 = (t % chunks) * kColumnChunk;
      const int64_t w = std::min(kColumnChunk, inner - c0);
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::identity();
      const T* base = x + o * len * inner + c0;
      for (int64_t r = 0; r < len; ++r) {
        const T* row = base + r * inner;
        for (int64_t j = 0; j < w; ++j) acc[j] = Op::step(acc[j], A(row[j]));
      }
      T* dst = out + o * inner + c0;
      for (int64_t j = 0; j < w; ++j) dst[j] = finish<T>(op, acc[j], len);
    }
  });
}

template <typename Op, typename T>
void reduce_typed(ReduceOp op, CpuBackend& backend, const Tensor& x, const std::vector<int>& axes,
                  Tensor& out) {
  T* po = static_cast<T*>(out.raw_data());
  if (out.numel() == 0) return;
  if (x.numel() == 0) {  // reducing over an empty axis: the identity
    const T v = finish<T>(op, Op::identity(), 0);
    for (int64_t i = 0; i < out.numel(); ++i) po[i] = v;
    return;
  }
  // Group consecutive axes by kind (reduced or kept), ignoring size-1 axes.
  std::vector<bool> reduced(size_t(x.rank()), false);
  for (int a : axes) reduced[size_t(a)] = true;
  std::vector<std::pair<int64_t, bool>> groups;
  for (int i = 0; i < x.rank(); ++i) {
    const int64_t d = x.shape()[i];
    if (d == 1) continue;
    if (!groups.empty() && groups.back().second == reduced[size_t(i)]) {
      groups.back().first *= d;
    } else {
      groups.push_back({d, reduced[size_t(i)]});
    }
  }
  int reduced_groups = 0;
  for (const auto& g : groups) reduced_groups += g.second;
  const T* px = static_cast<const T*>(x.raw_data());
  const int64_t len = x.numel() / out.numel();

  if (reduced_groups == 0 || (reduced_groups == 1 && groups.back().second)) {
    reduce_rows<Op>(op, px, out.numel(), len, po);
    return;
  }
  if (reduced_groups == 1) {  // [outer, len, inner] with the reduced group in the middle
    int64_t outer = 1, inner = 1;
    bool seen = false;
    for (const auto& g : groups) {
      if (g.second) seen = true;
      else if (seen) inner *= g.first;
      else outer *= g.first;
    }
    reduce_columns<Op>(op, px, outer, len, inner, po);
    return;
  }
  // Interleaved kept and reduced axes: move the reduced ones last (a copy), then reduce rows.
  std::vector<int> perm;
  std::vector<int64_t> permuted;
  for (int i = 0; i < x.rank(); ++i) {
    if (!reduced[size_t(i)]) perm.push_back(i);
  }
  for (int a : axes) perm.push_back(a);
  for (int p : perm) permuted.push_back(x.shape()[p]);
  Tensor moved = Tensor::empty(Shape(permuted), x.dtype(), x.device());
  backend.transpose(x, perm, moved);
  reduce_rows<Op>(op, static_cast<const T*>(moved.raw_data()), out.numel(), len, po);
}

// Splits x's shape around `axis` into [outer, n, inner].
void split_axis(const Shape& s, int axis, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int i = 0; i < axis; ++i) outer *= s[i];
  for (int i = axis + 1; i < s.rank(); ++i) inner *= s[i];
  n = s.rank() == 0 ? 1 : s[axis];
}

// True when v should replace the current best: strictly better, or the first NaN (NaN wins,
// as numpy.argmax).
template <typename A>
bool arg_better(ArgReduceOp op, A v, A best) {
  if (v != v) return best == best;
  return op == ArgReduceOp::kArgMax ? v > best : v < best;
}

template <typename T>
using SoftmaxAcc = std::conditional_t<std::is_same_v<T, double>, double, float>;

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& x, const std::vector<int>& axes, Tensor& out) {
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean: return reduce_typed<SumOp<T>, T>(op, *this, x, axes, out);
      case ReduceOp::kProd: return reduce_typed<ProdOp<T>, T>(op, *this, x, axes, out);
      case ReduceOp::kMax: return reduce_typed<MaxOp<T>, T>(op, *this, x, axes, out);
      case ReduceOp::kMin: return reduce_typed<MinOp<T>, T>(op, *this, x, axes, out);
      case ReduceOp::kAny: return reduce_typed<AnyOp<T>, T>(op, *this, x, axes, out);
      case ReduceOp::kAll: return reduce_typed<AllOp<T>, T>(op, *this, x, axes, out);
    }
  });
}

void CpuBackend::arg_reduce(ArgReduceOp op, const Tensor& x, int axis, Tensor& out) {
  int64_t outer, n, inner;
  split_axis(x.shape(), axis, outer, n, inner);
  int64_t* po = static_cast<int64_t*>(out.raw_data());
  if (out.numel() == 0) return;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = Acc<T>;
    const T* px = static_cast<const T*>(x.raw_data());
    const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(n * inner, 1));
    cpu::parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
      std::vector<A> best(static_cast<size_t>(inner));
      for (int64_t o = begin; o < end; ++o) {
        const T* base = px + o * n * inner;
        int64_t* dst = po + o * inner;
        for (int64_t j = 0; j < inner; ++j) {
          best[size_t(j)] = A(base[j]);
          dst[j] = 0;
        }
        for (int64_t k = 1; k < n; ++k) {
          const T* row = base + k * inner;
          for (int64_t j = 0; j < inner; ++j) {
            const A v = A(row[j]);
            if (arg_better(op, v, best[size_t(j)])) {
              best[size_t(j)] = v;
              dst[j] = k;
            }
          }
        }
      }
    });
  });
}

void CpuBackend::softmax(const Tensor& x, int axis, bool log, Tensor& out) {
  int64_t outer, n, inner;
  split_axis(x.shape(), axis, outer, n, inner);
  if (x.numel() == 0) return;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || kIsHalfLike<T>) {
      using A = SoftmaxAcc<T>;
      const T* px = static_cast<const T*>(x.raw_data());
      T* po = static_cast<T*>(out.raw_data());
      const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / (n * inner));
      cpu::parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
        std::vector<A> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner)), e(static_cast<size_t>(n * inner));
        std::vector<A> log_sum(static_cast<size_t>(inner)), inv_sum(static_cast<size_t>(inner));
        for (int64_t o = begin; o < end; ++o) {
          const T* src = px + o * n * inner;
          T* dst = po + o * n * inner;
          // Stable: subtract the max before exponentiating.
          for (int64_t j = 0; j < inner; ++j) {
            mx[size_t(j)] = -std::numeric_limits<A>::infinity();
            sum[size_t(j)] = 0;
          }
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t j = 0; j < inner; ++j) {
              const A v = A(src[k * inner + j]);
              if (v > mx[size_t(j)] || v != v) mx[size_t(j)] = v;
            }
          }
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t j = 0; j < inner; ++j) {
              // Keep exp(s) for softmax (one exp per element), s itself for log_softmax.
              const A s = A(src[k * inner + j]) - mx[size_t(j)];
              const A es = std::exp(s);
              e[size_t(k * inner + j)] = log ? s : es;
              sum[size_t(j)] += es;
            }
          }
          for (int64_t j = 0; j < inner; ++j) {
            log_sum[size_t(j)] = std::log(sum[size_t(j)]);
            inv_sum[size_t(j)] = A(1) / sum[size_t(j)];
          }
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t j = 0; j < inner; ++j) {
              const A s = e[size_t(k * inner + j)];
              const A v = log ? s - log_sum[size_t(j)] : s * inv_sum[size_t(j)];
              if constexpr (kIsHalfLike<T>) dst[k * inner + j] = T(float(v));
              else dst[k * inner + j] = T(v);
            }
          }
        }
      });
    } else {
      throw DTypeError(std::string("softmax: expected a floating dtype, got ") +
                       dtype_name(x.dtype()));
    }
  });
}

void CpuBackend::softmax_backward(const Tensor& y, const Tensor& dy, int axis, bool log,
                                  Tensor& dx) {
  int64_t outer, n, inner;
  split_axis(y.shape(), axis, outer, n, inner);
  if (y.numel() == 0) return;
  visit_dtype(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || kIsHalfLike<T>) {
      using A = SoftmaxAcc<T>;
      const T* py = static_cast<const T*>(y.raw_data());
      const T* pg = static_cast<const T*>(dy.raw_data());
      T* pd = static_cast<T*>(dx.raw_data());
      const int64_t grain = std::max<int64_t>(1, cpu::kParallelGrain / (n * inner));
      cpu::parallel_for(outer, grain, [&](int64_t begin, int64_t end) {
        std::vector<A> dot(static_cast<size_t>(inner));
        for (int64_t o = begin; o < end; ++o) {
          const int64_t base = o * n * inner;
          // softmax: dx = y * (dy - sum(dy * y)); log_softmax: dx = dy - exp(y) * sum(dy).
          for (int64_t j = 0; j < inner; ++j) dot[size_t(j)] = 0;
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t j = 0; j < inner; ++j) {
              const int64_t i = base + k * inner + j;
              dot[size_t(j)] += log ? A(pg[i]) : A(pg[i]) * A(py[i]);
            }
          }
          for (int64_t k = 0; k < n; ++k) {
            for (int64_t j = 0; j < inner; ++j) {
              const int64_t i = base + k * inner + j;
              const A g = A(pg[i]), yv = A(py[i]);
              const A v = log ? g - std::exp(yv) * dot[size_t(j)] : yv * (g - dot[size_t(j)]);
              if constexpr (kIsHalfLike<T>) pd[i] = T(float(v));
              else pd[i] = T(v);
            }
          }
        }
      });
    } else {
      throw DTypeError(std::string("softmax_backward: expected a floating dtype, got ") +
                       dtype_name(y.dtype()));
    }
  });
}

}  // namespace strata
