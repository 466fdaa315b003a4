#include "framework/cpu/cpu_widen.h"

#include "framework/cpu/cpu_backend.h"

namespace strata::cpu {

bool is_16bit_float(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

bool any_16bit_float(std::initializer_list<std::reference_wrapper<const Tensor>> tensors) {
  for (const Tensor& t : tensors) {
    if (t.defined() && is_16bit_float(t.dtype())) return true;
  }
  return false;
}

Tensor widened(const Tensor& t) {
  if (!t.defined() || !is_16bit_float(t.dtype())) return t;
  Tensor out = Tensor::empty(t.shape(), DType::kFloat32, t.device());
  cpu_backend().cast(t, out);
  return out;
}

Tensor float32_like(const Tensor& out) {
  if (out.dtype() == DType::kFloat32) return out;
  return Tensor::empty(out.shape(), DType::kFloat32, out.device());
}

void narrow_into(const Tensor& value, Tensor& out) {
  if (value.raw_data() == out.raw_data() && value.dtype() == out.dtype()) return;
  cpu_backend().cast(value, out);
}

}  // namespace strata::cpu
