#include "framework/core/dtype.h"

#include "framework/core/error.h"

namespace strata {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: case DType::kInt32: return 4;
    case DType::kFloat64: case DType::kInt64: return 8;
    case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kUInt8: case DType::kBool: return 1;
  }
  STRATA_CHECK(false);
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "unknown";
}

DType dtype_from_name(const std::string& name) {
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                  DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool}) {
    if (name == dtype_name(d)) return d;
  }
  if (name == "half") return DType::kFloat16;
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  throw ValueError("dtype: unknown name '" + name +
                   "'; expected one of float32, float64, float16, bfloat16, int32, int64, uint8, bool");
}

bool is_floating(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 ||
         d == DType::kBFloat16;
}

bool is_integral(DType d) {
  return d == DType::kInt32 || d == DType::kInt64 || d == DType::kUInt8;
}

}  // namespace strata
