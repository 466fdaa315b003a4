#include "framework/core/tensor.h"

#include <cstring>
#include <ostream>

#include "framework/backend/backend.h"
#include "framework/core/tensor_format.h"
#include "framework/ops/shape_ops.h"

namespace strata {

const TensorImpl& Tensor::checked_impl() const {
  if (!impl_) {
    throw StateError("tensor: use of an undefined Tensor (default-constructed, or a gradient "
                     "that does not exist); check .defined() first");
  }
  return *impl_;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  check_dims(shape.dims(), "empty");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = Storage::allocate(size_t(shape.numel()) * dtype_size(dtype), device);
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape) {
  check_dims(shape.dims(), "from_vector");
  if (int64_t(values.size()) != shape.numel()) {
    throw ShapeError("from_vector: " + std::to_string(values.size()) +
                     " values do not fill shape " + shape.to_string() + " (" +
                     std::to_string(shape.numel()) + " elements)");
  }
  Tensor t = empty(shape, DTypeOf<T>::value, Device::cpu());
  T* dst = static_cast<T*>(t.raw_data());
  for (size_t i = 0; i < values.size(); ++i) dst[i] = values[i];  // vector<bool> is not contiguous
  return t;
}

void* Tensor::raw_data() const {
  const TensorImpl& impl = checked_impl();
  return static_cast<char*>(impl.storage->data()) + impl.offset;
}

void Tensor::check_host_access(DType expected) const {
  if (dtype() != expected) {
    throw DTypeError(std::string("tensor.data<") + dtype_name(expected) + ">: tensor has dtype " +
                     dtype_name(dtype()) + "; use cast() or data<> of the right type");
  }
  if (device().type != DeviceType::kCPU) {
    throw DeviceError("tensor.data: tensor lives on " + device().to_string() +
                      "; copy it with .to(Device::cpu()) first");
  }
}

template <typename T>
T* Tensor::data() const {
  check_host_access(DTypeOf<T>::value);
  return static_cast<T*>(raw_data());
}

namespace {
template <typename To, typename From>
To convert_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<float>(v) != 0.0f;
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}
}  // namespace

template <typename T>
std::vector<T> Tensor::to_vector() const {
  const Tensor host = to(Device::cpu());
  std::vector<T> out(size_t(host.numel()));
  visit_dtype(host.dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* src = static_cast<const S*>(host.raw_data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert_value<T>(src[i]);
  });
  return out;
}

template <typename T>
T Tensor::item() const {
  if (numel() != 1) {
    throw ShapeError("tensor.item: expected a tensor with one element, got shape " +
                     shape().to_string());
  }
  return to_vector<T>()[0];
}

#define STRATA_INSTANTIATE(T)                                                     \
  template Tensor Tensor::from_vector<T>(const std::vector<T>&, const Shape&);   \
  template T* Tensor::data<T>() const;                                            \
  template std::vector<T> Tensor::to_vector<T>() const;                           \
  template T Tensor::item<T>() const;
STRATA_INSTANTIATE(float)
STRATA_INSTANTIATE(double)
STRATA_INSTANTIATE(Half)
STRATA_INSTANTIATE(BFloat16)
STRATA_INSTANTIATE(int32_t)
STRATA_INSTANTIATE(int64_t)
STRATA_INSTANTIATE(uint8_t)
STRATA_INSTANTIATE(bool)
#undef STRATA_INSTANTIATE

Tensor Tensor::reshape(const Shape& shape) const { return strata::reshape(*this, shape); }

Tensor Tensor::slice(int64_t start, int64_t stop) const {
  const TensorImpl& impl = checked_impl();
  if (impl.shape.rank() == 0) throw ShapeError("tensor.slice: cannot slice a scalar");
  const int64_t n = impl.shape[0];
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0 || stop > n || start > stop) {
    throw IndexError("tensor.slice: rows [" + std::to_string(start) + ", " + std::to_string(stop) +
                     ") are outside axis 0 of size " + std::to_string(n));
  }
  // Gradient flows through the general slice op; the view path is for data without a tape.
  if (impl.grad_node != nullptr) {
    std::vector<int64_t> begin(size_t(rank()), 0), size(size_t(rank()), -1);
    begin[0] = start;
    size[0] = stop - start;
    return strata::slice(*this, begin, size);
  }
  auto view = std::make_shared<TensorImpl>(impl);
  view->grad_node = nullptr;
  view->shape[0] = stop - start;
  view->offset += size_t(start) * size_t(impl.shape.numel() / std::max<int64_t>(n, 1)) *
                  dtype_size(impl.dtype);
  return Tensor(std::move(view));
}

Tensor Tensor::operator[](int64_t index) const {
  const int64_t n = rank() > 0 ? shape()[0] : 0;
  const int64_t i = index < 0 ? index + n : index;
  if (rank() == 0 || i < 0 || i >= n) {
    throw IndexError("tensor[" + std::to_string(index) + "]: index out of range for shape " +
                     shape().to_string());
  }
  return squeeze(slice(i, i + 1), {0});
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  return to_device(*this, device);
}

Tensor Tensor::cast(DType dtype) const { return strata::cast(*this, dtype); }

Tensor Tensor::clone() const {
  Tensor out = empty(shape(), dtype(), device());
  backend_for(device()).copy_bytes(raw_data(), device(), out.raw_data(), device(), nbytes());
  return out;
}

Tensor Tensor::detach() const { return alias(); }

Tensor Tensor::alias() const {
  auto view = std::make_shared<TensorImpl>(checked_impl());
  view->grad_node = nullptr;
  return Tensor(std::move(view));
}

bool Tensor::shares_memory_with(const Tensor& other) const {
  return defined() && other.defined() && impl_->storage == other.impl_->storage;
}

void Tensor::set_grad_node(std::shared_ptr<autograd::Node> node) const {
  const_cast<TensorImpl&>(checked_impl()).grad_node = std::move(node);
}

std::string Tensor::to_string() const { return format_tensor(*this); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "<undefined tensor>";
  return os << t.to_string();
}

}  // namespace strata
