// keras.metrics.get and Keras' compile-time choice of accuracy for the string "accuracy".
#pragma once

#include <memory>
#include <string>

#include "framework/core/shape.h"
#include "framework/metrics/metric.h"

namespace strata::metrics {

// A new metric, named `identifier`, from Keras' function names ("accuracy"/"acc",
// "binary_accuracy", "sparse_categorical_accuracy", "categorical_accuracy",
// "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "precision", "recall",
// "auc", and the losses as metrics: "mse"/"mean_squared_error", "mae"/"mean_absolute_error",
// "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", ...),
// or class names ("Accuracy", "AUC", "Mean", ...) with Keras' default names. "accuracy" here is
// plain equality accuracy (keras.metrics.Accuracy); a model's compile uses resolve_accuracy
// instead. Throws ValueError listing the valid names.
std::shared_ptr<Metric> get(const std::string& identifier);

// Keras' rule for compile(metrics=["accuracy"]): binary accuracy when y_pred's last axis is 1
// (or y_pred has rank <= 1, one score per sample) or the loss is binary cross-entropy; sparse
// categorical when the loss is sparse categorical cross-entropy, or y_true has fewer axes than
// y_pred, or y_true's last axis is 1 while y_pred's is larger; categorical otherwise. The metric
// keeps the name the user wrote ("accuracy" or "acc"). loss_name is a Keras loss name (function
// or class spelling), or empty when unknown.
std::shared_ptr<Metric> resolve_accuracy(const std::string& loss_name, const Shape& y_true_shape,
                                         const Shape& y_pred_shape,
                                         const std::string& name = "accuracy");

}  // namespace strata::metrics
