// Cross-entropy losses (keras.losses), per-sample functions and loss objects.
//
// Probabilities are clipped to [1e-7, 1 - 1e-7] before the log, as Keras; from_logits=true uses
// log_softmax / a stable sigmoid cross-entropy instead, which is both faster and more accurate:
// prefer it with a model whose last layer has no activation.
#pragma once

#include <string>

#include "framework/losses/loss.h"

namespace strata::losses {

// Integer class labels y_true (int32/int64, or floats holding integers), shaped like y_pred
// without its class axis ([N] or [N, 1] for [N, C] predictions). Returns one loss per sample.
// Labels outside [0, C) throw ValueError. label_smoothing (not in Keras for the sparse form)
// mixes the one-hot target with the uniform distribution, as categorical_crossentropy does.
Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred,
                                       bool from_logits = false, int axis = -1,
                                       double label_smoothing = 0.0);

// One-hot (or soft) targets shaped like y_pred; sums over `axis`. label_smoothing s turns the
// targets into t * (1 - s) + s / num_classes.
Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred,
                                bool from_logits = false, double label_smoothing = 0.0,
                                int axis = -1);

// Targets in [0, 1] shaped like y_pred; the mean over the last axis ([N, 1] -> [N]).
// label_smoothing s turns the targets into t * (1 - s) + 0.5 * s.
Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                           double label_smoothing = 0.0, int axis = -1);

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(
      bool from_logits = false, Reduction reduction = Reduction::kSumOverBatchSize,
      std::string name = "sparse_categorical_crossentropy", double label_smoothing = 0.0);
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "SparseCategoricalCrossentropy"; }
  Json get_config() const override;

  bool from_logits() const { return from_logits_; }

 private:
  bool from_logits_;
  double label_smoothing_;
};

class CategoricalCrossentropy : public Loss {
 public:
  explicit CategoricalCrossentropy(bool from_logits = false, double label_smoothing = 0.0,
                                   int axis = -1,
                                   Reduction reduction = Reduction::kSumOverBatchSize,
                                   std::string name = "categorical_crossentropy");
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "CategoricalCrossentropy"; }
  Json get_config() const override;

 private:
  bool from_logits_;
  double label_smoothing_;
  int axis_;
};

class BinaryCrossentropy : public Loss {
 public:
  explicit BinaryCrossentropy(bool from_logits = false, double label_smoothing = 0.0,
                              int axis = -1, Reduction reduction = Reduction::kSumOverBatchSize,
                              std::string name = "binary_crossentropy");
  Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
  std::string class_name() const override { return "BinaryCrossentropy"; }
  Json get_config() const override;

 private:
  bool from_logits_;
  double label_smoothing_;
  int axis_;
};

}  // namespace strata::losses
