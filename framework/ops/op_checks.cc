#include "framework/ops/op_checks.h"

#include <string>

namespace strata::ops_detail {

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw ValueError(std::string(op) + ": got an undefined tensor");
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op, std::string_view what) {
  if (!same_memory_space(a.device(), b.device())) {
    throw DeviceError(std::string(op) + ": " + std::string(what) +
                      " are on different devices: " + a.device().to_string() + " and " +
                      b.device().to_string() + "; move one with .to(device)");
  }
}

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype()) {
    throw DTypeError(std::string(op) + ": dtypes differ: " + dtype_name(a.dtype()) + " vs " +
                     dtype_name(b.dtype()) + "; cast one operand");
  }
}

void require_floating(const Tensor& x, const char* op) {
  if (!is_floating(x.dtype())) {
    throw DTypeError(std::string(op) + ": expected a floating dtype (float16, bfloat16, float32, "
                     "float64), got " + dtype_name(x.dtype()));
  }
}

void require_numeric(const Tensor& x, const char* op) {
  if (x.dtype() == DType::kBool) {
    throw DTypeError(std::string(op) + ": not defined for bool tensors; cast to a numeric dtype");
  }
}

void require_bool(const Tensor& x, const char* op) {
  if (x.dtype() != DType::kBool) {
    throw DTypeError(std::string(op) + ": expected a bool tensor, got " + dtype_name(x.dtype()));
  }
}

void require_float32(const Tensor& x, const char* op) {
  if (x.dtype() != DType::kFloat32) {
    throw DTypeError(std::string(op) + ": expected float32 x, got " + dtype_name(x.dtype()) +
                     " for " + x.shape().to_string());
  }
}

void require_nn_float(const Tensor& x, const char* op) {
  const DType d = x.dtype();
  if (d != DType::kFloat32 && d != DType::kFloat16 && d != DType::kBFloat16) {
    throw DTypeError(std::string(op) + ": expected x of dtype float32, float16 or bfloat16, got " +
                     dtype_name(d) + " for " + x.shape().to_string());
  }
}

void check_index_dtype(const Tensor& indices, const char* op, const char* what) {
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    throw DTypeError(std::string(op) + ": " + what + " must be int32 or int64, got " +
                     dtype_name(indices.dtype()));
  }
}

std::vector<int64_t> index_values_to_check(const Tensor& indices) {
  if (indices.device().type != DeviceType::kCPU) return {};
  return indices.to_vector<int64_t>();
}

std::pair<double, double> integral_range(DType dtype) {
  switch (dtype) {
    case DType::kInt32: return {-2147483648.0, 2147483647.0};
    case DType::kUInt8: return {0.0, 255.0};
    default: return {-9223372036854775808.0, 9223372036854774784.0};
  }
}

}  // namespace strata::ops_detail
