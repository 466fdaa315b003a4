// Bytes as tensors. Strata tensors have no string dtype, so a string in a pipeline (a file name
// from Dataset::list_files, a record of a TFRecordDataset, a bytes feature of an Example) is a
// 1-D uint8 tensor of its bytes.
#pragma once

#include <string>
#include <string_view>

#include "framework/core/tensor.h"

namespace strata::data {

// A 1-D uint8 CPU tensor holding `bytes`.
Tensor bytes_tensor(std::string_view bytes);
// The bytes of a 1-D uint8 tensor; ValueError for any other tensor.
std::string record_bytes(const Tensor& t);

}  // namespace strata::data
