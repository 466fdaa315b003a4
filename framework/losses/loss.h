// Loss: the Keras loss-object base class. Subclasses compute one loss per sample (call); the
// base applies sample weights and the reduction:
//
//   losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);
//   Tensor loss = loss_fn(labels, logits);                  // mean over the batch
//   Tensor per_sample = losses::SparseCategoricalCrossentropy(true, losses::Reduction::kNone)(
//       labels, logits, sample_weight);
#pragma once

#include <string>

#include "framework/config/json.h"
#include "framework/core/tensor.h"
#include "framework/losses/reduction.h"

namespace strata::losses {

class Loss {
 public:
  virtual ~Loss() = default;

  // The reduced, weighted loss. sample_weight (optional) has one weight per sample ([N] or
  // [N, 1]), or any shape that broadcasts to the per-sample losses, or a scalar.
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred,
                    const Tensor& sample_weight = Tensor()) const;

  // The unreduced, unweighted per-sample losses.
  virtual Tensor call(const Tensor& y_true, const Tensor& y_pred) const = 0;

  const std::string& name() const { return name_; }
  Reduction reduction() const { return reduction_; }
  // Keras' class name ("SparseCategoricalCrossentropy", ...) and config ({"reduction", "name",
  // ...the loss's own arguments}); losses::deserialize() rebuilds the object from both.
  virtual std::string class_name() const = 0;
  virtual Json get_config() const;

 protected:
  Loss(std::string name, Reduction reduction) : name_(std::move(name)), reduction_(reduction) {}

 private:
  std::string name_;
  Reduction reduction_;
};

}  // namespace strata::losses
