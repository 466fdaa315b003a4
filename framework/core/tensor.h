// Tensor: a refcounted view (storage + byte offset + shape + dtype) of contiguous row-major
// memory on one device. Copies of a Tensor are cheap and share memory; reshape, squeeze,
// expand_dims and axis-0 slices are views; everything else makes new memory.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/core/dtype.h"
#include "framework/core/error.h"
#include "framework/core/shape.h"
#include "framework/core/storage.h"

namespace strata {

namespace autograd {
class Node;
}

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  size_t offset = 0;  // bytes into storage
  Shape shape;
  DType dtype = DType::kFloat32;
  // The autograd node that produced this tensor (or its leaf node when watched); null when the
  // tensor is not part of a recorded computation.
  std::shared_ptr<autograd::Node> grad_node;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Uninitialised memory of the given shape; every element must be written before it is read.
  static Tensor empty(const Shape& shape, DType dtype = DType::kFloat32, Device device = Device::cpu());

  // Copies `values` into a new CPU tensor; `shape` defaults to [values.size()].
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape);
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values) {
    return from_vector(values, Shape{int64_t(values.size())});
  }
  // A scalar (rank 0) tensor.
  template <typename T>
  static Tensor scalar(T value) { return from_vector(std::vector<T>{value}, Shape{}); }

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return checked_impl().shape; }
  int rank() const { return shape().rank(); }
  int64_t numel() const { return shape().numel(); }
  int64_t dim(int axis) const { return shape().dim(axis); }
  DType dtype() const { return checked_impl().dtype; }
  Device device() const { return checked_impl().storage->device(); }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype()); }

  // Raw pointer to the first element (any device).
  void* raw_data() const;
  // Typed pointer on the CPU; throws DTypeError / DeviceError on a mismatch.
  template <typename T>
  T* data() const;

  // The single element of a one-element tensor, converted to T (copied to the host if needed).
  template <typename T>
  T item() const;
  // All elements converted to T, in row-major order (copied to the host if needed).
  template <typename T>
  std::vector<T> to_vector() const;

  // Views: share memory, no copy. `reshape` accepts one -1. `slice` takes rows [start, stop)
  // of axis 0; `operator[]` takes row i and drops axis 0.
  Tensor reshape(const Shape& shape) const;
  Tensor slice(int64_t start, int64_t stop) const;
  Tensor operator[](int64_t index) const;

  Tensor to(Device device) const;  // copy to another device (self when already there)
  Tensor cast(DType dtype) const;  // differentiable between floating dtypes
  Tensor clone() const;            // deep copy on the same device, not differentiable
  // Same memory, cut from the autograd graph (TensorFlow's stop_gradient).
  Tensor detach() const;
  bool shares_memory_with(const Tensor& other) const;

  // numpy's str() of the values, summarised with "..." beyond 1000 elements.
  std::string to_string() const;

  // Autograd plumbing used by ops (not needed in user code).
  const std::shared_ptr<autograd::Node>& grad_node() const { return checked_impl().grad_node; }
  void set_grad_node(std::shared_ptr<autograd::Node> node) const;
  TensorImpl* impl() const { return impl_.get(); }
  // A new Tensor object over the same memory, shape and dtype, without a grad node.
  Tensor alias() const;

 private:
  const TensorImpl& checked_impl() const;
  void check_host_access(DType expected) const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Tensor from a nested-free initializer list: tensor({1.f, 2.f, 3.f}, {3}).
template <typename T>
Tensor tensor(std::initializer_list<T> values, const Shape& shape) {
  return Tensor::from_vector(std::vector<T>(values), shape);
}
template <typename T>
Tensor tensor(std::initializer_list<T> values) {
  return Tensor::from_vector(std::vector<T>(values));
}

}  // namespace strata
