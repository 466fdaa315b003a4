// Small tensor helpers shared by the op implementations in framework/ops/*.cc. Internal: no
// public header includes this one.
#pragma once

#include <memory>
#include <utility>

#include "framework/core/tensor.h"

namespace strata::ops_detail {

// Same memory and shape, without the grad node: what backward functions capture, so that a node
// never keeps its own graph alive.
inline Tensor saved(const Tensor& t) { return t.alias(); }

// A view of x's memory with another shape of the same element count, cut from the graph.
inline Tensor detached_view(const Tensor& x, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>(*x.impl());
  impl->shape = shape;
  impl->grad_node = nullptr;
  return Tensor(std::move(impl));
}

}  // namespace strata::ops_detail
