// Argument checks shared by the op implementations in framework/ops/*.cc. Internal: no public
// header includes this one. Each check throws the library's typed error with a message that
// starts with the op's name.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "framework/core/tensor.h"

namespace strata::ops_detail {

// ValueError "<op>: got an undefined tensor".
void check_defined(const Tensor& t, const char* op);

// DeviceError "<op>: <what> are on different devices: <a> and <b>; move one with .to(device)".
void check_same_device(const Tensor& a, const Tensor& b, const char* op,
                       std::string_view what = "tensors");

// DTypeError "<op>: dtypes differ: <a> vs <b>; cast one operand" (no silent promotion).
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);

// DTypeError unless x is float16, bfloat16, float32 or float64.
void require_floating(const Tensor& x, const char* op);

// DTypeError for bool tensors (arithmetic is not defined on them).
void require_numeric(const Tensor& x, const char* op);

// DTypeError unless x is bool.
void require_bool(const Tensor& x, const char* op);

// DTypeError unless x is float32; `x` is named as such in the message (the kernels that call this
// take their data operand as x).
void require_float32(const Tensor& x, const char* op);

// DTypeError unless x is float32, float16 or bfloat16: the dtypes the neural-network kernels
// (convolution, pooling) take, 16-bit ones for mixed precision.
void require_nn_float(const Tensor& x, const char* op);

// DTypeError unless `indices` is int32 or int64; `what` names the operand in the message.
void check_index_dtype(const Tensor& indices, const char* op, const char* what = "indices");

// The values of an index tensor (gather indices, embedding ids, class labels), read to the host
// so the caller can range-check them; empty for a tensor on a GPU, which is not read back: that
// would stall every training step. There, as in TensorFlow, an out-of-range index gathers zeros
// (and a label gives a meaningless loss) instead of an error.
std::vector<int64_t> index_values_to_check(const Tensor& indices);

// The closed range of values an integral dtype (int32, int64, uint8) holds, as doubles: int64's
// upper end is the largest double below 2^63, so every value in the range converts exactly.
std::pair<double, double> integral_range(DType dtype);

}  // namespace strata::ops_detail
