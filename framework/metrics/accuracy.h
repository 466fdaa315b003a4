// Accuracy metrics (keras.metrics): per-sample functions, and Mean-based metric objects that
// average them over every update_state call.
//
// Labels may be integer or floating tensors. "Sparse" labels are class indices shaped like
// y_pred without its class axis ([N] for [N, C]; [N, 1] is accepted too); other metrics take
// y_true shaped like y_pred ([N] against [N, 1] is matched as Keras does).
#pragma once

#include <string>

#include "framework/metrics/mean.h"

namespace strata::metrics {

// 1 where y_true == y_pred (y_true cast to y_pred's dtype), per element, float32.
Tensor accuracy(const Tensor& y_true, const Tensor& y_pred);
// 1 where y_true == (y_pred > threshold), per element, float32.
Tensor binary_accuracy(const Tensor& y_true, const Tensor& y_pred, double threshold = 0.5);
// 1 where y_true == argmax(y_pred, -1), per sample.
Tensor sparse_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred);
// 1 where argmax(y_true, -1) == argmax(y_pred, -1), per sample.
Tensor categorical_accuracy(const Tensor& y_true, const Tensor& y_pred);
// 1 where the true class is among the k highest predictions, per sample. TensorFlow's in_top_k
// rule: fewer than k classes score strictly higher (ties at the boundary count as in), and
// labels outside [0, C) or non-finite scores count as misses.
Tensor sparse_top_k_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, int k = 5);
Tensor top_k_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, int k = 5);

// keras.metrics.Accuracy: how often predictions equal labels.
class Accuracy : public MeanMetricWrapper {
 public:
  explicit Accuracy(std::string name = "accuracy", DType dtype = float32);
};

class BinaryAccuracy : public MeanMetricWrapper {
 public:
  explicit BinaryAccuracy(double threshold = 0.5, std::string name = "binary_accuracy",
                          DType dtype = float32);
  double threshold() const { return threshold_; }

 private:
  double threshold_;
};

class SparseCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy",
                                     DType dtype = float32);
};

class CategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy", DType dtype = float32);
};

// k >= 1, else ValueError.
class TopKCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit TopKCategoricalAccuracy(int k = 5, std::string name = "top_k_categorical_accuracy",
                                   DType dtype = float32);
  int k() const { return k_; }

 private:
  int k_;
};

class SparseTopKCategoricalAccuracy : public MeanMetricWrapper {
 public:
  explicit SparseTopKCategoricalAccuracy(int k = 5,
                                         std::string name = "sparse_top_k_categorical_accuracy",
                                         DType dtype = float32);
  int k() const { return k_; }

 private:
  int k_;
};

}  // namespace strata::metrics
