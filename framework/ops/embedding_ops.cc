// Embedding lookup (a gather of rows whose gradient is a scatter-add) and bias_add.
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"

namespace strata {

using namespace ops_detail;

Tensor embedding_lookup(const Tensor& params, const Tensor& ids) {
  check_defined(params, "embedding_lookup");
  check_defined(ids, "embedding_lookup");
  check_same_device(params, ids, "embedding_lookup", "params and ids");
  if (params.rank() != 2) {
    throw ShapeError("embedding_lookup: params must be [vocab, dim], got shape " +
                     params.shape().to_string());
  }
  check_index_dtype(ids, "embedding_lookup", "ids");
  const int64_t vocab = params.shape()[0];
  const std::vector<int64_t> values = ops_detail::index_values_to_check(ids);
  for (size_t j = 0; j < values.size(); ++j) {
    if (values[j] < 0 || values[j] >= vocab) {
      throw IndexError("embedding_lookup: id " + std::to_string(values[j]) + " at position " +
                       std::to_string(j) + " is outside [0, " + std::to_string(vocab) +
                       ") for params of shape " + params.shape().to_string());
    }
  }
  std::vector<int64_t> dims = ids.shape().dims();
  dims.push_back(params.shape()[1]);
  check_dims(dims, "embedding_lookup");
  Tensor out = Tensor::empty(Shape(std::move(dims)), params.dtype(), params.device());
  backend_for(params).gather(params, ids, 0, out);
  if (autograd::any_requires_grad({params})) {
    // The params' node, for a sparse gradient: the record below keeps it alive (an input).
    const autograd::Node* params_node = params.grad_node().get();
    autograd::record(out, "embedding_lookup", {params, ids},
                     [shape = params.shape(), idx = ids.alias(), params_node](
                         const Tensor& g, const autograd::NeedsGrad&) {
                       // A variable's table under gradient_with_slices: the looked-up rows.
                       if (autograd::emit_sparse_gradient(params_node, idx, g, shape)) {
                         return std::vector<Tensor>{Tensor(), Tensor()};
                       }
                       // Rows looked up several times accumulate their gradients.
                       Tensor grad = zeros(shape, g.dtype(), g.device());
                       backend_for(g).scatter_add(g, idx, 0, grad);
                       return std::vector<Tensor>{grad, Tensor()};
                     });
  }
  return out;
}

Tensor bias_add(const Tensor& x, const Tensor& bias) {
  check_defined(x, "bias_add");
  check_defined(bias, "bias_add");
  if (bias.rank() != 1 || x.rank() < 1 || x.shape()[x.rank() - 1] != bias.shape()[0]) {
    throw ShapeError("bias_add: bias must be 1-D with the size of x's last axis; got x " +
                     x.shape().to_string() + " and bias " + bias.shape().to_string());
  }
  check_same_dtype(x, bias, "bias_add");
  check_same_device(x, bias, "bias_add", "x and bias");
  require_numeric(x, "bias_add");
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  backend_for(x).binary(BinaryOp::kAdd, x, bias, out);
  autograd::record(out, "bias_add", {x, bias},
                   [bs = bias.shape()](const Tensor& g, const autograd::NeedsGrad& needs) {
                     // The bias gradient sums over every axis but the last.
                     return std::vector<Tensor>{needs[0] ? g : Tensor(),
                                                needs[1] ? sum_to_shape(g, bs) : Tensor()};
                   });
  return out;
}

}  // namespace strata
