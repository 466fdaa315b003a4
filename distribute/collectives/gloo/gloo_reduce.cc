#include "distribute/collectives/gloo/gloo_reduce.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "framework/core/error.h"
#include "framework/core/half.h"

namespace strata::distribute {
namespace {

// 16-bit floats compute in float and round once per pair, as PyTorch's Gloo backend does.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<Half> { using type = float; };
template <> struct Compute<BFloat16> { using type = float; };

template <typename T>
void sum(void* out, const void* a, const void* b, size_t n) {
  using C = typename Compute<T>::type;
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = T(C(x[i]) + C(y[i]));
}

template <typename T>
void max(void* out, const void* a, const void* b, size_t n) {
  using C = typename Compute<T>::type;
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = C(y[i]) > C(x[i]) ? y[i] : x[i];
}

template <typename T>
void min(void* out, const void* a, const void* b, size_t n) {
  using C = typename Compute<T>::type;
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = C(y[i]) < C(x[i]) ? y[i] : x[i];
}

// Integers truncate, as in the in-process group.
template <typename T>
void divide(void* data, size_t n, int ranks) {
  using C = typename Compute<T>::type;
  auto* d = static_cast<T*>(data);
  for (size_t i = 0; i < n; ++i) d[i] = T(C(d[i]) / C(ranks));
}

template <typename T>
ReduceKernel kernel(ReduceOp op) {
  ReduceKernel k;
  k.element_size = sizeof(T);
  switch (op) {
    case ReduceOp::kSum: k.reduce = sum<T>; break;
    case ReduceOp::kMean: k.reduce = sum<T>; k.divide = divide<T>; break;
    case ReduceOp::kMax: k.reduce = max<T>; break;
    case ReduceOp::kMin: k.reduce = min<T>; break;
    default: break;
  }
  return k;
}

}  // namespace

ReduceKernel reduce_kernel(DType dtype, ReduceOp op, const char* what) {
  if (op != ReduceOp::kSum && op != ReduceOp::kMean && op != ReduceOp::kMax &&
      op != ReduceOp::kMin) {
    throw ValueError(std::string(what) + ": GlooCommunicator reduces with kSum, kMean, kMax or "
                     "kMin only");
  }
  switch (dtype) {
    case DType::kFloat32: return kernel<float>(op);
    case DType::kFloat64: return kernel<double>(op);
    case DType::kFloat16: return kernel<Half>(op);
    case DType::kBFloat16: return kernel<BFloat16>(op);
    case DType::kInt32: return kernel<int32_t>(op);
    case DType::kInt64: return kernel<int64_t>(op);
    default:
      throw ValueError(std::string(what) + ": dtype " + dtype_name(dtype) +
                       " is not supported by GlooCommunicator; use float32, float64, float16, "
                       "bfloat16, int32 or int64");
  }
}

}  // namespace strata::distribute
