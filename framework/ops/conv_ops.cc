// conv2d, max_pool2d and avg_pool2d: validation, TensorFlow "same"/"valid" geometry and
// gradients. Data is NHWC and filters HWIO (kh, kw, in_channels/groups, out_channels), as Keras.
// The backward passes call the backend's backward kernels on fresh tensors (they are not
// themselves differentiable: no higher-order gradients through convolutions).
#include <algorithm>
#include <cctype>
#include <string>

#include "framework/autograd/node.h"
#include "framework/backend/backend.h"
#include "framework/ops/nn_ops.h"
#include "framework/ops/op_checks.h"

namespace strata {
namespace {

using namespace ops_detail;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string pair_string(std::pair<int, int> p) {
  return "(" + std::to_string(p.first) + ", " + std::to_string(p.second) + ")";
}

void check_positive(std::pair<int, int> p, const char* what, const char* op) {
  if (p.first < 1 || p.second < 1) {
    throw ValueError(std::string(op) + ": " + what + " must be positive, got " + pair_string(p));
  }
}

void check_nhwc(const Tensor& x, const char* op) {
  if (x.rank() != 4) {
    throw ShapeError(std::string(op) + ": expected x of rank 4 (NHWC), got " +
                     x.shape().to_string());
  }
  require_nn_float(x, op);
}

// Output shape and padding of a 2-D window op on x.
struct Geometry2D {
  ConvGeometry h, w;
};

Geometry2D window_geometry(const Tensor& x, int kh, int kw, std::pair<int, int> strides,
                           std::pair<int, int> dilation, const std::string& padding,
                           const char* op) {
  return Geometry2D{conv_geometry(x.dim(1), kh, strides.first, dilation.first, padding, op),
                    conv_geometry(x.dim(2), kw, strides.second, dilation.second, padding, op)};
}

// The strides and padding every window op's kernel parameters share (Conv2DParams,
// Pool2DParams).
template <typename Params>
void set_strides_and_padding(Params& p, std::pair<int, int> strides, const Geometry2D& g) {
  p.stride_h = strides.first;
  p.stride_w = strides.second;
  p.pad_top = g.h.pad_before;
  p.pad_bottom = g.h.pad_after;
  p.pad_left = g.w.pad_before;
  p.pad_right = g.w.pad_after;
}

Tensor pool2d(PoolKind kind, const char* op, const Tensor& x, std::pair<int, int> pool_size,
              std::pair<int, int> strides, const std::string& padding) {
  check_nhwc(x, op);
  check_positive(pool_size, "pool_size", op);
  check_positive(strides, "strides", op);
  const Geometry2D g =
      window_geometry(x, pool_size.first, pool_size.second, strides, {1, 1}, padding, op);
  Pool2DParams p;
  p.window_h = pool_size.first;
  p.window_w = pool_size.second;
  set_strides_and_padding(p, strides, g);

  Tensor y = Tensor::empty(Shape{x.dim(0), g.h.out, g.w.out, x.dim(3)}, x.dtype(), x.device());
  Tensor workspace = backend_for(x).pool2d_forward(kind, x, p, y);
  autograd::record(y, op, {x},
                   [kind, p, x = x.alias(), y = y.alias(), workspace](
                       const Tensor& dy, const autograd::NeedsGrad&) -> std::vector<Tensor> {
                     Tensor dx = Tensor::empty(x.shape(), x.dtype(), x.device());
                     backend_for(x).pool2d_backward(kind, x, y, dy, workspace, p, dx);
                     return {dx};
                   });
  return y;
}

}  // namespace

ConvGeometry conv_geometry(int64_t in, int window, int stride, int dilation,
                           const std::string& padding, const char* op) {
  if (window < 1 || stride < 1 || dilation < 1) {
    throw ValueError(std::string(op) + ": window, stride and dilation must be positive, got " +
                     std::to_string(window) + ", " + std::to_string(stride) + ", " +
                     std::to_string(dilation));
  }
  const int64_t effective = int64_t(window - 1) * dilation + 1;  // the dilated window's extent
  const std::string mode = lower(padding);
  ConvGeometry g;
  if (mode == "valid") {
    if (in < effective) {
      throw ShapeError(std::string(op) + ": window of " + std::to_string(effective) +
                       " (size " + std::to_string(window) + ", dilation " +
                       std::to_string(dilation) + ") is larger than the input's " +
                       std::to_string(in) + " with 'valid' padding");
    }
    g.out = (in - effective) / stride + 1;
  } else if (mode == "same") {
    // TensorFlow: out = ceil(in / stride); the odd padding element goes after.
    g.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((g.out - 1) * stride + effective - in, 0);
    g.pad_before = int(total / 2);
    g.pad_after = int(total - total / 2);
  } else {
    throw ValueError(std::string(op) + ": padding must be 'valid' or 'same', got '" + padding +
                     "'");
  }
  return g;
}

Tensor conv2d(const Tensor& x, const Tensor& filters, std::pair<int, int> strides,
              const std::string& padding, std::pair<int, int> dilation, int groups) {
  const char* op = "conv2d";
  const std::string both = x.shape().to_string() + " and filters " + filters.shape().to_string();
  if (x.rank() != 4 || filters.rank() != 4) {
    throw ShapeError("conv2d: expected x of rank 4 (NHWC) and filters of rank 4 (HWIO), got x " +
                     both);
  }
  // float32, or float16 / bfloat16 for mixed precision; x and filters alike.
  const DType dt = x.dtype();
  const bool nn_float = dt == DType::kFloat32 || dt == DType::kFloat16 || dt == DType::kBFloat16;
  if (!nn_float || filters.dtype() != dt) {
    throw DTypeError(std::string("conv2d: expected x and filters of the same dtype, float32, "
                                 "float16 or bfloat16, got ") +
                     dtype_name(x.dtype()) + " and " + dtype_name(filters.dtype()) + " for x " +
                     both);
  }
  check_same_device(x, filters, op, "x and filters");
  check_positive(strides, "strides", op);
  check_positive(dilation, "dilation_rate", op);
  if (groups < 1) throw ValueError("conv2d: groups must be positive, got " + std::to_string(groups));
  const int64_t c = x.dim(3), o = filters.dim(3);
  if (c % groups != 0 || o % groups != 0) {
    throw ValueError("conv2d: groups=" + std::to_string(groups) +
                     " must divide both the input channels and the filters, got x " + both);
  }
  if (filters.dim(2) * groups != c) {
    throw ShapeError("conv2d: input channels differ: x has " + std::to_string(c) +
                     " channels but filters expect " + std::to_string(filters.dim(2)) + " x " +
                     std::to_string(groups) + " groups, for x " + both);
  }
  if (filters.dim(0) < 1 || filters.dim(1) < 1) {
    throw ShapeError("conv2d: filters must have a non-empty window, got x " + both);
  }
  const Geometry2D g = window_geometry(x, int(filters.dim(0)), int(filters.dim(1)), strides,
                                       dilation, padding, op);
  Conv2DParams p;
  set_strides_and_padding(p, strides, g);
  p.dilation_h = dilation.first;
  p.dilation_w = dilation.second;
  p.groups = groups;

  Tensor y = Tensor::empty(Shape{x.dim(0), g.h.out, g.w.out, o}, x.dtype(), x.device());
  backend_for(x).conv2d_forward(x, filters, p, y);
  autograd::record(y, op, {x, filters},
                   [p, x = x.alias(), w = filters.alias()](
                       const Tensor& dy, const autograd::NeedsGrad& needs) -> std::vector<Tensor> {
                     Tensor dx, dw;
                     if (needs[0]) {
                       dx = Tensor::empty(x.shape(), x.dtype(), x.device());
                       backend_for(x).conv2d_backward_data(dy, w, p, dx);
                     }
                     if (needs[1]) {
                       dw = Tensor::empty(w.shape(), w.dtype(), w.device());
                       backend_for(x).conv2d_backward_filter(x, dy, p, dw);
                     }
                     return {dx, dw};
                   });
  return y;
}

Tensor max_pool2d(const Tensor& x, std::pair<int, int> pool_size, std::pair<int, int> strides,
                  const std::string& padding) {
  return pool2d(PoolKind::kMax, "max_pool2d", x, pool_size, strides, padding);
}

Tensor avg_pool2d(const Tensor& x, std::pair<int, int> pool_size, std::pair<int, int> strides,
                  const std::string& padding) {
  return pool2d(PoolKind::kAverage, "avg_pool2d", x, pool_size, strides, padding);
}

}  // namespace strata
