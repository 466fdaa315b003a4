#include "framework/metrics/accuracy.h"

#include "framework/losses/loss_utils.h"
#include "framework/ops/creation.h"
#include "framework/ops/math_ops.h"
#include "framework/ops/shape_ops.h"

namespace strata::metrics {
namespace {

// Each helper takes `who`, the name errors carry: the function's own name, or the metric's
// name when a metric object calls it (so errors name "accuracy", the name the user chose).

void require_floating_pred(const std::string& who, const Tensor& y_pred) {
  if (!is_floating(y_pred.dtype())) {
    throw DTypeError(who + ": y_pred must be floating, got dtype " + dtype_name(y_pred.dtype()));
  }
}

void require_class_axis(const std::string& who, const Tensor& y_pred) {
  if (y_pred.rank() < 1) {
    throw ShapeError(who + ": y_pred must have a class axis, got shape " +
                     y_pred.shape().to_string());
  }
}

int check_k(const std::string& who, int k) {
  if (k < 1) throw ValueError(who + ": k must be >= 1, got " + std::to_string(k));
  return k;
}

// y_true and y_pred matched in rank and required equal in shape, y_true in y_pred's dtype.
std::pair<Tensor, Tensor> same_shape(const std::string& who, const Tensor& y_true,
                                     const Tensor& y_pred) {
  detail::check_batch(who, y_true, y_pred);
  auto [t, p] = losses::detail::match_ranks(y_true, y_pred);
  if (t.shape() != p.shape()) {
    throw ShapeError(who + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string());
  }
  if (t.dtype() != p.dtype()) t = cast(t, p.dtype());
  return {t, p};
}

// Sparse labels shaped like y_pred without its class axis ([N, 1] loses its last axis).
Tensor sparse_labels(const std::string& who, const Tensor& y_true, const Tensor& y_pred) {
  detail::check_batch(who, y_true, y_pred);
  require_class_axis(who, y_pred);
  Tensor t = y_true;
  if (t.rank() == y_pred.rank() && t.rank() > 0 && t.dim(-1) == 1) t = squeeze(t, {-1});
  const std::vector<int64_t> outer(y_pred.shape().dims().begin(),
                                   y_pred.shape().dims().end() - 1);
  if (t.shape() != Shape(outer)) {
    throw ShapeError(who + ": y_true of shape " + y_true.shape().to_string() +
                     " must hold one class index per sample of y_pred " +
                     y_pred.shape().to_string() + ", i.e. shape " + Shape(outer).to_string());
  }
  return t;
}

Tensor as_float(const Tensor& matches) { return cast(matches, float32); }

Tensor accuracy_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred) {
  const auto [t, p] = same_shape(who, y_true, y_pred);
  return as_float(equal(t, p));
}

Tensor binary_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred,
                   double threshold) {
  require_floating_pred(who, y_pred);
  const auto [t, p] = same_shape(who, y_true, y_pred);
  const Tensor predicted = cast(greater(p, full(Shape{}, threshold, p.dtype(), p.device())), p.dtype());
  return as_float(equal(t, predicted));
}

// argmax predictions against class-index labels: compared as int64 for integer labels, in the
// labels' dtype for floating ones (as Keras casts the argmax to y_true's dtype).
Tensor index_matches(const Tensor& labels, const Tensor& predicted_index) {
  if (is_floating(labels.dtype())) return equal(labels, cast(predicted_index, labels.dtype()));
  return equal(cast(labels, int64), predicted_index);
}

Tensor sparse_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred) {
  const Tensor t = sparse_labels(who, y_true, y_pred);
  return as_float(index_matches(t, argmax(y_pred, -1)));
}

Tensor categorical_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred) {
  require_class_axis(who, y_pred);
  detail::check_batch(who, y_true, y_pred);
  if (y_true.shape() != y_pred.shape()) {
    throw ShapeError(who + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string());
  }
  return as_float(equal(argmax(y_true, -1), argmax(y_pred, -1)));
}

// TensorFlow's in_top_k without sorting: the label's score is picked with a one-hot mask, and
// the label is in the top k when fewer than k classes score strictly higher. Pure tensor ops,
// so it runs on whatever device holds the predictions.
Tensor in_top_k(const Tensor& labels, const Tensor& y_pred, int k) {
  const DType dt = y_pred.dtype() == float64 ? float64 : float32;
  const Tensor p = y_pred.dtype() == dt ? y_pred : cast(y_pred, dt);
  const Tensor classes = arange(0.0, double(p.dim(-1)), 1.0, dt, p.device());
  const Tensor t = labels.dtype() == dt ? labels : cast(labels, dt);
  const Tensor is_label = equal(expand_dims(t, -1), classes);  // [..., C]; none when invalid
  const Tensor zero = zeros(Shape{}, dt, p.device());
  const Tensor label_score = reduce_sum(where(is_label, p, zero), {-1}, /*keepdims=*/true);
  const Tensor higher = reduce_sum(cast(greater(p, label_score), dt), {-1});
  Tensor hit = less(higher, full(Shape{}, double(k), dt, p.device()));
  hit = logical_and(hit, reduce_any(is_label, {-1}));
  hit = logical_and(hit, is_finite(squeeze(label_score, {-1})));
  return as_float(hit);
}

