#include "framework/optimizers/sgd.h"

namespace strata::optimizers {

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov)
    : SGD(std::move(learning_rate), SGDOptions().momentum(momentum).nesterov(nesterov)) {}

SGD::SGD(LearningRate learning_rate, const SGDOptions& options)
    : Optimizer("SGD", std::move(learning_rate), options.config()),
      momentum_(options.momentum_),
      nesterov_(options.nesterov_) {
  check_in_range("momentum", momentum_, 0.0, 1.0, /*hi_inclusive=*/true);
}

std::vector<std::string> SGD::slot_names() const {
  // Plain SGD keeps no state; Keras creates the momentum slot only when momentum > 0.
  if (momentum_ > 0) return {"momentum"};
  return {};
}

OptimizerUpdate SGD::rule() const {
  OptimizerUpdate u;
  u.kind = OptimizerKind::kSGD;
  u.momentum = float(momentum_);
  u.nesterov = nesterov_;
  return u;
}

}  // namespace strata::optimizers
