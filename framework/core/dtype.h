// Element types. Tensors store one of these; kernels dispatch on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "framework/core/half.h"

namespace strata {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
};

// Keras/NumPy spellings, so user code reads `strata::float32`.
inline constexpr DType float32 = DType::kFloat32;
inline constexpr DType float64 = DType::kFloat64;
inline constexpr DType float16 = DType::kFloat16;
inline constexpr DType bfloat16 = DType::kBFloat16;
inline constexpr DType int32 = DType::kInt32;
inline constexpr DType int64 = DType::kInt64;
inline constexpr DType uint8 = DType::kUInt8;
inline constexpr DType bool_ = DType::kBool;

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "float32", "int64", "bool", ...
DType dtype_from_name(const std::string& name);  // throws ValueError on an unknown name
bool is_floating(DType dtype);
bool is_integral(DType dtype);  // int32, int64, uint8 (bool is neither)

// The C++ type that stores each dtype, and the reverse.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

// Calls fn(T{}) with the storage type of `dtype`: dispatch once, run a typed loop.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(Half{});
    case DType::kBFloat16: return fn(BFloat16{});
    case DType::kInt32: return fn(int32_t{});
    case DType::kInt64: return fn(int64_t{});
    case DType::kUInt8: return fn(uint8_t{});
    case DType::kBool: return fn(bool{});
  }
  return fn(float{});
}

}  // namespace strata