Tensor sparse_top_k_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred,
                         int k) {
  check_k(who, k);
  require_floating_pred(who, y_pred);
  return in_top_k(sparse_labels(who, y_true, y_pred), y_pred, k);
}

Tensor top_k_impl(const std::string& who, const Tensor& y_true, const Tensor& y_pred, int k) {
  check_k(who, k);
  require_floating_pred(who, y_pred);
  require_class_axis(who, y_pred);
  detail::check_batch(who, y_true, y_pred);
  if (y_true.shape() != y_pred.shape()) {
    throw ShapeError(who + ": y_true has shape " + y_true.shape().to_string() +
                     ", expected the shape of y_pred, " + y_pred.shape().to_string());
  }
  return in_top_k(argmax(y_true, -1), y_pred, k);
}

}  // namespace

Tensor accuracy(const Tensor& y_true, const Tensor& y_pred) {
  return accuracy_impl("accuracy", y_true, y_pred);
}
Tensor binary_accuracy(const Tensor& y_true, const Tensor& y_pred, double threshold) {
  return binary_impl("binary_accuracy", y_true, y_pred, threshold);
}
Tensor sparse_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred) {
  return sparse_impl("sparse_categorical_accuracy", y_true, y_pred);
}
Tensor categorical_accuracy(const Tensor& y_true, const Tensor& y_pred) {
  return categorical_impl("categorical_accuracy", y_true, y_pred);
}
Tensor sparse_top_k_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, int k) {
  return sparse_top_k_impl("sparse_top_k_categorical_accuracy", y_true, y_pred, k);
}
Tensor top_k_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, int k) {
  return top_k_impl("top_k_categorical_accuracy", y_true, y_pred, k);
}

Accuracy::Accuracy(std::string name, DType dtype)
    : MeanMetricWrapper([who = "Accuracy '" + name + "'"](const Tensor& t, const Tensor& p) {
                          return accuracy_impl(who, t, p);
                        }, name, dtype) { set_kind("Accuracy"); }

BinaryAccuracy::BinaryAccuracy(double threshold, std::string name, DType dtype)
    : MeanMetricWrapper(
          [who = "BinaryAccuracy '" + name + "'", threshold](const Tensor& t, const Tensor& p) {
            return binary_impl(who, t, p, threshold);
          }, name, dtype),
      threshold_(threshold) { set_kind("BinaryAccuracy"); }

SparseCategoricalAccuracy::SparseCategoricalAccuracy(std::string name, DType dtype)
    : MeanMetricWrapper(
          [who = "SparseCategoricalAccuracy '" + name + "'"](const Tensor& t, const Tensor& p) {
            return sparse_impl(who, t, p);
          }, name, dtype) { set_kind("SparseCategoricalAccuracy"); }

CategoricalAccuracy::CategoricalAccuracy(std::string name, DType dtype)
    : MeanMetricWrapper(
          [who = "CategoricalAccuracy '" + name + "'"](const Tensor& t, const Tensor& p) {
            return categorical_impl(who, t, p);
          }, name, dtype) { set_kind("CategoricalAccuracy"); }

// k is checked inside the lambda's capture, before the base class makes any variable.
TopKCategoricalAccuracy::TopKCategoricalAccuracy(int k, std::string name, DType dtype)
    : MeanMetricWrapper(
          [who = "TopKCategoricalAccuracy '" + name + "'",
           k = check_k("TopKCategoricalAccuracy '" + name + "'", k)](const Tensor& t, const Tensor& p) {
            return top_k_impl(who, t, p, k);
          }, name, dtype),
      k_(k) { set_kind("TopKCategoricalAccuracy"); }

SparseTopKCategoricalAccuracy::SparseTopKCategoricalAccuracy(int k, std::string name, DType dtype)
    : MeanMetricWrapper(
          [who = "SparseTopKCategoricalAccuracy '" + name + "'",
           k = check_k("SparseTopKCategoricalAccuracy '" + name + "'", k)](const Tensor& t,
                                                                   const Tensor& p) {
            return sparse_top_k_impl(who, t, p, k);
          }, name, dtype),
      k_(k) { set_kind("SparseTopKCategoricalAccuracy"); }

}  // namespace strata::metrics
