// matmul: validation, output shape and gradient. The kernel reads transposed operands through
// strides, so the gradients below are matmuls with transpose flags, never explicit transposes
// (except one case: a transposed batched `a` against a shared `b`).
#include <numeric>
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata {
namespace {

std::string shapes(const Tensor& a, const Tensor& b) {
  return a.shape().to_string() + " x " + b.shape().to_string();
}

std::string flags(bool transpose_a, bool transpose_b) {
  if (!transpose_a && !transpose_b) return "";
  return std::string(" (") + (transpose_a ? "transpose_a" : "") +
         (transpose_a && transpose_b ? ", " : "") + (transpose_b ? "transpose_b" : "") + ")";
}

// The shape of matmul(a, b) after validating both operands.
Shape matmul_shape(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  if (a.dtype() != b.dtype()) {
    throw DTypeError(std::string("matmul: dtypes differ: ") + dtype_name(a.dtype()) + " vs " +
                     dtype_name(b.dtype()) + " for " + shapes(a, b));
  }
  if (!is_floating(a.dtype())) {
    throw DTypeError(std::string("matmul: expected floating operands, got ") +
                     dtype_name(a.dtype()) + " for " + shapes(a, b));
  }
  if (!same_memory_space(a.device(), b.device())) {
    throw DeviceError("matmul: operands are on different devices: " + a.device().to_string() +
                      " and " + b.device().to_string() + " for " + shapes(a, b));
  }
  if (a.rank() < 2 || b.rank() < 2) {
    throw ShapeError("matmul: expected operands of rank >= 2, got " + shapes(a, b));
  }
  const int ra = a.rank(), rb = b.rank();
  if (rb > 2) {
    bool same_batch = rb == ra;
    for (int i = 0; same_batch && i < ra - 2; ++i) same_batch = a.dim(i) == b.dim(i);
    if (!same_batch) {
      throw ShapeError("matmul: batch dimensions differ (b must be [K,N] or have a's batch "
                       "dimensions): " + shapes(a, b));
    }
  }
  const int64_t m = transpose_a ? a.dim(ra - 1) : a.dim(ra - 2);
  const int64_t ka = transpose_a ? a.dim(ra - 2) : a.dim(ra - 1);
  const int64_t kb = transpose_b ? b.dim(rb - 1) : b.dim(rb - 2);
  const int64_t n = transpose_b ? b.dim(rb - 2) : b.dim(rb - 1);
  if (ka != kb) {
    throw ShapeError("matmul: inner dimensions differ: " + shapes(a, b) +
                     flags(transpose_a, transpose_b));
  }
  std::vector<int64_t> dims(a.shape().begin(), a.shape().end() - 2);
  dims.push_back(m);
  dims.push_back(n);
  return Shape(std::move(dims));
}

// Swaps the last two axes (a copy).
Tensor transpose_last_two(const Tensor& x) {
  std::vector<int> perm(size_t(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return transpose(x, perm);
}

// Folds leading batch axes into the rows: [..., R, C] -> [prod(...)*R, C] (a view).
Tensor fold_rows(const Tensor& x) {
  return reshape(x, Shape{x.numel() / x.dim(-1), x.dim(-1)});
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  Tensor out = Tensor::empty(matmul_shape(a, b, transpose_a, transpose_b), a.dtype(), a.device());
  backend_for(a).matmul(a, b, transpose_a, transpose_b, out);

  const bool shared_b = b.rank() == 2 && a.rank() > 2;
  autograd::record(
      out, "matmul", {a, b},
      [a = a.alias(), b = b.alias(), transpose_a, transpose_b, shared_b](
          const Tensor& dy, const autograd::NeedsGrad& needs) -> std::vector<Tensor> {
        Tensor da, db;
        if (needs[0]) {
          // d op(a) = dy · op(b)^T; for a stored transposed, da = (dy · op(b)^T)^T = op(b) · dy^T.
          if (!transpose_a) {
            da = matmul(dy, b, false, !transpose_b);
          } else if (!shared_b) {
            da = matmul(b, dy, transpose_b, true);
          } else {
            da = transpose_last_two(matmul(dy, b, false, !transpose_b));
          }
        }
        if (needs[1]) {
          // d op(b) = op(a)^T · dy; for b stored transposed, db = dy^T · op(a).
          if (shared_b && !transpose_a) {
            // The batch is extra rows of a, so one GEMM over the folded rows sums it.
            const Tensor a2 = fold_rows(a), dy2 = fold_rows(dy);
            db = transpose_b ? matmul(dy2, a2, true, false) : matmul(a2, dy2, true, false);
          } else {
            db = transpose_b ? matmul(dy, a, true, transpose_a) : matmul(a, dy, !transpose_a, false);
            if (shared_b) {  // b was broadcast over the batch: sum its per-batch gradients
              std::vector<int> batch_axes(size_t(db.rank() - 2));
              std::iota(batch_axes.begin(), batch_axes.end(), 0);
              db = reduce_sum(db, batch_axes);
            }
          }
        }
        return {da, db};
      });
  return out;
}

}  // namespace strata
