#include "framework/data/bytes_tensor.h"

#include <cstring>

#include "framework/core/error.h"

namespace strata::data {

Tensor bytes_tensor(std::string_view bytes) {
  Tensor t = Tensor::empty(Shape{static_cast<int64_t>(bytes.size())}, uint8);
  if (!bytes.empty()) std::memcpy(t.data<uint8_t>(), bytes.data(), bytes.size());
  return t;
}

std::string record_bytes(const Tensor& t) {
  if (!t.defined() || t.dtype() != uint8 || t.rank() != 1) {
    throw ValueError(std::string("record_bytes: expected a 1-D uint8 tensor (a string in a "
                                 "pipeline: a TFRecordDataset record, a list_files path), found ") +
                     (t.defined() ? std::string(dtype_name(t.dtype())) + " " + t.shape().to_string()
                                  : std::string("an undefined tensor")));
  }
  const Tensor host = t.to(Device::cpu());
  return std::string(reinterpret_cast<const char*>(host.data<uint8_t>()),
                     static_cast<size_t>(host.numel()));
}

}  // namespace strata::data
